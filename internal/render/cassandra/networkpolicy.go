package cassandra

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

// networkPolicy admits the clients spec.access names (by default: pods of the datastore's
// namespace) on CQL and only the datastore's own pods (and the operator's wire prober) on the
// internode port; everything else (JMX, the legacy SSL storage port, Thrift) is closed. Cassandra 5 serves TLS
// and plaintext on the same ports, so refusing plaintext on them is the configuration's job,
// and the wire prober checks that it does.
func networkPolicy(ds *v1alpha1.SecuredDatastore, operatorNamespace string, tunnel *vpn.Plan) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	peers := append([]networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: Selector(ds)}}}, podtemplate.ProberPeer(operatorNamespace)...)
	cql, internode := intstr.FromInt32(NativePort), intstr.FromInt32(StoragePort)
	ingress := []networkingv1.NetworkPolicyIngressRule{
		{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &cql}}, From: append(podtemplate.ClientPeers(ds), peers...)},
		{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &internode}},
			From:  peers,
		},
	}
	if tunnel != nil {
		// The tunnel's UDP ports: the datastore's pods, and any client when clients join it.
		rule := networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{tunnel.Ports()}}
		if !tunnel.CarriesClients() {
			rule.From = peers[:1]
		}
		ingress = append(ingress, rule)
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta(ds, ds.Name),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: Selector(ds)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     ingress,
		},
	}
}
