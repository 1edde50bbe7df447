package crypto

import (
	"fmt"
	"strings"
)

// TLS protocol versions, using the wire values (as crypto/tls does).
const (
	VersionTLS10 uint16 = 0x0301
	VersionTLS11 uint16 = 0x0302
	VersionTLS12 uint16 = 0x0303
	VersionTLS13 uint16 = 0x0304
)

// ProtocolName is the JSSE/Cassandra spelling of a protocol version ("TLSv1.2").
func ProtocolName(v uint16) string {
	switch v {
	case VersionTLS10:
		return "TLSv1"
	case VersionTLS11:
		return "TLSv1.1"
	case VersionTLS12:
		return "TLSv1.2"
	case VersionTLS13:
		return "TLSv1.3"
	}
	return fmt.Sprintf("0x%04X", v)
}

// ProtocolVersion is the inverse of ProtocolName.
func ProtocolVersion(name string) (uint16, bool) {
	for _, v := range []uint16{VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13} {
		if ProtocolName(v) == name {
			return v, true
		}
	}
	return 0, false
}

// Library is a bit set of the TLS implementations that know a suite.
type Library uint8

const (
	// LibOpenSSL: listed by `openssl ciphers -V 'ALL:COMPLEMENTOFALL'` of OpenSSL 3.0 as Debian
	// builds it (weak-ssl-ciphers disabled), plus the TLS 1.3 CCM suites it supports on request.
	LibOpenSSL Library = 1 << iota
	// LibBoringSSL: BoringSSL's ssl_cipher.cc table, the engine inside netty-tcnative that
	// Cassandra uses by default.
	LibBoringSSL
	// LibJDK: SunJSSE's supported suites in JDK 17 with jdk.tls.disabledAlgorithms emptied.
	LibJDK
	// LibGo: crypto/tls CipherSuites() and InsecureCipherSuites().
	LibGo
)

func (l Library) String() string {
	var parts []string
	for _, x := range []struct {
		bit  Library
		name string
	}{{LibOpenSSL, "OpenSSL"}, {LibBoringSSL, "BoringSSL"}, {LibJDK, "JDK"}, {LibGo, "Go"}} {
		if l&x.bit != 0 {
			parts = append(parts, x.name)
		}
	}
	return strings.Join(parts, ",")
}

// Mode is how the bulk cipher is used.
type Mode string

const (
	ModeGCM              Mode = "GCM"
	ModeCCM              Mode = "CCM"
	ModeCCM8             Mode = "CCM_8" // CCM with an 8-byte tag
	ModeChaCha20Poly1305 Mode = "ChaCha20-Poly1305"
	ModeCBC              Mode = "CBC"
	ModeStream           Mode = "Stream" // RC4
	ModeNone             Mode = "None"   // NULL encryption
)

// Suite is one TLS cipher suite and every property the operator reasons about.
type Suite struct {
	ID          uint16 // IANA code point
	Name        string // IANA name, the name used everywhere in our API
	OpenSSLName string // empty when no OpenSSL build we know of names it
	JSSEName    string // empty when SunJSSE does not know it
	MinVersion  uint16
	MaxVersion  uint16
	Libraries   Library

	KeyExchange    string // RSA, DHE, ECDHE, DH, ECDH, PSK, DHE_PSK, ECDHE_PSK, RSA_PSK, SRP, or "any" for TLS 1.3
	Authentication string // RSA, ECDSA, DSS, PSK, anon, or "any" for TLS 1.3 (certificate)
	Cipher         string // AES, CHACHA20, CAMELLIA, ARIA, 3DES, DES, RC4, NULL
	Mode           Mode
	KeyBits        int    // nominal key length; 0 for NULL
	MAC            string // AEAD, SHA1, SHA256, SHA384, MD5
	AEAD           bool
	ForwardSecrecy bool
	Export         bool
}

// TLS13 reports whether the suite is a TLS 1.3 suite (these name no key exchange and are
// negotiated separately from TLS 1.2 suites by every library).
func (s Suite) TLS13() bool { return s.MinVersion == VersionTLS13 }

// SupportsVersion reports whether the suite can be negotiated at protocol version v.
func (s Suite) SupportsVersion(v uint16) bool { return v >= s.MinVersion && v <= s.MaxVersion }

// Weakness returns why the operator refuses the suite outright, or "" when it does not.
// These are the classes the API rejects: no confidentiality (NULL), deliberately weakened
// (EXPORT), no server authentication (anonymous), broken ciphers (RC4, DES, 3DES/Sweet32)
// and MD5 integrity.
func (s Suite) Weakness() string {
	switch {
	case s.Cipher == "NULL":
		return "NULL encryption sends data in clear text"
	case s.Export:
		return "EXPORT suites use deliberately weakened 40/56-bit keys"
	case s.Authentication == "anon":
		return "anonymous suites do not authenticate the server and allow man-in-the-middle attacks"
	case s.Cipher == "RC4":
		return "RC4 is broken (RFC 7465 prohibits it)"
	case s.Cipher == "DES":
		return "single DES keys can be brute-forced"
	case s.Cipher == "3DES":
		return "3DES has 64-bit blocks (Sweet32) and is deprecated"
	case s.MAC == "MD5":
		return "MD5 integrity is broken"
	}
	return ""
}

// Weak reports whether Weakness is non-empty.
func (s Suite) Weak() bool { return s.Weakness() != "" }
