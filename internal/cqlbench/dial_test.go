package cqlbench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strconv"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/test/testpki"
)

// listen serves each connection with serve until the test ends.
func listen(t *testing.T, serve func(net.Conn)) *gocql.HostInfo {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			go func() { serve(c); c.Close() }()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	h, err := gocql.NewHostInfoFromAddrPort(net.ParseIP("127.0.0.1"), p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// plaintextCassandra answers a ClientHello as Cassandra's plaintext native port does: a CQL
// v4 ERROR frame (protocol error), then it hangs up.
func plaintextCassandra(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 9)
	if _, err := c.Read(buf); err != nil {
		return
	}
	_, _ = c.Write([]byte{0x84, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0x0a, 0, 0})
}

func tlsDialer(t *testing.T, fallback bool) *dialer {
	t.Helper()
	pin, err := pintls.Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	if err != nil {
		t.Fatal(err)
	}
	return &dialer{fallback: fallback, pinned: &pintls.HostDialer{Pin: pin, TLS: &tls.Config{ServerName: "127.0.0.1"}}}
}

// A node that does not speak TLS yet gets a plaintext connection only with the fallback.
func TestFallbackConnectsInPlaintextToANodeWithoutTLS(t *testing.T) {
	host := listen(t, plaintextCassandra)

	d := tlsDialer(t, true)
	dh, err := d.DialHost(context.Background(), host)
	if err != nil {
		t.Fatalf("with the fallback: %v", err)
	}
	if _, isTLS := dh.Conn.(*tls.Conn); isTLS {
		t.Error("the fallback connection is a TLS connection")
	}
	dh.Conn.Close()
	if got := d.connections(); got["plaintext"] != 1 || got["tls"] != 0 {
		t.Errorf("connections %v; want one plaintext", got)
	}

	if _, err := tlsDialer(t, false).DialHost(context.Background(), host); err == nil {
		t.Error("without the fallback a node without TLS was connected to")
	}
}

// A node that speaks TLS but fails the handshake (here: a certificate the client does not
// trust) is an error, never a downgrade.
func TestFallbackNeverDowngradesAFailedTLSHandshake(t *testing.T) {
	cert := testpki.New(t).Issue(t, false, "127.0.0.1")
	cfg := &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	host := listen(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_ = tls.Server(c, cfg).Handshake()
	})
	d := tlsDialer(t, true)
	if _, err := d.DialHost(context.Background(), host); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
	if got := d.connections(); len(got) != 0 {
		t.Errorf("connections %v after a refused handshake; want none", got)
	}
}

// The same server, trusted: a TLS connection, counted as one.
func TestPinnedConnectionsAreCountedAsTLS(t *testing.T) {
	ca := testpki.New(t)
	cert := ca.Issue(t, false, "127.0.0.1")
	cfg := &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	host := listen(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		tc := tls.Server(c, cfg)
		if tc.Handshake() == nil {
			_, _ = tc.Read(make([]byte, 1))
		}
	})
	d := tlsDialer(t, true)
	d.pinned.TLS.RootCAs = x509.NewCertPool()
	d.pinned.TLS.RootCAs.AppendCertsFromPEM(ca.PEM)
	dh, err := d.DialHost(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	dh.Conn.Close()
	if got := d.connections(); got["tls"] != 1 || got["plaintext"] != 0 {
		t.Errorf("connections %v; want one TLS", got)
	}
}
