package cassandra

import (
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
		fresh := func() (*v1alpha1.SecuredDatastore, any) { ds := sample.DeepCopy(); return ds, &ds.Spec }
		n, r := hostile.Each(t, fresh, render)
		tried, refused = tried+n, refused+r
	}
	t.Logf("%d hostile strings tried, %d refused by the builders, the rest rendered inert", tried, refused)
	if tried < 20 {
		t.Errorf("only %d strings reached: the samples no longer exercise the spec", tried)
	}
}

// render resolves the profile and builds, as the controller does.
func render(ds *v1alpha1.SecuredDatastore) (hostile.Rendered, error) {
	var base *v1alpha1.EncryptionSettings
	if ref := ds.Spec.Encryption.ProfileRef; ref != "" {
		p, err := samples.Profile(ref)
		if err != nil {
			return hostile.Rendered{}, err
		}
		base = &p.Spec.EncryptionSettings
	}
	res, errs := crypto.Resolve(base, &ds.Spec.Encryption.EncryptionSettings, ds.Spec.Engine, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		return hostile.Rendered{}, errs.ToAggregate()
	}
	tunnel, err := Tunnel(ds, Target(res.Effective), "cluster.local")
	if err != nil {
		return hostile.Rendered{}, err
	}
	objs, err := Build(Cluster{Datastore: ds, Step: Target(res.Effective), Image: "secured.dev/cassandra:5.0.6", ClusterDomain: "cluster.local",
		VPNImage: "secured.dev/vpn:test", OperatorNamespace: "secured-system", Tunnel: tunnel, CertSecret: certs.NodeSecret(ds),
		TrustConfigMap: certs.TrustConfigMap(ds)})
	if err != nil {
		return hostile.Rendered{}, err
	}
	out := hostile.Rendered{Files: objs.ConfigMap.Data}
	spec := objs.StatefulSet.Spec.Template.Spec
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		out.Commands = append(out.Commands, append(append([]string{}, c.Command...), c.Args...))
	}
	return out, nil
}
