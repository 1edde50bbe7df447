package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/test/testpki"
)

// serverCert issues a certificate for probe.test from a throwaway CA.
func serverCert(t testing.TB, rsaKey bool) testpki.Issued {
	return testpki.New(t).Issue(t, rsaKey, "probe.test")
}

// goServer serves TLS with crypto/tls on loopback until the test ends.
func goServer(t testing.TB, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, ln, func(c net.Conn) {
		_ = c.(*tls.Conn).Handshake()
		_, _ = c.Read(make([]byte, 1))
	})
}

// serve runs handle on every connection to ln until the test ends.
func serve(t testing.TB, ln net.Listener, handle func(net.Conn)) string {
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func names(ids []uint16) []string {
	var out []string
	for _, id := range ids {
		s, _ := crypto.LookupID(id)
		out = append(out, s.Name)
	}
	return out
}

func TestScanFindsExactlyTheTLS12SuitesAGoServerAllows(t *testing.T) {
	cert := serverCert(t, false).TLS
	allowed := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}
	addr := goServer(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: allowed})
	res, err := Scan(context.Background(), addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.VersionNames(); !reflect.DeepEqual(got, []string{"TLSv1.2"}) {
		t.Errorf("versions %v, want [TLSv1.2]", got)
	}
	if got, want := res.SuiteNames(), names([]uint16{0xC02B, 0xCCA9}); !reflect.DeepEqual(got, want) {
		t.Errorf("suites %v, want %v", got, want)
	}
	if res.Certificate == nil || res.Certificate.DNSNames[0] != "probe.test" {
		t.Errorf("certificate %+v", res.Certificate)
	}
	if res.ClientAuthRequired == nil || *res.ClientAuthRequired {
		t.Errorf("client auth required = %v, want false", res.ClientAuthRequired)
	}
}

// The scan offers every suite left and takes out the chosen one: a handshake per accepted
// suite and one refusal per version, plus the reachability check and the full handshake for
// the certificate, where offering suites one at a time took one per catalogue suite (389).
func TestScanNeedsAHandshakePerAcceptedSuite(t *testing.T) {
	cert := serverCert(t, false).TLS
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var connections atomic.Int32
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}
	addr := serve(t, ln, func(c net.Conn) {
		connections.Add(1)
		tc := tls.Server(c, cfg)
		_ = tc.Handshake()
		_, _ = tc.Read(make([]byte, 1))
	})
	res, err := Scan(context.Background(), addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.VersionNames(); !reflect.DeepEqual(got, []string{"TLSv1.2", "TLSv1.3"}) {
		t.Errorf("versions %v", got)
	}
	if got := len(res.Suites[crypto.VersionTLS12]) + len(res.Suites[crypto.VersionTLS13]); got != 2+3 {
		t.Errorf("%d suites accepted, want the 2 of TLS 1.2 and Go's 3 of TLS 1.3: %v", got, res.SuiteNames())
	}
	// 2 + 1 (TLS 1.2), 3 + 1 (TLS 1.3), 1 each for TLS 1.0 and 1.1, the reachability check, the
	// full handshake.
	if n := connections.Load(); n > 11 {
		t.Errorf("%d connections for a scan, want at most 11", n)
	} else {
		t.Logf("%d connections for a scan", n)
	}
}

// A server too busy to answer the ClientHellos of one version within the deadline has refused
// nothing: the scan says that version went unanswered instead of reporting it, and its suites,
// as refused. The stand-in stalls for TLS 1.3 only, as a JVM starved of CPU may at any moment.
func TestScanTellsSilenceFromRefusal(t *testing.T) {
	cert := serverCert(t, false).TLS
	addr := goServer(t, &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		if slices.Equal(hello.SupportedVersions, []uint16{tls.VersionTLS13}) {
			time.Sleep(time.Second)
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
	}})
	res, err := Scan(context.Background(), addr, Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.VersionNames(); !reflect.DeepEqual(got, []string{"TLSv1.2"}) {
		t.Errorf("versions %v, want [TLSv1.2]", got)
	}
	if got := res.UnansweredNames(); !reflect.DeepEqual(got, []string{"TLSv1.3"}) {
		t.Errorf("unanswered %v, want [TLSv1.3]: TLS 1.0 and 1.1 were refused, TLS 1.3 was never answered", got)
	}
}

// A TLS 1.3 server judges the client's (empty) certificate after the handshake; one that takes
// its time, as a loaded JVM does, still refuses, and the scan waits for the verdict.
func TestScanWaitsForASlowVerdictOnTheClientCertificate(t *testing.T) {
	cert := serverCert(t, false).TLS
	addr := goServer(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13, ClientAuth: tls.RequestClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				time.Sleep(600 * time.Millisecond)
				return errors.New("a client certificate is required")
			}
			return nil
		}})
	res, err := Scan(context.Background(), addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ClientAuthRequired == nil || !*res.ClientAuthRequired {
		t.Errorf("client auth not seen as required (tested: %t): the refusal came 0.6 s after the handshake", res.ClientAuthRequired != nil)
	}
}

func TestScanReportsClientAuth(t *testing.T) {
	cert := serverCert(t, false).TLS
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		addr := goServer(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: v, MaxVersion: v, ClientAuth: tls.RequireAnyClientCert})
		res, err := Scan(context.Background(), addr, Options{Versions: []uint16{v}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ClientAuthRequired == nil || !*res.ClientAuthRequired {
			t.Errorf("%s: client auth required = %v, want true", crypto.ProtocolName(v), res.ClientAuthRequired)
		}
		// The chain arrives before the server refuses us: it is known all the same.
		if len(res.Chain) != 1 || res.Certificate == nil || res.Certificate.DNSNames[0] != "probe.test" {
			t.Errorf("%s: chain %d certificates, summary %+v", crypto.ProtocolName(v), len(res.Chain), res.Certificate)
		}
	}
}

// opensslServer runs `openssl s_server` on a free loopback port until the test ends.
func opensslServer(t testing.TB, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl is needed (hack/build/prereqs.sh installs it)")
	}
	issued := serverCert(t, true)
	certPEM, keyPEM := issued.CertPEM, issued.KeyPEM
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cmd := exec.Command("openssl", append([]string{"s_server", "-quiet", "-accept", addr, "-cert", certFile, "-key", keyFile}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 50; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return addr
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("openssl s_server did not listen on %s", addr)
	return ""
}

// A real OpenSSL server restricted to one TLS 1.3 suite: the per-suite ClientHello must see
// exactly that one (Go's TLS client could not tell).
func TestScanSeesOneTLS13SuiteOnOpenSSL(t *testing.T) {
	addr := opensslServer(t, "-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384")
	res, err := Scan(context.Background(), addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.VersionNames(); !reflect.DeepEqual(got, []string{"TLSv1.3"}) {
		t.Errorf("versions %v", got)
	}
	if got := res.SuiteNames(); !reflect.DeepEqual(got, []string{"TLS_AES_256_GCM_SHA384"}) {
		t.Errorf("suites %v, want only TLS_AES_256_GCM_SHA384", got)
	}
}

// Suites Go does not implement (DHE, CBC-SHA256) are probed too.
func TestScanSeesSuitesGoDoesNotKnow(t *testing.T) {
	addr := opensslServer(t, "-tls1_2", "-cipher", "DHE-RSA-AES128-SHA256:DHE-RSA-AES256-GCM-SHA384")
	res, err := Scan(context.Background(), addr, Options{Versions: []uint16{crypto.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384"}
	if got := res.SuiteNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("suites %v, want %v", got, want)
	}
}

// A DHE suite (crypto/tls cannot finish the handshake) on a real OpenSSL server: whether a
// client certificate is required, merely requested or not asked for must still be told apart,
// from the first flight and the server's answer to an empty Certificate message.
func TestScanTellsClientAuthWhereGoCannotHandshake(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want bool
	}{
		{"required", []string{"-Verify", "1"}, true},
		{"requested", []string{"-verify", "1"}, false},
		{"not asked", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := opensslServer(t, append([]string{"-tls1_2", "-cipher", "DHE-RSA-AES128-SHA"}, tc.args...)...)
			res, err := Scan(context.Background(), addr, Options{Versions: []uint16{crypto.VersionTLS12}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.SuiteNames(); !reflect.DeepEqual(got, []string{"TLS_DHE_RSA_WITH_AES_128_CBC_SHA"}) {
				t.Fatalf("suites %v", got)
			}
			if res.ClientAuthRequired == nil || *res.ClientAuthRequired != tc.want {
				t.Errorf("client auth required = %v, want %v", res.ClientAuthRequired, tc.want)
			}
			if res.Certificate == nil || res.Certificate.DNSNames[0] != "probe.test" {
				t.Errorf("certificate %+v, want the server's (probe.test)", res.Certificate)
			}
		})
	}
}

func TestScanUnreachable(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	_ = ln.Close()
	if _, err := Scan(context.Background(), addr, Options{}); err == nil {
		t.Fatal("no error for a closed port")
	}
}

// cqlResponder answers any request with a CQL v4 SUPPORTED frame header, as a plaintext CQL
// port does; a unit-test stand-in for the framing logic only (the data-plane tests use real
// Cassandra).
func cqlResponder(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, ln, func(c net.Conn) {
		_, _ = c.Read(make([]byte, 9))
		_, _ = c.Write([]byte{0x84, 0, 0, 0, 0x06, 0, 0, 0, 2, 0, 0})
	})
}

func TestCQLPlaintextDetection(t *testing.T) {
	p := &prober{address: cqlResponder(t), opts: Options{Timeout: time.Second}}
	if ok, err := p.cqlPlaintext(context.Background()); err != nil || !ok {
		t.Errorf("plaintext CQL answer: got %v, %v", ok, err)
	}
	cert := serverCert(t, false).TLS
	p = &prober{address: goServer(t, &tls.Config{Certificates: []tls.Certificate{cert}}), opts: Options{Timeout: time.Second}}
	if ok, err := p.cqlPlaintext(context.Background()); err != nil || ok {
		t.Errorf("TLS-only port: got %v, %v", ok, err)
	}
	// A port that reads the frame and answers nothing may accept plaintext: untested, not refused.
	p = &prober{address: greetingListener(t, make([]byte, 9), true), opts: Options{Timeout: time.Second}}
	if ok, err := p.cqlPlaintext(context.Background()); !errors.Is(err, ErrUnresponsive) || ok {
		t.Errorf("a port that answers nothing: got %v, %v; want %v", ok, err, ErrUnresponsive)
	}
}

// greetingListener stands in for a plaintext listener that, as Cassandra's internode port and
// HBase's RPC port do, waits for the rest of the exchange after a greeting it knows and closes
// on anything else; with hung, it reads and never answers, as a starved process does.
func greetingListener(t *testing.T, greeting []byte, hung bool) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, ln, func(c net.Conn) {
		got := make([]byte, len(greeting))
		if _, err := io.ReadFull(c, got); err != nil {
			return
		}
		if hung || bytes.Equal(got, greeting) {
			_, _ = c.Read(make([]byte, 1)) // waits for more until the test's deadline
		}
	})
}

// Silence after the greeting is plaintext accepted only when the endpoint is seen to answer:
// a listener that answers nothing at all is reported as untested, never as accepting.
func TestGreetingPlaintextDetection(t *testing.T) {
	opts := Options{Timeout: time.Second, Greeting: CassandraInternodeGreeting}
	p := &prober{address: greetingListener(t, opts.Greeting, false), opts: opts}
	if ok, err := p.greetingPlaintext(context.Background()); err != nil || !ok {
		t.Errorf("plaintext listener: got %v, %v; want accepted", ok, err)
	}
	p = &prober{address: greetingListener(t, opts.Greeting, true), opts: opts}
	if ok, err := p.greetingPlaintext(context.Background()); !errors.Is(err, ErrUnresponsive) || ok {
		t.Errorf("a listener that answers nothing: got %v, %v; want %v", ok, err, ErrUnresponsive)
	}
	cert := serverCert(t, false).TLS
	p = &prober{address: goServer(t, &tls.Config{Certificates: []tls.Certificate{cert}}), opts: opts}
	if ok, err := p.greetingPlaintext(context.Background()); err != nil || ok {
		t.Errorf("TLS-only port: got %v, %v; want refused", ok, err)
	}
}

// BenchmarkScan measures a full scan of one loopback endpoint (every catalogue suite at every
// version, one connection each).
func BenchmarkScan(b *testing.B) {
	cert := serverCert(b, false).TLS
	addr := goServer(b, &tls.Config{Certificates: []tls.Certificate{cert}})
	for b.Loop() {
		res, err := Scan(context.Background(), addr, Options{})
		if err != nil || len(res.Versions) == 0 {
			b.Fatal(err, res)
		}
	}
}

// tls12CertificateJudge stands in for a TLS 1.2 server that asks for a client certificate (its
// first flight: ServerHello, CertificateRequest, ServerHelloDone) and answers the empty
// Certificate message with handshake_failure after delay, or, when refuse is false, never
// (it merely requested one). A unit-test stand-in for the timing alone; real OpenSSL servers
// prove the messages (TestScanTellsClientAuthWhereGoCannotHandshake).
func tls12CertificateJudge(t *testing.T, refuse bool, delay time.Duration) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, ln, func(c net.Conn) {
		var hdr [5]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		if _, err := io.ReadFull(c, make([]byte, int(hdr[3])<<8|int(hdr[4]))); err != nil {
			return
		}
		flight := []byte{recordHandshake, 3, 3, 0, 12, 2, 0, 0, 0, typeCertificateRequest, 0, 0, 0, typeServerHelloDone, 0, 0, 0}
		if _, err := c.Write(flight); err != nil {
			return
		}
		if _, err := io.ReadFull(c, make([]byte, 12)); err != nil {
			return
		}
		if !refuse {
			_, _ = io.Copy(io.Discard, c) // waits for a key exchange that never comes
			return
		}
		time.Sleep(delay)
		_, _ = c.Write([]byte{recordAlert, 3, 3, 0, 2, 2, alertHandshakeFailure})
	})
}

// Silence after the empty certificate is acceptance only when it is heard twice: a server
// that refuses later than the first wait (half the timeout), as a loaded JVM does, is still
// seen to require a certificate, and one that never answers is seen to merely request one.
func TestClientAuthTLS12WaitsAgainBeforeItCallsSilenceAcceptance(t *testing.T) {
	const timeout = time.Second
	for _, tc := range []struct {
		name   string
		refuse bool
		want   bool
	}{
		{"a refusal after 0.75 of the timeout", true, true},
		{"no answer at all", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prober{address: tls12CertificateJudge(t, tc.refuse, 3*timeout/4), opts: Options{Timeout: timeout, ServerName: "probe.test"}}
			_, required := p.clientAuthTLS12(context.Background(), 0x0033) // TLS_DHE_RSA_WITH_AES_128_CBC_SHA
			if required == nil || *required != tc.want {
				t.Errorf("client auth required = %v, want %v", required, tc.want)
			}
		})
	}
}
