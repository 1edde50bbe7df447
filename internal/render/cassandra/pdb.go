package cassandra

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"secured.dev/operator/api/v1alpha1"
)

// budget: voluntary disruptions (drains, our own rolls) take one node at a time, which a
// replication factor of 3 with quorum survives.
func budget(ds *v1alpha1.SecuredDatastore) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(ds, ds.Name),
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: Selector(ds)}},
	}
}
