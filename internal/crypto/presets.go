package crypto

import (
	"slices"

	"secured.dev/operator/api/v1alpha1"
)

// Preset is a compliance baseline: the protocols and suites it allows.
type Preset struct {
	Name      v1alpha1.CompliancePreset
	Source    string
	Protocols []uint16
	allows    func(Suite) bool
}

// Allows reports whether the preset allows the suite.
func (p Preset) Allows(s Suite) bool {
	if s.Weak() || !slices.ContainsFunc(p.Protocols, s.SupportsVersion) {
		return false
	}
	return p.allows(s)
}

// AllowsProtocol reports whether the preset allows protocol version v.
func (p Preset) AllowsProtocol(v uint16) bool { return slices.Contains(p.Protocols, v) }

// Suites lists the catalogue suites the preset allows.
func (p Preset) Suites() []Suite { return Filter(p.Allows) }

func oneOf[T comparable](v T, set ...T) bool { return slices.Contains(set, v) }

var mozillaIntermediateTLS12 = []string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
}

var mozillaTLS13 = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// presets, in the order of the CompliancePreset enum. Each rule is a transcription of the
// source's suite tables into properties; presets_test.go pins the resulting lists.
var presets = []Preset{
	{
		Name:      v1alpha1.PresetNIST,
		Source:    "NIST SP 800-52 Rev. 2 (2019), §3.3.1.1 (TLS 1.2 suites for RSA and ECDSA certificates), §3.3.1.2 (TLS 1.3)",
		Protocols: []uint16{VersionTLS12, VersionTLS13},
		allows: func(s Suite) bool {
			if s.TLS13() {
				return s.Cipher == "AES"
			}
			return oneOf(s.KeyExchange, "ECDHE", "DHE") && s.Cipher == "AES" &&
				(s.KeyExchange == "ECDHE" && oneOf(s.Authentication, "ECDSA", "RSA") || s.KeyExchange == "DHE" && s.Authentication == "RSA") &&
				oneOf(s.Mode, ModeGCM, ModeCCM, ModeCCM8, ModeCBC)
		},
	},
	{
		Name:      v1alpha1.PresetBSI,
		Source:    "BSI TR-02102-2 (2024-01), §3.3.1 (TLS 1.2 with perfect forward secrecy) and §3.4 (TLS 1.3)",
		Protocols: []uint16{VersionTLS12, VersionTLS13},
		allows: func(s Suite) bool {
			if s.TLS13() {
				return s.Cipher == "AES" && s.Mode != ModeCCM8
			}
			return oneOf(s.KeyExchange, "ECDHE", "DHE") && oneOf(s.Authentication, "ECDSA", "RSA", "DSS") &&
				s.Cipher == "AES" && oneOf(s.Mode, ModeGCM, ModeCCM, ModeCBC) && oneOf(s.MAC, "AEAD", "SHA256", "SHA384")
		},
	},
	{
		Name:      v1alpha1.PresetFIPS,
		Source:    "FIPS 140-3 approved algorithms (SP 800-140C: AES GCM/CCM/CBC, SHA-1/SHA-2 HMAC; SP 800-140D: RSA, DH, ECDH key establishment; SP 800-131A Rev. 2: no 3DES)",
		Protocols: []uint16{VersionTLS12, VersionTLS13},
		allows: func(s Suite) bool {
			if s.TLS13() {
				return s.Cipher == "AES"
			}
			return oneOf(s.KeyExchange, "RSA", "DHE", "ECDHE", "DH", "ECDH") && oneOf(s.Authentication, "RSA", "ECDSA") &&
				s.Cipher == "AES" && oneOf(s.Mode, ModeGCM, ModeCCM, ModeCCM8, ModeCBC) && oneOf(s.MAC, "AEAD", "SHA1", "SHA256", "SHA384")
		},
	},
	{
		Name:      v1alpha1.PresetMozillaModern,
		Source:    "Mozilla Server Side TLS guidelines 5.7, modern configuration",
		Protocols: []uint16{VersionTLS13},
		allows:    func(s Suite) bool { return slices.Contains(mozillaTLS13, s.Name) },
	},
	{
		Name:      v1alpha1.PresetMozillaIntermediate,
		Source:    "Mozilla Server Side TLS guidelines 5.7, intermediate configuration",
		Protocols: []uint16{VersionTLS12, VersionTLS13},
		allows: func(s Suite) bool {
			return slices.Contains(mozillaTLS13, s.Name) || slices.Contains(mozillaIntermediateTLS12, s.Name)
		},
	},
}

// Presets returns every compliance preset.
func Presets() []Preset { return slices.Clone(presets) }

// LookupPreset finds a preset by name.
func LookupPreset(name v1alpha1.CompliancePreset) (Preset, bool) {
	i := slices.IndexFunc(presets, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return Preset{}, false
	}
	return presets[i], true
}

// DefaultSuites are the suites a channel accepts when its profile lists none: Mozilla
// intermediate, restricted to the channel's protocols.
func DefaultSuites(protocols []uint16) []Suite {
	p, _ := LookupPreset(v1alpha1.PresetMozillaIntermediate)
	return Filter(func(s Suite) bool { return p.Allows(s) && slices.ContainsFunc(protocols, s.SupportsVersion) })
}
