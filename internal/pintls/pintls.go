// Package pintls makes the TLS sessions a benchmark measures use exactly the protocol and the
// one cipher suite it pins, as the papers' tool did: stacks otherwise pick a suite of their
// own, and a number would be attributed to the wrong suite. For TLS 1.2 the client offers only
// the pinned suite. Go's TLS client cannot restrict the TLS 1.3 suites it offers, so for 1.3 it
// checks what the server chose and refuses the session when it is another suite.
package pintls

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"sync/atomic"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/crypto"
)

// Pin is a protocol version and one cipher suite, by IANA code point.
type Pin struct {
	Version uint16
	Suite   uint16
}

// Parse pins a protocol (TLSv1.2, TLSv1.3) and a suite (IANA name). It refuses suites the
// protocol does not carry and TLS 1.2 suites Go's client does not implement (DHE, CCM, ...):
// the benchmark could not offer them.
func Parse(protocol, suite string) (Pin, error) {
	v, ok := crypto.ProtocolVersion(protocol)
	if !ok || v < crypto.VersionTLS12 {
		return Pin{}, fmt.Errorf("protocol %q: pin TLSv1.2 or TLSv1.3", protocol)
	}
	s, ok := crypto.Lookup(suite)
	if !ok {
		return Pin{}, fmt.Errorf("cipher suite %q is not in the catalogue", suite)
	}
	if !s.SupportsVersion(v) {
		return Pin{}, fmt.Errorf("cipher suite %s is not a %s suite", suite, protocol)
	}
	if v == crypto.VersionTLS12 && !slices.ContainsFunc(tls.CipherSuites(), func(c *tls.CipherSuite) bool { return c.ID == s.ID }) {
		return Pin{}, fmt.Errorf("cipher suite %s: Go's TLS client does not implement it, so the benchmark cannot offer it; pin an ECDHE suite with AES-GCM, AES-CBC or ChaCha20", suite)
	}
	return Pin{Version: v, Suite: s.ID}, nil
}

func (p Pin) String() string {
	s, _ := crypto.LookupID(p.Suite)
	return crypto.ProtocolName(p.Version) + " " + s.Name
}

// Config returns base restricted to the pin.
func (p Pin) Config(base *tls.Config) *tls.Config {
	c := base.Clone()
	c.MinVersion, c.MaxVersion = p.Version, p.Version
	c.CipherSuites = []uint16{p.Suite} // ignored by Go for TLS 1.3; Check covers it
	return c
}

// Check refuses a session that is not exactly the pin.
func (p Pin) Check(st tls.ConnectionState) error {
	if st.Version == p.Version && st.CipherSuite == p.Suite {
		return nil
	}
	got, _ := crypto.LookupID(st.CipherSuite)
	return fmt.Errorf("the server negotiated %s %s, but the benchmark pins %s: refusing to measure another suite (a server that accepts several TLS 1.3 suites chooses its own; configure it to accept only the pinned one, e.g. with the JDK engine)",
		crypto.ProtocolName(st.Version), got.Name, p)
}

// HostDialer is a gocql.HostDialer whose sessions are pinned; it records the suite it
// negotiated, for the benchmark's results.
type HostDialer struct {
	Pin    Pin
	TLS    *tls.Config
	Dialer net.Dialer
	// Transport, when set, wraps the TCP connection the TLS session runs over.
	Transport func(net.Conn) net.Conn

	negotiated atomic.Value // Pin
}

var _ gocql.HostDialer = (*HostDialer)(nil)

// DialHost connects, handshakes with the pinned configuration and checks the session.
func (d *HostDialer) DialHost(ctx context.Context, host *gocql.HostInfo) (*gocql.DialedHost, error) {
	tc, err := d.Dial(ctx, host.ConnectAddressAndPort())
	if err != nil {
		return nil, err
	}
	// writev cannot coalesce writes through a TLS connection.
	return &gocql.DialedHost{Conn: tc, DisableCoalesce: true}, nil
}

// Dial connects to addr, handshakes with the pinned configuration and checks the session.
func (d *HostDialer) Dial(ctx context.Context, addr string) (*tls.Conn, error) {
	conn, err := d.Dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if d.Transport != nil {
		conn = d.Transport(conn)
	}
	tc := tls.Client(conn, d.Pin.Config(d.TLS))
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake pinned to %s with %s: %w", d.Pin, addr, err)
	}
	st := tc.ConnectionState()
	if err := d.Pin.Check(st); err != nil {
		tc.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	d.negotiated.Store(Pin{Version: st.Version, Suite: st.CipherSuite})
	return tc, nil
}

// Negotiated is the protocol and suite of the last session, if any.
func (d *HostDialer) Negotiated() (Pin, bool) {
	p, ok := d.negotiated.Load().(Pin)
	return p, ok
}
