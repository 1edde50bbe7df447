package k6ycsb

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/testpki"
)

// The CA file is read at each handshake: a client running through a CA rotation trusts the
// new CA as soon as the mounted bundle holds it, and never a name the certificate lacks.
func TestVerificationFollowsTheCAFile(t *testing.T) {
	oldCA, newCA := testpki.New(t), testpki.New(t)
	issued := newCA.Issue(t, false, "orders.shop.svc")
	leaf, err := x509.ParseCertificate(issued.TLS.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	state := tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	write := func(pems ...[]byte) {
		t.Helper()
		var b []byte
		for _, p := range pems {
			b = append(b, p...)
		}
		if err := os.WriteFile(caFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	verify := verifyWithRootsFrom(caFile, "orders.shop.svc")
	if err := verify(state); err == nil {
		t.Error("verified with no CA file")
	}
	write(oldCA.PEM)
	if err := verify(state); err == nil {
		t.Error("a certificate of the new CA verified against the old one alone")
	}
	write(oldCA.PEM, newCA.PEM)
	if err := verify(state); err != nil {
		t.Errorf("after the bundle gained the new CA: %v", err)
	}
	if err := verifyWithRootsFrom(caFile, "other.shop.svc")(state); err == nil {
		t.Error("verified a name the certificate does not carry")
	}
}

// Options that cannot work are refused with the option's name.
func TestTLSOptionsAreChecked(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "missing.crt")
	for name, o := range map[string]cqlOptions{
		"tls.fallback":   {TLS: &tlsOptions{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", Fallback: "yes"}},
		"tls.caFile":     {TLS: &tlsOptions{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", CAFile: caFile, ServerName: "a"}},
		"tls.serverName": {TLS: &tlsOptions{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", CAFile: caFile, Fallback: "plaintext"}},
		"retries":        {Retries: -1},
		"tls.keyFile":    {TLS: &tlsOptions{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", CertFile: caFile}},
		"tls.certFile":   {TLS: &tlsOptions{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", CertFile: caFile, KeyFile: caFile}},
	} {
		_, err := o.settings(1)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v; want an error naming it", name, err)
		}
	}
	// With the fallback the CA file may appear later, with the cluster's TLS.
	o := cqlOptions{TLS: &tlsOptions{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", CAFile: caFile, ServerName: "a", Fallback: "plaintext"}}
	if s, err := o.settings(1); err != nil || !s.PlaintextFallback {
		t.Errorf("fallback with a CA file still to come: %+v, %v", s, err)
	}
}
