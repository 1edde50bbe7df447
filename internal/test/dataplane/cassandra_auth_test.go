package dataplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/cqlauth"
	"secured.dev/operator/internal/cqlbench"
	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/test/testpki"
)

// A Cassandra node rendered with password authentication, closed by cqlauth.Bootstrap: no
// anonymous session, no default superuser afterwards, a generated superuser, and a client role
// that runs the benchmark's schema and operations in its keyspace and may do nothing else.
func TestPasswordAuthenticationClosesCassandra(t *testing.T) {
	withCassandra(t)
	enc := ShippedProfile(t, "tls13-aes128-gcm", nil)
	ca := testpki.New(t)
	node := StartCassandra(t, Node{Address: "127.0.0.131", JMXPort: 7331, Step: cassandra.Target(enc), CA: ca, PasswordAuthentication: true})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	// The operator's own way in: the benchmark's pin, the datastore's roots.
	pin, err := pintls.Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	if err != nil {
		t.Fatal(err)
	}
	connect := cqlauth.Dial{Hosts: []string{node.NativeAddress()}, Pin: pin, TLS: &tls.Config{RootCAs: roots, ServerName: node.Address}}.Connect()
	ctx := context.Background()
	if s, err := connect(ctx, cqlauth.Login{}); err == nil {
		s.Close()
		t.Fatal("an anonymous CQL session was accepted by a node with PasswordAuthenticator")
	}

	plan := cqlauth.Plan{
		Superuser: cqlauth.Login{Username: cassandra.SuperuserRole, Password: "s3cret'with\"quotes"},
		Client:    cqlauth.Login{Username: cassandra.ClientRole, Password: "client-password"},
		Keyspace:  "ycsb", Datacenter: "dc1", ReplicationFactor: 1,
	}
	// Cassandra creates its default superuser a few seconds after startup.
	var out cqlauth.Outcome
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		if out, err = cqlauth.Bootstrap(ctx, connect, plan); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bootstrap: %v", err)
		}
		time.Sleep(2 * time.Second)
	}
	if !out.Replaced {
		t.Error("the first bootstrap did not replace the default superuser")
	}
	if again, err := cqlauth.Bootstrap(ctx, connect, plan); err != nil || again.Replaced {
		t.Errorf("a second bootstrap: %+v, %v; want nothing to replace and no error", again, err)
	}
	// Logins are cached for credentials_validity (2 s by default).
	for start := time.Now(); ; time.Sleep(time.Second) {
		s, err := connect(ctx, cqlauth.DefaultSuperuser)
		if err != nil {
			break
		}
		s.Close()
		if time.Since(start) > 15*time.Second {
			t.Fatal("cassandra/cassandra still logs in 15 s after the bootstrap")
		}
	}

	// The client role: the benchmark's schema and operations in its keyspace.
	store, err := cqlbench.Open(cqlbench.Options{Hosts: []string{node.Address}, FieldCount: 2, Login: &cqlbench.Login{Username: plan.Client.Username, Password: plan.Client.Password},
		TLS: &cqlbench.TLS{Pin: pin, Config: &tls.Config{RootCAs: roots, ServerName: node.Address}}})
	if err != nil {
		t.Fatalf("the client role cannot open the benchmark's session: %v", err)
	}
	defer store.Close()
	if err := store.CreateSchema(ctx, 1); err != nil {
		t.Fatalf("the client role cannot create the benchmark's table: %v", err)
	}
	client, err := connect(ctx, plan.Client)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Query("INSERT INTO ycsb.usertable (y_id, field0) VALUES ('k', 'v')").Exec(); err != nil {
		t.Errorf("the client role cannot write its keyspace: %v", err)
	}
	// A study's value sizes share a datastore, each in a table of its own (usertable_f<length>).
	sized, err := cqlbench.Open(cqlbench.Options{Hosts: []string{node.Address}, FieldCount: 2, Table: "usertable_f10",
		Login: &cqlbench.Login{Username: plan.Client.Username, Password: plan.Client.Password},
		TLS:   &cqlbench.TLS{Pin: pin, Config: &tls.Config{RootCAs: roots, ServerName: node.Address}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sized.Close()
	if err := sized.CreateSchema(ctx, 1); err != nil {
		t.Fatalf("the client role cannot create a second table in its keyspace: %v", err)
	}
	if err := client.Query("INSERT INTO ycsb.usertable_f10 (y_id, field0) VALUES ('k', 'v')").Exec(); err != nil {
		t.Errorf("the second table is not there: %v", err)
	}
	for _, stmt := range []string{
		"CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"SELECT * FROM system_auth.roles",
		"CREATE ROLE intruder WITH LOGIN = true AND PASSWORD = 'x'",
		"ALTER ROLE " + cassandra.SuperuserRole + " WITH PASSWORD = 'taken'",
	} {
		if err := client.Query(stmt).Exec(); err == nil || !strings.Contains(err.Error(), "permission") && !strings.Contains(err.Error(), "privileges") {
			t.Errorf("the client role may %q (%v)", stmt, err)
		}
	}
	admin, err := connect(ctx, plan.Superuser)
	if err != nil {
		t.Fatalf("the generated superuser cannot log in: %v", err)
	}
	defer admin.Close()
	replication := map[string]string{}
	if err := admin.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'system_auth'").Scan(&replication); err != nil {
		t.Fatalf("reading system_auth's replication: %v", err)
	}
	if !strings.HasSuffix(replication["class"], "NetworkTopologyStrategy") || replication["dc1"] != "1" {
		t.Errorf("system_auth is replicated %v; want NetworkTopologyStrategy with dc1: 1", replication)
	}
}

// A node whose client channel demands certificates, closed in the operator's two steps: the
// logins and identity mappings are made under password authentication (the default superuser
// has no certificate), then the node restarts with MutualTlsAuthenticator, as the roll does.
// Afterwards the certificate alone decides who a client is: the superuser's and the clients'
// identities log in as their roles without a password, a password cannot lift a client to
// another role, and a certificate of the same CA without a mapped identity (the node's own, or
// a stranger's SPIFFE ID) is refused.
func TestCertificateAuthenticationAdmitsMappedIdentitiesOnly(t *testing.T) {
	withCassandra(t)
	enc := ShippedProfile(t, "tls13-aes128-gcm", &v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{
		ChannelEncryption: v1alpha1.ChannelEncryption{TLS: &v1alpha1.TLSSettings{ClientAuth: v1alpha1.ClientAuthRequired}}}})
	step := cassandra.Target(enc)
	if !cassandra.CertificateLogins(step) {
		t.Fatal("the profile does not demand client certificates on a Required channel")
	}
	ca := testpki.New(t)
	node := StartCassandra(t, Node{Address: "127.0.0.132", JMXPort: 7332, Step: step, CA: ca, PasswordAuthentication: true})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	pin, err := pintls.Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	if err != nil {
		t.Fatal(err)
	}
	const domain = "spiffe://cluster.local/ns/default/secureddatastore/dataplane/role/"
	as := func(cert tls.Certificate) cqlauth.Connect {
		return cqlauth.Dial{Hosts: []string{node.NativeAddress()}, Pin: pin,
			TLS: &tls.Config{RootCAs: roots, ServerName: node.Address, Certificates: []tls.Certificate{cert}}}.Connect()
	}
	admin, client := ca.IssueClient(t, domain+cassandra.SuperuserRole).TLS, ca.IssueClient(t, domain+cassandra.ClientRole).TLS
	plan := cqlauth.Plan{
		Superuser: cqlauth.Login{Username: cassandra.SuperuserRole, Password: "admin-password"},
		Client:    cqlauth.Login{Username: cassandra.ClientRole, Password: "client-password"},
		Keyspace:  "ycsb", Datacenter: "dc1", ReplicationFactor: 1,
		Identities: []cqlauth.Identity{{ID: domain + cassandra.SuperuserRole, Role: cassandra.SuperuserRole}, {ID: domain + cassandra.ClientRole, Role: cassandra.ClientRole}},
	}
	ctx := context.Background()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(2 * time.Second) {
		_, err := cqlauth.Bootstrap(ctx, as(admin), plan)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bootstrap under password authentication: %v", err)
		}
	}

	node.CertificateAuthentication = true
	node.Restart(t, step)

	// No password: the certificate is the login.
	su, err := as(admin)(ctx, cqlauth.Login{})
	if err != nil {
		t.Fatalf("the superuser's certificate does not log in: %v", err)
	}
	defer su.Close()
	var roles int
	if err := su.Query("SELECT count(*) FROM system_auth.roles").Scan(&roles); err != nil {
		t.Errorf("the superuser's certificate is not the superuser: %v", err)
	}
	// Re-running the bootstrap on a node that authenticates by certificate changes nothing.
	plan.CertificateLogins = true
	if _, err := cqlauth.Bootstrap(ctx, as(admin), plan); err != nil {
		t.Errorf("bootstrap again after the switch: %v", err)
	}

	store, err := cqlbench.Open(cqlbench.Options{Hosts: []string{node.Address}, FieldCount: 2,
		TLS: &cqlbench.TLS{Pin: pin, Config: &tls.Config{RootCAs: roots, ServerName: node.Address, Certificates: []tls.Certificate{client}}}})
	if err != nil {
		t.Fatalf("the benchmark's session with the clients' certificate: %v", err)
	}
	defer store.Close()
	if err := store.CreateSchema(ctx, 1); err != nil {
		t.Fatalf("the clients' certificate cannot create the benchmark's table: %v", err)
	}
	// The superuser's password on the clients' certificate: still the clients' role.
	c, err := as(client)(ctx, plan.Superuser)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Query("INSERT INTO ycsb.usertable (y_id, field0) VALUES ('k', 'v')").Exec(); err != nil {
		t.Errorf("the clients' certificate cannot write its keyspace: %v", err)
	}
	if err := c.Query("SELECT * FROM system_auth.roles").Exec(); err == nil || !strings.Contains(err.Error(), "permission") {
		t.Errorf("the clients' certificate with the superuser's password read system_auth.roles (%v)", err)
	}

	stranger := ca.IssueClient(t, domain+"intruder").TLS
	nodeCert, err := tls.LoadX509KeyPair(filepath.Join(node.TLSDir(), "tls.crt"), filepath.Join(node.TLSDir(), "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	for name, cert := range map[string]tls.Certificate{"an unmapped SPIFFE ID": stranger, "the node's certificate (no SPIFFE ID)": nodeCert} {
		if s, err := as(cert)(ctx, plan.Superuser); err == nil {
			s.Close()
			t.Errorf("%s logged in with the superuser's password", name)
		} else if !strings.Contains(err.Error(), "not authorized") && !strings.Contains(err.Error(), "Spiffe") {
			t.Errorf("%s was refused for another reason than its identity: %v", name, err)
		}
	}
}
