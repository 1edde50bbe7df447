// Package podtemplate holds what every datastore's pod template shares: restricted pod and
// container security, placement, volumes and probes, and the digest of the configuration that
// rolls the pods.
package podtemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/placement"
	"secured.dev/operator/internal/render/datakeys"
)

// ConfigHashAnnotation on a pod template carries ConfigHash: a change rolls the pods.
const ConfigHashAnnotation = "datastore.secured.dev/config-hash"

// Restricted is the Pod Security Standard "restricted" container context.
func Restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// ConfigHash is a short digest of rendered files and anything else whose change must restart
// the pods (such as the name of the mounted certificate Secret).
func ConfigHash(files map[string]string, extra ...string) string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\x00", k, files[k])
	}
	for _, e := range extra {
		h.Write([]byte(e))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// VolumeConfigMap is the ConfigMap the pod's volume of that name mounts, "" if none.
func VolumeConfigMap(pod corev1.PodSpec, volume string) string {
	for _, v := range pod.Volumes {
		if v.Name == volume && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

// VolumeSecret is the Secret the pod's volume of that name mounts, "" without one.
func VolumeSecret(pod corev1.PodSpec, volume string) string {
	for _, v := range pod.Volumes {
		if v.Name == volume && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	return ""
}

// PodSecurity is the Pod Security Standard "restricted" pod context, running as uid.
func PodSecurity(uid int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(uid), RunAsGroup: ptr.To(uid), FSGroup: ptr.To(uid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Scheduling places a datastore's pods: the crypto-feature affinity of spec.placement, its
// node selector and tolerations, and pods matching spread preferably on different machines
// (two replicas on one host fail together).
func Scheduling(p *v1alpha1.PlacementSpec, featureLabelPrefix string, spread map[string]string) (*corev1.Affinity, map[string]string, []corev1.Toleration) {
	affinity := placement.Affinity(p, featureLabelPrefix)
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	affinity.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		PreferSameHost(100, spread),
	}}
	if p == nil {
		return affinity, nil, nil
	}
	return affinity, p.NodeSelector, p.Tolerations
}

// PreferSameHost is a scheduling preference for the machine of the pods matching labels.
func PreferSameHost(weight int32, labels map[string]string) corev1.WeightedPodAffinityTerm {
	return corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: corev1.PodAffinityTerm{
		TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}
}

// Claims keeps a StatefulSet's volumes when it is scaled down (a node that comes back finds its
// data), and when it is deleted unless the datastore asks for them to go with it.
func Claims(whenDeleted v1alpha1.VolumeRetention) *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	deleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if whenDeleted == v1alpha1.VolumeDelete {
		deleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: deleted, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
}

// DataClaim is the claim template of a pod's "data" volume.
func DataClaim(labels map[string]string, class *string, size resource.Quantity) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: class,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
}

// SecretVolume mounts a Secret readable by the pod's group only.
func SecretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: ptr.To[int32](0o440)}}}
}

// ConfigMapVolume mounts a ConfigMap.
func ConfigMapVolume(name, configMap string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}}
}

// EmptyDirVolume is scratch space on the node.
func EmptyDirVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// TCPProbe checks that the named port accepts connections.
func TCPProbe(port string) corev1.ProbeHandler {
	return corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(port)}}
}

// ClientPeers are who may reach a datastore's client ports: spec.access.clients and the
// benchmark clients the operator runs beside the datastore, or, without spec.access, every pod
// of the datastore's namespace.
func ClientPeers(ds *v1alpha1.SecuredDatastore) []networkingv1.NetworkPolicyPeer {
	if ds.Spec.Access == nil || len(ds.Spec.Access.Clients) == 0 {
		return []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}
	}
	peers := append([]networkingv1.NetworkPolicyPeer{}, ds.Spec.Access.Clients...)
	return append(peers, networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
		"app.kubernetes.io/managed-by": "secured-datastore-operator", "app.kubernetes.io/component": "benchmark",
	}}})
}

// ProberPeer admits the operator's pods in its namespace: the wire prober connects to every
// port it verifies. Empty namespace: no peer.
func ProberPeer(operatorNamespace string) []networkingv1.NetworkPolicyPeer {
	if operatorNamespace == "" {
		return nil
	}
	return []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: operatorNamespace}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "secured-datastore-operator", "app.kubernetes.io/component": "operator"}},
	}}
}

// EncryptsVolume says whether the datastore's data volumes are encrypted below it.
func EncryptsVolume(e v1alpha1.EffectiveEncryption) bool {
	return e.AtRest != nil && e.AtRest.Volume != nil
}

// VolumeEncryptionContainer is the init container of an encrypted volume: the operator's own
// command, so its last words may be quoted in status when it fails (status.PodProblems).
const VolumeEncryptionContainer = "volume-encryption"

// VolumeEncryption readies an encrypted volume, mounted from the pod volume named volume at
// mountPath, before the pod's containers start, at every start (fscrypt.Prepare): it hands
// the volume key (the pod volume datakeys.VolumeKeyVolume) to the node's kernel, encrypts dir
// when it is new, and refuses one in clear or under another key. It alone sees the key.
func VolumeEncryption(image, volume, mountPath, dir string) corev1.Container {
	const keyDir = "/etc/volume-key"
	return corev1.Container{
		Name:  VolumeEncryptionContainer,
		Image: image,
		Args:  []string{"--dir=" + dir, "--key=" + keyDir + "/" + datakeys.VolumeKeyFile},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: volume, MountPath: mountPath},
			{Name: datakeys.VolumeKeyVolume, MountPath: keyDir, ReadOnly: true},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          Restricted(),
	}
}

// VolumeKey mounts the at-rest Secret's volume key alone, for VolumeEncryption.
func VolumeKey(secret string) corev1.Volume {
	v := SecretVolume(datakeys.VolumeKeyVolume, secret)
	v.Secret.Items = []corev1.KeyToPath{{Key: datakeys.VolumeKeyFile, Path: datakeys.VolumeKeyFile}}
	return v
}
