package hbase

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"secured.dev/operator/api/v1alpha1"
)

// service is a role's headless Service: every pod gets the stable name its principal and
// certificate carry, ready or not (peers must reach a pod before it is ready). The KDC's is a
// plain Service on port 88.
func service(ds *v1alpha1.SecuredDatastore, n Names, r Role) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(ds, n.StatefulSet(r), r),
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true, Selector: Selector(ds, r)},
	}
	for _, p := range rolePorts[r] {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name), Protocol: corev1.ProtocolTCP})
	}
	if r == KDC {
		svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses = "", false
		svc.Spec.Ports[0].Port = 88
	}
	return svc
}
