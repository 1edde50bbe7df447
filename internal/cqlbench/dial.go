package cqlbench

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/rawsock"
)

// dialer opens the session's connections, pinned TLS or plaintext, and counts them by kind:
// a client that falls back to plaintext must be able to say how often it did.
type dialer struct {
	// pinned is nil for a plaintext session.
	pinned *pintls.HostDialer
	// fallback: a node that answers the ClientHello with something other than TLS gets a
	// plaintext connection instead.
	fallback bool
	plain    net.Dialer

	tlsConns, plainConns atomic.Int64
}

var _ gocql.HostDialer = (*dialer)(nil)

func (d *dialer) DialHost(ctx context.Context, host *gocql.HostInfo) (*gocql.DialedHost, error) {
	conn, err := d.dial(ctx, host.ConnectAddressAndPort())
	if err != nil {
		return nil, err
	}
	_, isTLS := conn.(*tls.Conn)
	return &gocql.DialedHost{Conn: conn, DisableCoalesce: isTLS}, nil
}

// dial opens one connection to addr: pinned TLS, or plaintext without TLS or as its fallback.
func (d *dialer) dial(ctx context.Context, addr string) (net.Conn, error) {
	if d.pinned != nil {
		tc, err := d.pinned.Dial(ctx, addr)
		if err == nil {
			d.tlsConns.Add(1)
			return tc, nil
		}
		if !d.fallback || !notTLS(err) {
			return nil, err
		}
	}
	conn, err := d.plain.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	d.plainConns.Add(1)
	return rawsock.Conn(conn), nil
}

// notTLS tells a server that does not speak TLS on the port (Cassandra with client encryption
// Disabled answers a ClientHello with a CQL protocol error, or hangs up) from one that does and
// refused the handshake: a bad certificate or an alert must never downgrade to plaintext.
func notTLS(err error) bool {
	var header tls.RecordHeaderError
	return errors.As(err, &header) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// connections counts the connections opened so far by kind.
func (d *dialer) connections() map[string]int64 {
	out := map[string]int64{}
	if n := d.tlsConns.Load(); n > 0 {
		out["tls"] = n
	}
	if n := d.plainConns.Load(); n > 0 {
		out["plaintext"] = n
	}
	return out
}
