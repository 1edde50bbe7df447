package crypto

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"secured.dev/operator/api/v1alpha1"
)

// Resolution is an effective profile and the operator's assessment of it.
type Resolution struct {
	Effective  v1alpha1.EffectiveEncryption
	Assessment v1alpha1.SecurityAssessment
	// Warnings are accepted but worth telling the user, e.g. a TLS 1.3 suite list the chosen
	// engine cannot enforce.
	Warnings []string
}

// Resolve merges a profile (base, from an EncryptionProfile; may be nil) with a datastore's
// inline overrides (may be nil), applies defaults, checks the result for the engine ("" when
// the engine is not known yet, as for an EncryptionProfile on its own) and ranks it. Errors name
// fields under root, e.g. spec.encryption.
func Resolve(base, overrides *v1alpha1.EncryptionSettings, engine v1alpha1.Engine, root *field.Path) (Resolution, field.ErrorList) {
	merged := Merge(base, overrides)
	if engine == "" {
		engine = inferEngine(merged)
	}
	var res Resolution
	var errs field.ErrorList
	compliance := merged.Compliance
	res.Effective.Compliance = compliance

	var ar, rr *v1alpha1.ChannelEncryption
	if merged.ClientToNode != nil {
		ar = &merged.ClientToNode.ChannelEncryption
	}
	if merged.NodeToNode != nil {
		rr = &merged.NodeToNode.ChannelEncryption
	}
	var w []string
	res.Effective.ClientToNode, w, errs = resolveChannel(ar, v1alpha1.ClientAuthNone, compliance, root.Child("clientToNode"), errs)
	res.Warnings = append(res.Warnings, w...)
	res.Effective.NodeToNode, w, errs = resolveChannel(rr, v1alpha1.ClientAuthRequired, compliance, root.Child("nodeToNode"), errs)
	res.Warnings = append(res.Warnings, w...)

	if merged.NodeToNode != nil && merged.NodeToNode.Scope != "" {
		if engine != v1alpha1.EngineCassandra {
			errs = append(errs, field.Forbidden(root.Child("nodeToNode", "scope"), "scope is Cassandra's internode_encryption; HBase encrypts all node-to-node RPC: remove it"))
		}
		res.Effective.NodeToNode.Scope = merged.NodeToNode.Scope
	} else if engine == v1alpha1.EngineCassandra && res.Effective.NodeToNode.Mode != v1alpha1.ChannelDisabled {
		res.Effective.NodeToNode.Scope = v1alpha1.ScopeAll
	}
	if engine == v1alpha1.EngineCassandra {
		unifyEngines(&res.Effective)
		for _, ch := range []struct {
			name string
			c    v1alpha1.EffectiveChannel
		}{{"clientToNode", res.Effective.ClientToNode}, {"nodeToNode", res.Effective.NodeToNode}} {
			if ch.c.ClientAuth == v1alpha1.ClientAuthOptional {
				errs = append(errs, field.NotSupported(root.Child(ch.name, "tls", "clientAuth"), ch.c.ClientAuth,
					[]string{string(v1alpha1.ClientAuthNone), string(v1alpha1.ClientAuthRequired)}))
			}
		}
	}

	if engine == v1alpha1.EngineHBase {
		errs = unifyHBaseChannels(&res.Effective, merged.NodeToNode, root.Child("nodeToNode"), errs)
	}
	if merged.HBase != nil {
		if engine != v1alpha1.EngineHBase {
			errs = append(errs, field.Forbidden(root.Child("hbase"), "hbase settings (Kerberos, SASL, HDFS encryption) apply only to engine HBase: remove them or use an HBase datastore"))
		}
		res.Effective.HBase = resolveHBase(merged.HBase)
	} else if engine == v1alpha1.EngineHBase {
		res.Effective.HBase = resolveHBase(&v1alpha1.HBaseSecurity{})
	}
	if merged.VPN.Enabled() {
		res.Effective.VPN = resolveVPN(merged.VPN, engine)
		if s := res.Effective.VPN.Scope; engine == v1alpha1.EngineHBase && s != v1alpha1.VPNScopeAll {
			// HBase's servers register under their tunnel addresses, and clients find them
			// by those: a client outside the tunnel could reach none of them.
			errs = append(errs, field.Invalid(root.Child("vpn", "scope"), s, "an HBase tunnel carries its clients too, "+
				"since they reach every server at the address it registers, its tunnel address: set vpn.scope: All"))
		}
		if h := res.Effective.HBase; h != nil && (h.Authentication == v1alpha1.AuthenticationKerberos || res.Effective.ClientToNode.Mode != v1alpha1.ChannelDisabled) {
			errs = append(errs, field.Forbidden(root.Child("vpn"), "an HBase tunnel names every server by its tunnel address, for which the operator "+
				"issues no Kerberos principals or certificates yet: remove vpn, or set hbase.authentication: Simple and clientToNode and nodeToNode mode: Disabled"))
		}
	}
	if a := merged.AtRest; a != nil && (a.Engine != nil || a.Volume != nil) {
		out := a.DeepCopy()
		if out.Engine != nil {
			setDefault(&out.Engine.KeyBits, 128)
		}
		if out.Volume != nil {
			setDefault(&out.Volume.Method, v1alpha1.VolumeFscrypt)
		}
		res.Effective.AtRest = out
	}
	if cs := merged.ClientSide; cs != nil {
		res.Effective.ClientSide = resolveClientSide(cs)
	}
	res.Assessment = Assess(res.Effective, engine)
	return res, errs
}

// Merge overlays overrides on base field by field; neither argument is modified.
func Merge(base, overrides *v1alpha1.EncryptionSettings) v1alpha1.EncryptionSettings {
	var out v1alpha1.EncryptionSettings
	if base != nil {
		base.DeepCopyInto(&out)
	}
	if overrides == nil {
		return out
	}
	o := overrides.DeepCopy()
	if o.ClientToNode != nil {
		if out.ClientToNode == nil {
			out.ClientToNode = &v1alpha1.ClientToNodeEncryption{}
		}
		mergeChannel(&out.ClientToNode.ChannelEncryption, &o.ClientToNode.ChannelEncryption)
	}
	if o.NodeToNode != nil {
		if out.NodeToNode == nil {
			out.NodeToNode = &v1alpha1.NodeToNodeEncryption{}
		}
		mergeChannel(&out.NodeToNode.ChannelEncryption, &o.NodeToNode.ChannelEncryption)
		setIf(&out.NodeToNode.Scope, o.NodeToNode.Scope)
	}
	if o.HBase != nil {
		if out.HBase == nil {
			out.HBase = &v1alpha1.HBaseSecurity{}
		}
		h, oh := out.HBase, o.HBase
		setIf(&h.Authentication, oh.Authentication)
		setIf(&h.HBaseRPCProtection, oh.HBaseRPCProtection)
		setIf(&h.HadoopRPCProtection, oh.HadoopRPCProtection)
		if oh.AESTransform != nil {
			h.AESTransform = oh.AESTransform
		}
		if oh.DataTransfer != nil {
			if h.DataTransfer == nil {
				h.DataTransfer = &v1alpha1.HDFSDataTransfer{}
			}
			d, od := h.DataTransfer, oh.DataTransfer
			if od.Encrypt != nil {
				d.Encrypt = od.Encrypt
			}
			setIf(&d.CipherSuite, od.CipherSuite)
			setIf(&d.KeyBitLength, od.KeyBitLength)
			setIf(&d.Protection, od.Protection)
		}
	}
	if o.VPN != nil {
		if out.VPN == nil {
			out.VPN = &v1alpha1.VPNSettings{}
		}
		setIf(&out.VPN.Type, o.VPN.Type)
		setIf(&out.VPN.Scope, o.VPN.Scope)
		if o.VPN.OpenVPN != nil {
			out.VPN.OpenVPN = o.VPN.OpenVPN
		}
	}
	if o.AtRest != nil {
		out.AtRest = o.AtRest.DeepCopy()
	}
	if o.ClientSide != nil {
		// Keys are made for one cipher and signature, so the client-side settings are taken as
		// a whole, never mixed field by field.
		out.ClientSide = o.ClientSide.DeepCopy()
	}
	for _, p := range o.Compliance {
		if !slices.Contains(out.Compliance, p) {
			out.Compliance = append(out.Compliance, p)
		}
	}
	return out
}

func mergeChannel(dst, o *v1alpha1.ChannelEncryption) {
	setIf(&dst.Mode, o.Mode)
	if o.TLS == nil {
		return
	}
	if dst.TLS == nil {
		dst.TLS = &v1alpha1.TLSSettings{}
	}
	if o.TLS.Protocols != nil {
		dst.TLS.Protocols = o.TLS.Protocols
	}
	if o.TLS.CipherSuites != nil {
		dst.TLS.CipherSuites = o.TLS.CipherSuites
	}
	setIf(&dst.TLS.ClientAuth, o.TLS.ClientAuth)
	setIf(&dst.TLS.Engine, o.TLS.Engine)
}

func setIf[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// inferEngine guesses the engine a profile is meant for: only HBase has hbase settings.
func inferEngine(s v1alpha1.EncryptionSettings) v1alpha1.Engine {
	if s.HBase != nil {
		return v1alpha1.EngineHBase
	}
	return v1alpha1.EngineCassandra
}

func resolveChannel(c *v1alpha1.ChannelEncryption, defaultAuth v1alpha1.ClientAuth, compliance []v1alpha1.CompliancePreset,
	path *field.Path, errs field.ErrorList) (v1alpha1.EffectiveChannel, []string, field.ErrorList) {
	out := v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}
	if c == nil {
		return out, nil, errs
	}
	setIf(&out.Mode, c.Mode)
	if out.Mode == v1alpha1.ChannelDisabled {
		if c.TLS != nil {
			errs = append(errs, field.Forbidden(path.Child("tls"), "tls must not be set when mode is Disabled: set mode to Optional or Required, or remove tls"))
		}
		return out, nil, errs
	}
	tls := c.TLS
	if tls == nil {
		tls = &v1alpha1.TLSSettings{}
	}
	tp := path.Child("tls")

	var presets []Preset
	for _, name := range compliance {
		if p, ok := LookupPreset(name); ok {
			presets = append(presets, p)
		}
	}

	// Suites first: an explicit list decides the protocols when none are given.
	var suites []Suite
	for i, name := range tls.CipherSuites {
		if err := CheckSuiteName(string(name)); err != nil {
			errs = append(errs, field.Invalid(tp.Child("cipherSuites").Index(i), name, err.Error()))
			continue
		}
		s, _ := Lookup(string(name))
		suites = append(suites, s)
	}
	var versions []uint16
	switch {
	case tls.Protocols != nil:
		for i, p := range tls.Protocols {
			v, ok := ProtocolVersion(string(p))
			if !ok || v < VersionTLS12 {
				errs = append(errs, field.NotSupported(tp.Child("protocols").Index(i), p, []string{string(v1alpha1.TLSv12), string(v1alpha1.TLSv13)}))
				continue
			}
			versions = append(versions, v)
		}
	case len(tls.CipherSuites) > 0:
		for _, v := range []uint16{VersionTLS12, VersionTLS13} {
			if slices.ContainsFunc(suites, func(s Suite) bool { return s.SupportsVersion(v) }) {
				versions = append(versions, v)
			}
		}
	default:
		versions = []uint16{VersionTLS12, VersionTLS13}
		for _, p := range presets {
			versions = slices.DeleteFunc(versions, func(v uint16) bool { return !p.AllowsProtocol(v) })
		}
	}
	if len(tls.CipherSuites) == 0 {
		suites = DefaultSuites(versions)
		for _, p := range presets {
			suites = slices.DeleteFunc(suites, func(s Suite) bool { return !p.Allows(s) })
		}
		if len(suites) == 0 {
			errs = append(errs, field.Required(tp.Child("cipherSuites"), "no default suite satisfies every compliance preset for these protocols: list cipherSuites explicitly"))
		}
	}
	for _, v := range versions {
		if !slices.ContainsFunc(suites, func(s Suite) bool { return s.SupportsVersion(v) }) {
			errs = append(errs, field.Invalid(tp.Child("protocols"), ProtocolName(v),
				fmt.Sprintf("protocols include %s but cipherSuites has no %s suite: add one or remove %s", ProtocolName(v), ProtocolName(v), ProtocolName(v))))
		}
	}
	for _, s := range suites {
		if !slices.ContainsFunc(versions, s.SupportsVersion) {
			errs = append(errs, field.Invalid(tp.Child("cipherSuites"), s.Name, "no listed protocol can negotiate this suite: add its protocol or remove it"))
		}
	}
	for _, p := range presets {
		for _, v := range versions {
			if !p.AllowsProtocol(v) {
				errs = append(errs, field.Invalid(tp.Child("protocols"), ProtocolName(v), fmt.Sprintf("outside compliance preset %s", p.Name)))
			}
		}
		for _, s := range suites {
			if !p.Allows(s) {
				errs = append(errs, field.Invalid(tp.Child("cipherSuites"), s.Name, fmt.Sprintf("outside compliance preset %s: remove it, or remove %s from compliance", p.Name, p.Name)))
			}
		}
	}

	for _, v := range versions {
		out.Protocols = append(out.Protocols, v1alpha1.TLSProtocol(ProtocolName(v)))
	}
	out.CipherSuites = Names(suites)
	out.ClientAuth = defaultAuth
	setIf(&out.ClientAuth, tls.ClientAuth)

	var warnings []string
	out.Engine, out.EngineReason, warnings, errs = chooseEngine(tls.Engine, suites, tp, errs)
	return out, warnings, errs
}

// chooseEngine picks the TLS implementation. BoringSSL (netty-tcnative, the datastores' default
// engine) knows fewer suites than the JDK and accepts every TLS 1.3 suite whatever it is told,
// so it is chosen automatically only when it can honour the suite list.
func chooseEngine(asked v1alpha1.TLSEngine, suites []Suite, tlsPath *field.Path,
	errs field.ErrorList) (v1alpha1.TLSEngine, string, []string, field.ErrorList) {
	path := tlsPath.Child("engine")
	var unsupported []string
	for _, s := range suites {
		if s.Libraries&LibBoringSSL == 0 {
			unsupported = append(unsupported, s.Name)
		}
	}
	allTLS13 := Filter(func(s Suite) bool { return s.TLS13() && s.Libraries&LibBoringSSL != 0 })
	var pinned13 []string
	for _, s := range suites {
		if s.TLS13() {
			pinned13 = append(pinned13, s.Name)
		}
	}
	restricts13 := len(pinned13) > 0 && len(pinned13) < len(allTLS13)
	var jdkMissing []string
	for _, s := range suites {
		if s.Libraries&LibJDK == 0 {
			jdkMissing = append(jdkMissing, s.Name)
		}
	}

	switch asked {
	case v1alpha1.TLSEngineOpenSSL:
		if len(unsupported) > 0 {
			errs = append(errs, field.Invalid(path, asked, fmt.Sprintf("the OpenSSL engine (BoringSSL) does not implement %s: use engine JDK or Auto, or remove those suites", strings.Join(unsupported, ", "))))
		}
		var warnings []string
		if restricts13 {
			warnings = append(warnings, fmt.Sprintf("the OpenSSL engine (BoringSSL) cannot restrict TLS 1.3 suites: it will accept every TLS 1.3 suite, not only %s; expect EncryptionVerified=False (CipherSuiteDrift), or use engine JDK", strings.Join(pinned13, ", ")))
		}
		return v1alpha1.TLSEngineOpenSSL, "requested", warnings, errs
	case v1alpha1.TLSEngineJDK:
		if len(jdkMissing) > 0 {
			errs = append(errs, field.Invalid(path, asked, fmt.Sprintf("the JDK engine (SunJSSE) does not implement %s: use engine OpenSSL, or remove those suites", strings.Join(jdkMissing, ", "))))
		}
		return v1alpha1.TLSEngineJDK, "requested", nil, errs
	}
	switch {
	case len(unsupported) > 0 && len(jdkMissing) > 0:
		errs = append(errs, field.Invalid(tlsPath.Child("cipherSuites"), strings.Join(unsupported, ", "),
			fmt.Sprintf("no single engine implements every suite (BoringSSL lacks %s, the JDK lacks %s): split the list", strings.Join(unsupported, ", "), strings.Join(jdkMissing, ", "))))
		return v1alpha1.TLSEngineJDK, "", nil, errs
	case len(unsupported) > 0:
		return v1alpha1.TLSEngineJDK, "Auto chose JDK: BoringSSL does not implement " + strings.Join(unsupported, ", "), nil, errs
	case restricts13:
		return v1alpha1.TLSEngineJDK, "Auto chose JDK: BoringSSL cannot restrict TLS 1.3 suites to " + strings.Join(pinned13, ", "), nil, errs
	}
	return v1alpha1.TLSEngineOpenSSL, "Auto chose OpenSSL: BoringSSL implements every listed suite", nil, errs
}

func resolveHBase(h *v1alpha1.HBaseSecurity) *v1alpha1.HBaseSecurity {
	out := h.DeepCopy()
	setDefault(&out.Authentication, v1alpha1.AuthenticationSimple)
	// SASL protection levels exist only with Kerberos (and the API refuses them without).
	if out.Authentication == v1alpha1.AuthenticationKerberos {
		setDefault(&out.HBaseRPCProtection, v1alpha1.ProtectionAuthentication)
		setDefault(&out.HadoopRPCProtection, v1alpha1.ProtectionAuthentication)
	}
	if out.AESTransform == nil {
		out.AESTransform = new(bool)
	}
	if out.DataTransfer == nil {
		out.DataTransfer = &v1alpha1.HDFSDataTransfer{}
	}
	d := out.DataTransfer
	if d.Encrypt == nil {
		d.Encrypt = new(bool)
	}
	if *d.Encrypt {
		setDefault(&d.CipherSuite, "AES/CTR/NoPadding")
		setDefault(&d.KeyBitLength, 128)
	}
	setDefault(&d.Protection, v1alpha1.ProtectionAuthentication)
	return out
}

func resolveClientSide(c *v1alpha1.ClientSideEncryption) *v1alpha1.ClientSideEncryption {
	out := c.DeepCopy()
	setDefault(&out.Cipher, v1alpha1.ClientAES256GCM)
	setDefault(&out.Signature, v1alpha1.ClientSignatureNone)
	return out
}

func resolveVPN(v *v1alpha1.VPNSettings, engine v1alpha1.Engine) *v1alpha1.VPNSettings {
	out := v.DeepCopy()
	if engine == v1alpha1.EngineHBase {
		setDefault(&out.Scope, v1alpha1.VPNScopeAll)
	}
	setDefault(&out.Scope, v1alpha1.VPNScopeNodeToNode)
	if out.Type == v1alpha1.VPNOpenVPN {
		if out.OpenVPN == nil {
			out.OpenVPN = &v1alpha1.OpenVPNSettings{}
		}
		setDefault(&out.OpenVPN.Cipher, "AES-256-GCM")
	}
	return out
}

func setDefault[T comparable](dst *T, v T) {
	var zero T
	if *dst == zero {
		*dst = v
	}
}

// unifyHBaseChannels: an HBase Master or RegionServer serves clients and its peers on one RPC
// port with one TLS configuration; clientToNode describes it, and nodeToNode only says whether
// the servers use TLS when they call each other. So node-to-node TLS needs client-to-node TLS
// and cannot accept other protocols, suites or client authentication than it.
func unifyHBaseChannels(e *v1alpha1.EffectiveEncryption, rr *v1alpha1.NodeToNodeEncryption, path *field.Path, errs field.ErrorList) field.ErrorList {
	if e.ClientToNode.Mode != v1alpha1.ChannelDisabled {
		// The image ships no netty-tcnative: HBase's RPC TLS is the JDK's.
		e.ClientToNode.Engine, e.ClientToNode.EngineReason = v1alpha1.TLSEngineJDK, "HBase's RPC TLS runs on the JDK's engine"
	}
	ar, n := e.ClientToNode, &e.NodeToNode
	if n.Mode == v1alpha1.ChannelDisabled {
		if ar.Mode == v1alpha1.ChannelRequired {
			return append(errs, field.Invalid(path.Child("mode"), n.Mode,
				"HBase Masters and RegionServers call each other on the RPC port that clientToNode Required closes to plaintext: set nodeToNode.mode Required, or clientToNode.mode Optional"))
		}
		return errs
	}
	if ar.Mode == v1alpha1.ChannelDisabled {
		return append(errs, field.Invalid(path.Child("mode"), n.Mode,
			"HBase serves clients and peers on one RPC port: node-to-node TLS needs clientToNode.mode Optional or Required"))
	}
	var tls *v1alpha1.TLSSettings
	if rr != nil {
		tls = rr.TLS
	}
	tp := path.Child("tls")
	if tls != nil && tls.Protocols != nil && !slices.Equal(n.Protocols, ar.Protocols) {
		errs = append(errs, field.Invalid(tp.Child("protocols"), tls.Protocols, "HBase has one TLS configuration per RPC port: use clientToNode's protocols or remove this list"))
	}
	if tls != nil && tls.CipherSuites != nil && !slices.Equal(n.CipherSuites, ar.CipherSuites) {
		errs = append(errs, field.Invalid(tp.Child("cipherSuites"), tls.CipherSuites, "HBase has one TLS configuration per RPC port: use clientToNode's cipher suites or remove this list"))
	}
	if tls != nil && tls.ClientAuth != "" && tls.ClientAuth != ar.ClientAuth {
		errs = append(errs, field.Invalid(tp.Child("clientAuth"), tls.ClientAuth, "HBase asks every caller of an RPC port for a certificate or none: set clientToNode.tls.clientAuth instead"))
	}
	n.Protocols, n.CipherSuites, n.ClientAuth, n.Engine, n.EngineReason = ar.Protocols, ar.CipherSuites, ar.ClientAuth, ar.Engine, ar.EngineReason
	return errs
}

// unifyEngines: Cassandra chooses one TLS engine for the whole process
// (-Dcassandra.disable_tcactive_openssl), so when one channel needs the JDK, both get it.
func unifyEngines(e *v1alpha1.EffectiveEncryption) {
	ar, rr := &e.ClientToNode, &e.NodeToNode
	for _, pair := range [][2]*v1alpha1.EffectiveChannel{{ar, rr}, {rr, ar}} {
		need, other := pair[0], pair[1]
		if need.Engine == v1alpha1.TLSEngineJDK && other.Mode != v1alpha1.ChannelDisabled && other.Engine == v1alpha1.TLSEngineOpenSSL {
			other.Engine = v1alpha1.TLSEngineJDK
			other.EngineReason = "Cassandra runs one TLS engine for both channels, and the other channel needs the JDK"
		}
	}
}
