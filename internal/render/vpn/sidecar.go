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
	tokenDir      = "/var/run/secrets/tunnel"
	tunDevice     = "/dev/net/tun"
	sidecarName   = "vpn"
	tokenVolume   = "vpn-token"
	tunVolume     = "vpn-tun"
	runVolume     = "vpn-run"
	runDir        = "/run" // wireguard-go's control socket and the fetched key; the root filesystem is read-only
	probeInterval = 1
	// tokenLifetime of the pod's key-server token; the kubelet renews it at 80%.
	tokenLifetime = 3600
)

// SecretVolume is the pod volume of the public tunnel Secret; a datastore container may mount
// it too, for the address table.
const SecretVolume = "vpn-tunnel"

// KeyServer is where a sidecar fetches its member's private key: the operator's endpoint and
// the certificate it pins. The operator hands a key only to the pod whose token the API server
// vouches for (internal/tunnelkeys).
type KeyServer struct {
	URL  string
	Cert []byte
}

// KeyServerAudience is the audience of the token a sidecar presents: the API server accepts
// such a token for nothing else, and the key server accepts no other.
const KeyServerAudience = "tunnel-keys.datastore.secured.dev"

// SecretName is the public tunnel Secret of a datastore, which every member mounts: the
// address table, configurations and certificates.
func SecretName(datastore string) string { return datastore + "-vpn" }

// KeysSecretName keeps the members' private keys and OpenVPN's CA key; no pod mounts it.
func KeysSecretName(datastore string) string { return datastore + "-vpn-keys" }

// SecretNames are every Secret a datastore's tunnel keeps, for reading them back.
func SecretNames(datastore string) []string {
	return []string{SecretName(datastore), KeysSecretName(datastore)}
}

// Secrets are the public and keys Secrets of SecretData.
func Secrets(namespace, datastore string, labels map[string]string, public, keys map[string][]byte) []*corev1.Secret {
	return []*corev1.Secret{secret(namespace, SecretName(datastore), labels, public), secret(namespace, KeysSecretName(datastore), labels, keys)}
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
// It alone mounts the pod's key-server token, with which it fetches its member's private key
// from ks into memory; datastore is the name of the tunnel's SecuredDatastore.
func Sidecar(p Plan, image, datastore string, ks KeyServer) (corev1.Container, []corev1.Volume) {
	c := corev1.Container{
		Name:          sidecarName,
		Image:         image,
		Command:       []string{"tunnel"},
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Env: []corev1.EnvVar{
			{Name: "VPN_TYPE", Value: string(p.Type)},
			{Name: "VPN_DIR", Value: SecretDir},
			{Name: "VPN_SUBNET", Value: Subnet.String()},
			{Name: "VPN_KEY_URL", Value: ks.URL},
			{Name: "VPN_TOKEN", Value: tokenDir + "/token"},
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
			{Name: SecretVolume, MountPath: SecretDir, ReadOnly: true},
			{Name: tokenVolume, MountPath: tokenDir, ReadOnly: true},
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
		{Name: SecretVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: SecretName(datastore), DefaultMode: ptr.To[int32](0o400)}}},
		{Name: tokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o400),
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: KeyServerAudience, ExpirationSeconds: ptr.To[int64](tokenLifetime), Path: "token"}}}}}},
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
