package dataplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"

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
	enc := ShippedProfile(t, "tls13-aes128-gcm", nil)
	ca := testpki.New(t)
	node := StartCassandra(t, Node{Address: "127.0.0.61", JMXPort: 7261, Step: cassandra.Target(enc), CA: ca, PasswordAuthentication: true})
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
		Superuser: cqlauth.Login{Username: cqlauth.SuperuserName, Password: "s3cret'with\"quotes"},
		Client:    cqlauth.Login{Username: cqlauth.ClientName, Password: "client-password"},
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
	for _, stmt := range []string{
		"CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"SELECT * FROM system_auth.roles",
		"CREATE ROLE intruder WITH LOGIN = true AND PASSWORD = 'x'",
		"ALTER ROLE " + cqlauth.SuperuserName + " WITH PASSWORD = 'taken'",
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
