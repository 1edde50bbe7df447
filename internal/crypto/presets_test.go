package crypto

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"secured.dev/operator/api/v1alpha1"
)

// Every suite a preset lists is accepted by the preset's own validator: a profile pinning that
// one suite and declaring the preset resolves without errors and is reported as satisfying it.
func TestEveryPresetSuitePassesItsOwnValidator(t *testing.T) {
	for _, p := range Presets() {
		if len(p.Suites()) == 0 {
			t.Fatalf("%s allows no suite", p.Name)
		}
		for _, s := range p.Suites() {
			v := VersionTLS12
			if s.TLS13() {
				v = VersionTLS13
			}
			ch := &v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired, TLS: &v1alpha1.TLSSettings{
				Protocols:    []v1alpha1.TLSProtocol{v1alpha1.TLSProtocol(ProtocolName(v))},
				CipherSuites: []v1alpha1.CipherSuite{v1alpha1.CipherSuite(s.Name)},
			}}
			settings := &v1alpha1.EncryptionSettings{
				ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: *ch},
				NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: *ch},
				Compliance:   []v1alpha1.CompliancePreset{p.Name},
			}
			res, errs := Resolve(settings, nil, v1alpha1.EngineCassandra, field.NewPath("spec"))
			if s.Libraries&(LibBoringSSL|LibJDK) == 0 {
				// CCM suites are in the presets but in neither datastore engine: the only
				// complaint allowed is that no engine implements them.
				for _, e := range errs {
					if !strings.Contains(e.Detail, "no single engine implements") {
						t.Errorf("%s with %s: %v", p.Name, s.Name, e)
					}
				}
				if len(errs) == 0 {
					t.Errorf("%s with %s: accepted although no datastore engine implements it", p.Name, s.Name)
				}
			} else if len(errs) > 0 {
				t.Errorf("%s with %s: %v", p.Name, s.Name, errs.ToAggregate())
			}
			if !slices.Contains(res.Assessment.SatisfiedPresets, p.Name) {
				t.Errorf("%s with %s: not reported as satisfying its own preset (%v)", p.Name, s.Name, res.Assessment.SatisfiedPresets)
			}
		}
	}
}

func TestPresetProperties(t *testing.T) {
	for _, p := range Presets() {
		for _, s := range p.Suites() {
			if s.Weak() {
				t.Errorf("%s allows refused suite %s", p.Name, s.Name)
			}
			if !s.ForwardSecrecy && p.Name != v1alpha1.PresetFIPS {
				t.Errorf("%s allows %s without forward secrecy", p.Name, s.Name)
			}
			if s.Cipher != "AES" && !(s.Cipher == "CHACHA20" && (p.Name == v1alpha1.PresetMozillaModern || p.Name == v1alpha1.PresetMozillaIntermediate)) {
				t.Errorf("%s allows %s: only the Mozilla presets allow a cipher other than AES", p.Name, s.Name)
			}
		}
	}
	modern, _ := LookupPreset(v1alpha1.PresetMozillaModern)
	for _, s := range modern.Suites() {
		if !s.TLS13() {
			t.Errorf("Mozilla modern allows TLS 1.2 suite %s", s.Name)
		}
	}
	bsi, _ := LookupPreset(v1alpha1.PresetBSI)
	for _, s := range bsi.Suites() {
		if s.MAC == "SHA1" || s.Mode == ModeCCM8 {
			t.Errorf("BSI TR-02102-2 allows %s (SHA-1 MAC or 8-byte tag)", s.Name)
		}
	}
	// The sizes pin the transcription of each source; a change must be deliberate.
	want := map[v1alpha1.CompliancePreset]int{
		v1alpha1.PresetNIST: 30, v1alpha1.PresetBSI: 23, v1alpha1.PresetFIPS: 52,
		v1alpha1.PresetMozillaModern: 3, v1alpha1.PresetMozillaIntermediate: 12,
	}
	for _, p := range Presets() {
		if got := len(p.Suites()); got != want[p.Name] {
			t.Errorf("%s allows %d suites, pinned %d: %v", p.Name, got, want[p.Name], Names(p.Suites()))
		}
	}
}
