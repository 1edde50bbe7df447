package cqlauth

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/cqlbench"
	"secured.dev/operator/internal/pintls"
)

// Dial says how to reach the cluster's CQL port.
type Dial struct {
	// Hosts are host:port contact points.
	Hosts []string
	// Pin and TLS: the session's one protocol and suite (as the benchmark's client pins it, so
	// that every profile the benchmark can measure can be bootstrapped), with the roots, the
	// server name and, where the cluster requires one, the client certificate. A nil TLS is
	// plaintext.
	Pin pintls.Pin
	TLS *tls.Config
	// Timeout of connecting and of each statement; 10 s when zero.
	Timeout time.Duration
}

// Connect opens sessions as Dial says.
func (d Dial) Connect() Connect {
	return func(ctx context.Context, login Login) (*gocql.Session, error) {
		timeout := d.Timeout
		if timeout == 0 {
			timeout = 10 * time.Second
		}
		c := gocql.NewCluster(d.Hosts...)
		c.ProtoVersion = 4
		c.Timeout, c.ConnectTimeout = timeout, timeout
		c.Consistency = gocql.Quorum
		switch {
		case login != (Login{}):
			c.Authenticator = gocql.PasswordAuthenticator{Username: login.Username, Password: login.Password}
		case d.TLS != nil && len(d.TLS.Certificates) > 0:
			c.Authenticator = cqlbench.CertificateLogin{}
		}
		if d.TLS != nil {
			c.HostDialer = &pintls.HostDialer{Pin: d.Pin, TLS: d.TLS, Dialer: net.Dialer{Timeout: timeout}}
		}
		return c.CreateSession()
	}
}
