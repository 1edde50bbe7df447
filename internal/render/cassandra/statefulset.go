package cassandra

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

// cassandraUID is the cassandra user of the upstream image.
const cassandraUID = 999

// statefulSet runs the nodes; its annotation records the step its pod template runs.
func statefulSet(c Cluster, n Names, cm *corev1.ConfigMap) (*appsv1.StatefulSet, error) {
	ds := c.Datastore
	topo := topologyOf(ds)
	step, err := json.Marshal(c.Step)
	if err != nil {
		return nil, err
	}
	pod, err := podSpec(c, cm)
	if err != nil {
		return nil, err
	}
	storage := defaultStorage
	if topo.Storage.Size != nil {
		storage = *topo.Storage.Size
	}
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: meta(ds, n.StatefulSet()),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(Nodes(ds)),
			ServiceName: n.HeadlessService(),
			Selector:    &metav1.LabelSelector{MatchLabels: Selector(ds)},
			// One node joins the ring at a time: concurrent bootstraps corrupt token ranges.
			PodManagementPolicy:                  appsv1.OrderedReadyPodManagement,
			MinReadySeconds:                      minReadySeconds(ds),
			UpdateStrategy:                       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			PersistentVolumeClaimRetentionPolicy: podtemplate.Claims(topo.Storage.WhenDeleted),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(ds), Annotations: map[string]string{ConfigHashAnnotation: podtemplate.ConfigHash(cm.Data, c.CertSecret)}},
				Spec:       pod,
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{podtemplate.DataClaim(Labels(ds), topo.Storage.StorageClassName, storage)},
		},
	}
	sts.Annotations = map[string]string{StepAnnotation: string(step)}
	deviations := append(podtemplate.WorkloadDeviations(pod), podtemplate.ImageServiceUser)
	if c.Step.TLSEnabled() {
		deviations = append(deviations, podtemplate.ReloaderLiveness, podtemplate.ReloaderReadiness)
	}
	if c.Tunnel != nil {
		deviations = append(deviations, podtemplate.TunnelNetAdmin)
	}
	podtemplate.Annotate(&sts.ObjectMeta, deviations...)
	return sts, nil
}

// RingSettleSeconds is how long a restarted node of a multi-node ring must have been Ready
// before a roll takes the next node or moves to its next step. Cassandra opens its CQL port,
// which is what Ready means, before its peers have marked it up again (and, after a change of
// its address, before they move its token ranges to the new one) and before clients have
// reconnected to it: taking the next node at once left one replica in three reachable. In a
// whole make e2e run with no wait (2026-12-03), a node went down a second after the previous
// one came back: QUORUM reads of system_auth failed for 36 s and 256 and 814 operations of the
// fixed-rate clients failed in the two live-change tests.
const RingSettleSeconds = 15

// minReadySeconds: a single node has no peer or client to wait for, and a study starts sooner.
func minReadySeconds(ds *v1alpha1.SecuredDatastore) int32 {
	if Nodes(ds) == 1 {
		return 0
	}
	return RingSettleSeconds
}

// podSpec is a node's pod: Cassandra, the TLS reloader when a channel uses TLS, the tunnel
// sidecar with a VPN.
func podSpec(c Cluster, cm *corev1.ConfigMap) (corev1.PodSpec, error) {
	ds := c.Datastore
	tls := c.Step.TLSEnabled()
	if tls && (c.CertSecret == "" || c.TrustConfigMap == "") {
		return corev1.PodSpec{}, fmt.Errorf("a channel uses TLS but no certificate Secret or trust bundle is given")
	}
	volumes := []corev1.Volume{podtemplate.ConfigMapVolume("config", cm.Name), podtemplate.EmptyDirVolume("logs"), podtemplate.EmptyDirVolume("tmp")}
	node := cassandraContainer(c)
	var initContainers []corev1.Container
	if t := c.Tunnel; t != nil {
		if c.VPNImage == "" {
			return corev1.PodSpec{}, fmt.Errorf("the profile has a VPN but no sidecar image is configured")
		}
		sidecar, vols := vpn.Sidecar(*t, c.VPNImage, ds.Name, c.KeyServer)
		initContainers = append(initContainers, sidecar)
		volumes = append(volumes, vols...)
	}
	containers := []corev1.Container{node}
	if a := c.Step.Encryption.AtRest; a != nil && (a.Engine != nil || a.Volume != nil) && c.AtRestSecret == "" {
		return corev1.PodSpec{}, fmt.Errorf("the profile encrypts at rest but no at-rest keys Secret is given")
	}
	if podtemplate.EncryptsVolume(c.Step.Encryption) {
		if c.VolumeEncryptionImage == "" {
			return corev1.PodSpec{}, fmt.Errorf("the profile encrypts volumes but no volume-encryption image is configured")
		}
		initContainers = append([]corev1.Container{volumeEncryption(c.VolumeEncryptionImage)}, initContainers...)
	}
	if c.AtRestSecret != "" {
		keys := podtemplate.SecretVolume(datakeys.AtRestVolume, c.AtRestSecret)
		if podtemplate.EncryptsVolume(c.Step.Encryption) {
			// Cassandra reads the keystore; the volume key is the init container's alone.
			for _, f := range datakeys.EngineKeyFiles {
				keys.Secret.Items = append(keys.Secret.Items, corev1.KeyToPath{Key: f, Path: f})
			}
			volumes = append(volumes, podtemplate.VolumeKey(c.AtRestSecret))
		}
		volumes = append(volumes, keys)
		containers[0].VolumeMounts = append(containers[0].VolumeMounts, corev1.VolumeMount{Name: datakeys.AtRestVolume, MountPath: PodLayout.AtRestDir, ReadOnly: true})
		containers[0].Env = append(containers[0].Env, corev1.EnvVar{Name: AtRestPasswordFileVariable, Value: PodLayout.AtRestDir + "/" + datakeys.PasswordFile})
	}
	if tls {
		volumes = append(volumes, podtemplate.SecretVolume("tls", c.CertSecret), podtemplate.ConfigMapVolume("trust", c.TrustConfigMap))
		containers[0].VolumeMounts = append(containers[0].VolumeMounts, tlsMounts()...)
		containers = append(containers, tlsReloader(c.Image))
	}
	affinity, nodeSelector, tolerations := podtemplate.Scheduling(ds.Spec.Placement, c.FeatureLabelPrefix, Selector(ds))
	return corev1.PodSpec{
		InitContainers:                initContainers,
		Containers:                    containers,
		Volumes:                       volumes,
		Affinity:                      affinity,
		NodeSelector:                  nodeSelector,
		Tolerations:                   tolerations,
		TerminationGracePeriodSeconds: ptr.To[int64](120),
		EnableServiceLinks:            ptr.To(false),
		AutomountServiceAccountToken:  ptr.To(false),
		SecurityContext:               podtemplate.PodSecurity(cassandraUID),
	}, nil
}

// cassandraContainer runs the node.
func cassandraContainer(c Cluster) corev1.Container {
	ds := c.Datastore
	env := []corev1.EnvVar{
		{Name: "CASSANDRA_CONF", Value: renderedConfDir},
		{Name: "CASSANDRA_STATIC_CONF", Value: imageConfDir},
	}
	if ds.Spec.Placement != nil && ds.Spec.Placement.EmulateNoAcceleration {
		for k, v := range NoAccelerationEnv {
			env = append(env, corev1.EnvVar{Name: k, Value: v})
		}
	}
	cqlProbe, internodeProbe := podtemplate.TCPProbe("cql"), podtemplate.TCPProbe("internode")
	if t := Bound(c.Tunnel, c.Step); t != nil {
		env = append(env, vpn.Env(*t, renderedConfDir+"/"+VPNAddressesFile)...)
		// A port in the tunnel is closed on the pod's address, where the kubelet dials.
		inTunnel := func(port int) corev1.ProbeHandler {
			return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"port-open", fmt.Sprint(port)}}}
		}
		if t.CarriesClients() {
			cqlProbe = inTunnel(NativePort)
		}
		if t.CarriesNodes() {
			internodeProbe = inTunnel(StoragePort)
		}
	}
	return corev1.Container{
		Name:  "cassandra",
		Image: c.Image,
		Args:  []string{"cassandra", "-f"},
		Env:   env,
		Ports: []corev1.ContainerPort{
			{Name: "internode", ContainerPort: StoragePort, Protocol: corev1.ProtocolTCP},
			{Name: "cql", ContainerPort: NativePort, Protocol: corev1.ProtocolTCP},
		},
		Resources: topologyOf(ds).Resources,
		// Cassandra opens the CQL port once it has joined the ring and is Up/Normal, so an open
		// port is the readiness a rolling restart waits for before it takes the next node.
		StartupProbe:   &corev1.Probe{ProbeHandler: cqlProbe, PeriodSeconds: 2, FailureThreshold: 300},
		ReadinessProbe: readiness(cqlProbe),
		LivenessProbe:  &corev1.Probe{ProbeHandler: internodeProbe, PeriodSeconds: 20, FailureThreshold: 6},
		// Drain flushes memtables and stops accepting writes before SIGTERM, so a restart
		// replays no commit log and clients fail over cleanly.
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"nodetool", "drain"}}}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "data", MountPath: PodLayout.DataDir},
			{Name: "config", MountPath: renderedConfDir, ReadOnly: true},
			{Name: "logs", MountPath: logDir},
			{Name: "tmp", MountPath: "/tmp"},
		},
		SecurityContext: podtemplate.Restricted(),
	}
}

// readiness probes every 5s, not Kubernetes' 10: a node is Ready up to a startup and a
// readiness period after its port opens (7s on 2 cores, in a study that waits for it), and a
// TCP connect costs a node nothing it would notice. A probe into the tunnel execs a process in
// the container, which a measured node would notice: it keeps the 10s.
func readiness(h corev1.ProbeHandler) *corev1.Probe {
	if h.Exec != nil {
		return &corev1.Probe{ProbeHandler: h, PeriodSeconds: 10, FailureThreshold: 3}
	}
	return &corev1.Probe{ProbeHandler: h, PeriodSeconds: 5, FailureThreshold: 6}
}

// VolumeEncryptionContainer is the init container of an encrypted volume (podtemplate's).
const VolumeEncryptionContainer = podtemplate.VolumeEncryptionContainer

// volumeEncryption readies the data volume before Cassandra starts, at every start: Cassandra
// does not see the volume key.
func volumeEncryption(image string) corev1.Container {
	return podtemplate.VolumeEncryption(image, "data", PodLayout.DataDir, EncryptedDataDir)
}

func tlsMounts() []corev1.VolumeMount {
	return []corev1.VolumeMount{
		{Name: "tls", MountPath: PodLayout.TLSDir, ReadOnly: true},
		{Name: "trust", MountPath: PodLayout.TrustDir, ReadOnly: true},
	}
}

// tlsReloader runs `nodetool reloadssl` when cert-manager renews the Secret or the trust
// bundle changes: Cassandra would notice on its own only every ten minutes, and a restart is
// not needed.
func tlsReloader(image string) corev1.Container {
	return corev1.Container{
		Name:    "tls-reloader",
		Image:   image,
		Command: []string{"reload-tls"},
		Env:     []corev1.EnvVar{{Name: "TLS_DIR", Value: PodLayout.TLSDir}, {Name: "TRUST_DIR", Value: PodLayout.TrustDir}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
		VolumeMounts:    append(tlsMounts(), corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}),
		SecurityContext: podtemplate.Restricted(),
	}
}

// AppliedStep reads the step a StatefulSet's pods were last told to run; nil for none.
func AppliedStep(sts *appsv1.StatefulSet) (*Step, error) {
	raw, ok := sts.Annotations[StepAnnotation]
	if !ok {
		return nil, nil
	}
	var s Step
	if err := json.NewDecoder(strings.NewReader(raw)).Decode(&s); err != nil {
		return nil, fmt.Errorf("StatefulSet %s annotation %s: %w", sts.Name, StepAnnotation, err)
	}
	return &s, nil
}
