package rawsock

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"secured.dev/operator/internal/test/testpki"
)

// pair is a raw client connection and the server's end of it, over loopback.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := l.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- s
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	raw := Conn(c)
	if _, ok := raw.(*conn); !ok {
		t.Fatalf("Conn(%T) = %T; want the raw connection", c, raw)
	}
	t.Cleanup(func() { raw.Close(); s.Close() })
	return raw, s
}

// More than the socket buffers hold, both ways, so that writes meet a full buffer (EAGAIN)
// and reads an empty one, and go back to the netpoller.
func TestRawConnectionCarriesEveryByteBothWays(t *testing.T) {
	c, s := pair(t)
	want := make([]byte, 8<<20)
	if _, err := rand.Read(want); err != nil {
		t.Fatal(err)
	}
	echoed := make(chan error, 1)
	go func() { // the peer echoes as it reads
		_, err := io.Copy(s, io.LimitReader(s, int64(len(want))))
		echoed <- err
	}()
	wrote := make(chan error, 1)
	go func() {
		n, err := c.Write(want)
		if err == nil && n != len(want) {
			err = errors.New("short write")
		}
		wrote <- err
	}()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := <-echoed; err != nil {
		t.Fatalf("echo: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the echo differs from what was written")
	}
}

func TestRawConnectionReportsEndDeadlineAndHangUp(t *testing.T) {
	c, s := pair(t)
	if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v; want os.ErrDeadlineExceeded", err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v; want 0, nil", n, err)
	}
	s.Close()
	if _, err := c.Read(make([]byte, 10)); err != io.EOF {
		t.Fatalf("read after the peer closed: %v; want io.EOF", err)
	}
	// The first write after a hang-up may still be taken; one of the next must fail with
	// EPIPE or ECONNRESET, and no SIGPIPE may stop the process.
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = c.Write(make([]byte, 4096))
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("writing to a closed peer: %v; want EPIPE or ECONNRESET", err)
	}
	c.Close()
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v; want net.ErrClosed", err)
	}
}

// TLS runs over the raw connection as over the plain one: the benchmark's pinned sessions do.
func TestTLSRunsOverARawConnection(t *testing.T) {
	ca := testpki.New(t)
	cert := ca.Issue(t, false, "127.0.0.1")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	c, s := pair(t)
	server := tls.Server(s, &tls.Config{Certificates: []tls.Certificate{cert.TLS}})
	go func() {
		if err := server.Handshake(); err == nil {
			io.Copy(server, server)
		}
	}()
	client := tls.Client(c, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13})
	msg := bytes.Repeat([]byte("secured "), 100_000)
	go client.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatalf("reading through TLS: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("the TLS echo differs")
	}
}

func TestOtherConnectionsStayAsTheyAre(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := Conn(a); got != a {
		t.Fatalf("Conn(pipe) = %T; want the pipe unchanged", got)
	}
}
