package cassandra

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/test/hostile"
	"secured.dev/operator/internal/test/samples"
)

// Every string of every Cassandra sample's spec, one at a time, set to a hostile value: the
// builders either refuse it or render it inert (no shell script holds it, no configuration file
// gains a line or a key from it), and never panic.
func TestHostileStringsStayInert(t *testing.T) {
	tried, refused := 0, 0
	for _, file := range []string{"secureddatastore-cassandra-tls13.yaml", "secureddatastore-cassandra-override.yaml",
		"secureddatastore-cassandra-inline.yaml", "secureddatastore-cassandra-wireguard.yaml"} {
		sample, _ := sampleDatastore(t, file)
		benign, err := tryBuild(sample)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i := range hostile.Fields(&sample.Spec) {
			ds := sample.DeepCopy()
			f := hostile.Fields(&ds.Spec)[i]
			f.Set(hostile.Value)
			tried++
			objs, err := tryBuild(ds)
			if err != nil {
				refused++
				continue
			}
			for _, why := range hostile.Inert(commands(objs), benign.ConfigMap.Data, objs.ConfigMap.Data) {
				t.Errorf("%s: spec%s %s", file, f.Path, why)
			}
		}
	}
	t.Logf("%d hostile strings tried, %d refused by the builders, the rest rendered inert", tried, refused)
	if tried < 20 {
		t.Errorf("only %d strings reached: the samples no longer exercise the spec", tried)
	}
}

// tryBuild resolves the profile and builds, turning a panic into an error the test reports.
func tryBuild(ds *v1alpha1.SecuredDatastore) (objs Objects, err error) {
	defer func() {
		if p := recover(); p != nil {
			panic(fmt.Sprintf("builder panicked: %v", p))
		}
	}()
	var base *v1alpha1.EncryptionSettings
	if ref := ds.Spec.Encryption.ProfileRef; ref != "" {
		p, err := samples.Profile(ref)
		if err != nil {
			return Objects{}, err
		}
		base = &p.Spec.EncryptionSettings
	}
	res, errs := crypto.Resolve(base, &ds.Spec.Encryption.EncryptionSettings, ds.Spec.Engine, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		return Objects{}, errs.ToAggregate()
	}
	tunnel, err := Tunnel(ds, Target(res.Effective), "cluster.local")
	if err != nil {
		return Objects{}, err
	}
	return Build(Cluster{Datastore: ds, Step: Target(res.Effective), Image: "secured.dev/cassandra:5.0.6", ClusterDomain: "cluster.local",
		VPNImage: "secured.dev/vpn:test", OperatorNamespace: "secured-system", Tunnel: tunnel, CertSecret: certs.NodeSecret(ds),
		TrustConfigMap: certs.TrustConfigMap(ds)})
}

func commands(objs Objects) [][]string {
	var out [][]string
	spec := objs.StatefulSet.Spec.Template.Spec
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		out = append(out, append(append([]string{}, c.Command...), c.Args...))
	}
	return out
}
