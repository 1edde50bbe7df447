package dataplane

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/test/samples"
)

// ShippedProfile resolves a profile of the shipped profiles for Cassandra, with overrides,
// as the operator would for a datastore that names it.
func ShippedProfile(t testing.TB, name string, overrides *v1alpha1.EncryptionSettings) v1alpha1.EffectiveEncryption {
	t.Helper()
	p, err := samples.Profile(name)
	if err != nil {
		t.Fatal(err)
	}
	res, errs := crypto.Resolve(&p.Spec.EncryptionSettings, overrides, v1alpha1.EngineCassandra, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return res.Effective
}
