package pintls

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/testpki"
)

// server accepts TLS on loopback with the given configuration until the test ends.
func server(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func handshake(p Pin, addr string) (tls.ConnectionState, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	tc := tls.Client(conn, p.Config(&tls.Config{InsecureSkipVerify: true})) //nolint:gosec // a test server
	if err := tc.HandshakeContext(context.Background()); err != nil {
		return tls.ConnectionState{}, err
	}
	st := tc.ConnectionState()
	return st, p.Check(st)
}

func TestParseRefusesWhatCannotBePinned(t *testing.T) {
	for _, tc := range []struct{ protocol, suite, want string }{
		{"TLSv1.1", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "pin TLSv1.2 or TLSv1.3"},
		{"TLSv1.3", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "not a TLSv1.3 suite"},
		{"TLSv1.2", "TLS_AES_128_GCM_SHA256", "not a TLSv1.2 suite"},
		{"TLSv1.2", "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", "does not implement it"},
		{"TLSv1.2", "TLS_NO_SUCH_SUITE", "not in the catalogue"},
	} {
		if _, err := Parse(tc.protocol, tc.suite); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s, %s) = %v; want an error saying %q", tc.protocol, tc.suite, err, tc.want)
		}
	}
}

// TLS 1.2: the client offers only the pinned suite, so the session is that suite or nothing.
func TestTLS12OffersOnlyThePin(t *testing.T) {
	ca := testpki.New(t)
	cert := ca.Issue(t, false, "127.0.0.1").TLS
	addr := server(t, &tls.Config{Certificates: []tls.Certificate{cert}, MaxVersion: tls.VersionTLS12})
	for _, suite := range []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"} {
		p, err := Parse("TLSv1.2", suite)
		if err != nil {
			t.Fatal(err)
		}
		st, err := handshake(p, addr)
		if err != nil || st.CipherSuite != p.Suite {
			t.Errorf("pinned %s: negotiated %s, %v", suite, tls.CipherSuiteName(st.CipherSuite), err)
		}
	}
	// An ECDSA server cannot serve an RSA suite: the pinned handshake fails rather than
	// falling back to another suite.
	p, _ := Parse("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
	if _, err := handshake(p, addr); err == nil {
		t.Error("a handshake pinned to an RSA suite succeeded against an ECDSA-only server")
	}
}

// TLS 1.3: whatever the server chooses other than the pin is refused, naming both suites.
func TestTLS13RefusesAnotherSuite(t *testing.T) {
	ca := testpki.New(t)
	addr := server(t, &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, false, "127.0.0.1").TLS}, MinVersion: tls.VersionTLS13})
	// Learn the server's choice, then pin it and pin another.
	probe, _ := Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	st, _ := handshake(probe, addr)
	chosen := tls.CipherSuiteName(st.CipherSuite)
	same, err := Parse("TLSv1.3", chosen)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(same, addr); err != nil {
		t.Errorf("pinned to the server's choice %s: %v", chosen, err)
	}
	other := "TLS_CHACHA20_POLY1305_SHA256"
	if chosen == other {
		other = "TLS_AES_256_GCM_SHA384"
	}
	pin, _ := Parse("TLSv1.3", other)
	_, err = handshake(pin, addr)
	if err == nil || !strings.Contains(err.Error(), "negotiated TLSv1.3 "+chosen) || !strings.Contains(err.Error(), "pins TLSv1.3 "+other) {
		t.Errorf("pinned %s against a server choosing %s: %v; want a refusal naming both", other, chosen, err)
	}
}
