package cassandra

import (
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
)

// CQL answers the datastore's namespace by default, exactly spec.access.clients (and the
// operator's benchmark clients) when it is set, and never the whole cluster; the internode
// port answers the datastore's pods and the prober only.
func TestCQLAnswersTheClientsSpecAccessNames(t *testing.T) {
	ds, enc := sampleDatastore(t, "secureddatastore-cassandra-tls13.yaml")
	cqlFrom := func(np *networkingv1.NetworkPolicy) []networkingv1.NetworkPolicyPeer {
		for _, rule := range np.Spec.Ingress {
			if rule.Ports[0].Port.IntVal == NativePort {
				return rule.From
			}
		}
		t.Fatal("no CQL rule")
		return nil
	}
	namespaceWide := func(p networkingv1.NetworkPolicyPeer) bool {
		return p.NamespaceSelector == nil && p.IPBlock == nil && p.PodSelector != nil && len(p.PodSelector.MatchLabels) == 0
	}
	for _, rule := range build(t, ds, enc).NetworkPolicy.Spec.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("a rule admits the whole cluster: %+v", rule)
		}
		if rule.Ports[0].Port.IntVal == StoragePort && slices.ContainsFunc(rule.From, namespaceWide) {
			t.Errorf("the internode port admits the whole namespace: %+v", rule.From)
		}
	}
	if from := cqlFrom(build(t, ds, enc).NetworkPolicy); !slices.ContainsFunc(from, namespaceWide) {
		t.Errorf("by default CQL should admit the datastore's namespace: %+v", from)
	}

	app := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "shop-frontend"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
	}
	ds.Spec.Access = &v1alpha1.AccessSpec{Clients: []networkingv1.NetworkPolicyPeer{app}}
	from := cqlFrom(build(t, ds, enc).NetworkPolicy)
	if slices.ContainsFunc(from, namespaceWide) {
		t.Errorf("with spec.access, CQL still admits the whole namespace: %+v", from)
	}
	if !slices.ContainsFunc(from, func(p networkingv1.NetworkPolicyPeer) bool {
		return p.PodSelector != nil && p.PodSelector.MatchLabels["app"] == "checkout" && p.NamespaceSelector != nil
	}) {
		t.Errorf("spec.access.clients is not admitted: %+v", from)
	}
	if !slices.ContainsFunc(from, func(p networkingv1.NetworkPolicyPeer) bool {
		return p.PodSelector != nil && p.PodSelector.MatchLabels["app.kubernetes.io/component"] == "benchmark"
	}) {
		t.Errorf("the operator's benchmark clients are not admitted: %+v", from)
	}
}
