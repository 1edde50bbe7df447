package crypto

import (
	"fmt"
	"strconv"
	"strings"
)

// kxAuth maps the part of an IANA name between "TLS_" and "_WITH_" to key exchange and
// authentication. Static (EC)DH suites authenticate with the certificate that carries the
// fixed DH key, signed by RSA or ECDSA/DSS.
var kxAuth = map[string][2]string{
	"RSA":            {"RSA", "RSA"},
	"RSA_EXPORT":     {"RSA", "RSA"},
	"DH_DSS":         {"DH", "DSS"},
	"DH_RSA":         {"DH", "RSA"},
	"DHE_DSS":        {"DHE", "DSS"},
	"DHE_DSS_EXPORT": {"DHE", "DSS"},
	"DHE_RSA":        {"DHE", "RSA"},
	"DHE_RSA_EXPORT": {"DHE", "RSA"},
	"DH_anon":        {"DH", "anon"},
	"DH_anon_EXPORT": {"DH", "anon"},
	"ECDH_ECDSA":     {"ECDH", "ECDSA"},
	"ECDH_RSA":       {"ECDH", "RSA"},
	"ECDHE_ECDSA":    {"ECDHE", "ECDSA"},
	"ECDHE_RSA":      {"ECDHE", "RSA"},
	"ECDH_anon":      {"ECDH", "anon"},
	"PSK":            {"PSK", "PSK"},
	"DHE_PSK":        {"DHE_PSK", "PSK"},
	"PSK_DHE":        {"DHE_PSK", "PSK"}, // RFC 6655 spells TLS_PSK_DHE_WITH_AES_*_CCM_8 this way
	"ECDHE_PSK":      {"ECDHE_PSK", "PSK"},
	"RSA_PSK":        {"RSA_PSK", "RSA"},
	"SRP_SHA":        {"SRP", "SRP"},
	"SRP_SHA_RSA":    {"SRP", "RSA"},
	"SRP_SHA_DSS":    {"SRP", "DSS"},
}

// forwardSecret lists key exchanges whose session keys do not depend on a long-term key.
var forwardSecret = map[string]bool{"DHE": true, "ECDHE": true, "DHE_PSK": true, "ECDHE_PSK": true, "any": true}

var macs = map[string]string{"SHA": "SHA1", "SHA256": "SHA256", "SHA384": "SHA384", "MD5": "MD5"}

// parseName derives key exchange, authentication, cipher, mode, key size, MAC, AEAD, forward
// secrecy and export status from an IANA suite name.
func parseName(name string) (Suite, error) {
	s := Suite{Name: name}
	rest, ok := strings.CutPrefix(name, "TLS_")
	if !ok {
		return s, fmt.Errorf("%s: IANA names start with TLS_", name)
	}
	prefix, bulk, hasWith := strings.Cut(rest, "_WITH_")
	if hasWith {
		ka, ok := kxAuth[prefix]
		if !ok {
			return s, fmt.Errorf("%s: unknown key exchange %q", name, prefix)
		}
		s.KeyExchange, s.Authentication = ka[0], ka[1]
		s.Export = strings.Contains(prefix, "EXPORT")
	} else {
		// TLS 1.3: TLS_<AEAD>_<HKDF hash>; key exchange is always (EC)DHE negotiated in
		// key_share, authentication by whatever certificate the server holds.
		s.KeyExchange, s.Authentication = "any", "any"
		bulk = rest
	}
	s.ForwardSecrecy = forwardSecret[s.KeyExchange]

	tokens := strings.Split(bulk, "_")
	// The last token names the MAC (TLS ≤ 1.2 CBC/stream), the PRF hash (TLS 1.2 AEAD) or the
	// HKDF hash (TLS 1.3). TLS 1.2 CCM suites have none.
	hash := ""
	if m, ok := macs[tokens[len(tokens)-1]]; ok {
		hash = m
		tokens = tokens[:len(tokens)-1]
	}
	cipher := strings.Join(tokens, "_")
	switch {
	case cipher == "NULL":
		s.Cipher, s.Mode = "NULL", ModeNone
	case cipher == "CHACHA20_POLY1305":
		s.Cipher, s.Mode, s.KeyBits = "CHACHA20", ModeChaCha20Poly1305, 256
	case strings.HasPrefix(cipher, "RC4_"):
		s.Cipher, s.Mode = "RC4", ModeStream
		s.KeyBits, _ = strconv.Atoi(strings.TrimPrefix(cipher, "RC4_"))
	case cipher == "3DES_EDE_CBC":
		s.Cipher, s.Mode, s.KeyBits = "3DES", ModeCBC, 168
	case cipher == "DES_CBC":
		s.Cipher, s.Mode, s.KeyBits = "DES", ModeCBC, 56
	case cipher == "DES40_CBC":
		s.Cipher, s.Mode, s.KeyBits = "DES", ModeCBC, 40
	default:
		// <CIPHER>_<BITS>_<MODE>, e.g. AES_128_GCM, CAMELLIA_256_CBC, ARIA_128_GCM, AES_128_CCM_8.
		if len(tokens) < 3 {
			return s, fmt.Errorf("%s: cannot parse bulk cipher %q", name, cipher)
		}
		bits, err := strconv.Atoi(tokens[1])
		if err != nil {
			return s, fmt.Errorf("%s: cannot parse key bits in %q", name, cipher)
		}
		s.Cipher, s.KeyBits = tokens[0], bits
		switch mode := strings.Join(tokens[2:], "_"); mode {
		case "GCM":
			s.Mode = ModeGCM
		case "CCM":
			s.Mode = ModeCCM
		case "CCM_8":
			s.Mode = ModeCCM8
		case "CBC":
			s.Mode = ModeCBC
		default:
			return s, fmt.Errorf("%s: unknown mode %q", name, mode)
		}
	}
	switch s.Mode {
	case ModeGCM, ModeCCM, ModeCCM8, ModeChaCha20Poly1305:
		s.AEAD, s.MAC = true, "AEAD"
	default:
		if hash == "" {
			return s, fmt.Errorf("%s: a non-AEAD suite must name its MAC", name)
		}
		s.MAC = hash
	}
	return s, nil
}
