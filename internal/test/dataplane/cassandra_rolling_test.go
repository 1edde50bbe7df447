package dataplane

import (
	"crypto/tls"
	"reflect"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/test/testpki"
)

// The rolling steps the operator takes to turn TLS on for both channels of a live plaintext
// cluster keep it whole on real Cassandra: after every node restart, in the StatefulSet's order
// (highest ordinal first), every node sees all three Up/Normal and a write at consistency ALL,
// which must cross the internode channel between old- and new-configured nodes, succeeds.
func TestRollingStepsEnableTLSWithoutSplittingTheRing(t *testing.T) {
	withCassandra(t)
	plain := v1alpha1.EffectiveEncryption{ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled},
		NodeToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}}
	target := ShippedProfile(t, "tls13-aes128-gcm", nil)
	ca := testpki.New(t)
	addrs := []string{"127.0.0.51", "127.0.0.52", "127.0.0.53"}
	var nodes []*CassandraNode
	for i, a := range addrs {
		nodes = append(nodes, StartCassandra(t, Node{Address: a, Seeds: addrs[:1], JMXPort: 7251 + i, Step: cassandra.Target(plain), CA: ca}))
	}
	healthy(t, ca, nodes, "the plaintext cluster")

	applied := cassandra.Target(plain)
	var steps []string
	for !reflect.DeepEqual(applied, cassandra.Target(target)) {
		next := cassandra.Next(&applied, target)
		steps = append(steps, cassandra.Describe(&applied, next))
		for i := len(nodes) - 1; i >= 0; i-- {
			start := time.Now()
			nodes[i].Restart(t, next)
			healthy(t, ca, nodes, next.String()+" on "+nodes[i].Address)
			t.Logf("%s → %s: restarted and healthy in %s", nodes[i].Address, next, time.Since(start).Round(time.Second))
		}
		applied = next
	}
	if len(steps) != 3 {
		t.Errorf("%d rolls (%q); enabling both channels takes three", len(steps), steps)
	}
}

// healthy checks that every node sees three nodes Up/Normal and that a write at consistency
// ALL through the first node succeeds, connecting over TLS when its client channel requires it.
func healthy(t *testing.T, ca *testpki.CA, nodes []*CassandraNode, when string) {
	t.Helper()
	ringFormed(t, nodes, when)
	coordinator := nodes[0]
	var tlsConfig *tls.Config // plaintext while the client channel still accepts it
	if ch := coordinator.Step.Encryption.ClientToNode; ch.Mode == v1alpha1.ChannelRequired {
		tlsConfig = tlsClient(t, ca, ch)
	}
	session := CQLSession(t, tlsConfig, coordinator)
	defer session.Close()
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS rolling WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE IF NOT EXISTS rolling.kv (k text PRIMARY KEY, v text)",
	} {
		if err := session.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %s: %v", when, q, err)
		}
	}
	if err := session.Query("INSERT INTO rolling.kv (k, v) VALUES (?, ?)", "k", when).Consistency(gocql.All).Exec(); err != nil {
		t.Fatalf("%s: a write at consistency ALL failed: %v", when, err)
	}
}

// ringFormed waits until every node sees all of them Up/Normal. A node serves CQL before the
// others' gossip has marked it Normal, so the first look can still show it joining.
func ringFormed(t *testing.T, nodes []*CassandraNode, when string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for _, n := range nodes {
		for {
			status, err := n.Nodetool("status")
			if err == nil && strings.Count(status, "\nUN ") == len(nodes) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s does not see %d nodes Up/Normal:\n%s %v", when, n.Address, len(nodes), status, err)
			}
			time.Sleep(2 * time.Second)
		}
	}
}
