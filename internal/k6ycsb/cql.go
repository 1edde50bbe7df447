package k6ycsb

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/cqlbench"
	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/pkg/fieldcrypt"
)

// cqlOptions are the script's ycsb.cql({...}) options.
type cqlOptions struct {
	Hosts              []string    `js:"hosts"`
	Keyspace           string      `js:"keyspace"`
	Table              string      `js:"table"`
	Consistency        string      `js:"consistency"`
	Profile            string      `js:"profile"`
	ConnectionsPerHost int         `js:"connectionsPerHost"`
	Timeout            string      `js:"timeout"`
	Retries            int         `js:"retries"`
	TLS                *tlsOptions `js:"tls"`
	// LoginDir holds the files username and password (a mounted Secret) of a cluster with
	// PasswordAuthenticator; the password never passes through the script.
	LoginDir string `js:"loginDir"`
	// ClientSide encrypts and signs fields before they leave the client.
	ClientSide *clientSideOptions `js:"clientSide"`
}

// clientSideOptions are pkg/fieldcrypt's settings; the keys are files in keyDir (a mounted
// Secret), so no key passes through the script.
type clientSideOptions struct {
	Cipher    string `js:"cipher"`
	Signature string `js:"signature"`
	// Fields: how many of a record's fields are protected, from field0 on; all when 0.
	Fields int    `js:"fields"`
	KeyDir string `js:"keyDir"`
}

// settings turns the options into the binding's, with the codec built from keyDir.
func (o clientSideOptions) settings(fieldCount int) (*cqlbench.ClientSide, error) {
	c, err := fieldcrypt.ParseCipher(cmp.Or(o.Cipher, "None"))
	if err != nil {
		return nil, fmt.Errorf("ycsb.cql clientSide.cipher: %w", err)
	}
	s, err := fieldcrypt.ParseSignature(cmp.Or(o.Signature, "None"))
	if err != nil {
		return nil, fmt.Errorf("ycsb.cql clientSide.signature: %w", err)
	}
	if o.Fields < 0 || o.Fields > fieldCount {
		return nil, fmt.Errorf("ycsb.cql clientSide.fields %d: give from 1 to the workload's fieldCount (%d), or 0 for all", o.Fields, fieldCount)
	}
	if o.KeyDir == "" {
		return nil, errors.New("ycsb.cql clientSide.keyDir: give the directory of the keys (the datastore's client-keys Secret, mounted)")
	}
	codec, err := fieldcrypt.LoadDir(o.KeyDir, c, s)
	if err != nil {
		return nil, fmt.Errorf("ycsb.cql clientSide: %w", err)
	}
	return &cqlbench.ClientSide{Codec: codec, Fields: cmp.Or(o.Fields, fieldCount)}, nil
}

// summary is the summary's account of the protection.
func (o *clientSideOptions) summary(fieldCount int) *benchresult.ClientSide {
	if o == nil {
		return nil
	}
	return &benchresult.ClientSide{Cipher: cmp.Or(o.Cipher, "None"), Signature: cmp.Or(o.Signature, "None"), Fields: cmp.Or(o.Fields, fieldCount)}
}

// tlsOptions pin the session to one protocol and one suite.
type tlsOptions struct {
	Protocol    string `js:"protocol"`
	CipherSuite string `js:"cipherSuite"`
	// CAFile is a PEM bundle; the system roots when empty.
	CAFile     string `js:"caFile"`
	ServerName string `js:"serverName"`
	// CertFile and KeyFile: the client certificate (PEM) and its key, for a cluster that
	// demands one; read at every handshake, so that a renewed certificate is used at once.
	CertFile string `js:"certFile"`
	KeyFile  string `js:"keyFile"`
	// Fallback "plaintext" connects in plaintext to a node that does not speak TLS yet.
	Fallback string `js:"fallback"`
}

// DB is a Cassandra cluster as a script sees it. The session opens on first use, so the init
// context (which k6 runs more than once) never connects.
type DB struct {
	m       *module
	opts    cqlOptions
	profile string
	store   *cqlbench.Store
	clients map[*Workload]*cqlbench.Client
}

func (m *module) cql(opts sobek.Value) *DB {
	rt := m.vu.Runtime()
	var o cqlOptions
	if err := decode(rt, "ycsb.cql", opts, &o); err != nil {
		common.Throw(rt, err)
	}
	// Options are checked here, in the init context, so a mistake fails before any user runs;
	// the record's field count is the workload's, known only when the session opens.
	if o.TLS != nil {
		if _, err := (cqlOptions{TLS: o.TLS, Retries: o.Retries}).settings(1); err != nil {
			common.Throw(rt, err)
		}
	}
	if cs := o.ClientSide; cs != nil {
		if _, err := cs.settings(max(cs.Fields, 1)); err != nil {
			common.Throw(rt, err)
		}
	}
	profile := o.Profile
	if profile == "" {
		profile = "unnamed"
	}
	return &DB{m: m, opts: o, profile: profile, clients: map[*Workload]*cqlbench.Client{}}
}

// settings checks the options and turns them into the binding's.
func (o cqlOptions) settings(fieldCount int) (cqlbench.Options, error) {
	s := cqlbench.Options{Hosts: o.Hosts, Keyspace: o.Keyspace, Table: o.Table, ConnectionsPerHost: o.ConnectionsPerHost, FieldCount: fieldCount, Retries: o.Retries}
	if o.Retries < 0 {
		return s, fmt.Errorf("ycsb.cql retries %d: give 0 (a failed statement counts as failed) or more", o.Retries)
	}
	if o.Consistency != "" {
		c, err := parseConsistency(o.Consistency)
		if err != nil {
			return s, err
		}
		s.Consistency = c
	}
	if o.LoginDir != "" {
		login, err := cqlbench.ReadLogin(o.LoginDir)
		if err != nil {
			return s, fmt.Errorf("ycsb.cql loginDir: %w", err)
		}
		s.Login = login
	}
	if o.Timeout != "" {
		d, err := time.ParseDuration(o.Timeout)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("ycsb.cql timeout %q: give a positive duration such as \"10s\"", o.Timeout)
		}
		s.Timeout = d
	}
	if o.ClientSide != nil {
		cs, err := o.ClientSide.settings(fieldCount)
		if err != nil {
			return s, err
		}
		s.ClientSide = cs
	}
	if o.TLS == nil {
		return s, nil
	}
	switch o.TLS.Fallback {
	case "":
	case "plaintext":
		s.PlaintextFallback = true
	default:
		return s, fmt.Errorf("ycsb.cql tls.fallback %q: use \"plaintext\" (connect in plaintext to nodes that do not speak TLS yet) or leave it empty", o.TLS.Fallback)
	}
	pin, err := pintls.Parse(o.TLS.Protocol, o.TLS.CipherSuite)
	if err != nil {
		return s, fmt.Errorf("ycsb.cql tls: %w", err)
	}
	cfg := &tls.Config{ServerName: o.TLS.ServerName}
	if o.TLS.CAFile != "" {
		// With a fallback the file may appear only when the cluster's TLS does.
		if _, err := readRoots(o.TLS.CAFile); err != nil && !s.PlaintextFallback {
			return s, fmt.Errorf("ycsb.cql %w", err)
		}
		if o.TLS.ServerName == "" {
			return s, errors.New("ycsb.cql tls.serverName: give the name the nodes' certificate carries, to verify it against tls.caFile")
		}
		// Verified below instead, against the roots of the moment.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyWithRootsFrom(o.TLS.CAFile, o.TLS.ServerName)
	}
	if (o.TLS.CertFile == "") != (o.TLS.KeyFile == "") {
		return s, errors.New("ycsb.cql tls.certFile and tls.keyFile: give both (a client certificate and its key) or neither")
	}
	if o.TLS.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(o.TLS.CertFile, o.TLS.KeyFile); err != nil && !s.PlaintextFallback {
			return s, fmt.Errorf("ycsb.cql tls.certFile: %w", err)
		}
		certFile, keyFile := o.TLS.CertFile, o.TLS.KeyFile
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c, err := tls.LoadX509KeyPair(certFile, keyFile)
			return &c, err
		}
	}
	s.TLS = &cqlbench.TLS{Pin: pin, Config: cfg}
	return s, nil
}

// verifyWithRootsFrom checks the server's chain against the CA file as it is at each
// handshake, not as it was at start: the file is a mounted trust bundle that gains the new CA
// when the datastore's CA rotates, and a client running through the rotation must trust it.
func verifyWithRootsFrom(caFile, serverName string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		roots, err := readRoots(caFile)
		if err != nil {
			return err
		}
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the server sent no certificate")
		}
		opts := x509.VerifyOptions{DNSName: serverName, Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err = cs.PeerCertificates[0].Verify(opts)
		return err
	}
}

func readRoots(caFile string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("tls.caFile: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls.caFile %s holds no PEM certificate", caFile)
	}
	return roots, nil
}

func parseConsistency(s string) (c gocql.Consistency, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("ycsb.cql consistency %q: use ONE, QUORUM, LOCAL_QUORUM, ALL, ...", s)
		}
	}()
	return gocql.ParseConsistency(strings.ToUpper(s)), nil
}

var stores = registry[*cqlbench.Store]{}

// open returns the process's session for these options and record shape.
func (db *DB) open(fieldCount int) error {
	if db.store != nil {
		return nil
	}
	key, _ := json.Marshal(struct {
		O cqlOptions
		F int
	}{db.opts, fieldCount})
	store, err := stores.get(string(key), func() (*cqlbench.Store, error) {
		s, err := db.opts.settings(fieldCount)
		if err != nil {
			return nil, err
		}
		return cqlbench.Open(s)
	})
	if err != nil {
		return err
	}
	db.store = store
	return nil
}

// client is the virtual user's client for a workload, throwing when the session cannot open
// (a refused pin among them): a benchmark must not measure something else.
func (db *DB) client(wl *Workload) *cqlbench.Client {
	if c := db.clients[wl]; c != nil {
		return c
	}
	if err := db.open(wl.shared.w.FieldCount); err != nil {
		wl.shared.stop(err)
		common.Throw(db.m.vu.Runtime(), err)
	}
	c := db.store.Client()
	db.clients[wl] = c
	return c
}

// CreateSchema creates YCSB's keyspace and table for the workload's records.
func (db *DB) CreateSchema(wl *Workload, replicationFactor int) {
	if replicationFactor < 1 {
		replicationFactor = 1
	}
	db.client(wl)
	if err := db.store.CreateSchema(db.m.vu.Context(), replicationFactor); err != nil {
		wl.shared.stop(err)
		common.Throw(db.m.vu.Runtime(), err)
	}
}

// Negotiated is the session's protocol and suite, opening it if needed.
func (db *DB) Negotiated(wl *Workload) map[string]string {
	db.client(wl)
	p, s := db.store.Negotiated()
	return map[string]string{"protocol": p, "cipherSuite": s}
}
