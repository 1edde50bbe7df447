package dataplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"strings"
	"testing"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/test/testpki"
	"secured.dev/operator/internal/verify"
)

// scan probes one endpoint the way its channel is probed, and logs what it saw.
func scan(t *testing.T, e Endpoint) (probe.Result, error) {
	t.Helper()
	res, err := probe.Scan(context.Background(), e.Address, e.Probe)
	t.Logf("observed %s: protocols %v suites %v client auth required %v plaintext %v (scan %s)",
		e.Address, res.VersionNames(), res.SuiteNames(), deref(res.ClientAuthRequired), deref(res.PlaintextAccepted), res.Duration.Round(1e6))
	return res, err
}

func deref(b *bool) any {
	if b == nil {
		return "unknown"
	}
	return *b
}

// A real Cassandra 5.0 node configured by the builders with the shipped TLS 1.3 AES-128-GCM
// profile: the JDK engine honours the pinned suite on both channels, and the wire proves it.
func TestCassandraWireMatchesPinnedTLS13ProfileWithJDKEngine(t *testing.T) {
	withCassandra(t)
	enc := ShippedProfile(t, "tls13-aes128-gcm", nil)
	if enc.ClientToNode.Engine != v1alpha1.TLSEngineJDK {
		t.Fatalf("engine %s; resolution must pick the JDK for a pinned TLS 1.3 suite", enc.ClientToNode.Engine)
	}
	node := StartCassandra(t, Node{Address: "127.0.0.1", Step: cassandra.Target(enc), CA: testpki.New(t)})
	for _, e := range node.Endpoints(enc) {
		got, err := scan(t, e)
		if f := verify.Compare(e.Want, got, err); !f.Verified {
			t.Errorf("%s: EncryptionVerified=False %s: %v", e.Channel, f.Reason, f.Differences)
		}
	}

	// The benchmark's pinned dialer gets exactly the pinned suite from this node and says so.
	pin, err := pintls.Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	if err != nil {
		t.Fatal(err)
	}
	dialer := &pintls.HostDialer{Pin: pin, TLS: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // trust is not what this checks
	session, err := PinnedCQLSession(t, dialer, node)
	if err != nil {
		t.Fatalf("a session pinned to the profile's own suite: %v", err)
	}
	var release string
	if err := session.Query("SELECT release_version FROM system.local").Scan(&release); err != nil {
		t.Fatal(err)
	}
	if got, ok := dialer.Negotiated(); !ok || got != pin {
		t.Errorf("negotiated %v; want %v", got, pin)
	}
}

// The same profile forced onto the OpenSSL engine (BoringSSL cannot restrict TLS 1.3 suites),
// with plaintext still accepted on both ports during a transition: the prober reports the
// drift the configuration file hides, and the canary sees a value a plaintext client writes.
func TestCassandraWireShowsBoringSSLDriftAndOptionalPlaintext(t *testing.T) {
	withCassandra(t)
	openssl := v1alpha1.TLSSettings{Engine: v1alpha1.TLSEngineOpenSSL}
	optional := v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelOptional, TLS: &openssl}
	enc := ShippedProfile(t, "tls13-aes128-gcm", &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: optional},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: optional},
	})
	node := StartCassandra(t, Node{Address: "127.0.0.1", Step: cassandra.Target(enc), CA: testpki.New(t)})

	endpoints := node.Endpoints(enc)
	rr, err := scan(t, endpoints[1])
	if err != nil || rr.PlaintextAccepted == nil || !*rr.PlaintextAccepted {
		t.Errorf("nodeToNode Optional: plaintextAccepted %v (%v); want true", deref(rr.PlaintextAccepted), err)
	}
	f := verify.Compare(enc.NodeToNode, rr, err)
	if f.Reason != v1alpha1.ReasonCipherSuiteDrift || !strings.Contains(strings.Join(f.Differences, ";"), "also accepts TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256") {
		t.Errorf("nodeToNode: %s %v; want CipherSuiteDrift naming the two extra TLS 1.3 suites", f.Reason, f.Differences)
	}
	ar, err := scan(t, endpoints[0])
	if err != nil || ar.PlaintextAccepted == nil || !*ar.PlaintextAccepted {
		t.Errorf("clientToNode Optional: plaintextAccepted %v (%v); want true", deref(ar.PlaintextAccepted), err)
	}
	if f := verify.Compare(enc.ClientToNode, ar, err); f.Reason != v1alpha1.ReasonCipherSuiteDrift {
		t.Errorf("clientToNode: %s %v; want CipherSuiteDrift", f.Reason, f.Differences)
	}
	if !strings.Contains(node.Log(), "BoringSSL doesn't allow to enable or disable TLSv1.3 ciphers") {
		t.Error("Cassandra did not log BoringSSL's refusal; is the OpenSSL engine in use?")
	}

	// BoringSSL accepts every TLS 1.3 suite and chooses one itself: a benchmark pinned to
	// ChaCha20 refuses to measure the suite it chose instead.
	pin, err := pintls.Parse("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256")
	if err != nil {
		t.Fatal(err)
	}
	_, err = PinnedCQLSession(t, &pintls.HostDialer{Pin: pin, TLS: &tls.Config{InsecureSkipVerify: true}}, node) //nolint:gosec // trust is not what this checks
	if err == nil || !strings.Contains(err.Error(), "but the benchmark pins TLSv1.3 TLS_CHACHA20_POLY1305_SHA256") {
		t.Errorf("a session pinned to ChaCha20 against BoringSSL: %v; want a refusal naming the negotiated suite", err)
	}

	// The canary's positive control: a plaintext client's value is in the capture.
	session := CQLSession(t, nil, node)
	marker := Marker(t)
	capture := Capture(t, []int{cassandra.NativePort}, func() {
		if err := session.Query("SELECT release_version FROM system.local WHERE key = ?", marker).Exec(); err != nil {
			t.Fatalf("plaintext query: %v", err)
		}
	})
	if !bytes.Contains(capture, []byte(marker)) {
		t.Errorf("a plaintext client's marker is not in the capture (%d bytes): the canary cannot see clear text", len(capture))
	}
}
