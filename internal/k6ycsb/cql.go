package k6ycsb

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"secured.dev/operator/internal/cqlbench"
	"secured.dev/operator/internal/pintls"
)

// cqlOptions are the script's ycsb.cql({...}) options.
type cqlOptions struct {
	Hosts              []string    `js:"hosts"`
	Keyspace           string      `js:"keyspace"`
	Consistency        string      `js:"consistency"`
	Profile            string      `js:"profile"`
	ConnectionsPerHost int         `js:"connectionsPerHost"`
	Timeout            string      `js:"timeout"`
	TLS                *tlsOptions `js:"tls"`
}

// tlsOptions pin the session to one protocol and one suite.
type tlsOptions struct {
	Protocol    string `js:"protocol"`
	CipherSuite string `js:"cipherSuite"`
	// CAFile is a PEM bundle; the system roots when empty.
	CAFile     string `js:"caFile"`
	ServerName string `js:"serverName"`
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
	if o.TLS != nil {
		if _, err := o.settings(1); err != nil {
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
	s := cqlbench.Options{Hosts: o.Hosts, Keyspace: o.Keyspace, ConnectionsPerHost: o.ConnectionsPerHost, FieldCount: fieldCount}
	if o.Consistency != "" {
		c, err := parseConsistency(o.Consistency)
		if err != nil {
			return s, err
		}
		s.Consistency = c
	}
	if o.Timeout != "" {
		d, err := time.ParseDuration(o.Timeout)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("ycsb.cql timeout %q: give a positive duration such as \"10s\"", o.Timeout)
		}
		s.Timeout = d
	}
	if o.TLS == nil {
		return s, nil
	}
	pin, err := pintls.Parse(o.TLS.Protocol, o.TLS.CipherSuite)
	if err != nil {
		return s, fmt.Errorf("ycsb.cql tls: %w", err)
	}
	cfg := &tls.Config{ServerName: o.TLS.ServerName}
	if o.TLS.CAFile != "" {
		pem, err := os.ReadFile(o.TLS.CAFile)
		if err != nil {
			return s, fmt.Errorf("ycsb.cql tls.caFile: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return s, fmt.Errorf("ycsb.cql tls.caFile %s holds no PEM certificate", o.TLS.CAFile)
		}
	}
	s.TLS = &cqlbench.TLS{Pin: pin, Config: cfg}
	return s, nil
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
		common.Throw(db.m.vu.Runtime(), err)
	}
}

// Negotiated is the session's protocol and suite, opening it if needed.
func (db *DB) Negotiated(wl *Workload) map[string]string {
	db.client(wl)
	p, s := db.store.Negotiated()
	return map[string]string{"protocol": p, "cipherSuite": s}
}
