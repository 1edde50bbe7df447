package cassandra

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	goldenfile "secured.dev/operator/internal/golden"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/samples"
)

// sampleDatastore reads a shipped SecuredDatastore sample and resolves its profile.
func sampleDatastore(t *testing.T, file string) (*v1alpha1.SecuredDatastore, v1alpha1.EffectiveEncryption) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	ds := &v1alpha1.SecuredDatastore{}
	if err := yaml.UnmarshalStrict(b, ds); err != nil {
		t.Fatal(err)
	}
	ds.Namespace = "shop"
	var base *v1alpha1.EncryptionSettings
	if ref := ds.Spec.Encryption.ProfileRef; ref != "" {
		p, err := samples.Profile(ref)
		if err != nil {
			t.Fatal(err)
		}
		base = &p.Spec.EncryptionSettings
	}
	res, errs := crypto.Resolve(base, &ds.Spec.Encryption.EncryptionSettings, ds.Spec.Engine, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return ds, res.Effective
}

func build(t *testing.T, ds *v1alpha1.SecuredDatastore, enc v1alpha1.EffectiveEncryption) Objects {
	t.Helper()
	objs, err := Build(Cluster{Datastore: ds, Step: Target(enc), Image: "secured.dev/cassandra:5.0.6", ClusterDomain: "cluster.local"}, certs.NodeSecret(ds), certs.TrustConfigMap(ds))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func toYAML(t *testing.T, objs []client.Object) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes()
}

// The sample TLS 1.3 datastore renders to golden Kubernetes and cert-manager objects.
func TestSampleDatastoreObjects(t *testing.T) {
	for _, file := range []string{"secureddatastore-cassandra-tls13.yaml", "secureddatastore-cassandra-inline.yaml"} {
		ds, enc := sampleDatastore(t, file)
		objs := build(t, ds, enc)
		certObjs, err := certs.Build(certs.Request{Datastore: ds, Labels: Labels(ds), DNSNames: DNSNames(ds, "cluster.local"),
			Channels: []v1alpha1.EffectiveChannel{enc.ClientToNode, enc.NodeToNode}})
		if err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, ds.Name+".objects.yaml", toYAML(t, append(certObjs, objs.All()...)))
	}
}

// Every container runs under the Pod Security Standard "restricted", checked by the admission
// library the API server itself uses.
func TestPodsAreRestricted(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	sts := build(t, ds, enc).StatefulSet
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, r := range evaluator.EvaluatePod(level, &sts.Spec.Template.ObjectMeta, &sts.Spec.Template.Spec) {
		if !r.Allowed {
			t.Errorf("restricted: %s: %s", r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
}

func TestPlaintextDatastoreMountsNoCertificates(t *testing.T) {
	ds, _ := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	plain := v1alpha1.EffectiveEncryption{ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}, NodeToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}}
	objs, err := Build(Cluster{Datastore: ds, Step: Target(plain), Image: "img", ClusterDomain: "cluster.local"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	pod := objs.StatefulSet.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.Volumes) != 3 {
		t.Errorf("plaintext pod has %d containers and volumes %v; want cassandra only, no tls volume", len(pod.Containers), pod.Volumes)
	}
	if _, err := Build(Cluster{Datastore: ds, Step: Target(plain), Image: "img"}, "", ""); err != nil {
		t.Fatal(err)
	}
	_, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	if _, err := Build(Cluster{Datastore: ds, Step: Target(enc), Image: "img"}, "", ""); err == nil || !strings.Contains(err.Error(), "certificate Secret") {
		t.Errorf("TLS without a certificate Secret: %v", err)
	}
}

func TestEmulatedNoAccelerationReachesBothEngines(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	ds.Spec.Placement.EmulateNoAcceleration = true
	objs := build(t, ds, enc)
	if !strings.Contains(objs.ConfigMap.Data["jvm-server.options"], "-XX:-UseAESIntrinsics") {
		t.Error("JDK intrinsics stay on")
	}
	if !hasEnv(objs.StatefulSet.Spec.Template.Spec.Containers[0], "OPENSSL_ia32cap", NoAccelerationEnv["OPENSSL_ia32cap"]) {
		t.Error("OPENSSL_ia32cap is not set for the native engine")
	}
}

func hasEnv(c corev1.Container, name, value string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}

// A configuration change rolls the pods; the same configuration does not.
func TestConfigHashFollowsConfiguration(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	a := build(t, ds, enc).StatefulSet.Spec.Template.Annotations[ConfigHashAnnotation]
	if b := build(t, ds, enc).StatefulSet.Spec.Template.Annotations[ConfigHashAnnotation]; a != b {
		t.Fatal("the hash is not deterministic")
	}
	enc.ClientToNode.CipherSuites = []string{"TLS_AES_256_GCM_SHA384"}
	if c := build(t, ds, enc).StatefulSet.Spec.Template.Annotations[ConfigHashAnnotation]; a == c {
		t.Error("a cipher suite change does not change the pod template")
	}
	step, err := AppliedStep(build(t, ds, enc).StatefulSet)
	if err != nil || step == nil || step.Encryption.ClientToNode.CipherSuites[0] != "TLS_AES_256_GCM_SHA384" {
		t.Errorf("the applied step does not round-trip: %+v %v", step, err)
	}
}
