package hbase

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/test/hostile"
	"secured.dev/operator/internal/test/samples"
)

// Every string of the HBase sample's spec, one at a time, set to a hostile value: the builders
// either refuse it or render it inert (no shell script of any role holds it; hbase-site.xml,
// hdfs-site.xml, krb5.conf and the rest gain no element or line from it), and never panic.
func TestHostileStringsStayInert(t *testing.T) {
	sample, _ := sampleDatastore(t)
	// Every optional string the sample leaves out, so that the hostile value reaches it too.
	if err := yaml.Unmarshal([]byte(`{"spec": {"image": "secured.dev/hbase:2.6.4",
		"hbase": {"storage": {"size": "10Gi", "storageClassName": "standard"}},
		"certificates": {"issuerRef": {"name": "ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}},
		"placement": {"nodeSelector": {"zone": "a"}}}}`), sample); err != nil {
		t.Fatal(err)
	}
	benign, err := tryBuild(sample)
	if err != nil {
		t.Fatal(err)
	}
	tried, refused := 0, 0
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
			t.Errorf("spec%s %s", f.Path, why)
		}
	}
	t.Logf("%d hostile strings tried, %d refused by the builders, the rest rendered inert", tried, refused)
	if tried < 10 {
		t.Errorf("only %d strings reached: the sample no longer exercises the spec", tried)
	}
}

func tryBuild(ds *v1alpha1.SecuredDatastore) (Objects, error) {
	defer func() {
		if p := recover(); p != nil {
			panic(fmt.Sprintf("builder panicked: %v", p))
		}
	}()
	p, err := samples.Profile(ds.Spec.Encryption.ProfileRef)
	if err != nil {
		return Objects{}, err
	}
	res, errs := crypto.Resolve(&p.Spec.EncryptionSettings, &ds.Spec.Encryption.EncryptionSettings, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		return Objects{}, errs.ToAggregate()
	}
	return Build(clusterOf(ds, res.Effective))
}

func commands(objs Objects) [][]string {
	var out [][]string
	for _, s := range objs.StatefulSets {
		spec := s.Spec.Template.Spec
		for _, c := range append(spec.InitContainers, spec.Containers...) {
			out = append(out, append(append([]string{}, c.Command...), c.Args...))
		}
	}
	return out
}
