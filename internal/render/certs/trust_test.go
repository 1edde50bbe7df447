package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

func ca(t *testing.T, name string, notBefore, notAfter time.Time, isCA bool) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(notBefore.UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: isCA, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func names(t *testing.T, bundle []byte) []string {
	certs, err := parse(bundle)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range certs {
		out = append(out, c.Subject.CommonName)
	}
	return out
}

// A CA rotation keeps the previous CA trusted next to the new one; expired CAs, leaves and
// duplicates never enter; the bundle stays bounded.
func TestTrustBundleOverlapsRotations(t *testing.T) {
	now := time.Now()
	year := 365 * 24 * time.Hour
	first := ca(t, "first", now.Add(-2*year), now.Add(3*year), true)
	second := ca(t, "second", now.Add(-time.Hour), now.Add(5*year), true)

	b, n, changed, err := TrustBundle(nil, [][]byte{first}, now)
	if err != nil || n != 1 || !changed {
		t.Fatalf("first bundle: %d CAs, changed %v, %v", n, changed, err)
	}
	if _, _, changed, _ := TrustBundle(b, [][]byte{first}, now); changed {
		t.Error("the same CA again changed the bundle")
	}
	b, n, changed, _ = TrustBundle(b, [][]byte{second}, now)
	if got := names(t, b); n != 2 || !changed || got[0] != "second" || got[1] != "first" {
		t.Errorf("after rotation: %v (changed %v); want both, newest first", got, changed)
	}

	expired := ca(t, "expired", now.Add(-3*year), now.Add(-time.Hour), true)
	leaf := ca(t, "leaf", now, now.Add(year), false)
	third := ca(t, "third", now.Add(-time.Minute), now.Add(5*year), true)
	fourth := ca(t, "fourth", now, now.Add(5*year), true)
	b, _, _, _ = TrustBundle(b, [][]byte{bytes.Join([][]byte{expired, leaf, third}, nil), fourth}, now)
	if got := names(t, b); len(got) != 3 || got[0] != "fourth" || got[2] != "second" {
		t.Errorf("bounded bundle %v; want the 3 newest valid CAs", got)
	}
	if _, _, _, err := TrustBundle([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), nil, now); err == nil {
		t.Error("a corrupt bundle must be an error, not silently dropped")
	}
}

// The trust store keeps every CA of a rotation although cert-manager gives them one subject,
// and the same bundle always encodes to the same bytes.
func TestTrustStoreKeepsCAsThatShareASubject(t *testing.T) {
	now := time.Now()
	bundle := append(ca(t, "datastore-ca", now.Add(-time.Minute), now.Add(time.Hour), true),
		ca(t, "datastore-ca", now.Add(-time.Hour), now.Add(time.Hour), true)...)
	store, err := TrustStore(bundle)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := TrustStore(bundle)
	if !bytes.Equal(store, again) {
		t.Error("the same bundle encoded to different bytes: the ConfigMap would change on every reconcile")
	}
	got, err := pkcs12.DecodeTrustStore(store, "")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parse(bundle)
	if len(got) != len(want) {
		t.Fatalf("the trust store holds %d CAs, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("entry %d is not the bundle's CA %d", i, i)
		}
	}
	if _, err := TrustStore([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")); err == nil {
		t.Error("a bundle that does not parse gave a trust store")
	}
}

// Trusts: every CA asked about must be in the bundle; nothing, or garbage, is never trusted.
func TestTrustsNeedsEveryCAInTheBundle(t *testing.T) {
	now := time.Now()
	first := ca(t, "first", now.Add(-time.Hour), now.Add(time.Hour), true)
	second := ca(t, "second", now.Add(-time.Minute), now.Add(time.Hour), true)
	bundle, _, _, err := TrustBundle(nil, [][]byte{first}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cas  []byte
		want bool
	}{
		{"in the bundle", first, true},
		{"another CA", second, false},
		{"one of two missing", bytes.Join([][]byte{first, second}, nil), false},
		{"nothing", nil, false},
		{"not PEM", []byte("ca"), false},
	} {
		if got := Trusts(bundle, tc.cas); got != tc.want {
			t.Errorf("%s: Trusts = %v, want %v", tc.name, got, tc.want)
		}
	}
}
