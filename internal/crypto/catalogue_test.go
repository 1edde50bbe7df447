package crypto

import (
	"strings"
	"testing"
)

func TestCatalogueIsConsistent(t *testing.T) {
	if len(All()) < 190 {
		t.Fatalf("catalogue has %d suites; expected every suite OpenSSL, BoringSSL, the JDK and Go know (~200)", len(All()))
	}
	names, ids := map[string]bool{}, map[uint16]bool{}
	for _, s := range All() {
		if names[s.Name] || ids[s.ID] {
			t.Errorf("duplicate suite %s", s)
		}
		names[s.Name], ids[s.ID] = true, true
		if s.Libraries == 0 {
			t.Errorf("%s: no library knows it", s.Name)
		}
		if s.MinVersion > s.MaxVersion || s.MinVersion < VersionTLS10 || s.MaxVersion > VersionTLS13 {
			t.Errorf("%s: bad version range", s)
		}
		if s.TLS13() != (s.ID>>8 == 0x13) {
			t.Errorf("%s: TLS 1.3 suites are exactly the 0x13xx code points", s)
		}
		if s.AEAD && s.MaxVersion < VersionTLS12 {
			t.Errorf("%s: AEAD suites need TLS 1.2", s)
		}
		if s.Libraries&LibJDK != 0 && s.JSSEName == "" {
			t.Errorf("%s: the JDK knows it but no JSSE name is recorded", s.Name)
		}
		if got, ok := LookupID(s.ID); !ok || got.Name != s.Name {
			t.Errorf("LookupID(0x%04X) = %v", s.ID, got)
		}
		for _, alt := range []string{s.OpenSSLName, s.JSSEName} {
			if got, ok := LookupAny(alt); alt != "" && (!ok || got.Name != s.Name) {
				t.Errorf("LookupAny(%q) = %v, want %s", alt, got.Name, s.Name)
			}
		}
	}
}

// One test per derived property, on suites whose properties are textbook facts.
func TestDerivedProperties(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		kx, au, cipher             string
		mode                       Mode
		bits                       int
		mac                        string
		aead, fs, tls13, weak, exp bool
	}{
		{"TLS_AES_128_GCM_SHA256", "any", "any", "AES", ModeGCM, 128, "AEAD", true, true, true, false, false},
		{"TLS_CHACHA20_POLY1305_SHA256", "any", "any", "CHACHA20", ModeChaCha20Poly1305, 256, "AEAD", true, true, true, false, false},
		{"TLS_AES_128_CCM_8_SHA256", "any", "any", "AES", ModeCCM8, 128, "AEAD", true, true, true, false, false},
		{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE", "RSA", "AES", ModeGCM, 256, "AEAD", true, true, false, false, false},
		{"TLS_ECDHE_ECDSA_WITH_AES_128_CCM", "ECDHE", "ECDSA", "AES", ModeCCM, 128, "AEAD", true, true, false, false, false},
		{"TLS_DHE_RSA_WITH_AES_128_CBC_SHA", "DHE", "RSA", "AES", ModeCBC, 128, "SHA1", false, true, false, false, false},
		{"TLS_RSA_WITH_AES_256_CBC_SHA256", "RSA", "RSA", "AES", ModeCBC, 256, "SHA256", false, false, false, false, false},
		{"TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256", "ECDH", "ECDSA", "AES", ModeGCM, 128, "AEAD", true, false, false, false, false},
		{"TLS_PSK_WITH_CAMELLIA_128_CBC_SHA256", "PSK", "PSK", "CAMELLIA", ModeCBC, 128, "SHA256", false, false, false, false, false},
		{"TLS_PSK_DHE_WITH_AES_128_CCM_8", "DHE_PSK", "PSK", "AES", ModeCCM8, 128, "AEAD", true, true, false, false, false},
		{"TLS_DHE_RSA_WITH_ARIA_256_GCM_SHA384", "DHE", "RSA", "ARIA", ModeGCM, 256, "AEAD", true, true, false, false, false},
		{"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "RSA", "RSA", "3DES", ModeCBC, 168, "SHA1", false, false, false, true, false},
		{"TLS_RSA_WITH_RC4_128_MD5", "RSA", "RSA", "RC4", ModeStream, 128, "MD5", false, false, false, true, false},
		{"TLS_RSA_EXPORT_WITH_DES40_CBC_SHA", "RSA", "RSA", "DES", ModeCBC, 40, "SHA1", false, false, false, true, true},
		{"TLS_ECDHE_RSA_WITH_NULL_SHA", "ECDHE", "RSA", "NULL", ModeNone, 0, "SHA1", false, true, false, true, false},
		{"TLS_DH_anon_WITH_AES_256_GCM_SHA384", "DH", "anon", "AES", ModeGCM, 256, "AEAD", true, false, false, true, false},
	} {
		s, ok := Lookup(tc.name)
		if !ok {
			t.Errorf("%s missing from the catalogue", tc.name)
			continue
		}
		got := []any{s.KeyExchange, s.Authentication, s.Cipher, s.Mode, s.KeyBits, s.MAC, s.AEAD, s.ForwardSecrecy, s.TLS13(), s.Weak(), s.Export}
		want := []any{tc.kx, tc.au, tc.cipher, tc.mode, tc.bits, tc.mac, tc.aead, tc.fs, tc.tls13, tc.weak, tc.exp}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: property %d = %v, want %v (%s)", tc.name, i, got[i], want[i], s)
			}
		}
	}
}

func TestParseNameRejectsGarbage(t *testing.T) {
	for _, name := range []string{"ECDHE-RSA-AES128-GCM-SHA256", "TLS_FOO_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_XX_CBC_SHA", "TLS_RSA_WITH_AES_128_CBC", "TLS_RSA_WITH_AES_128_XTS_SHA"} {
		if _, err := parseName(name); err == nil {
			t.Errorf("parseName(%q) succeeded", name)
		}
	}
}

func TestCheckSuiteNameExplains(t *testing.T) {
	for name, want := range map[string]string{
		"TLS_AES_128_GCM_SHA256":        "",
		"ECDHE-RSA-AES128-GCM-SHA256":   "write TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		"SSL_RSA_WITH_3DES_EDE_CBC_SHA": "write TLS_RSA_WITH_3DES_EDE_CBC_SHA",
		"TLS_RSA_WITH_RC4_128_SHA":      "RC4 is broken",
		"TLS_NOPE":                      "not a TLS cipher suite",
	} {
		err := CheckSuiteName(name)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
}
