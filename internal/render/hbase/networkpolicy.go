package hbase

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

// clientPorts are what an HBase client reaches: the Master and the RegionServers over HBase
// RPC (which also tells clients where meta is: ClientProperties), and the KDC for tickets when
// Kerberos is on. Nothing else is a client's business: ZooKeeper (whoever writes it rewrites
// HBase's metadata), HDFS (NameNode RPC, DataNode transfer and
// IPC) and every web UI answer only the datastore's own pods and the operator's wire prober.
func clientPorts(kerberized bool) []int32 {
	ports := []int32{MasterPort, RegionServerPort}
	if kerberized {
		ports = append(ports, kdcPort)
	}
	return ports
}

// networkPolicy selects every pod of the datastore; its rules admit the clients spec.access
// names (by default: pods of the datastore's namespace) on the client ports, and only the
// datastore's own pods and the prober on every port of every role. A tunnel's UDP ports admit
// the datastore's pods and the clients, which join it.
func networkPolicy(ds *v1alpha1.SecuredDatastore, operatorNamespace string, roles []Role, kerberized bool, tunnel *vpn.Plan) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	var clients, internal []networkingv1.NetworkPolicyPort
	for _, p := range clientPorts(kerberized) {
		clients = append(clients, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: ptrPort(p)})
	}
	for _, r := range roles {
		for _, p := range rolePorts[r] {
			internal = append(internal, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: ptrPort(p.ContainerPort)})
		}
	}
	own := map[string]string{"app.kubernetes.io/name": "hbase", "app.kubernetes.io/instance": ds.Name}
	peers := append([]networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: own}}}, podtemplate.ProberPeer(operatorNamespace)...)
	ingress := []networkingv1.NetworkPolicyIngressRule{
		{Ports: clients, From: append(podtemplate.ClientPeers(ds), peers...)},
		{Ports: internal, From: peers},
	}
	if tunnel != nil {
		ingress = append(ingress, networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{tunnel.Ports()},
			From: append(podtemplate.ClientPeers(ds), peers[0])})
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta(ds, NamesOf(ds).NetworkPolicy(), ""),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: own},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     ingress,
		},
	}
}

func ptrPort(p int32) *intstr.IntOrString {
	v := intstr.FromInt32(p)
	return &v
}
