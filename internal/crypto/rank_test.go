package crypto

import (
	"strings"
	"testing"

	"secured.dev/operator/api/v1alpha1"
)

func TestRankRule(t *testing.T) {
	for _, s := range All() {
		r := s.Rank()
		switch {
		case s.Weak() && r != 0:
			t.Errorf("%s: refused suites rank 0, got %d", s.Name, r)
		case !s.Weak() && (r < 1 || r > MaxSuiteRank):
			t.Errorf("%s: rank %d outside 1..%d", s.Name, r, MaxSuiteRank)
		}
	}
	// Lexicographic: a property outweighs every property below it together.
	for _, a := range All() {
		for _, b := range All() {
			if a.Weak() || b.Weak() {
				continue
			}
			if a.ForwardSecrecy && !b.ForwardSecrecy && a.Rank() <= b.Rank() {
				t.Fatalf("%s (forward secret, rank %d) must outrank %s (rank %d)", a.Name, a.Rank(), b.Name, b.Rank())
			}
			if a.ForwardSecrecy == b.ForwardSecrecy && a.AEAD && a.Mode != ModeCCM8 && !b.AEAD && a.Rank() <= b.Rank() {
				t.Fatalf("%s (AEAD) must outrank %s (not AEAD)", a.Name, b.Name)
			}
		}
	}
}

func TestRanksOfWellKnownSuites(t *testing.T) {
	for name, want := range map[string]int32{
		"TLS_AES_256_GCM_SHA384":                  64,
		"TLS_CHACHA20_POLY1305_SHA256":            64,
		"TLS_AES_128_GCM_SHA256":                  60,
		"TLS_AES_128_CCM_8_SHA256":                44, // 8-byte tag: not a full-length AEAD
		"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": 56,
		"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":   52,
		"TLS_DHE_RSA_WITH_AES_256_CBC_SHA":        38, // the papers' suites
		"TLS_DHE_RSA_WITH_AES_128_CBC_SHA":        34,
		"TLS_RSA_WITH_AES_256_GCM_SHA384":         24,
		"TLS_RSA_WITH_AES_128_CBC_SHA":            2,
		"TLS_RSA_WITH_3DES_EDE_CBC_SHA":           0,
	} {
		s, _ := Lookup(name)
		if got := s.Rank(); got != want {
			t.Errorf("%s: rank %d, want %d", name, got, want)
		}
	}
}

func TestNonTLSProtectionRanks(t *testing.T) {
	if wg, tls13 := wireGuardProtection.Rank(), mustLookup(t, "TLS_CHACHA20_POLY1305_SHA256").Rank(); wg != tls13 {
		t.Errorf("WireGuard (%d) uses the same primitives as TLS 1.3 ChaCha20 (%d) and ranks the same", wg, tls13)
	}
	if o128, o256 := openVPNProtection("AES-128-GCM").Rank(), openVPNProtection("AES-256-GCM").Rank(); o128 >= o256 {
		t.Errorf("OpenVPN AES-128 (%d) must rank below AES-256 (%d)", o128, o256)
	}
	if sasl, gcm := saslPrivacyProtection.Rank(), mustLookup(t, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256").Rank(); sasl >= gcm {
		t.Errorf("SASL privacy (%d, no forward secrecy) must rank below ECDHE TLS (%d)", sasl, gcm)
	}
}

func mustLookup(t *testing.T, name string) Suite {
	t.Helper()
	s, ok := Lookup(name)
	if !ok {
		t.Fatalf("%s not in catalogue", name)
	}
	return s
}

func BenchmarkSuiteRank(b *testing.B) {
	all := All()
	for b.Loop() {
		for _, s := range all {
			_ = s.Rank()
		}
	}
}

// Data protection is ranked apart from the wire, and its notes say what stays readable: above
// all that Cassandra's engine-level encryption leaves SSTables in clear.
func TestAssessmentOfDataOnDiskAndInTheClient(t *testing.T) {
	plain := Assess(v1alpha1.EffectiveEncryption{}, v1alpha1.EngineCassandra)
	if plain.AtRestRank != 0 || plain.ClientSideRank != 0 || len(plain.Notes) != 1 || !strings.Contains(plain.Notes[0], "encrypts nothing it writes to disk") {
		t.Errorf("plaintext: %+v", plain)
	}
	fields := int32(3)
	e := v1alpha1.EffectiveEncryption{
		AtRest:     &v1alpha1.AtRestEncryption{Engine: &v1alpha1.EngineAtRest{KeyBits: 256}},
		ClientSide: &v1alpha1.ClientSideEncryption{Cipher: v1alpha1.ClientAES128GCM, Signature: v1alpha1.ClientEd25519, Fields: &fields},
	}
	a := Assess(e, v1alpha1.EngineCassandra)
	// AES-256-CBC: a 256-bit key, widely reviewed, no tag; AES-128-GCM: a full-tag AEAD.
	if a.AtRestRank != 1+4+1 || a.ClientSideRank != 1+16+2+1 || a.Rank != plain.Rank {
		t.Errorf("ranks at rest %d, client side %d, wire %d; want 6, 20 and the wire rank unchanged (%d)", a.AtRestRank, a.ClientSideRank, a.Rank, plain.Rank)
	}
	joined := strings.Join(a.Notes, "\n")
	for _, want := range []string{"SSTables (flushed and compacted data) stay in clear", "encrypts and signs the first 3 fields", "row keys"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes %q lack %q", joined, want)
		}
	}
	signOnly := Assess(v1alpha1.EffectiveEncryption{ClientSide: &v1alpha1.ClientSideEncryption{Cipher: v1alpha1.ClientCipherNone, Signature: v1alpha1.ClientRSA2048}}, v1alpha1.EngineCassandra)
	if signOnly.ClientSideRank != 0 || !strings.Contains(strings.Join(signOnly.Notes, " "), "signs (without encrypting) every field") {
		t.Errorf("signatures only: %+v", signOnly)
	}
}
