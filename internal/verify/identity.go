package verify

import (
	"crypto/x509"
	"fmt"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
)

// Identity is who a TLS endpoint must prove to be: its certificate chains to one of Roots (the
// datastore's trust bundle), is valid now, and names DNSName (the pod's stable name). Without
// it, a node presenting any certificate would pass, a stranger's as well.
type Identity struct {
	Roots   *x509.CertPool
	DNSName string
}

// Check verifies the chain the endpoint presented, leaf first.
func (id Identity) Check(chain []*x509.Certificate, now time.Time) error {
	if len(chain) == 0 {
		return fmt.Errorf("no certificate could be read")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots: id.Roots, Intermediates: inter, DNSName: id.DNSName, CurrentTime: now,
		// Node certificates serve clients and peers alike (internode TLS is mutual).
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	return err
}

// WithIdentity adds the identity check to a TLS endpoint's finding: a certificate that does not
// chain to the trust bundle, has expired or names another host is CertificateUntrusted; a chain
// the probe could not read fails closed as ProbeIncomplete.
func WithIdentity(f Finding, want v1alpha1.EffectiveChannel, id *Identity, got probe.Result, scanErr error, now time.Time) Finding {
	if id == nil || scanErr != nil || want.Mode == v1alpha1.ChannelDisabled {
		return f
	}
	var c check
	switch err := id.Check(got.Chain, now); {
	case err == nil:
		return f
	case len(got.Chain) == 0:
		c = check{v1alpha1.ReasonProbeIncomplete, "no certificate could be read to check who the endpoint is"}
	default:
		c = check{v1alpha1.ReasonCertificateUntrusted, fmt.Sprintf("certificate for %s: %v", id.DNSName, err)}
	}
	f.Verified = false
	f.Differences = append(f.Differences, c.diff)
	f.Reason = MoreSevere(f.Reason, c.reason)
	return f
}
