package hbase

import (
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
	fresh := func() (*v1alpha1.SecuredDatastore, any) { ds := sample.DeepCopy(); return ds, &ds.Spec }
	tried, refused := hostile.Each(t, fresh, render)
	t.Logf("%d hostile strings tried, %d refused by the builders, the rest rendered inert", tried, refused)
	if tried < 12 {
		t.Errorf("only %d strings reached: the sample no longer exercises the spec", tried)
	}
}

// render resolves the profile and builds, as the controller does.
func render(ds *v1alpha1.SecuredDatastore) (hostile.Rendered, error) {
	p, err := samples.Profile(ds.Spec.Encryption.ProfileRef)
	if err != nil {
		return hostile.Rendered{}, err
	}
	res, errs := crypto.Resolve(&p.Spec.EncryptionSettings, &ds.Spec.Encryption.EncryptionSettings, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		return hostile.Rendered{}, errs.ToAggregate()
	}
	objs, err := Build(clusterOf(ds, res.Effective))
	if err != nil {
		return hostile.Rendered{}, err
	}
	out := hostile.Rendered{Files: objs.ConfigMap.Data}
	for _, s := range objs.StatefulSets {
		spec := s.Spec.Template.Spec
		for _, c := range append(spec.InitContainers, spec.Containers...) {
			out.Commands = append(out.Commands, append(append([]string{}, c.Command...), c.Args...))
		}
	}
	return out, nil
}
