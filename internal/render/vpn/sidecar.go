package vpn

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Where the sidecar finds its files.
const (
	SecretDir     = "/etc/vpn"
	tunDevice     = "/dev/net/tun"
	sidecarName   = "vpn"
	secretVolume  = "vpn-tunnel"
	tunVolume     = "vpn-tun"
	runVolume     = "vpn-run"
	runDir        = "/run" // wireguard-go's control socket; the root filesystem is read-only
	probeInterval = 1
)

// SecretName is the tunnel Secret of a datastore's nodes: their keys and configurations, the
// address table.
func SecretName(datastore string) string { return datastore + "-vpn" }

// ClientsSecretName is the tunnel Secret of the datastore's client slots, which benchmark
// clients mount.
func ClientsSecretName(datastore string) string { return datastore + "-vpn-clients" }

// CASecretName keeps the OpenVPN CA's key; no pod mounts it.
func CASecretName(datastore string) string { return datastore + "-vpn-ca" }

// SecretNames are every Secret a datastore's tunnel may keep, for reading them back.
func SecretNames(datastore string) []string {
	return []string{SecretName(datastore), ClientsSecretName(datastore), CASecretName(datastore)}
}

// Secrets are the nodes' and the clients' tunnel Secrets (SecretData) and, for OpenVPN, the
// Secret that keeps the CA; a nil map makes no Secret.
func Secrets(namespace, datastore string, labels map[string]string, nodes, clients, caData map[string][]byte) []*corev1.Secret {
	var out []*corev1.Secret
	for _, s := range []struct {
		name string
		data map[string][]byte
	}{{SecretName(datastore), nodes}, {ClientsSecretName(datastore), clients}, {CASecretName(datastore), caData}} {
		if s.data != nil {
			out = append(out, secret(namespace, s.name, labels, s.data))
		}
	}
	return out
}

func secret(namespace, name string, labels map[string]string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// Sidecar is the pod's end of the tunnel: a native sidecar (an init container that keeps
// running), so the tunnel address is up before the datastore starts and stays up until it
// has stopped. It gets NET_ADMIN and the /dev/net/tun device, and nothing else: no privileged
// mode, no other capability, a read-only root filesystem. It runs as root because Linux
// grants capabilities to root's processes; the pod's other containers keep their own user.
// secretName is the tunnel Secret of the pod's side: SecretName for nodes, ClientsSecretName
// for clients.
func Sidecar(p Plan, image, secretName string) (corev1.Container, []corev1.Volume) {
	c := corev1.Container{
		Name:          sidecarName,
		Image:         image,
		Command:       []string{"tunnel"},
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Env: []corev1.EnvVar{
			{Name: "VPN_TYPE", Value: string(p.Type)},
			{Name: "VPN_DIR", Value: SecretDir},
			{Name: "VPN_SUBNET", Value: Subnet.String()},
		},
		StartupProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"tunnel", "ready"}}},
			PeriodSeconds: probeInterval, FailureThreshold: 120,
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: secretVolume, MountPath: SecretDir, ReadOnly: true},
			{Name: tunVolume, MountPath: tunDevice},
			{Name: runVolume, MountPath: runDir},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsUser: ptr.To[int64](0), RunAsGroup: ptr.To[int64](0), RunAsNonRoot: ptr.To(false),
			Privileged: ptr.To(false), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN"}},
		},
	}
	volumes := []corev1.Volume{
		{Name: secretVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secretName, DefaultMode: ptr.To[int32](0o400)}}},
		{Name: tunVolume, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: tunDevice, Type: ptr.To(corev1.HostPathCharDev)}}},
		{Name: runVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
	}
	return c, volumes
}

// Ports are the UDP ports the tunnel listens on, for the NetworkPolicy.
func (p Plan) Ports() networkingv1.NetworkPolicyPort {
	udp := corev1.ProtocolUDP
	if p.Type == "OpenVPN" {
		first := intstr.FromInt32(OpenVPNBasePort)
		return networkingv1.NetworkPolicyPort{Protocol: &udp, Port: &first, EndPort: ptr.To(int32(OpenVPNBasePort + len(p.Members) - 1))}
	}
	port := intstr.FromInt32(WireGuardPort)
	return networkingv1.NetworkPolicyPort{Protocol: &udp, Port: &port}
}

// Env tells a datastore container where its tunnel address is (the launcher binds it) and its
// pod address.
func Env(p Plan, addresses string) []corev1.EnvVar {
	return []corev1.EnvVar{{Name: "VPN_ADDRESSES", Value: addresses}, {Name: "VPN_SCOPE", Value: string(p.Scope)},
		// Channels outside the tunnel stay on the pod's address.
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
}

// PodSecurityProblem explains why a namespace's Pod Security admission level refuses the
// sidecar, or returns "" when the level admits it: baseline and restricted both forbid
// NET_ADMIN and host devices.
func PodSecurityProblem(namespace string, labels map[string]string) string {
	level := labels["pod-security.kubernetes.io/enforce"]
	if level != "baseline" && level != "restricted" {
		return ""
	}
	return fmt.Sprintf("the VPN sidecar needs the NET_ADMIN capability and the %s device, which Pod Security level %q of namespace %s forbids: "+
		"label the namespace pod-security.kubernetes.io/enforce=privileged, or choose a profile without vpn", tunDevice, level, namespace)
}
