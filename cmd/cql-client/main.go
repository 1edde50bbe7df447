// Command cql-client checks a Cassandra datastore from inside the cluster the way an
// application would: it connects over TLS with the datastore's CA, writes a row at consistency
// ALL, reads it back and prints what it negotiated. It exits non-zero on any failure. The e2e
// tests run it as a Job. With --rate it is instead a steady client that writes at a fixed rate
// while a datastore changes under it, and reports what failed (steady.go).
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/cqlbench"
)

func main() {
	var (
		hosts    = flag.String("hosts", "", "comma-separated host[:port] of the datastore's client Service or pods")
		caFile   = flag.String("ca", "", "CA certificate (PEM) that signs the nodes' certificates; empty connects in plaintext")
		certFile = flag.String("cert", "", "client certificate (PEM), when the datastore requires client certificates")
		keyFile  = flag.String("key", "", "client key (PEM)")
		minTLS   = flag.String("min-tls", "TLSv1.3", "lowest TLS version to offer: TLSv1.2 or TLSv1.3")
		rf       = flag.Int("replication-factor", 3, "replication factor of the test keyspace")
		value    = flag.String("value", "", "the value to write (a confidentiality canary's marker); empty writes the time")
		login    = flag.String("login", "", "directory with the files username and password (a datastore's login Secret, mounted); empty connects without a login")
		certOnly = flag.Bool("certificate-login", false, "log in by the client certificate alone (nodes that authenticate by certificate); needs --cert")
		expect   = flag.String("expect", "", "write nothing: read the row an earlier run wrote and check it holds this value")
		steadyOp steadyOptions
	)
	flag.Float64Var(&steadyOp.rate, "rate", 0, "write this many rows per second at QUORUM, as an application would, until --for has passed or --stop-file exists; then read every acknowledged row back and print a summary (0: the one-row check)")
	flag.DurationVar(&steadyOp.limit, "for", 10*time.Minute, "with --rate: the longest the writes go on")
	flag.StringVar(&steadyOp.stopFile, "stop-file", "", "with --rate: stop writing once this file exists")
	flag.Parse()
	if *certOnly && (*certFile == "" || *login != "") {
		fmt.Fprintln(os.Stderr, "cql-client: --certificate-login needs --cert and no --login")
		os.Exit(2)
	}
	if err := run(*hosts, *caFile, *certFile, *keyFile, *minTLS, *rf, *value, *login, *expect, *certOnly, steadyOp); err != nil {
		fmt.Fprintln(os.Stderr, "cql-client:", err)
		os.Exit(1)
	}
}

func run(hosts, caFile, certFile, keyFile, minTLS string, rf int, value, login, expect string, certOnly bool, steadyOp steadyOptions) error {
	if hosts == "" {
		return fmt.Errorf("--hosts is required")
	}
	cluster := gocql.NewCluster(strings.Split(hosts, ",")...)
	cluster.Timeout, cluster.ConnectTimeout = 15*time.Second, 15*time.Second
	cluster.ProtoVersion = 4
	if login != "" {
		l, err := cqlbench.ReadLogin(login)
		if err != nil {
			return fmt.Errorf("--login: %w", err)
		}
		cluster.Authenticator = gocql.PasswordAuthenticator{Username: l.Username, Password: l.Password}
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--ca %s holds no PEM certificate", caFile)
		}
		cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
		if minTLS == "TLSv1.2" {
			cfg.MinVersion = tls.VersionTLS12
		}
		if certFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				return err
			}
			cfg.Certificates = []tls.Certificate{pair}
			if certOnly {
				// A node that authenticates by certificate still asks for a response.
				cluster.Authenticator = cqlbench.CertificateLogin{}
			}
		}
		// gocql dials the IP addresses it resolves and discovers, and would check the
		// certificate against those; the certificate names the Service and the pods by DNS.
		// So verify the chain against the CA and the name against the Service's host name.
		name, _, _ := strings.Cut(strings.Split(hosts, ",")[0], ":")
		cfg.InsecureSkipVerify = true //nolint:gosec // replaced by verifyNodeCertificate
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyNodeCertificate(raw, pool, name)
		}
		cluster.SslOpts = &gocql.SslOptions{Config: cfg}
	}
	if steadyOp.rate > 0 {
		steadyOp.configure(cluster)
	}
	session, err := cluster.CreateSession()
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", hosts, err)
	}
	defer session.Close()
	if expect != "" {
		var got string
		if err := session.Query("SELECT v FROM e2e.kv WHERE k = ?", "probe").Consistency(gocql.All).Scan(&got); err != nil {
			return fmt.Errorf("read at consistency ALL: %w", err)
		}
		if got != expect {
			return fmt.Errorf("read %q; want %q", got, expect)
		}
		fmt.Println("ok: read back the expected value at consistency ALL")
		return nil
	}
	for _, q := range []string{
		fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS e2e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", rf),
		"CREATE TABLE IF NOT EXISTS e2e.kv (k text PRIMARY KEY, v text)",
	} {
		if err := session.Query(q).Exec(); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if steadyOp.rate > 0 {
		return steady(session, steadyOp, os.Stdout)
	}
	if value == "" {
		value = fmt.Sprintf("written at %s", time.Now().UTC().Format(time.RFC3339Nano))
	}
	if err := session.Query("INSERT INTO e2e.kv (k, v) VALUES (?, ?)", "probe", value).Consistency(gocql.All).Exec(); err != nil {
		return fmt.Errorf("write at consistency ALL: %w", err)
	}
	var got string
	if err := session.Query("SELECT v FROM e2e.kv WHERE k = ?", "probe").Consistency(gocql.All).Scan(&got); err != nil {
		return fmt.Errorf("read at consistency ALL: %w", err)
	}
	if got != value {
		return fmt.Errorf("read %q, wrote %q", got, value)
	}
	var release string
	if err := session.Query("SELECT release_version FROM system.local").Scan(&release); err != nil {
		return err
	}
	fmt.Printf("ok: Cassandra %s, wrote and read back one row at consistency ALL over %s\n", release, map[bool]string{true: "TLS", false: "plaintext"}[caFile != ""])
	return nil
}

// verifyNodeCertificate checks that the chain leads to the datastore's CA and that the leaf
// names the host the client was told to use.
func verifyNodeCertificate(raw [][]byte, roots *x509.CertPool, name string) error {
	if len(raw) == 0 {
		return fmt.Errorf("the node presented no certificate")
	}
	leaf, err := x509.ParseCertificate(raw[0])
	if err != nil {
		return err
	}
	inter := x509.NewCertPool()
	for _, der := range raw[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: name,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}
