package crypto

import (
	"fmt"
	"slices"

	"secured.dev/operator/api/v1alpha1"
)

// Assess ranks an effective profile (see rank.go for the rule) and lists the compliance presets
// it satisfies.
func Assess(e v1alpha1.EffectiveEncryption, engine v1alpha1.Engine) v1alpha1.SecurityAssessment {
	vpnAR, vpnRR := vpnRanks(e.VPN)
	ar := max(tlsRank(e.ClientToNode), vpnAR)
	rrTLS := tlsRank(e.NodeToNode)
	if e.NodeToNode.Scope != "" && e.NodeToNode.Scope != v1alpha1.ScopeAll {
		rrTLS = 0 // traffic inside a datacenter or rack stays in plaintext
	}
	rr := max(rrTLS, vpnRR)

	if engine == v1alpha1.EngineHBase && e.HBase != nil {
		h := e.HBase
		kerberos := h.Authentication == v1alpha1.AuthenticationKerberos
		hbaseSASL := int32(0)
		if kerberos && h.HBaseRPCProtection == v1alpha1.ProtectionPrivacy {
			hbaseSASL = saslPrivacyProtection.Rank()
			if h.AESTransform != nil && *h.AESTransform {
				hbaseSASL = saslAESTransformProtection.Rank()
			}
		}
		hadoopSASL := int32(0)
		if kerberos && h.HadoopRPCProtection == v1alpha1.ProtectionPrivacy {
			hadoopSASL = saslPrivacyProtection.Rank()
		}
		dataTransfer := int32(0)
		if d := h.DataTransfer; d != nil && d.Encrypt != nil && *d.Encrypt {
			dataTransfer = hdfsDataTransferProtection(d.KeyBitLength).Rank()
		}
		ar = max(ar, hbaseSASL)
		// Node-to-node traffic crosses three links; the channel is as strong as the weakest.
		rr = min(max(rr, hbaseSASL), max(hadoopSASL, vpnRR), max(dataTransfer, vpnRR))
	}

	a := v1alpha1.SecurityAssessment{ClientToNodeRank: ar, NodeToNodeRank: rr, Rank: ar + rr}
	a.AtRestRank, a.ClientSideRank, a.Notes = assessData(e, engine)
	for _, p := range presets {
		if satisfies(p, e.ClientToNode) && satisfies(p, e.NodeToNode) {
			a.SatisfiedPresets = append(a.SatisfiedPresets, p.Name)
		}
	}
	return a
}

// tlsRank is the rank of a TLS channel: its weakest accepted suite; 0 unless TLS is Required.
func tlsRank(c v1alpha1.EffectiveChannel) int32 {
	if c.Mode != v1alpha1.ChannelRequired || len(c.CipherSuites) == 0 {
		return 0
	}
	r := int32(MaxSuiteRank)
	for _, name := range c.CipherSuites {
		s, ok := Lookup(name)
		if !ok {
			return 0
		}
		r = min(r, s.Rank())
	}
	return r
}

func vpnRanks(v *v1alpha1.VPNSettings) (ar, rr int32) {
	if v == nil {
		return 0, 0
	}
	var rank int32
	switch v.Type {
	case v1alpha1.VPNWireGuard:
		rank = wireGuardProtection.Rank()
	case v1alpha1.VPNOpenVPN:
		cipher := "AES-256-GCM"
		if v.OpenVPN != nil && v.OpenVPN.Cipher != "" {
			cipher = v.OpenVPN.Cipher
		}
		rank = openVPNProtection(cipher).Rank()
	default:
		return 0, 0
	}
	switch v.Scope {
	case v1alpha1.VPNScopeAll:
		return rank, rank
	case v1alpha1.VPNScopeClientToNode:
		return rank, 0
	}
	return 0, rank
}

func satisfies(p Preset, c v1alpha1.EffectiveChannel) bool {
	if c.Mode != v1alpha1.ChannelRequired {
		return false
	}
	for _, proto := range c.Protocols {
		v, ok := ProtocolVersion(string(proto))
		if !ok || !p.AllowsProtocol(v) {
			return false
		}
	}
	return !slices.ContainsFunc(c.CipherSuites, func(name string) bool {
		s, ok := Lookup(name)
		return !ok || !p.Allows(s)
	})
}

// assessData ranks the protection of data on disk and from the datastore itself, and says in
// words what stays readable: a rank alone would hide that Cassandra's engine-level encryption
// leaves its SSTables in clear.
func assessData(e v1alpha1.EffectiveEncryption, engine v1alpha1.Engine) (atRest, clientSide int32, notes []string) {
	switch {
	case e.AtRest != nil && e.AtRest.Volume != nil:
		// fscrypt's AES-256-XTS: a 256-bit key, no authentication tag; at least as strong as the
		// engine's AES-128 or AES-256 beside it.
		atRest = Protection{Key256: true, WidelyReviewed: true}.Rank()
		notes = append(notes, "at rest: the node's kernel encrypts every file of the data volume (fscrypt, AES-256-XTS), data files and logs alike; "+
			"XTS has no authentication tag, so whoever holds the disk cannot read the data but could damage it unnoticed, "+
			"and the key is in a Secret the nodes mount: it protects a stolen, copied or reused disk, not the data from whoever can read Secrets or the running node")
		if engine == v1alpha1.EngineHBase {
			notes = append(notes, "at rest: on HBase the DataNodes' volumes are encrypted, where HDFS keeps every block (HFiles and write-ahead logs); "+
				"the NameNode's and ZooKeeper's volumes, which hold file and region names but no values, are not")
		}
	case e.AtRest != nil && e.AtRest.Engine != nil:
		// Cassandra's transparent data encryption (AES/CBC/PKCS5Padding) and HBase's (AES/CTR):
		// no authentication tag.
		atRest = Protection{Key256: e.AtRest.Engine.KeyBits >= 256, WidelyReviewed: true}.Rank()
		if engine == v1alpha1.EngineHBase {
			notes = append(notes, "at rest: HBase encrypts its write-ahead logs and the HFiles of column families created with ENCRYPTION => 'AES' "+
				"(the benchmark's table is); other column families' HFiles stay in clear on HDFS")
		} else {
			notes = append(notes, "at rest: Cassandra encrypts its commit log and hints only; SSTables (flushed and compacted data) stay in clear on disk, "+
				"because open-source Cassandra has no SSTable encryption: add clientSide encryption or encrypted volumes to protect the data itself")
		}
	default:
		notes = append(notes, "at rest: the datastore encrypts nothing it writes to disk")
	}
	if cs := e.ClientSide; cs != nil {
		if cs.Cipher != v1alpha1.ClientCipherNone {
			clientSide = Protection{FullTagAEAD: true, Key256: cs.Cipher != v1alpha1.ClientAES128GCM, SHA2Integrity: true, WidelyReviewed: true}.Rank()
		}
		fields := "every field"
		if cs.Fields != nil {
			fields = fmt.Sprintf("the first %d fields", *cs.Fields)
		}
		what := "encrypts"
		switch {
		case cs.Cipher == v1alpha1.ClientCipherNone:
			what = "signs (without encrypting)"
		case cs.Signature != v1alpha1.ClientSignatureNone:
			what = "encrypts and signs"
		}
		notes = append(notes, fmt.Sprintf("client side: the client %s %s of each record; row keys, the other fields and the table's shape stay readable to the datastore", what, fields))
	}
	return atRest, clientSide, notes
}
