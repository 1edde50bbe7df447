package crypto

// The security rank is an ordinal scale (the "preference ordering" step of the evidence-based
// process): it orders configurations, it does not measure how much more secure one is.
//
// Rule, for a cipher suite or any other channel protection described by the same properties:
// refused suites (see Suite.Weakness) rank 0; otherwise the rank is
//
//	1 + 32·forward secrecy + 16·AEAD with a full-length tag + 8·TLS 1.3 (or an equally modern
//	    handshake) + 4·256-bit key + 2·SHA-2 or AEAD integrity + 1·AES or ChaCha20
//
// so properties compare lexicographically in that order: forward secrecy matters more than
// everything below it together, and so on. The order follows what breaks first in practice:
// loss of a long-term key exposes all recorded traffic without forward secrecy; CBC with
// MAC-then-encrypt has a history of padding oracles (Lucky13, POODLE) that AEAD modes avoid;
// TLS 1.3 removes renegotiation and downgrade weaknesses and encrypts the handshake; beyond
// that, key length, hash strength and cipher scrutiny. The range is 1..64.
const (
	MaxSuiteRank   = 64
	MaxChannelRank = MaxSuiteRank
	MaxProfileRank = 2 * MaxChannelRank
)

// Protection is the set of properties the rank rule looks at.
type Protection struct {
	Refused         bool
	ForwardSecrecy  bool
	FullTagAEAD     bool
	ModernHandshake bool
	Key256          bool
	SHA2Integrity   bool
	WidelyReviewed  bool // AES or ChaCha20
}

// Rank applies the rank rule.
func (p Protection) Rank() int32 {
	if p.Refused {
		return 0
	}
	r := int32(1)
	for _, x := range []struct {
		on     bool
		weight int32
	}{{p.ForwardSecrecy, 32}, {p.FullTagAEAD, 16}, {p.ModernHandshake, 8}, {p.Key256, 4}, {p.SHA2Integrity, 2}, {p.WidelyReviewed, 1}} {
		if x.on {
			r += x.weight
		}
	}
	return r
}

// Protection describes the suite for the rank rule.
func (s Suite) Protection() Protection {
	return Protection{
		Refused:         s.Weak(),
		ForwardSecrecy:  s.ForwardSecrecy,
		FullTagAEAD:     s.AEAD && s.Mode != ModeCCM8,
		ModernHandshake: s.TLS13(),
		Key256:          s.KeyBits >= 256,
		SHA2Integrity:   s.AEAD || s.MAC == "SHA256" || s.MAC == "SHA384",
		WidelyReviewed:  s.Cipher == "AES" || s.Cipher == "CHACHA20",
	}
}

// Rank is the suite's security rank.
func (s Suite) Rank() int32 { return s.Protection().Rank() }

// Non-TLS protections, described by the same properties so that one rule ranks them all.
var (
	// WireGuard: Noise IK handshake with ephemeral Curve25519 keys (rekeyed every two minutes),
	// ChaCha20-Poly1305, BLAKE2s.
	wireGuardProtection = Protection{ForwardSecrecy: true, FullTagAEAD: true, ModernHandshake: true, Key256: true, SHA2Integrity: true, WidelyReviewed: true}
	// SASL GSSAPI privacy with Kerberos: the wrap uses the ticket's session key
	// (aes256-cts-hmac-sha1-96 with modern KDC defaults); long-term keys protect the tickets, so
	// there is no forward secrecy, and integrity is HMAC-SHA1 over CTS, not an AEAD.
	saslPrivacyProtection = Protection{Key256: true, WidelyReviewed: true}
	// HBase's AES transform: a 128-bit AES/CTR key negotiated inside the SASL exchange, HMAC-SHA1
	// integrity (hbase.rpc.crypto.encryption.aes.* defaults).
	saslAESTransformProtection = Protection{WidelyReviewed: true}
)

// openVPNProtection: TLS control channel with ECDHE, data channel AEAD with the given cipher.
func openVPNProtection(cipher string) Protection {
	return Protection{ForwardSecrecy: true, FullTagAEAD: true, Key256: cipher != "AES-128-GCM", SHA2Integrity: true, WidelyReviewed: true}
}

// hdfsDataTransferProtection: AES/CTR with a key negotiated by SASL DIGEST-MD5 over block
// access tokens; no forward secrecy, no AEAD.
func hdfsDataTransferProtection(keyBits int32) Protection {
	return Protection{Key256: keyBits >= 256, WidelyReviewed: true}
}
