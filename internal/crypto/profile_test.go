package crypto

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/samples"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestShippedProfiles resolves every shipped profile and compares the effective settings, rank
// and satisfied presets with a golden file, so a change to the catalogue, the rank rule or a
// profile shows up as a reviewable diff.
func TestShippedProfiles(t *testing.T) {
	profiles, err := samples.Profiles()
	if err != nil || len(profiles) == 0 {
		t.Fatalf("shipped profiles: %v (%d found)", err, len(profiles))
	}
	var b strings.Builder
	for _, p := range profiles {
		res, errs := Resolve(&p.Spec.EncryptionSettings, nil, "", field.NewPath("spec"))
		if len(errs) > 0 {
			t.Errorf("%s does not resolve: %v", p.Name, errs.ToAggregate())
		}
		a := res.Assessment
		fmt.Fprintf(&b, "%s: rank %d (AR %d, RR %d) presets %v\n", p.Name, a.Rank, a.ClientToNodeRank, a.NodeToNodeRank, a.SatisfiedPresets)
		for _, ch := range []struct {
			name string
			c    v1alpha1.EffectiveChannel
		}{{"AR", res.Effective.ClientToNode}, {"RR", res.Effective.NodeToNode}} {
			fmt.Fprintf(&b, "  %s %s %v %v auth=%s engine=%s scope=%s\n", ch.name, ch.c.Mode, ch.c.Protocols, ch.c.CipherSuites, ch.c.ClientAuth, ch.c.Engine, ch.c.Scope)
		}
		if h := res.Effective.HBase; h != nil {
			fmt.Fprintf(&b, "  hbase auth=%s hbaseRPC=%s hadoopRPC=%s aes=%v dataTransfer=%v/%d\n", h.Authentication, h.HBaseRPCProtection, h.HadoopRPCProtection, *h.AESTransform, *h.DataTransfer.Encrypt, h.DataTransfer.KeyBitLength)
		}
		if v := res.Effective.VPN; v != nil {
			fmt.Fprintf(&b, "  vpn %s scope=%s\n", v.Type, v.Scope)
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", w)
		}
	}
	golden := filepath.Join("testdata", "shipped-profiles.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/crypto -run TestShippedProfiles -update)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("shipped profiles changed; if intended, rerun with -update and review the diff.\ngot:\n%s", got)
	}
}

func tlsChannel(mode v1alpha1.ChannelMode, engine v1alpha1.TLSEngine, protocols []v1alpha1.TLSProtocol, suites ...v1alpha1.CipherSuite) v1alpha1.ChannelEncryption {
	return v1alpha1.ChannelEncryption{Mode: mode, TLS: &v1alpha1.TLSSettings{Protocols: protocols, CipherSuites: suites, Engine: engine}}
}

func TestMergeOverridesFieldByField(t *testing.T) {
	base := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: tlsChannel(v1alpha1.ChannelRequired, "", []v1alpha1.TLSProtocol{v1alpha1.TLSv13}, "TLS_AES_128_GCM_SHA256")},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: tlsChannel(v1alpha1.ChannelRequired, "", []v1alpha1.TLSProtocol{v1alpha1.TLSv13}, "TLS_AES_128_GCM_SHA256")},
		Compliance:   []v1alpha1.CompliancePreset{v1alpha1.PresetMozillaModern},
	}
	over := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{TLS: &v1alpha1.TLSSettings{CipherSuites: []v1alpha1.CipherSuite{"TLS_AES_256_GCM_SHA384"}}}},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelOptional}},
		Compliance:   []v1alpha1.CompliancePreset{v1alpha1.PresetNIST},
	}
	res, errs := Resolve(base, over, v1alpha1.EngineCassandra, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	ar, rr := res.Effective.ClientToNode, res.Effective.NodeToNode
	if ar.Mode != v1alpha1.ChannelRequired || fmt.Sprint(ar.Protocols) != "[TLSv1.3]" || fmt.Sprint(ar.CipherSuites) != "[TLS_AES_256_GCM_SHA384]" {
		t.Errorf("AR: the override replaces only the suites: %+v", ar)
	}
	if rr.Mode != v1alpha1.ChannelOptional || fmt.Sprint(rr.CipherSuites) != "[TLS_AES_128_GCM_SHA256]" || rr.ClientAuth != v1alpha1.ClientAuthRequired {
		t.Errorf("RR: the override replaces only the mode: %+v", rr)
	}
	if fmt.Sprint(res.Effective.Compliance) != "[Mozilla-Modern NIST-SP-800-52r2]" {
		t.Errorf("compliance presets are the union: %v", res.Effective.Compliance)
	}
	if res.Assessment.NodeToNodeRank != 0 || res.Assessment.ClientToNodeRank != 64 {
		t.Errorf("Optional accepts plaintext and ranks 0; TLS 1.3 AES-256 ranks 64: %+v", res.Assessment)
	}
	if base.ClientToNode.TLS.CipherSuites[0] != "TLS_AES_128_GCM_SHA256" {
		t.Error("Resolve modified its input")
	}
}

func TestEngineChoice(t *testing.T) {
	tls13 := []v1alpha1.TLSProtocol{v1alpha1.TLSv13}
	for _, tc := range []struct {
		name       string
		ch         v1alpha1.ChannelEncryption
		engine     v1alpha1.TLSEngine
		reason     string
		warning    string
		errorField string
	}{
		{"pinned TLS 1.3 suite needs JDK", tlsChannel(v1alpha1.ChannelRequired, "", tls13, "TLS_AES_128_GCM_SHA256"), v1alpha1.TLSEngineJDK, "cannot restrict TLS 1.3", "", ""},
		{"all TLS 1.3 suites stay on OpenSSL", tlsChannel(v1alpha1.ChannelRequired, "", tls13), v1alpha1.TLSEngineOpenSSL, "implements every listed suite", "", ""},
		{"DHE is not in BoringSSL", tlsChannel(v1alpha1.ChannelRequired, "", nil, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA"), v1alpha1.TLSEngineJDK, "does not implement TLS_DHE_RSA_WITH_AES_128_CBC_SHA", "", ""},
		{"explicit OpenSSL with a pinned TLS 1.3 suite is allowed but warned", tlsChannel(v1alpha1.ChannelRequired, v1alpha1.TLSEngineOpenSSL, tls13, "TLS_AES_256_GCM_SHA384"), v1alpha1.TLSEngineOpenSSL, "requested", "cannot restrict TLS 1.3 suites", ""},
		{"explicit OpenSSL with DHE is refused", tlsChannel(v1alpha1.ChannelRequired, v1alpha1.TLSEngineOpenSSL, nil, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"), "", "", "", "spec.clientToNode.tls.engine"},
		{"explicit JDK with CCM is refused", tlsChannel(v1alpha1.ChannelRequired, v1alpha1.TLSEngineJDK, nil, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM"), "", "", "", "spec.clientToNode.tls.engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: tc.ch}}
			res, errs := Resolve(s, nil, v1alpha1.EngineCassandra, field.NewPath("spec"))
			if tc.errorField != "" {
				if len(errs) == 0 || errs[0].Field != tc.errorField {
					t.Fatalf("want an error on %s, got %v", tc.errorField, errs)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			ar := res.Effective.ClientToNode
			if ar.Engine != tc.engine || !strings.Contains(ar.EngineReason, tc.reason) {
				t.Errorf("engine %s (%s), want %s (%s)", ar.Engine, ar.EngineReason, tc.engine, tc.reason)
			}
			if tc.warning != "" && (len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], tc.warning)) {
				t.Errorf("warnings %v, want %q", res.Warnings, tc.warning)
			}
		})
	}
}

func TestDefaultsFollowCompliance(t *testing.T) {
	s := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
		Compliance:   []v1alpha1.CompliancePreset{v1alpha1.PresetNIST},
	}
	res, errs := Resolve(s, nil, v1alpha1.EngineCassandra, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	for _, name := range res.Effective.ClientToNode.CipherSuites {
		if strings.Contains(name, "CHACHA20") {
			t.Errorf("default suites under NIST include %s", name)
		}
	}
	if len(res.Effective.ClientToNode.CipherSuites) == 0 {
		t.Error("no default suites")
	}

	modern := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
		Compliance:   []v1alpha1.CompliancePreset{v1alpha1.PresetMozillaModern},
	}
	res, _ = Resolve(modern, nil, v1alpha1.EngineCassandra, field.NewPath("spec"))
	if fmt.Sprint(res.Effective.ClientToNode.Protocols) != "[TLSv1.3]" {
		t.Errorf("Mozilla modern defaults to TLS 1.3 only, got %v", res.Effective.ClientToNode.Protocols)
	}
}

func TestCrossObjectErrorsNameTheField(t *testing.T) {
	hbaseProfile := &v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos}}
	_, errs := Resolve(hbaseProfile, nil, v1alpha1.EngineCassandra, field.NewPath("spec", "encryption"))
	if len(errs) != 1 || errs[0].Field != "spec.encryption.hbase" {
		t.Errorf("an HBase profile on a Cassandra datastore: %v", errs)
	}
	scoped := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}, Scope: v1alpha1.ScopeDatacenter},
	}
	_, errs = Resolve(scoped, nil, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) != 1 || errs[0].Field != "spec.encryption.nodeToNode.scope" {
		t.Errorf("a Cassandra scope on HBase: %v", errs)
	}
	// Suites inherited from a TLS 1.3 profile, protocols overridden to TLS 1.2 only: only the
	// merged result shows the contradiction.
	base := &v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: tlsChannel(v1alpha1.ChannelRequired, "", nil, "TLS_AES_128_GCM_SHA256")}}
	over := &v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{TLS: &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv12}}}}}
	_, errs = Resolve(base, over, v1alpha1.EngineCassandra, field.NewPath("spec", "encryption"))
	if len(errs) == 0 || !strings.HasPrefix(errs[0].Field, "spec.encryption.clientToNode.tls.") {
		t.Errorf("merged TLS 1.3 suites with TLS 1.2 protocols: %v", errs)
	}
	optionalAuth := &v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired, TLS: &v1alpha1.TLSSettings{ClientAuth: v1alpha1.ClientAuthOptional}}}}
	_, errs = Resolve(optionalAuth, nil, v1alpha1.EngineCassandra, field.NewPath("spec", "encryption"))
	if len(errs) != 1 || errs[0].Field != "spec.encryption.clientToNode.tls.clientAuth" {
		t.Errorf("Cassandra 5.0 has no optional client auth: %v", errs)
	}
	tunnelled := &v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{}, VPN: &v1alpha1.VPNSettings{Type: v1alpha1.VPNWireGuard}}
	res, errs := Resolve(tunnelled, nil, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) > 0 || res.Effective.VPN.Scope != v1alpha1.VPNScopeAll {
		t.Errorf("a tunnel on HBase carries its clients by default: %+v, %v", res.Effective.VPN, errs)
	}
	tunnelled.VPN.Scope = v1alpha1.VPNScopeNodeToNode
	_, errs = Resolve(tunnelled, nil, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) != 1 || errs[0].Field != "spec.encryption.vpn.scope" || !strings.Contains(errs[0].Detail, "set vpn.scope: All") {
		t.Errorf("a tunnel around HBase's nodes alone: %v", errs)
	}
	tunnelled.VPN.Scope = ""
	tunnelled.HBase.Authentication = v1alpha1.AuthenticationKerberos
	_, errs = Resolve(tunnelled, nil, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) != 1 || errs[0].Field != "spec.encryption.vpn" || !strings.Contains(errs[0].Detail, "no Kerberos principals") {
		t.Errorf("a tunnel around a Kerberos HBase: %v", errs)
	}
	volume := &v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{}, AtRest: &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{}}}
	if res, errs := Resolve(volume, nil, v1alpha1.EngineHBase, field.NewPath("spec", "encryption")); len(errs) > 0 || res.Effective.AtRest.Volume.Method != v1alpha1.VolumeFscrypt {
		t.Errorf("an encrypted volume on HBase: %+v, %v", res.Effective.AtRest, errs)
	}
	res, errs = Resolve(&v1alpha1.EncryptionSettings{AtRest: &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{}}}, nil, v1alpha1.EngineCassandra, field.NewPath("spec", "encryption"))
	if len(errs) > 0 || res.Effective.AtRest == nil || res.Effective.AtRest.Volume.Method != v1alpha1.VolumeFscrypt || res.Assessment.AtRestRank != 6 {
		t.Errorf("an encrypted volume on Cassandra: %+v, rank %d, %v", res.Effective.AtRest, res.Assessment.AtRestRank, errs)
	}
}

func BenchmarkResolve(b *testing.B) {
	s := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: tlsChannel(v1alpha1.ChannelRequired, "", nil, "TLS_AES_128_GCM_SHA256")},
		Compliance:   []v1alpha1.CompliancePreset{v1alpha1.PresetNIST},
	}
	for b.Loop() {
		Resolve(s, nil, v1alpha1.EngineCassandra, field.NewPath("spec"))
	}
}

// Cassandra has one TLS engine per process: a channel that needs the JDK takes the other along.
func TestCassandraRunsOneEngine(t *testing.T) {
	s := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: tlsChannel(v1alpha1.ChannelRequired, "", []v1alpha1.TLSProtocol{v1alpha1.TLSv13}, "TLS_AES_128_GCM_SHA256")},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: tlsChannel(v1alpha1.ChannelRequired, "", []v1alpha1.TLSProtocol{v1alpha1.TLSv13})},
	}
	res, errs := Resolve(s, nil, v1alpha1.EngineCassandra, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	rr := res.Effective.NodeToNode
	if rr.Engine != v1alpha1.TLSEngineJDK || !strings.Contains(rr.EngineReason, "one TLS engine") {
		t.Errorf("node-to-node engine %s (%s); want JDK because client-to-node needs it", rr.Engine, rr.EngineReason)
	}
}

// An HBase server has one RPC port and one TLS configuration for clients and peers:
// nodeToNode takes clientToNode's, and contradictions are refused by field.
func TestHBaseHasOneTLSConfigurationPerPort(t *testing.T) {
	path := field.NewPath("spec", "encryption")
	s := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: tlsChannel(v1alpha1.ChannelRequired, "", []v1alpha1.TLSProtocol{v1alpha1.TLSv13}, "TLS_AES_256_GCM_SHA384")},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
	}
	res, errs := Resolve(s, nil, v1alpha1.EngineHBase, path)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	ar, rr := res.Effective.ClientToNode, res.Effective.NodeToNode
	if fmt.Sprint(rr.Protocols, rr.CipherSuites, rr.ClientAuth, rr.Engine) != fmt.Sprint(ar.Protocols, ar.CipherSuites, ar.ClientAuth, ar.Engine) || ar.Engine != v1alpha1.TLSEngineJDK {
		t.Errorf("nodeToNode %+v, clientToNode %+v: want the same TLS on the JDK", rr, ar)
	}

	for _, tc := range []struct {
		field string
		rr    v1alpha1.ChannelEncryption
		ar    v1alpha1.ChannelMode
	}{
		{"spec.encryption.nodeToNode.mode", v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}, v1alpha1.ChannelDisabled},
		{"spec.encryption.nodeToNode.mode", v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}, v1alpha1.ChannelRequired},
		{"spec.encryption.nodeToNode.tls.protocols", tlsChannel(v1alpha1.ChannelRequired, "", []v1alpha1.TLSProtocol{v1alpha1.TLSv12}), v1alpha1.ChannelRequired},
		{"spec.encryption.nodeToNode.tls.clientAuth", v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired, TLS: &v1alpha1.TLSSettings{ClientAuth: v1alpha1.ClientAuthRequired}}, v1alpha1.ChannelRequired},
	} {
		bad := &v1alpha1.EncryptionSettings{
			ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: tc.ar}},
			NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: tc.rr},
		}
		if tc.ar == v1alpha1.ChannelRequired {
			bad.ClientToNode.TLS = &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv13}}
		}
		_, errs := Resolve(bad, nil, v1alpha1.EngineHBase, path)
		if len(errs) != 1 || errs[0].Field != tc.field {
			t.Errorf("want one error on %s, got %v", tc.field, errs)
		}
	}
}
