package dataplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/cqlbench"
	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testpki"
	"secured.dev/operator/internal/verify"
)

// tlsClient is the TLS configuration of a CQL client that trusts the CA and presents its own
// certificate, restricted to what the channel allows.
func tlsClient(t *testing.T, ca *testpki.CA, ch v1alpha1.EffectiveChannel) *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	cfg := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{ca.Issue(t, false, "client").TLS},
		MinVersion: tls.VersionTLS13, InsecureSkipVerify: true} //nolint:gosec // node certificates name loopback addresses gocql dials by IP; trust is checked below
	cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
		leaf, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return err
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool})
		return err
	}
	if ch.Protocols[0] == "TLSv1.2" {
		cfg.MinVersion = tls.VersionTLS12
	}
	return cfg
}

// A 3-node Cassandra 5.0 cluster, each node on its own loopback address with the files the
// builders render for the shipped TLS 1.3 profile: the nodes form a ring over TLS, a TLS CQL
// client reads and writes, plaintext is refused on both channels, the wire matches the profile
// on every endpoint, a marker written through the client never appears on the wire in clear,
// and a renewed certificate is served without a restart.
func TestCassandraClusterOverTLS(t *testing.T) {
	withCassandra(t)
	enc := ShippedProfile(t, "tls13-aes128-gcm", nil)
	ca := testpki.New(t)
	addrs := []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"}
	start := time.Now()
	var nodes []*CassandraNode
	for i, a := range addrs {
		// One node joins at a time, as the StatefulSet's OrderedReady policy does.
		nodes = append(nodes, StartCassandra(t, Node{Address: a, Seeds: addrs[:1], JMXPort: 7211 + i, Step: cassandra.Target(enc), CA: ca}))
	}
	t.Logf("3 nodes up in %s", time.Since(start).Round(time.Second))

	// The ring formed over TLS: every node is Up/Normal, and internode TLS is all there is.
	ringFormed(t, nodes, "after start")

	// The wire matches the profile on every endpoint, and plaintext is refused on both ports.
	for _, n := range nodes {
		for _, c := range n.Endpoints(enc) {
			res, err := probe.Scan(context.Background(), c.Address, c.Probe)
			if f := verify.Compare(c.Want, res, err); !f.Verified {
				t.Errorf("%s %s: %s %v", c.Address, c.Channel, f.Reason, f.Differences)
			}
			if res.PlaintextAccepted == nil || *res.PlaintextAccepted {
				t.Errorf("%s %s: plaintextAccepted %v; TLS is Required", c.Address, c.Channel, deref(res.PlaintextAccepted))
			}
		}
	}

	// A TLS client writes at consistency ALL (the mutation crosses the internode channel to
	// both replicas) and reads back; the capture of both ports never shows the value.
	session := CQLSession(t, tlsClient(t, ca, enc.ClientToNode), nodes[0])
	marker := Marker(t)
	capture := Capture(t, []int{cassandra.NativePort, cassandra.StoragePort}, func() {
		for _, q := range []string{
			"CREATE KEYSPACE IF NOT EXISTS canary WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
			"CREATE TABLE IF NOT EXISTS canary.kv (k text PRIMARY KEY, v text)",
		} {
			if err := session.Query(q).Exec(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if err := session.Query("INSERT INTO canary.kv (k, v) VALUES (?, ?)", "k1", marker).Consistency(gocql.All).Exec(); err != nil {
			t.Fatalf("insert: %v", err)
		}
		var got string
		if err := session.Query("SELECT v FROM canary.kv WHERE k = ?", "k1").Consistency(gocql.All).Scan(&got); err != nil || got != marker {
			t.Fatalf("read back %q, %v; want the marker", got, err)
		}
	})
	if bytes.Contains(capture, []byte(marker)) {
		t.Error("the marker is in the capture: a channel carried it in clear")
	}
	if n := bytes.Count(capture, []byte{0x17, 0x03, 0x03}); n < 4 {
		t.Errorf("the capture holds %d TLS application-data records; the canary saw no traffic", n)
	}

	// The benchmark client, given one contact point as a benchmark Job is given the datastore's
	// Service, coordinates its operations on every node of the ring, as gocql would.
	spread := benchmarkStore(t, ca, enc, nodes[0])
	var want []string
	for _, n := range nodes {
		want = append(want, n.NativeAddress())
	}
	if got := spread.Coordinators(); !slices.Equal(got, want) {
		t.Errorf("the benchmark client coordinates on %v; want every node, %v", got, want)
	}

	// cert-manager renews the Secret: the reloader notices and Cassandra serves the new
	// certificate, no restart.
	before, err := probe.Scan(context.Background(), nodes[0].NativeAddress(), probe.Options{})
	if err != nil || before.Certificate == nil {
		t.Fatalf("scan before renewal: %v", err)
	}
	reloader := startReloader(t, nodes[0])
	ca.WriteSecret(t, nodes[0].TLSDir(), nodes[0].Address)
	deadline := time.Now().Add(60 * time.Second)
	for {
		after, err := probe.Scan(context.Background(), nodes[0].NativeAddress(), probe.Options{})
		if err == nil && after.Certificate != nil && after.Certificate.Serial != before.Certificate.Serial {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node still serves certificate %s a minute after renewal; reloader said:\n%s", before.Certificate.Serial, reloader.Log())
		}
		time.Sleep(time.Second)
	}
	// Cassandra serves the new certificate as soon as reloadssl has run inside it; the
	// reloader says so only once nodetool's JVM has exited, seconds later on a busy machine.
	reloader.waitFor(t, "Cassandra reloaded them", 30*time.Second)
}

// benchmarkStore is the benchmark client's session through contact, pinned to the profile's
// suite, with YCSB's table made and a few records written and read on every connection, at
// QUORUM: with three replicas a read at ONE may reach one the write has not reached yet.
func benchmarkStore(t *testing.T, ca *testpki.CA, enc v1alpha1.EffectiveEncryption, contact *CassandraNode) *cqlbench.Store {
	pin, err := pintls.Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	if err != nil {
		t.Fatal(err)
	}
	store, err := cqlbench.Open(cqlbench.Options{Hosts: []string{contact.NativeAddress()}, Keyspace: "spread", FieldCount: 1, Consistency: gocql.Quorum,
		TLS: &cqlbench.TLS{Pin: pin, Config: tlsClient(t, ca, enc.ClientToNode)}})
	if err != nil {
		t.Fatalf("the benchmark client's session: %v", err)
	}
	t.Cleanup(store.Close)
	ctx := context.Background()
	if err := store.CreateSchema(ctx, 3); err != nil {
		t.Fatal(err)
	}
	c := store.Client()
	for i := range 12 {
		key := fmt.Sprintf("user%d", i)
		if err := c.Insert(ctx, key, [][]byte{[]byte("v")}, 0); err != nil {
			t.Fatalf("insert %s: %v", key, err)
		}
		if err := c.Read(ctx, key); err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
	}
	return store
}

// startReloader runs the image's reload-tls script for a node, checking every second, once it
// has taken the digest of the files it watches; the test's end stops it by its process group.
func startReloader(t *testing.T, n *CassandraNode) *process {
	t.Helper()
	cmd := exec.Command(filepath.Join(samples.RepoRoot(), "images", "cassandra", "bin", "reload-tls"))
	cmd.Env = append(n.env(), "TLS_DIR="+n.TLSDir(), "RELOAD_INTERVAL=1", fmt.Sprintf("PATH=%s:/usr/bin:/bin", filepath.Join(samples.RepoRoot(), "images", "cassandra", "bin")))
	return startProcess(t, "reload-tls", cmd, "reload-tls: watching", 30*time.Second)
}
