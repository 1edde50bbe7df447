package dataplane

import (
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/render/cassandra"
)

// CQLSession connects a real CQL client (gocql) to the nodes' native ports, over TLS when
// tlsConfig is set. The session closes when the test ends.
func CQLSession(t testing.TB, tlsConfig *tls.Config, nodes ...*CassandraNode) *gocql.Session {
	t.Helper()
	cluster := cqlCluster(nodes)
	if tlsConfig != nil {
		cluster.SslOpts = &gocql.SslOptions{Config: tlsConfig}
	}
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("CQL session to %v: %v", cluster.Hosts, err)
	}
	t.Cleanup(s.Close)
	return s
}

// PinnedCQLSession connects through the benchmark's pinned TLS dialer; the error is the
// caller's to judge (a refused session is a result).
func PinnedCQLSession(t testing.TB, dialer *pintls.HostDialer, nodes ...*CassandraNode) (*gocql.Session, error) {
	t.Helper()
	cluster := cqlCluster(nodes)
	cluster.HostDialer = dialer
	s, err := cluster.CreateSession()
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

func cqlCluster(nodes []*CassandraNode) *gocql.ClusterConfig {
	hosts := make([]string, len(nodes))
	for i, n := range nodes {
		hosts[i] = net.JoinHostPort(n.Address, strconv.Itoa(cassandra.NativePort))
	}
	cluster := gocql.NewCluster(hosts...)
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.ProtoVersion = 4
	return cluster
}
