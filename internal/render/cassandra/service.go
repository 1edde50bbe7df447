package cassandra

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"secured.dev/operator/api/v1alpha1"
)

var (
	cqlPort       = corev1.ServicePort{Name: "cql", Port: NativePort, TargetPort: intstr.FromString("cql"), Protocol: corev1.ProtocolTCP}
	internodePort = corev1.ServicePort{Name: "internode", Port: StoragePort, TargetPort: intstr.FromString("internode"), Protocol: corev1.ProtocolTCP}
)

// headlessService gives every pod a stable DNS name for seeds and gossip, ready or not (a node
// must be reachable by its peers before it is ready to serve).
func headlessService(ds *v1alpha1.SecuredDatastore, n Names) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(ds, n.HeadlessService()),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true, Selector: Selector(ds),
			Ports: []corev1.ServicePort{internodePort, cqlPort},
		},
	}
}

// clientService is what applications connect to: CQL on ready nodes only.
func clientService(ds *v1alpha1.SecuredDatastore, n Names) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(ds, n.ClientService()),
		Spec:       corev1.ServiceSpec{Selector: Selector(ds), Ports: []corev1.ServicePort{cqlPort}},
	}
}
