package verify

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/test/testpki"
)

// A node's certificate must chain to the datastore's trust bundle, be valid now and name the
// pod: anything else is CertificateUntrusted, and a chain that could not be read is no pass.
func TestIdentityChecksChainValidityAndName(t *testing.T) {
	ca := testpki.New(t)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	const host = "ds-0.ds-nodes.default.svc.cluster.local"
	id := &Identity{Roots: roots, DNSName: host}
	leaf := func(ca *testpki.CA, names ...string) []*x509.Certificate {
		return []*x509.Certificate{ca.Issue(t, false, names...).TLS.Leaf}
	}
	want := v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelRequired}
	now := time.Now()
	for _, tc := range []struct {
		name    string
		chain   []*x509.Certificate
		at      time.Time
		reason  string
		problem string
	}{
		{"the pod's own", leaf(ca, "10.0.0.1", host), now, v1alpha1.ReasonVerified, ""},
		{"another CA's", leaf(testpki.New(t), host), now, v1alpha1.ReasonCertificateUntrusted, "unknown authority"},
		{"another host's", leaf(ca, "ds-1.ds-nodes.default.svc.cluster.local"), now, v1alpha1.ReasonCertificateUntrusted, "not " + host},
		{"expired", leaf(ca, host), now.Add(48 * time.Hour), v1alpha1.ReasonCertificateUntrusted, "expired"},
		{"none read", nil, now, v1alpha1.ReasonProbeIncomplete, "no certificate could be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := probe.Result{Address: "10.0.0.1:9042", Chain: tc.chain}
			f := WithIdentity(Finding{Verified: true, Reason: v1alpha1.ReasonVerified}, want, id, got, nil, tc.at)
			if f.Reason != tc.reason || f.Verified != (tc.reason == v1alpha1.ReasonVerified) {
				t.Fatalf("finding %+v, want %s", f, tc.reason)
			}
			if tc.problem != "" && !strings.Contains(strings.Join(f.Differences, "; "), tc.problem) {
				t.Errorf("differences %q do not say %q", f.Differences, tc.problem)
			}
		})
	}
	// An untrusted certificate outranks drift, and plaintext outranks it.
	if MoreSevere(v1alpha1.ReasonCipherSuiteDrift, v1alpha1.ReasonCertificateUntrusted) != v1alpha1.ReasonCertificateUntrusted ||
		MoreSevere(v1alpha1.ReasonPlaintextAccepted, v1alpha1.ReasonCertificateUntrusted) != v1alpha1.ReasonPlaintextAccepted {
		t.Error("severity order")
	}
}
