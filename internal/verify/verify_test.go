package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/probe"
)

func ptr[T any](v T) *T { return &v }

func observed(versions []uint16, suites []uint16, clientAuth, plaintext *bool) probe.Result {
	r := probe.Result{Address: "10.0.0.1:9042", Suites: map[uint16][]uint16{}, ClientAuthRequired: clientAuth, PlaintextAccepted: plaintext}
	for _, v := range versions {
		r.Versions = append(r.Versions, v)
		for _, s := range suites {
			if x, _ := crypto.LookupID(s); x.SupportsVersion(v) {
				r.Suites[v] = append(r.Suites[v], s)
			}
		}
	}
	return r
}

// silentAt marks versions whose ClientHellos the endpoint left unanswered.
func silentAt(r probe.Result, versions ...uint16) probe.Result {
	r.Unanswered = versions
	return r
}

var pinned13 = v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelRequired, Protocols: []v1alpha1.TLSProtocol{"TLSv1.3"},
	CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}, ClientAuth: v1alpha1.ClientAuthRequired}

func TestCompare(t *testing.T) {
	tls13 := []uint16{crypto.VersionTLS13}
	for _, tc := range []struct {
		name     string
		want     v1alpha1.EffectiveChannel
		got      probe.Result
		err      error
		reason   string
		contains string
		lacks    string // a sentence the differences must not hold
	}{
		{"exact", pinned13, observed(tls13, []uint16{0x1301}, ptr(true), ptr(false)), nil, v1alpha1.ReasonVerified, "", ""},
		{"BoringSSL ignores the TLS 1.3 list", pinned13, observed(tls13, []uint16{0x1301, 0x1302, 0x1303}, ptr(true), ptr(false)), nil,
			v1alpha1.ReasonCipherSuiteDrift, "also accepts TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256", ""},
		{"TLS 1.2 too", pinned13, observed([]uint16{crypto.VersionTLS12, crypto.VersionTLS13}, []uint16{0x1301, 0xC02F}, ptr(true), ptr(false)), nil,
			v1alpha1.ReasonProtocolDrift, "also accepts TLSv1.2", ""},
		{"plaintext wins over suite drift", pinned13, observed(tls13, []uint16{0x1301, 0x1302}, ptr(true), ptr(true)), nil,
			v1alpha1.ReasonPlaintextAccepted, "accepts plaintext", ""},
		{"no client auth", pinned13, observed(tls13, []uint16{0x1301}, ptr(false), ptr(false)), nil, v1alpha1.ReasonClientAuthNotEnforced, "without one", ""},
		{"unreachable", pinned13, probe.Result{Address: "10.0.0.1:9042"}, errors.New("connection refused"), v1alpha1.ReasonUnreachable, "connection refused", ""},
		{"optional accepts plaintext", v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelOptional, Protocols: pinned13.Protocols, CipherSuites: pinned13.CipherSuites},
			observed(tls13, []uint16{0x1301}, nil, ptr(true)), nil, v1alpha1.ReasonVerified, "", ""},
		{"disabled but TLS answers", v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled},
			observed(tls13, []uint16{0x1301}, nil, nil), nil, v1alpha1.ReasonProtocolDrift, "Disabled", ""},
		{"plaintext not tested is not refused", pinned13, observed(tls13, []uint16{0x1301}, ptr(true), nil), nil,
			v1alpha1.ReasonProbeIncomplete, "whether the endpoint accepts plaintext could not be tested", ""},
		{"plaintext not tested on an Optional channel", v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelOptional, Protocols: pinned13.Protocols, CipherSuites: pinned13.CipherSuites},
			observed(tls13, []uint16{0x1301}, nil, nil), nil, v1alpha1.ReasonProbeIncomplete, "TLS is Optional", ""},
		{"client auth not tested is not enforced", pinned13, observed(tls13, []uint16{0x1301}, nil, ptr(false)), nil,
			v1alpha1.ReasonProbeIncomplete, "no full handshake", ""},
		{"plaintext accepted outranks an incomplete probe", pinned13, observed(tls13, []uint16{0x1301}, nil, ptr(true)), nil,
			v1alpha1.ReasonPlaintextAccepted, "accepts plaintext", ""},
		{"suite refused", v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelRequired, Protocols: pinned13.Protocols, CipherSuites: []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"}},
			observed(tls13, []uint16{0x1301}, nil, ptr(false)), nil, v1alpha1.ReasonCipherSuiteDrift, "refuses TLS_AES_256_GCM_SHA384", ""},
		{"silence is no refusal", pinned13, silentAt(observed(nil, nil, nil, ptr(false)), crypto.VersionTLS13), nil,
			v1alpha1.ReasonProbeIncomplete, "ClientHellos at TLSv1.3 got no answer", "refuses"},
		{"what answered is judged beside the silence", pinned13, silentAt(observed([]uint16{crypto.VersionTLS12}, []uint16{0xC02F}, ptr(true), ptr(false)), crypto.VersionTLS13), nil,
			v1alpha1.ReasonProbeIncomplete, "protocols also accepts TLSv1.2", "refuses"},
		{"a plaintext listener may keep silent to a ClientHello", v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled},
			silentAt(observed(nil, nil, nil, nil), crypto.VersionTLS12, crypto.VersionTLS13), nil, v1alpha1.ReasonVerified, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Compare(tc.want, tc.got, tc.err)
			if f.Reason != tc.reason || f.Verified != (tc.reason == v1alpha1.ReasonVerified) {
				t.Fatalf("reason %s (verified %v), want %s: %v", f.Reason, f.Verified, tc.reason, f.Differences)
			}
			if tc.contains != "" && !strings.Contains(strings.Join(f.Differences, "; "), tc.contains) {
				t.Errorf("differences %v do not mention %q", f.Differences, tc.contains)
			}
			if tc.lacks != "" && strings.Contains(strings.Join(f.Differences, "; "), tc.lacks) {
				t.Errorf("differences %v say %q", f.Differences, tc.lacks)
			}
		})
	}
}

// A tunnelled channel is verified only when the pod's own address refuses the connection: the
// probe meets a real refused port, and a real silent one (a listener that never accepts, with
// its accept queue full, drops the probe's SYN as a black hole does).
func TestTunnelled(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := closed.Addr().String()
	closed.Close()
	res, scanErr := probe.Scan(context.Background(), refusedAddr, probe.Options{Timeout: time.Second})
	if f := Tunnelled(res, scanErr); !f.Verified {
		t.Errorf("refused outside the tunnel: %+v (%v)", f, scanErr)
	}

	res, scanErr = probe.Scan(context.Background(), silentAddr(t), probe.Options{Timeout: 500 * time.Millisecond})
	if f := Tunnelled(res, scanErr); f.Verified || f.Reason != v1alpha1.ReasonUnreachable || !strings.Contains(f.Differences[0], "silence") {
		t.Errorf("silent outside the tunnel counts as verified: %+v (%v)", f, scanErr)
	}
	if f := Tunnelled(probe.Result{Address: "10.0.0.1:7000"}, nil); f.Verified || f.Reason != v1alpha1.ReasonPlaintextAccepted {
		t.Errorf("answering outside the tunnel: %+v", f)
	}
	if f := Tunnelled(probe.Result{Address: "10.0.0.1:7000"}, errors.New("handshake interrupted")); f.Verified {
		t.Errorf("an incomplete probe counts as verified: %+v", f)
	}
}

// silentAddr listens with a backlog of zero and fills its accept queue, so that the kernel drops
// every further SYN: a connection attempt times out.
func silentAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			return addr // the queue is full: the next SYN is dropped too
		}
		t.Cleanup(func() { c.Close() })
		if i == 16 {
			t.Fatalf("%d connections into a backlog of zero: the kernel does not drop SYNs here", i+1)
		}
	}
}
