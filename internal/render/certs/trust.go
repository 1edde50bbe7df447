package certs

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"secured.dev/operator/api/v1alpha1"
)

// TrustConfigMap holds the datastore's trust bundle: every CA whose certificates nodes may
// present, so that a CA rotation never leaves a node distrusting a peer whose certificate the
// previous CA signed. Pods mount it; the reloader picks up changes.
func TrustConfigMap(ds *v1alpha1.SecuredDatastore) string { return ds.Name + "-trust" }

// The trust bundle in two forms, the same CAs in each.
const (
	// BundleKey is the PEM bundle, newest CA first: what Cassandra, Go and OpenSSL read.
	BundleKey = "ca.crt"
	// TrustStoreKey (binary data) is a PKCS #12 trust store with one entry per CA: what HBase
	// reads. HBase's PEM reader keys trusted certificates by subject, and cert-manager re-issues
	// a CA with the same subject, so from a PEM bundle HBase would keep only one CA of a rotation
	// and refuse every certificate the other signed.
	TrustStoreKey = "truststore.p12"
)

// maxBundledCAs bounds the bundle: the current CA and the ones before it that may still have
// signed a live node certificate.
const maxBundledCAs = 3

// TrustBundle merges the CA certificates in the existing bundle with the ones cert-manager
// reports now (each a PEM block or several), drops expired ones and duplicates, and returns
// the newest maxBundledCAs as PEM, newest first. It also returns the number of CAs and
// whether the set differs from existing.
func TrustBundle(existing []byte, sources [][]byte, now time.Time) (bundle []byte, count int, changed bool, err error) {
	old, err := parse(existing)
	if err != nil {
		return nil, 0, false, fmt.Errorf("the existing trust bundle: %w", err)
	}
	all := slices.Clone(old)
	for _, src := range sources {
		certs, err := parse(src)
		if err != nil {
			return nil, 0, false, err
		}
		all = append(all, certs...)
	}
	var keep []*x509.Certificate
	for _, c := range all {
		if !c.IsCA || now.After(c.NotAfter) || slices.ContainsFunc(keep, func(k *x509.Certificate) bool { return k.Equal(c) }) {
			continue
		}
		keep = append(keep, c)
	}
	slices.SortStableFunc(keep, func(a, b *x509.Certificate) int { return b.NotBefore.Compare(a.NotBefore) })
	if len(keep) > maxBundledCAs {
		keep = keep[:maxBundledCAs]
	}
	var out bytes.Buffer
	for _, c := range keep {
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	changed = len(keep) != len(old) || slices.ContainsFunc(keep, func(c *x509.Certificate) bool {
		return !slices.ContainsFunc(old, func(o *x509.Certificate) bool { return o.Equal(c) })
	})
	return out.Bytes(), len(keep), changed, nil
}

// Trusts reports whether the bundle holds every CA certificate in cas (PEM).
func Trusts(bundle, cas []byte) bool {
	have, err := parse(bundle)
	if err != nil {
		return false
	}
	want, err := parse(cas)
	if err != nil || len(want) == 0 {
		return false
	}
	for _, c := range want {
		if !slices.ContainsFunc(have, func(h *x509.Certificate) bool { return h.Equal(c) }) {
			return false
		}
	}
	return true
}

// TrustStore is the bundle as a PKCS #12 trust store without a password, as Java reads it from
// version 11 on: it holds public certificates only, so a password would protect nothing. Each
// CA's alias is derived from its fingerprint, so the same bundle always gives the same bytes and
// the ConfigMap changes only when the CAs do.
func TrustStore(bundle []byte) ([]byte, error) {
	cas, err := parse(bundle)
	if err != nil {
		return nil, err
	}
	entries := make([]pkcs12.TrustStoreEntry, len(cas))
	for i, c := range cas {
		sum := sha256.Sum256(c.Raw)
		entries[i] = pkcs12.TrustStoreEntry{Cert: c, FriendlyName: fmt.Sprintf("ca-%x", sum[:8])}
	}
	store, err := pkcs12.Passwordless.EncodeTrustStoreEntries(entries, "")
	if err != nil {
		return nil, fmt.Errorf("encoding the trust store: %w", err)
	}
	return store, nil
}

func parse(b []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return out, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing a CA certificate: %w", err)
		}
		out = append(out, c)
	}
}
