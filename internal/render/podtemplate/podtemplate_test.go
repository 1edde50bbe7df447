package podtemplate

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"secured.dev/operator/api/v1alpha1"
)

// Volumes outlive the datastore unless it asks otherwise; a node scaled away never loses its own.
func TestClaims(t *testing.T) {
	for whenDeleted, want := range map[v1alpha1.VolumeRetention]appsv1.PersistentVolumeClaimRetentionPolicyType{
		"":                    appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		v1alpha1.VolumeRetain: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		v1alpha1.VolumeDelete: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
	} {
		p := Claims(whenDeleted)
		if p.WhenDeleted != want || p.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
			t.Errorf("whenDeleted %q: %+v; want WhenDeleted %s and WhenScaled Retain", whenDeleted, p, want)
		}
	}
}
