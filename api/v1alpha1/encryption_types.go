package v1alpha1

// The wire-encryption vocabulary shared by EncryptionProfile (a reusable, cluster-scoped
// profile) and SecuredDatastore (a profile reference plus inline overrides).
//
// CEL rules here only check what one object shows. A datastore's inline settings override a
// referenced profile field by field, so rules that need both (e.g. suites against protocols
// inherited from the profile, or HBase settings in a profile used by a Cassandra datastore) are
// checked by the controller on the merged result and reported in the ProfileResolved condition.

// ChannelMode says whether a channel is encrypted.
// +kubebuilder:validation:Enum=Disabled;Optional;Required
type ChannelMode string

const (
	// ChannelDisabled: plaintext only.
	ChannelDisabled ChannelMode = "Disabled"
	// ChannelOptional: TLS and plaintext both accepted on the same port. Transitional: use it to
	// move a live cluster between Disabled and Required without downtime.
	ChannelOptional ChannelMode = "Optional"
	// ChannelRequired: TLS only; plaintext connections are refused.
	ChannelRequired ChannelMode = "Required"
)

// TLSProtocol is a TLS protocol version in JSSE spelling. TLSv1 and TLSv1.1 are deprecated by
// RFC 8996 and not accepted.
// +kubebuilder:validation:Enum=TLSv1.2;TLSv1.3
type TLSProtocol string

const (
	TLSv12 TLSProtocol = "TLSv1.2"
	TLSv13 TLSProtocol = "TLSv1.3"
)

// CipherSuite is the IANA name of a TLS cipher suite, e.g. TLS_AES_128_GCM_SHA256 or
// TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384. OpenSSL names (ECDHE-RSA-AES256-GCM-SHA384) are not
// accepted; the error message says which IANA name to write instead. Suites without
// confidentiality or with broken primitives (NULL, EXPORT, anonymous, RC4, DES, 3DES, MD5) are
// refused.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=64
// +secured:generated:begin cipher-suite-rules
// +kubebuilder:validation:XValidation:rule="self in ['TLS_RSA_WITH_NULL_MD5', 'TLS_RSA_WITH_NULL_SHA', 'TLS_RSA_EXPORT_WITH_RC4_40_MD5', 'TLS_RSA_WITH_RC4_128_MD5', 'TLS_RSA_WITH_RC4_128_SHA', 'TLS_RSA_EXPORT_WITH_DES40_CBC_SHA', 'TLS_RSA_WITH_DES_CBC_SHA', 'TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_DHE_DSS_EXPORT_WITH_DES40_CBC_SHA', 'TLS_DHE_DSS_WITH_DES_CBC_SHA', 'TLS_DHE_DSS_WITH_3DES_EDE_CBC_SHA', 'TLS_DHE_RSA_EXPORT_WITH_DES40_CBC_SHA', 'TLS_DHE_RSA_WITH_DES_CBC_SHA', 'TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_DH_anon_EXPORT_WITH_RC4_40_MD5', 'TLS_DH_anon_WITH_RC4_128_MD5', 'TLS_DH_anon_EXPORT_WITH_DES40_CBC_SHA', 'TLS_DH_anon_WITH_DES_CBC_SHA', 'TLS_DH_anon_WITH_3DES_EDE_CBC_SHA', 'TLS_PSK_WITH_NULL_SHA', 'TLS_DHE_PSK_WITH_NULL_SHA', 'TLS_RSA_PSK_WITH_NULL_SHA', 'TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_DSS_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_DH_anon_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_DSS_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_DH_anon_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_NULL_SHA256', 'TLS_RSA_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_DSS_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_CAMELLIA_128_CBC_SHA', 'TLS_DHE_DSS_WITH_CAMELLIA_128_CBC_SHA', 'TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA', 'TLS_DH_anon_WITH_CAMELLIA_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_DSS_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DH_anon_WITH_AES_128_CBC_SHA256', 'TLS_DH_anon_WITH_AES_256_CBC_SHA256', 'TLS_RSA_WITH_CAMELLIA_256_CBC_SHA', 'TLS_DHE_DSS_WITH_CAMELLIA_256_CBC_SHA', 'TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA', 'TLS_DH_anon_WITH_CAMELLIA_256_CBC_SHA', 'TLS_PSK_WITH_AES_128_CBC_SHA', 'TLS_PSK_WITH_AES_256_CBC_SHA', 'TLS_DHE_PSK_WITH_AES_128_CBC_SHA', 'TLS_DHE_PSK_WITH_AES_256_CBC_SHA', 'TLS_RSA_PSK_WITH_AES_128_CBC_SHA', 'TLS_RSA_PSK_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_DSS_WITH_AES_128_GCM_SHA256', 'TLS_DHE_DSS_WITH_AES_256_GCM_SHA384', 'TLS_DH_anon_WITH_AES_128_GCM_SHA256', 'TLS_DH_anon_WITH_AES_256_GCM_SHA384', 'TLS_PSK_WITH_AES_128_GCM_SHA256', 'TLS_PSK_WITH_AES_256_GCM_SHA384', 'TLS_DHE_PSK_WITH_AES_128_GCM_SHA256', 'TLS_DHE_PSK_WITH_AES_256_GCM_SHA384', 'TLS_RSA_PSK_WITH_AES_128_GCM_SHA256', 'TLS_RSA_PSK_WITH_AES_256_GCM_SHA384', 'TLS_PSK_WITH_AES_128_CBC_SHA256', 'TLS_PSK_WITH_AES_256_CBC_SHA384', 'TLS_PSK_WITH_NULL_SHA256', 'TLS_PSK_WITH_NULL_SHA384', 'TLS_DHE_PSK_WITH_AES_128_CBC_SHA256', 'TLS_DHE_PSK_WITH_AES_256_CBC_SHA384', 'TLS_DHE_PSK_WITH_NULL_SHA256', 'TLS_DHE_PSK_WITH_NULL_SHA384', 'TLS_RSA_PSK_WITH_AES_128_CBC_SHA256', 'TLS_RSA_PSK_WITH_AES_256_CBC_SHA384', 'TLS_RSA_PSK_WITH_NULL_SHA256', 'TLS_RSA_PSK_WITH_NULL_SHA384', 'TLS_RSA_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_DHE_DSS_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_DH_anon_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_RSA_WITH_CAMELLIA_256_CBC_SHA256', 'TLS_DHE_DSS_WITH_CAMELLIA_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_CAMELLIA_256_CBC_SHA256', 'TLS_DH_anon_WITH_CAMELLIA_256_CBC_SHA256', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDH_ECDSA_WITH_NULL_SHA', 'TLS_ECDH_ECDSA_WITH_RC4_128_SHA', 'TLS_ECDH_ECDSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_NULL_SHA', 'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA', 'TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDH_RSA_WITH_NULL_SHA', 'TLS_ECDH_RSA_WITH_RC4_128_SHA', 'TLS_ECDH_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_NULL_SHA', 'TLS_ECDHE_RSA_WITH_RC4_128_SHA', 'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDH_anon_WITH_NULL_SHA', 'TLS_ECDH_anon_WITH_RC4_128_SHA', 'TLS_ECDH_anon_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDH_anon_WITH_AES_128_CBC_SHA', 'TLS_ECDH_anon_WITH_AES_256_CBC_SHA', 'TLS_SRP_SHA_WITH_AES_128_CBC_SHA', 'TLS_SRP_SHA_RSA_WITH_AES_128_CBC_SHA', 'TLS_SRP_SHA_DSS_WITH_AES_128_CBC_SHA', 'TLS_SRP_SHA_WITH_AES_256_CBC_SHA', 'TLS_SRP_SHA_RSA_WITH_AES_256_CBC_SHA', 'TLS_SRP_SHA_DSS_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_PSK_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_PSK_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_PSK_WITH_NULL_SHA', 'TLS_ECDHE_PSK_WITH_NULL_SHA256', 'TLS_ECDHE_PSK_WITH_NULL_SHA384', 'TLS_RSA_WITH_ARIA_128_GCM_SHA256', 'TLS_RSA_WITH_ARIA_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_ARIA_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_ARIA_256_GCM_SHA384', 'TLS_DHE_DSS_WITH_ARIA_128_GCM_SHA256', 'TLS_DHE_DSS_WITH_ARIA_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_ARIA_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_ARIA_256_GCM_SHA384', 'TLS_PSK_WITH_ARIA_128_GCM_SHA256', 'TLS_PSK_WITH_ARIA_256_GCM_SHA384', 'TLS_DHE_PSK_WITH_ARIA_128_GCM_SHA256', 'TLS_DHE_PSK_WITH_ARIA_256_GCM_SHA384', 'TLS_RSA_PSK_WITH_ARIA_128_GCM_SHA256', 'TLS_RSA_PSK_WITH_ARIA_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_CAMELLIA_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_CAMELLIA_256_CBC_SHA384', 'TLS_PSK_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_PSK_WITH_CAMELLIA_256_CBC_SHA384', 'TLS_DHE_PSK_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_DHE_PSK_WITH_CAMELLIA_256_CBC_SHA384', 'TLS_RSA_PSK_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_RSA_PSK_WITH_CAMELLIA_256_CBC_SHA384', 'TLS_ECDHE_PSK_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_ECDHE_PSK_WITH_CAMELLIA_256_CBC_SHA384', 'TLS_RSA_WITH_AES_128_CCM', 'TLS_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_RSA_WITH_AES_128_CCM_8', 'TLS_RSA_WITH_AES_256_CCM_8', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_PSK_WITH_AES_128_CCM', 'TLS_PSK_WITH_AES_256_CCM', 'TLS_DHE_PSK_WITH_AES_128_CCM', 'TLS_DHE_PSK_WITH_AES_256_CCM', 'TLS_PSK_WITH_AES_128_CCM_8', 'TLS_PSK_WITH_AES_256_CCM_8', 'TLS_PSK_DHE_WITH_AES_128_CCM_8', 'TLS_PSK_DHE_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_PSK_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256', 'TLS_DHE_PSK_WITH_CHACHA20_POLY1305_SHA256', 'TLS_RSA_PSK_WITH_CHACHA20_POLY1305_SHA256']",messageExpression="self.startsWith('SSL_') ? \"'\" + self + \"' is a legacy JSSE name: IANA names start with TLS_ (and every SSL_ suite is refused as weak)\" : self.matches('^[A-Z0-9]+(-[A-Z0-9]+)+$') ? \"'\" + self + \"' looks like an OpenSSL name: write its IANA name instead (openssl ciphers -stdname -V lists both; ECDHE-RSA-AES128-GCM-SHA256 is TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)\" : \"'\" + self + \"' is not a TLS cipher suite known to OpenSSL, BoringSSL, the JDK or Go: use an IANA name such as TLS_AES_128_GCM_SHA256 or TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\""
// +kubebuilder:validation:XValidation:rule="!(self in ['TLS_RSA_WITH_NULL_MD5', 'TLS_RSA_WITH_NULL_SHA', 'TLS_RSA_EXPORT_WITH_RC4_40_MD5', 'TLS_RSA_WITH_RC4_128_MD5', 'TLS_RSA_WITH_RC4_128_SHA', 'TLS_RSA_EXPORT_WITH_DES40_CBC_SHA', 'TLS_RSA_WITH_DES_CBC_SHA', 'TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_DHE_DSS_EXPORT_WITH_DES40_CBC_SHA', 'TLS_DHE_DSS_WITH_DES_CBC_SHA', 'TLS_DHE_DSS_WITH_3DES_EDE_CBC_SHA', 'TLS_DHE_RSA_EXPORT_WITH_DES40_CBC_SHA', 'TLS_DHE_RSA_WITH_DES_CBC_SHA', 'TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_DH_anon_EXPORT_WITH_RC4_40_MD5', 'TLS_DH_anon_WITH_RC4_128_MD5', 'TLS_DH_anon_EXPORT_WITH_DES40_CBC_SHA', 'TLS_DH_anon_WITH_DES_CBC_SHA', 'TLS_DH_anon_WITH_3DES_EDE_CBC_SHA', 'TLS_PSK_WITH_NULL_SHA', 'TLS_DHE_PSK_WITH_NULL_SHA', 'TLS_RSA_PSK_WITH_NULL_SHA', 'TLS_DH_anon_WITH_AES_128_CBC_SHA', 'TLS_DH_anon_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_NULL_SHA256', 'TLS_DH_anon_WITH_CAMELLIA_128_CBC_SHA', 'TLS_DH_anon_WITH_AES_128_CBC_SHA256', 'TLS_DH_anon_WITH_AES_256_CBC_SHA256', 'TLS_DH_anon_WITH_CAMELLIA_256_CBC_SHA', 'TLS_DH_anon_WITH_AES_128_GCM_SHA256', 'TLS_DH_anon_WITH_AES_256_GCM_SHA384', 'TLS_PSK_WITH_NULL_SHA256', 'TLS_PSK_WITH_NULL_SHA384', 'TLS_DHE_PSK_WITH_NULL_SHA256', 'TLS_DHE_PSK_WITH_NULL_SHA384', 'TLS_RSA_PSK_WITH_NULL_SHA256', 'TLS_RSA_PSK_WITH_NULL_SHA384', 'TLS_DH_anon_WITH_CAMELLIA_128_CBC_SHA256', 'TLS_DH_anon_WITH_CAMELLIA_256_CBC_SHA256', 'TLS_ECDH_ECDSA_WITH_NULL_SHA', 'TLS_ECDH_ECDSA_WITH_RC4_128_SHA', 'TLS_ECDH_ECDSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_NULL_SHA', 'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA', 'TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDH_RSA_WITH_NULL_SHA', 'TLS_ECDH_RSA_WITH_RC4_128_SHA', 'TLS_ECDH_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDHE_RSA_WITH_NULL_SHA', 'TLS_ECDHE_RSA_WITH_RC4_128_SHA', 'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDH_anon_WITH_NULL_SHA', 'TLS_ECDH_anon_WITH_RC4_128_SHA', 'TLS_ECDH_anon_WITH_3DES_EDE_CBC_SHA', 'TLS_ECDH_anon_WITH_AES_128_CBC_SHA', 'TLS_ECDH_anon_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_PSK_WITH_NULL_SHA', 'TLS_ECDHE_PSK_WITH_NULL_SHA256', 'TLS_ECDHE_PSK_WITH_NULL_SHA384'])",messageExpression="self + ' is refused: ' + (self.contains('_NULL_') ? 'NULL encryption sends data in clear text' : self.contains('EXPORT') ? 'EXPORT suites use deliberately weakened 40/56-bit keys' : self.contains('_anon_') ? 'anonymous suites do not authenticate the server and allow man-in-the-middle attacks' : self.contains('_RC4_') ? 'RC4 is broken (RFC 7465 prohibits it)' : self.contains('_DES_CBC_') ? 'single DES keys can be brute-forced' : self.contains('_3DES_') ? '3DES has 64-bit blocks (Sweet32) and is deprecated' : self.contains('MD5') ? 'MD5 integrity is broken' : 'weak') + '; choose a forward-secret AEAD suite such as TLS_AES_128_GCM_SHA256 or TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'"
// +secured:generated:end cipher-suite-rules
type CipherSuite string

// TLSEngine selects the TLS implementation inside the datastore.
// +kubebuilder:validation:Enum=Auto;OpenSSL;JDK
type TLSEngine string

const (
	// TLSEngineAuto lets the operator choose: OpenSSL (netty-tcnative BoringSSL) unless the
	// profile pins TLS 1.3 suites, which BoringSSL cannot restrict; then JDK. Status says which.
	TLSEngineAuto TLSEngine = "Auto"
	// TLSEngineOpenSSL: the native engine (BoringSSL via netty-tcnative), the datastore default.
	TLSEngineOpenSSL TLSEngine = "OpenSSL"
	// TLSEngineJDK: the JVM's own TLS (SunJSSE).
	TLSEngineJDK TLSEngine = "JDK"
)

// ClientAuth says whether the server demands a client certificate.
// +kubebuilder:validation:Enum=None;Optional;Required
type ClientAuth string

const (
	ClientAuthNone     ClientAuth = "None"
	ClientAuthOptional ClientAuth = "Optional"
	ClientAuthRequired ClientAuth = "Required"
)

// CompliancePreset names a published TLS configuration baseline.
// +kubebuilder:validation:Enum=NIST-SP-800-52r2;BSI-TR-02102-2;FIPS-140-3;Mozilla-Modern;Mozilla-Intermediate
type CompliancePreset string

const (
	// PresetNIST: NIST SP 800-52 Rev. 2 (2019) §3.3.1: TLS 1.2/1.3, ephemeral (EC)DH with RSA or
	// ECDSA certificates, AES in GCM, CCM or CBC; TLS 1.3 AES suites.
	PresetNIST CompliancePreset = "NIST-SP-800-52r2"
	// PresetBSI: BSI TR-02102-2 (2024) §3.3: TLS 1.2/1.3, ephemeral (EC)DH, AES-GCM/CCM or
	// AES-CBC with SHA-2 MACs; no SHA-1, no ChaCha20, no 8-byte CCM tags.
	PresetBSI CompliancePreset = "BSI-TR-02102-2"
	// PresetFIPS: algorithms approved for FIPS 140-3 modules: AES (GCM, CCM, CBC), SHA-1/SHA-2,
	// RSA/ECDSA certificates; no ChaCha20, Camellia, ARIA or 3DES.
	PresetFIPS CompliancePreset = "FIPS-140-3"
	// PresetMozillaModern: Mozilla server-side TLS guidelines v5.7 "modern": TLS 1.3 only.
	PresetMozillaModern CompliancePreset = "Mozilla-Modern"
	// PresetMozillaIntermediate: Mozilla guidelines v5.7 "intermediate": TLS 1.2 with ECDHE/DHE
	// AEAD suites, and TLS 1.3.
	PresetMozillaIntermediate CompliancePreset = "Mozilla-Intermediate"
)

// TLSSettings pins what a TLS channel negotiates.
// +secured:generated:begin tls-rules
// +kubebuilder:validation:XValidation:rule="!has(self.protocols) || !has(self.cipherSuites) || self.protocols.exists(p, p == 'TLSv1.2') || self.cipherSuites.all(s, s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256'])",messageExpression="'protocols allow only TLSv1.3, but cipherSuites lists TLS 1.2 suites such as ' + self.cipherSuites.filter(s, !(s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256']))[0] + ': add TLSv1.2 to protocols or remove those suites'",fieldPath=".cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.protocols) || !has(self.cipherSuites) || self.protocols.exists(p, p == 'TLSv1.3') || self.cipherSuites.all(s, !(s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256']))",messageExpression="'protocols allow only TLSv1.2, but cipherSuites lists TLS 1.3 suites such as ' + self.cipherSuites.filter(s, s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256'])[0] + ': add TLSv1.3 to protocols or remove those suites'",fieldPath=".cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.protocols) || !has(self.cipherSuites) || !self.protocols.exists(p, p == 'TLSv1.2') || self.cipherSuites.exists(s, !(s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256']))",messageExpression="'protocols include TLSv1.2 but cipherSuites has no TLS 1.2 suite: add one (e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) or remove TLSv1.2 from protocols'",fieldPath=".protocols"
// +kubebuilder:validation:XValidation:rule="!has(self.protocols) || !has(self.cipherSuites) || !self.protocols.exists(p, p == 'TLSv1.3') || self.cipherSuites.exists(s, s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256'])",messageExpression="'protocols include TLSv1.3 but cipherSuites has no TLS 1.3 suite: add one (e.g. TLS_AES_128_GCM_SHA256) or remove TLSv1.3 from protocols'",fieldPath=".protocols"
// +secured:generated:end tls-rules
type TLSSettings struct {
	// protocols the server accepts. Defaults to [TLSv1.2, TLSv1.3] when neither the profile nor
	// the datastore sets it. Every listed protocol needs at least one suite in cipherSuites.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	Protocols []TLSProtocol `json:"protocols,omitempty"`

	// cipherSuites the server accepts, by IANA name, in preference order. TLS 1.3 suites are
	// TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256; TLS 1.2
	// suites name their key exchange, e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 (ECDSA
	// certificates, the default) or TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (RSA certificates).
	// Pin exactly one suite to benchmark it: the wire prober then verifies that no other suite is
	// accepted. Defaults to the Mozilla "intermediate" suites of the chosen protocols.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	CipherSuites []CipherSuite `json:"cipherSuites,omitempty"`

	// clientAuth: whether the server demands a client certificate (mutual TLS). Defaults to None
	// on clientToNode and Required on nodeToNode, where nodes authenticate each other. Required
	// on a Cassandra clientToNode channel in mode Required also makes the certificate the CQL
	// login: the operator issues client certificates named by SPIFFE IDs
	// (<name>-superuser-tls, <name>-client-tls) and the nodes authenticate by them once the
	// identities are mapped to roles (status.identities).
	// +optional
	ClientAuth ClientAuth `json:"clientAuth,omitempty"`

	// engine is the TLS implementation inside the datastore: OpenSSL (native BoringSSL, fast,
	// but it cannot restrict TLS 1.3 suites), JDK (SunJSSE, honours every setting), or Auto
	// (OpenSSL unless TLS 1.3 suites are pinned). Defaults to Auto.
	// +optional
	Engine TLSEngine `json:"engine,omitempty"`
}

// ChannelEncryption is the encryption of one traffic channel.
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'Disabled' || !has(self.tls)",message="tls must not be set when mode is Disabled: set mode to Optional or Required, or remove tls",fieldPath=".tls"
type ChannelEncryption struct {
	// mode: Disabled (plaintext), Optional (TLS and plaintext on the same port; a transitional
	// state for enabling or disabling TLS on a live cluster without downtime) or Required (TLS
	// only). Required in an EncryptionProfile; in a SecuredDatastore it overrides the profile.
	// +optional
	Mode ChannelMode `json:"mode,omitempty"`

	// tls settings, used when mode is Optional or Required. When omitted the channel accepts
	// TLS 1.2 and 1.3 with the Mozilla "intermediate" suites, restricted to any declared
	// compliance presets.
	// +optional
	TLS *TLSSettings `json:"tls,omitempty"`
}

// ClientToNodeEncryption protects traffic between applications and the datastore ("AR",
// application-replica): Cassandra's CQL native port, HBase's client RPC.
type ClientToNodeEncryption struct {
	ChannelEncryption `json:",inline"`
}

// InternodeScope is Cassandra's internode_encryption setting.
// +kubebuilder:validation:Enum=All;Datacenter;Rack
type InternodeScope string

const (
	ScopeAll        InternodeScope = "All"
	ScopeDatacenter InternodeScope = "Datacenter"
	ScopeRack       InternodeScope = "Rack"
)

// NodeToNodeEncryption protects traffic between the datastore's own servers ("RR",
// replica-replica): Cassandra's storage port; HBase Master/RegionServer RPC with native TLS.
type NodeToNodeEncryption struct {
	ChannelEncryption `json:",inline"`

	// scope (Cassandra only) says which peers are reached over TLS: All, or only peers in another
	// Datacenter or Rack. Anything but All leaves some internode traffic in plaintext, so the
	// security rank counts it as unencrypted. Defaults to All.
	// +optional
	Scope InternodeScope `json:"scope,omitempty"`
}

// HBaseAuthentication is hbase.security.authentication / hadoop.security.authentication.
// +kubebuilder:validation:Enum=Simple;Kerberos
type HBaseAuthentication string

const (
	AuthenticationSimple   HBaseAuthentication = "Simple"
	AuthenticationKerberos HBaseAuthentication = "Kerberos"
)

// SASLProtection is a SASL quality of protection (hbase.rpc.protection, hadoop.rpc.protection,
// dfs.data.transfer.protection).
// +kubebuilder:validation:Enum=Authentication;Integrity;Privacy
type SASLProtection string

const (
	// ProtectionAuthentication: the peer is authenticated; traffic is neither signed nor encrypted.
	ProtectionAuthentication SASLProtection = "Authentication"
	// ProtectionIntegrity: messages are signed.
	ProtectionIntegrity SASLProtection = "Integrity"
	// ProtectionPrivacy: messages are signed and encrypted.
	ProtectionPrivacy SASLProtection = "Privacy"
)

// HDFSDataTransfer configures encryption of HDFS block transfers (DataTransferProtocol).
// +kubebuilder:validation:XValidation:rule="!has(self.encrypt) || self.encrypt || (!has(self.cipherSuite) && !has(self.keyBitLength))",message="cipherSuite and keyBitLength apply only when encrypt is true: set encrypt: true or remove them"
type HDFSDataTransfer struct {
	// encrypt block data on the wire (dfs.encrypt.data.transfer).
	// +optional
	Encrypt *bool `json:"encrypt,omitempty"`

	// cipherSuite for the data (dfs.encrypt.data.transfer.cipher.suites; note the plural key:
	// the singular one is silently ignored by HDFS). AES/CTR/NoPadding is the only suite HDFS
	// offers. Defaults to AES/CTR/NoPadding.
	// +optional
	// +kubebuilder:validation:Enum=AES/CTR/NoPadding
	CipherSuite string `json:"cipherSuite,omitempty"`

	// keyBitLength of the AES key (dfs.encrypt.data.transfer.cipher.key.bitlength). Defaults to 128.
	// +optional
	// +kubebuilder:validation:Enum=128;192;256
	KeyBitLength int32 `json:"keyBitLength,omitempty"`

	// protection is the SASL quality of protection of the data-transfer handshake
	// (dfs.data.transfer.protection). Defaults to Authentication.
	// +optional
	Protection SASLProtection `json:"protection,omitempty"`
}

// HBaseSecurity is HBase's and Hadoop's own security: Kerberos, SASL quality of protection on
// the RPC layers, SASL's AES transform and HDFS data-transfer encryption. HBase native TLS is
// configured through clientToNode and nodeToNode; both can be combined (TLS inside, SASL
// authentication), which is what hbase.rpc.protection=Authentication with TLS is for.
// +kubebuilder:validation:XValidation:rule="!has(self.authentication) || self.authentication == 'Kerberos' || (!has(self.hbaseRPCProtection) && !has(self.hadoopRPCProtection))",message="SASL protection levels need Kerberos: set authentication: Kerberos or remove hbaseRPCProtection and hadoopRPCProtection"
// +kubebuilder:validation:XValidation:rule="!has(self.aesTransform) || !self.aesTransform || !has(self.hbaseRPCProtection) || self.hbaseRPCProtection == 'Privacy'",message="aesTransform replaces SASL's privacy wrap and needs hbaseRPCProtection: Privacy",fieldPath=".aesTransform"
type HBaseSecurity struct {
	// authentication of HBase and Hadoop RPC: Simple (none) or Kerberos. Defaults to Simple.
	// +optional
	Authentication HBaseAuthentication `json:"authentication,omitempty"`

	// hbaseRPCProtection is hbase.rpc.protection, the SASL quality of protection on HBase RPC
	// (client to RegionServer/Master and between them). Needs Kerberos. Defaults to Authentication.
	// +optional
	HBaseRPCProtection SASLProtection `json:"hbaseRPCProtection,omitempty"`

	// hadoopRPCProtection is hadoop.rpc.protection, the SASL quality of protection on HDFS RPC
	// (NameNode, DataNode IPC). Needs Kerberos. Defaults to Authentication.
	// +optional
	HadoopRPCProtection SASLProtection `json:"hadoopRPCProtection,omitempty"`

	// aesTransform (hbase.rpc.crypto.encryption.aes.enabled) negotiates an AES key through SASL
	// and encrypts HBase RPC with Apache Commons Crypto instead of the GSSAPI wrap, which is much
	// faster with AES-NI. Needs hbaseRPCProtection: Privacy.
	// +optional
	AESTransform *bool `json:"aesTransform,omitempty"`

	// dataTransfer encryption of HDFS block traffic.
	// +optional
	DataTransfer *HDFSDataTransfer `json:"dataTransfer,omitempty"`
}

// VPNType selects a tunnel around datastore traffic.
// +kubebuilder:validation:Enum=None;WireGuard;OpenVPN
type VPNType string

const (
	VPNNone      VPNType = "None"
	VPNWireGuard VPNType = "WireGuard"
	VPNOpenVPN   VPNType = "OpenVPN"
)

// VPNScope says which traffic goes through the tunnel.
// +kubebuilder:validation:Enum=NodeToNode;ClientToNode;All
type VPNScope string

const (
	VPNScopeNodeToNode   VPNScope = "NodeToNode"
	VPNScopeClientToNode VPNScope = "ClientToNode"
	VPNScopeAll          VPNScope = "All"
)

// OpenVPNSettings tunes an OpenVPN tunnel.
type OpenVPNSettings struct {
	// cipher of the data channel (OpenVPN --data-ciphers). Defaults to AES-256-GCM.
	// +optional
	// +kubebuilder:validation:Enum=AES-256-GCM;AES-128-GCM;CHACHA20-POLY1305
	Cipher string `json:"cipher,omitempty"`
}

// AtRestEncryption protects data on disk: from a stolen or reused disk, a copied volume
// snapshot, a backup of the data directories.
type AtRestEncryption struct {
	// engine: the datastore encrypts files as it writes them, with an AES key the operator keeps
	// in the Secret <datastore>-at-rest-keys (a PKCS #12 keystore). Cassandra encrypts its commit
	// log and hints (transparent data encryption); open-source Cassandra has no encryption of
	// SSTables, so flushed and compacted data stays in clear: the profile's assessment says so.
	// HBase encrypts its write-ahead log and the HFiles of column families created with
	// ENCRYPTION => 'AES' (the benchmark's table is; an application's tables must ask for it).
	// +optional
	Engine *EngineAtRest `json:"engine,omitempty"`
	// volume: each node's kernel encrypts every file of the node's data volume (fscrypt:
	// AES-256-XTS for contents, AES-256-CTS for names) under a 64-byte key the operator keeps in
	// the same Secret (volume.key), before the datastore writes anything: SSTables, commit log
	// and hints alike. The volume's filesystem must support it (ext4 made with -O encrypt, or
	// f2fs; see the README): on one that does not, the node's init container stops and says
	// so. Chosen when the datastore is created: data written in clear cannot be encrypted in
	// place, so a running datastore refuses the change. On HBase the DataNodes' volumes are
	// encrypted (every HDFS block: HFiles and write-ahead logs); the NameNode's and ZooKeeper's
	// hold names and metadata, not values, and stay as they are.
	// +optional
	Volume *VolumeAtRest `json:"volume,omitempty"`
}

// VolumeEncryptionMethod is how a data volume is encrypted.
// +kubebuilder:validation:Enum=Fscrypt
type VolumeEncryptionMethod string

// VolumeFscrypt: the Linux kernel's file-based encryption, a v2 policy on the data directory.
const VolumeFscrypt VolumeEncryptionMethod = "Fscrypt"

// VolumeAtRest encrypts the data volume below the datastore.
type VolumeAtRest struct {
	// method of encryption: Fscrypt (the default), the one that needs no device-mapper.
	// +optional
	// +kubebuilder:default=Fscrypt
	Method VolumeEncryptionMethod `json:"method,omitempty"`
}

// EngineAtRest is the datastore's own encryption of its files.
type EngineAtRest struct {
	// keyBits of the AES key: 128 (the default) or 256. Cassandra runs AES/CBC/PKCS5Padding.
	// +optional
	// +kubebuilder:default=128
	// +kubebuilder:validation:Enum=128;256
	KeyBits int32 `json:"keyBits,omitempty"`
}

// ClientCipher is the AEAD the client encrypts values with.
// +kubebuilder:validation:Enum=AES-128-GCM;AES-256-GCM;ChaCha20-Poly1305;None
type ClientCipher string

const (
	ClientAES128GCM        ClientCipher = "AES-128-GCM"
	ClientAES256GCM        ClientCipher = "AES-256-GCM"
	ClientChaCha20Poly1305 ClientCipher = "ChaCha20-Poly1305"
	ClientCipherNone       ClientCipher = "None"
)

// ClientSignature is the algorithm the client signs values with.
// +kubebuilder:validation:Enum=None;Ed25519;ECDSA-P256;RSA-2048
type ClientSignature string

const (
	ClientSignatureNone ClientSignature = "None"
	ClientEd25519       ClientSignature = "Ed25519"
	ClientECDSAP256     ClientSignature = "ECDSA-P256"
	ClientRSA2048       ClientSignature = "RSA-2048"
)

// ClientSideEncryption is encryption and signing in the client, per field of a record (YCSB's
// field0, field1, ...). Each value is bound to its table, key and column, so a value copied
// to another cell fails to open; a read whose value does not open is an error.
// +kubebuilder:validation:XValidation:rule="(has(self.cipher) ? self.cipher : 'AES-256-GCM') != 'None' || (has(self.signature) && self.signature != 'None')",message="spec.clientSide: cipher None with signature None protects nothing; choose a cipher (AES-256-GCM, AES-128-GCM, ChaCha20-Poly1305), a signature (Ed25519, ECDSA-P256, RSA-2048), or both"
type ClientSideEncryption struct {
	// cipher encrypting each protected value: AES-256-GCM (the default), AES-128-GCM,
	// ChaCha20-Poly1305 (faster than AES-GCM on CPUs without AES instructions), or None to sign
	// values that stay readable.
	// +optional
	// +kubebuilder:default=AES-256-GCM
	Cipher ClientCipher `json:"cipher,omitempty"`
	// signature proving who wrote each protected value, checked on every read: None (the
	// default; the AEAD's tag alone protects integrity, for whoever holds the key), Ed25519,
	// ECDSA-P256 or RSA-2048. Signatures cost far more than encryption, on writes and reads.
	// +optional
	// +kubebuilder:default=None
	Signature ClientSignature `json:"signature,omitempty"`
	// fields: how many of a record's fields are protected, from the first; all when unset.
	// Fewer fields cost less, as PACE measured.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Fields *int32 `json:"fields,omitempty"`
}

// VPNSettings puts datastore traffic in a tunnel run by a sidecar next to each node. The
// sidecar needs NET_ADMIN and /dev/net/tun, so the namespace's Pod Security admission must
// allow them (baseline does not). A change on a running Cassandra rolls in stages that keep
// it serving (the sidecars first, with the nodes on their pod addresses, then the nodes into
// the tunnel); on a running HBase every role restarts at once under its new address.
// +kubebuilder:validation:XValidation:rule="!has(self.openvpn) || !has(self.type) || self.type == 'OpenVPN'",message="openvpn settings apply only to type OpenVPN: set type: OpenVPN or remove openvpn",fieldPath=".openvpn"
type VPNSettings struct {
	// type of tunnel: None, WireGuard (kernel module when the node has it, wireguard-go
	// otherwise) or OpenVPN. Defaults to None.
	// +optional
	Type VPNType `json:"type,omitempty"`

	// scope: which traffic uses the tunnel. Defaults to NodeToNode for Cassandra; HBase takes
	// All only (its default), because its clients reach every server at the address the server
	// registers, which is its tunnel address.
	// +optional
	Scope VPNScope `json:"scope,omitempty"`

	// openvpn settings, for type OpenVPN.
	// +optional
	OpenVPN *OpenVPNSettings `json:"openvpn,omitempty"`
}

// Enabled reports whether the settings put traffic in a tunnel: a type other than None. Nil
// settings (none given) do not.
func (v *VPNSettings) Enabled() bool {
	return v != nil && v.Type != "" && v.Type != VPNNone
}

// EncryptionSettings is a wire-encryption profile: what each channel of a datastore does to
// protect data in transit.
// +secured:generated:begin compliance-rules
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('NIST-SP-800-52r2' in self.compliance) || !has(self.clientToNode) || !has(self.clientToNode.tls) || !has(self.clientToNode.tls.cipherSuites) || self.clientToNode.tls.cipherSuites.all(s, s in ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8'])",messageExpression="'clientToNode.tls.cipherSuites: ' + self.clientToNode.tls.cipherSuites.filter(s, !(s in ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8']))[0] + ' is outside compliance preset NIST-SP-800-52r2: keep only suites the preset allows, or remove NIST-SP-800-52r2 from compliance'",fieldPath=".clientToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('NIST-SP-800-52r2' in self.compliance) || !has(self.nodeToNode) || !has(self.nodeToNode.tls) || !has(self.nodeToNode.tls.cipherSuites) || self.nodeToNode.tls.cipherSuites.all(s, s in ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8'])",messageExpression="'nodeToNode.tls.cipherSuites: ' + self.nodeToNode.tls.cipherSuites.filter(s, !(s in ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8']))[0] + ' is outside compliance preset NIST-SP-800-52r2: keep only suites the preset allows, or remove NIST-SP-800-52r2 from compliance'",fieldPath=".nodeToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('BSI-TR-02102-2' in self.compliance) || !has(self.clientToNode) || !has(self.clientToNode.tls) || !has(self.clientToNode.tls.cipherSuites) || self.clientToNode.tls.cipherSuites.all(s, s in ['TLS_DHE_DSS_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_DSS_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_DSS_WITH_AES_128_GCM_SHA256', 'TLS_DHE_DSS_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM'])",messageExpression="'clientToNode.tls.cipherSuites: ' + self.clientToNode.tls.cipherSuites.filter(s, !(s in ['TLS_DHE_DSS_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_DSS_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_DSS_WITH_AES_128_GCM_SHA256', 'TLS_DHE_DSS_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM']))[0] + ' is outside compliance preset BSI-TR-02102-2: keep only suites the preset allows, or remove BSI-TR-02102-2 from compliance'",fieldPath=".clientToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('BSI-TR-02102-2' in self.compliance) || !has(self.nodeToNode) || !has(self.nodeToNode.tls) || !has(self.nodeToNode.tls.cipherSuites) || self.nodeToNode.tls.cipherSuites.all(s, s in ['TLS_DHE_DSS_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_DSS_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_DSS_WITH_AES_128_GCM_SHA256', 'TLS_DHE_DSS_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM'])",messageExpression="'nodeToNode.tls.cipherSuites: ' + self.nodeToNode.tls.cipherSuites.filter(s, !(s in ['TLS_DHE_DSS_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_DSS_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_DSS_WITH_AES_128_GCM_SHA256', 'TLS_DHE_DSS_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM']))[0] + ' is outside compliance preset BSI-TR-02102-2: keep only suites the preset allows, or remove BSI-TR-02102-2 from compliance'",fieldPath=".nodeToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('FIPS-140-3' in self.compliance) || !has(self.clientToNode) || !has(self.clientToNode.tls) || !has(self.clientToNode.tls.cipherSuites) || self.clientToNode.tls.cipherSuites.all(s, s in ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384', 'TLS_RSA_WITH_AES_128_CCM', 'TLS_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_RSA_WITH_AES_128_CCM_8', 'TLS_RSA_WITH_AES_256_CCM_8', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8'])",messageExpression="'clientToNode.tls.cipherSuites: ' + self.clientToNode.tls.cipherSuites.filter(s, !(s in ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384', 'TLS_RSA_WITH_AES_128_CCM', 'TLS_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_RSA_WITH_AES_128_CCM_8', 'TLS_RSA_WITH_AES_256_CCM_8', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8']))[0] + ' is outside compliance preset FIPS-140-3: keep only suites the preset allows, or remove FIPS-140-3 from compliance'",fieldPath=".clientToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('FIPS-140-3' in self.compliance) || !has(self.nodeToNode) || !has(self.nodeToNode.tls) || !has(self.nodeToNode.tls.cipherSuites) || self.nodeToNode.tls.cipherSuites.all(s, s in ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384', 'TLS_RSA_WITH_AES_128_CCM', 'TLS_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_RSA_WITH_AES_128_CCM_8', 'TLS_RSA_WITH_AES_256_CCM_8', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8'])",messageExpression="'nodeToNode.tls.cipherSuites: ' + self.nodeToNode.tls.cipherSuites.filter(s, !(s in ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_RSA_WITH_AES_128_CBC_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384', 'TLS_RSA_WITH_AES_128_CCM', 'TLS_RSA_WITH_AES_256_CCM', 'TLS_DHE_RSA_WITH_AES_128_CCM', 'TLS_DHE_RSA_WITH_AES_256_CCM', 'TLS_RSA_WITH_AES_128_CCM_8', 'TLS_RSA_WITH_AES_256_CCM_8', 'TLS_DHE_RSA_WITH_AES_128_CCM_8', 'TLS_DHE_RSA_WITH_AES_256_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8']))[0] + ' is outside compliance preset FIPS-140-3: keep only suites the preset allows, or remove FIPS-140-3 from compliance'",fieldPath=".nodeToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('Mozilla-Modern' in self.compliance) || !has(self.clientToNode) || !has(self.clientToNode.tls) || !has(self.clientToNode.tls.cipherSuites) || self.clientToNode.tls.cipherSuites.all(s, s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'])",messageExpression="'clientToNode.tls.cipherSuites: ' + self.clientToNode.tls.cipherSuites.filter(s, !(s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']))[0] + ' is outside compliance preset Mozilla-Modern: keep only suites the preset allows, or remove Mozilla-Modern from compliance'",fieldPath=".clientToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('Mozilla-Modern' in self.compliance) || !has(self.clientToNode) || !has(self.clientToNode.tls) || !has(self.clientToNode.tls.protocols) || self.clientToNode.tls.protocols.all(v, v in ['TLSv1.3'])",messageExpression="'clientToNode.tls.protocols: ' + self.clientToNode.tls.protocols.filter(v, !(v in ['TLSv1.3']))[0] + ' is outside compliance preset Mozilla-Modern, which allows only TLSv1.3'",fieldPath=".clientToNode.tls.protocols"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('Mozilla-Modern' in self.compliance) || !has(self.nodeToNode) || !has(self.nodeToNode.tls) || !has(self.nodeToNode.tls.cipherSuites) || self.nodeToNode.tls.cipherSuites.all(s, s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'])",messageExpression="'nodeToNode.tls.cipherSuites: ' + self.nodeToNode.tls.cipherSuites.filter(s, !(s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']))[0] + ' is outside compliance preset Mozilla-Modern: keep only suites the preset allows, or remove Mozilla-Modern from compliance'",fieldPath=".nodeToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('Mozilla-Modern' in self.compliance) || !has(self.nodeToNode) || !has(self.nodeToNode.tls) || !has(self.nodeToNode.tls.protocols) || self.nodeToNode.tls.protocols.all(v, v in ['TLSv1.3'])",messageExpression="'nodeToNode.tls.protocols: ' + self.nodeToNode.tls.protocols.filter(v, !(v in ['TLSv1.3']))[0] + ' is outside compliance preset Mozilla-Modern, which allows only TLSv1.3'",fieldPath=".nodeToNode.tls.protocols"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('Mozilla-Intermediate' in self.compliance) || !has(self.clientToNode) || !has(self.clientToNode.tls) || !has(self.clientToNode.tls.cipherSuites) || self.clientToNode.tls.cipherSuites.all(s, s in ['TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256'])",messageExpression="'clientToNode.tls.cipherSuites: ' + self.clientToNode.tls.cipherSuites.filter(s, !(s in ['TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256']))[0] + ' is outside compliance preset Mozilla-Intermediate: keep only suites the preset allows, or remove Mozilla-Intermediate from compliance'",fieldPath=".clientToNode.tls.cipherSuites"
// +kubebuilder:validation:XValidation:rule="!has(self.compliance) || !('Mozilla-Intermediate' in self.compliance) || !has(self.nodeToNode) || !has(self.nodeToNode.tls) || !has(self.nodeToNode.tls.cipherSuites) || self.nodeToNode.tls.cipherSuites.all(s, s in ['TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256'])",messageExpression="'nodeToNode.tls.cipherSuites: ' + self.nodeToNode.tls.cipherSuites.filter(s, !(s in ['TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256']))[0] + ' is outside compliance preset Mozilla-Intermediate: keep only suites the preset allows, or remove Mozilla-Intermediate from compliance'",fieldPath=".nodeToNode.tls.cipherSuites"
// +secured:generated:end compliance-rules
type EncryptionSettings struct {
	// clientToNode ("AR", application-replica) protects traffic between applications and the
	// datastore: Cassandra's CQL native port, HBase's client RPC. Set mode Required for TLS only,
	// Optional while migrating a live cluster, Disabled for plaintext. Example:
	//   clientToNode: {mode: Required, tls: {protocols: [TLSv1.3], cipherSuites: [TLS_AES_128_GCM_SHA256]}}
	// +optional
	ClientToNode *ClientToNodeEncryption `json:"clientToNode,omitempty"`

	// nodeToNode ("RR", replica-replica) protects traffic between the datastore's own servers:
	// Cassandra's storage port, HBase Master/RegionServer RPC. Nodes authenticate each other with
	// their certificates (clientAuth defaults to Required here).
	// +optional
	NodeToNode *NodeToNodeEncryption `json:"nodeToNode,omitempty"`

	// hbase security: Kerberos, SASL protection levels, AES transform, HDFS data-transfer
	// encryption. Only for engine HBase.
	// +optional
	HBase *HBaseSecurity `json:"hbase,omitempty"`

	// vpn tunnel around datastore traffic.
	// +optional
	VPN *VPNSettings `json:"vpn,omitempty"`

	// atRest encryption of what the datastore writes to its disks. Example:
	//   atRest: {engine: {keyBits: 128}}
	// +optional
	AtRest *AtRestEncryption `json:"atRest,omitempty"`

	// clientSide protection: the application encrypts and signs values before they leave it,
	// so the datastore, its disks, backups and administrators see only ciphertext (as PACE does
	// on Accumulo). The datastore itself does not change; the operator keeps the keys in the
	// Secret <datastore>-client-keys, mounted by benchmark clients, and applications use the
	// same format through the Go package secured.dev/operator/pkg/fieldcrypt. Example:
	//   clientSide: {cipher: AES-256-GCM, signature: Ed25519, fields: 5}
	// +optional
	ClientSide *ClientSideEncryption `json:"clientSide,omitempty"`

	// compliance presets the TLS settings must satisfy. Listing a preset makes the API server
	// refuse protocols and suites outside it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=5
	Compliance []CompliancePreset `json:"compliance,omitempty"`
}
