package cassandra

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	goldenfile "secured.dev/operator/internal/test/golden"
	"secured.dev/operator/internal/test/samples"
)

var topology = Topology{ClusterName: "orders", Datacenter: "dc1", Seeds: []string{
	"orders-0.orders-seeds.default.svc.cluster.local", "orders-1.orders-seeds.default.svc.cluster.local",
}, PasswordAuthentication: true}

// Every shipped profile a Cassandra datastore can use renders to a golden cassandra.yaml and
// jvm-server.options.
func TestShippedProfilesRender(t *testing.T) {
	profiles, err := samples.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	rendered := 0
	for _, p := range profiles {
		if p.Spec.HBase != nil {
			continue // an HBase profile
		}
		res, errs := crypto.Resolve(&p.Spec.EncryptionSettings, nil, v1alpha1.EngineCassandra, field.NewPath("spec"))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", p.Name, errs.ToAggregate())
		}
		cfg, err := Config(topology, Target(res.Effective))
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		goldenfile.Check(t, p.Name+".cassandra.yaml", cfg)
		goldenfile.Check(t, p.Name+".jvm-server.options", JVMOptions(JVM{HeapMiB: 1024, EmulateNoAcceleration: p.Name == "tls13-aes128-gcm"}, res.Effective))
		rendered++
	}
	if rendered < 8 {
		t.Errorf("rendered %d Cassandra profiles; the catalogue ships more", rendered)
	}
}

func TestConfigMapsTheProfile(t *testing.T) {
	enc := v1alpha1.EffectiveEncryption{
		ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelOptional, Protocols: []v1alpha1.TLSProtocol{"TLSv1.2"},
			CipherSuites: []string{"TLS_RSA_WITH_3DES_EDE_CBC_SHA"}, ClientAuth: v1alpha1.ClientAuthNone, Engine: v1alpha1.TLSEngineJDK},
		NodeToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelRequired, Protocols: []v1alpha1.TLSProtocol{"TLSv1.3"},
			CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}, ClientAuth: v1alpha1.ClientAuthRequired, Engine: v1alpha1.TLSEngineJDK, Scope: v1alpha1.ScopeDatacenter},
	}
	out, err := Config(topology, Target(enc))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	c := cfg["client_encryption_options"].(map[string]any)
	if c["enabled"] != true || c["optional"] != true || c["require_client_auth"] != false {
		t.Errorf("client options %v", c)
	}
	if got := c["cipher_suites"].([]any)[0]; got != "SSL_RSA_WITH_3DES_EDE_CBC_SHA" {
		t.Errorf("Cassandra takes JSSE names; got %v", got)
	}
	s := cfg["server_encryption_options"].(map[string]any)
	if s["internode_encryption"] != "dc" || s["optional"] != false || s["require_client_auth"] != true {
		t.Errorf("server options %v", s)
	}
	if !strings.Contains(string(JVMOptions(JVM{HeapMiB: 512}, enc)), "-Dcassandra.disable_tcactive_openssl=true") {
		t.Error("the JDK engine is selected with -Dcassandra.disable_tcactive_openssl=true")
	}
}

// spec.cassandra.jit reaches the JVM as one option; a value the API would refuse never
// reaches the options file, where a line break would add an option of its own.
func TestJITScalingIsOneValidatedOption(t *testing.T) {
	for value, want := range map[string]bool{"0.1": true, "0.05": true, "1": true, "": false, "0": false, "0.001": false, "2": false, "0.1\n-XX:+UnlockDiagnosticVMOptions": false} {
		opts := string(JVMOptions(JVM{HeapMiB: 512, CompileThresholdScaling: value}, profile(off, off)))
		if got := strings.Contains(opts, "-XX:CompileThresholdScaling="); got != want {
			t.Errorf("compileThresholdScaling %q: rendered %v, want %v:\n%s", value, got, want, opts)
		}
		if want && !strings.Contains(opts, "\n-XX:CompileThresholdScaling="+value+"\n") {
			t.Errorf("compileThresholdScaling %q: not one line of its own:\n%s", value, opts)
		}
		if strings.Contains(opts, "UnlockDiagnosticVMOptions") {
			t.Errorf("compileThresholdScaling %q added an option:\n%s", value, opts)
		}
	}
}

// spec.cassandra.sizeEstimates: Disabled sets the recorder's interval to 0, which Cassandra
// reads as never; unset or Recorded leaves its default.
func TestSizeEstimatesDisabledStopsTheRecorder(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		opts := string(JVMOptions(JVM{HeapMiB: 512, NoSizeEstimates: disabled}, profile(off, off)))
		if got := strings.Contains(opts, "\n-Dcassandra.size_recorder_interval=0\n"); got != disabled {
			t.Errorf("NoSizeEstimates %v: recorder switched off %v:\n%s", disabled, got, opts)
		}
	}
}

// A single node waits for no peers: the seed's ring delay, the waits for gossip to settle and
// the delay before the default superuser exists took 67s of its 98s from start to logins. With
// peers, Cassandra's defaults stay.
func TestOneNodeWaitsForNoPeers(t *testing.T) {
	for _, nodes := range []int32{1, 3} {
		ds := &v1alpha1.SecuredDatastore{Spec: v1alpha1.SecuredDatastoreSpec{Cassandra: &v1alpha1.CassandraTopology{Nodes: ptr.To(nodes)}}}
		opts := string(JVMOptions(jvm(ds, false), profile(off, off)))
		for _, want := range []string{"\n-Dcassandra.ring_delay_ms=1000\n", "\n-Dcassandra.skip_wait_for_gossip_to_settle=0\n", "\n-Dcassandra.superuser_setup_delay_ms=0\n"} {
			if got := strings.Contains(opts, want); got != (nodes == 1) {
				t.Errorf("%d nodes: %q rendered %v:\n%s", nodes, strings.TrimSpace(want), got, opts)
			}
		}
	}
}

// Once a datastore has at-rest keys, the key provider stays in cassandra.yaml even when the step
// no longer encrypts: a commit log segment written encrypted names its key, and without a
// provider the node cannot start (CommitLogReadException, seen on a real node).
func TestAtRestKeyProviderOutlivesEncryption(t *testing.T) {
	off := v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}
	plain := Target(v1alpha1.EffectiveEncryption{ClientToNode: off, NodeToNode: off})
	for _, keys := range []bool{false, true} {
		tp := topology
		tp.AtRestKeys = keys
		b, err := Config(tp, plain)
		if err != nil {
			t.Fatal(err)
		}
		y := string(b)
		if got := strings.Contains(y, "transparent_data_encryption_options"); got != keys {
			t.Errorf("keys %v: options rendered %v\n%s", keys, got, y)
		}
		if keys && (!strings.Contains(y, "enabled: false") || !strings.Contains(y, "JKSKeyProvider")) {
			t.Errorf("with keys and no encryption: want the provider, disabled\n%s", y)
		}
	}
}
