package cassandra

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/placement"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

// Annotations the builders write and the controller reads back.
const (
	// StepAnnotation on the StatefulSet records the Step its pod template runs, so the next
	// reconcile knows where a rolling transition stands.
	StepAnnotation = "datastore.secured.dev/step"
	// ConfigHashAnnotation on the pod template changes with the rendered configuration, so a
	// configuration change rolls the pods.
	ConfigHashAnnotation = podtemplate.ConfigHashAnnotation
)

// Mount points in the pod.
const (
	renderedConfDir = "/etc/cassandra/rendered"
	imageConfDir    = "/etc/cassandra"
	logDir          = "/var/log/cassandra"
)

// Defaults of a Cassandra datastore.
const (
	DefaultDatacenter = "dc1"
	DefaultNodes      = 3
	defaultHeapMiB    = 1024
	maxHeapMiB        = 8192
)

var defaultStorage = resource.MustParse("10Gi")

// Cluster is what the Kubernetes objects of a Cassandra datastore are built from.
type Cluster struct {
	Datastore *v1alpha1.SecuredDatastore
	// Step is the encryption the pods run with: the effective profile or a transitional step.
	Step Step
	// Image of the Cassandra container (the operator's default or spec.image).
	Image string
	// ClusterDomain of the Kubernetes cluster, for host names (cluster.local).
	ClusterDomain string
	// OperatorNamespace: the operator's pods there may reach the internode port, to probe it.
	OperatorNamespace string
	// FeatureLabelPrefix of the nodes' CPU feature labels; empty means Node Feature Discovery's.
	FeatureLabelPrefix string
	// VPNImage runs the tunnel sidecar of a VPN profile.
	VPNImage string
	// Tunnel is the step's VPN (Tunnel(Datastore, Step, ClusterDomain)); nil without one.
	Tunnel *vpn.Plan
	// CertSecret names the Secret with the node certificate and TrustConfigMap the ConfigMap
	// with the trust bundle; both are mounted when the step enables TLS on any channel.
	CertSecret, TrustConfigMap string
}

// Objects are the Kubernetes objects of one Cassandra datastore, besides its certificates.
type Objects struct {
	ConfigMap       *corev1.ConfigMap
	HeadlessService *corev1.Service
	ClientService   *corev1.Service
	StatefulSet     *appsv1.StatefulSet
	Budget          *policyv1.PodDisruptionBudget
	NetworkPolicy   *networkingv1.NetworkPolicy
}

// All lists the objects in the order they are applied: what pods need first.
func (o Objects) All() []client.Object {
	return []client.Object{o.ConfigMap, o.HeadlessService, o.ClientService, o.Budget, o.NetworkPolicy, o.StatefulSet}
}

// Names of a datastore's objects.
type Names struct{ ds *v1alpha1.SecuredDatastore }

// NamesOf returns the naming scheme of a datastore's objects.
func NamesOf(ds *v1alpha1.SecuredDatastore) Names { return Names{ds} }

func (n Names) StatefulSet() string     { return n.ds.Name }
func (n Names) HeadlessService() string { return n.ds.Name + "-nodes" }
func (n Names) ClientService() string   { return n.ds.Name }
func (n Names) ConfigMap() string       { return n.ds.Name + "-config" }

// Pod is the name of the pod with the ordinal.
func (n Names) Pod(ordinal int) string { return fmt.Sprintf("%s-%d", n.ds.Name, ordinal) }

// PodHost is the stable DNS name of a pod through the headless Service.
func (n Names) PodHost(ordinal int, domain string) string {
	return fmt.Sprintf("%s.%s.%s.svc.%s", n.Pod(ordinal), n.HeadlessService(), n.ds.Namespace, domain)
}

// DNSNames the node certificate carries: every pod's stable name and the client Service's, in
// full and in the short forms clients in the namespace use.
func DNSNames(ds *v1alpha1.SecuredDatastore, domain string) []string {
	n := NamesOf(ds)
	svc := fmt.Sprintf("%s.%s.svc", n.ClientService(), ds.Namespace)
	names := []string{svc + "." + domain, svc, n.ClientService()}
	for i := range int(Nodes(ds)) {
		host := n.PodHost(i, domain)
		names = append(names, host, strings.TrimSuffix(host, "."+domain))
	}
	return names
}

// Labels every object of the datastore carries; Selector picks its pods.
func Labels(ds *v1alpha1.SecuredDatastore) map[string]string {
	l := Selector(ds)
	l["app.kubernetes.io/managed-by"] = "secured-datastore-operator"
	l["app.kubernetes.io/component"] = "database"
	return l
}

// Selector matches the datastore's pods.
func Selector(ds *v1alpha1.SecuredDatastore) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "cassandra", "app.kubernetes.io/instance": ds.Name}
}

// Nodes is the datastore's node count with its default.
func Nodes(ds *v1alpha1.SecuredDatastore) int32 {
	if t := ds.Spec.Cassandra; t != nil && t.Nodes != nil {
		return *t.Nodes
	}
	return DefaultNodes
}

func topologyOf(ds *v1alpha1.SecuredDatastore) v1alpha1.CassandraTopology {
	if ds.Spec.Cassandra != nil {
		return *ds.Spec.Cassandra
	}
	return v1alpha1.CassandraTopology{}
}

// Seeds: the first two nodes (one when the cluster has one), by stable host name.
func Seeds(ds *v1alpha1.SecuredDatastore, domain string) []string {
	n := NamesOf(ds)
	seeds := []string{n.PodHost(0, domain)}
	if Nodes(ds) > 2 {
		seeds = append(seeds, n.PodHost(1, domain))
	}
	return seeds
}

// HeapMiB: spec.cassandra.heap, else half the memory limit (at most 8 GiB), else 1 GiB.
func HeapMiB(t v1alpha1.CassandraTopology) int64 {
	if t.Heap != nil {
		return t.Heap.Value() >> 20
	}
	if limit, ok := t.Resources.Limits[corev1.ResourceMemory]; ok {
		return min(limit.Value()>>21, maxHeapMiB)
	}
	return defaultHeapMiB
}

// TLSEnabled reports whether any channel of the step uses TLS, i.e. whether pods mount
// certificates.
func (s Step) TLSEnabled() bool {
	return s.Encryption.ClientToNode.Mode != v1alpha1.ChannelDisabled || s.Encryption.NodeToNode.Mode != v1alpha1.ChannelDisabled
}

// Build renders the objects of a Cassandra datastore.
func Build(c Cluster) (Objects, error) {
	ds := c.Datastore
	n := NamesOf(ds)
	topo := topologyOf(ds)
	dc := topo.Datacenter
	if dc == "" {
		dc = DefaultDatacenter
	}
	t := Topology{ClusterName: ds.Name, Datacenter: dc, Seeds: Seeds(ds, c.ClusterDomain), Layout: PodLayout}
	tunnel := c.Tunnel
	if tunnel != nil && tunnel.CarriesNodes() {
		t.Seeds = TunnelSeeds(*tunnel)
	}
	yaml, err := Config(t, c.Step)
	if err != nil {
		return Objects{}, err
	}
	emulate := ds.Spec.Placement != nil && ds.Spec.Placement.EmulateNoAcceleration
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(ds, n.ConfigMap()),
		Data: map[string]string{
			"cassandra.yaml":              string(yaml),
			"cassandra-rackdc.properties": string(RackDC(t)),
			"jvm-server.options":          string(JVMOptions(JVM{HeapMiB: HeapMiB(topo), EmulateNoAcceleration: emulate}, c.Step.Encryption)),
		},
	}
	if tunnel != nil {
		cm.Data[VPNAddressesFile] = string(tunnel.Addresses())
	}
	sts, err := statefulSet(c, n, cm)
	if err != nil {
		return Objects{}, err
	}
	return Objects{
		ConfigMap:       cm,
		HeadlessService: headlessService(ds, n),
		ClientService:   clientService(ds, n),
		StatefulSet:     sts,
		Budget:          budget(ds),
		NetworkPolicy:   networkPolicy(ds, c.OperatorNamespace, tunnel),
	}, nil
}

func meta(ds *v1alpha1.SecuredDatastore, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: Labels(ds)}
}

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

// networkPolicy admits clients on CQL and only the datastore's own pods (and the operator's
// wire prober) on the internode port; everything else (JMX, the legacy SSL storage port, Thrift) is closed. Cassandra 5 serves TLS
// and plaintext on the same ports, so refusing plaintext on them is the configuration's job,
// and the wire prober checks that it does.
func networkPolicy(ds *v1alpha1.SecuredDatastore, operatorNamespace string, tunnel *vpn.Plan) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	peers := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: Selector(ds)}}}
	if operatorNamespace != "" {
		peers = append(peers, networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: operatorNamespace}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "secured-datastore-operator", "app.kubernetes.io/component": "operator"}},
		})
	}
	cql, internode := intstr.FromInt32(NativePort), intstr.FromInt32(StoragePort)
	ingress := []networkingv1.NetworkPolicyIngressRule{
		{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &cql}}},
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

func statefulSet(c Cluster, n Names, cm *corev1.ConfigMap) (*appsv1.StatefulSet, error) {
	certSecret, trustConfigMap, tunnel := c.CertSecret, c.TrustConfigMap, c.Tunnel
	ds := c.Datastore
	topo := topologyOf(ds)
	step, err := json.Marshal(c.Step)
	if err != nil {
		return nil, err
	}
	tls := c.Step.TLSEnabled()
	if tls && (certSecret == "" || trustConfigMap == "") {
		return nil, fmt.Errorf("a channel uses TLS but no certificate Secret or trust bundle is given")
	}

	env := []corev1.EnvVar{
		{Name: "CASSANDRA_CONF", Value: renderedConfDir},
		{Name: "CASSANDRA_STATIC_CONF", Value: imageConfDir},
	}
	if ds.Spec.Placement != nil && ds.Spec.Placement.EmulateNoAcceleration {
		for k, v := range NoAccelerationEnv {
			env = append(env, corev1.EnvVar{Name: k, Value: v})
		}
	}
	mounts := []corev1.VolumeMount{
		{Name: "data", MountPath: PodLayout.DataDir},
		{Name: "config", MountPath: renderedConfDir, ReadOnly: true},
		{Name: "logs", MountPath: logDir},
		{Name: "tmp", MountPath: "/tmp"},
	}
	volumes := []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
		{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	tcp := func(port string) corev1.ProbeHandler {
		return corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(port)}}
	}
	cqlProbe, internodeProbe := tcp("cql"), tcp("internode")
	var initContainers []corev1.Container
	if tunnel != nil {
		env = append(env, vpn.Env(*tunnel, renderedConfDir+"/"+VPNAddressesFile)...)
		// A port in the tunnel is closed on the pod's address, where the kubelet dials.
		inTunnel := func(port int) corev1.ProbeHandler {
			return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"port-open", fmt.Sprint(port)}}}
		}
		if tunnel.CarriesClients() {
			cqlProbe = inTunnel(NativePort)
		}
		if tunnel.CarriesNodes() {
			internodeProbe = inTunnel(StoragePort)
		}
		if c.VPNImage == "" {
			return nil, fmt.Errorf("the profile has a VPN but no sidecar image is configured")
		}
		sidecar, vols := vpn.Sidecar(*tunnel, c.VPNImage, ds.Name)
		initContainers = append(initContainers, sidecar)
		volumes = append(volumes, vols...)
	}
	cassandra := corev1.Container{
		Name:  "cassandra",
		Image: c.Image,
		Args:  []string{"cassandra", "-f"},
		Env:   env,
		Ports: []corev1.ContainerPort{
			{Name: "internode", ContainerPort: StoragePort, Protocol: corev1.ProtocolTCP},
			{Name: "cql", ContainerPort: NativePort, Protocol: corev1.ProtocolTCP},
		},
		Resources: topo.Resources,
		// Cassandra opens the CQL port once it has joined the ring and is Up/Normal, so an open
		// port is the readiness a rolling restart waits for before it takes the next node.
		StartupProbe:   &corev1.Probe{ProbeHandler: cqlProbe, PeriodSeconds: 10, FailureThreshold: 60},
		ReadinessProbe: &corev1.Probe{ProbeHandler: cqlProbe, PeriodSeconds: 10, FailureThreshold: 3},
		LivenessProbe:  &corev1.Probe{ProbeHandler: internodeProbe, PeriodSeconds: 20, FailureThreshold: 6},
		// Drain flushes memtables and stops accepting writes before SIGTERM, so a restart
		// replays no commit log and clients fail over cleanly.
		Lifecycle:       &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"nodetool", "drain"}}}},
		VolumeMounts:    mounts,
		SecurityContext: podtemplate.Restricted(),
	}
	containers := []corev1.Container{cassandra}
	if tls {
		volumes = append(volumes,
			corev1.Volume{Name: "tls", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: certSecret, DefaultMode: ptr.To[int32](0o440)},
			}},
			corev1.Volume{Name: "trust", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: trustConfigMap}},
			}})
		tlsMounts := []corev1.VolumeMount{
			{Name: "tls", MountPath: PodLayout.TLSDir, ReadOnly: true},
			{Name: "trust", MountPath: PodLayout.TrustDir, ReadOnly: true},
		}
		containers[0].VolumeMounts = append(containers[0].VolumeMounts, tlsMounts...)
		// The reloader runs `nodetool reloadssl` when cert-manager renews the Secret or the
		// trust bundle changes: Cassandra would notice on its own only every ten minutes, and
		// a restart is not needed.
		containers = append(containers, corev1.Container{
			Name:    "tls-reloader",
			Image:   c.Image,
			Command: []string{"reload-tls"},
			Env:     []corev1.EnvVar{{Name: "TLS_DIR", Value: PodLayout.TLSDir}, {Name: "TRUST_DIR", Value: PodLayout.TrustDir}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts:    append(tlsMounts, corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}),
			SecurityContext: podtemplate.Restricted(),
		})
	}

	affinity := placement.Affinity(ds.Spec.Placement, c.FeatureLabelPrefix)
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	// Spread nodes over machines: two replicas on one host fail together.
	affinity.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
		Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: Selector(ds)}},
	}}}
	var nodeSelector map[string]string
	var tolerations []corev1.Toleration
	if p := ds.Spec.Placement; p != nil {
		nodeSelector, tolerations = p.NodeSelector, p.Tolerations
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
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			// Deleting the datastore keeps its volumes: data is never lost by accident.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(ds), Annotations: map[string]string{ConfigHashAnnotation: podtemplate.ConfigHash(cm.Data, certSecret)}},
				Spec: corev1.PodSpec{
					InitContainers:                initContainers,
					Containers:                    containers,
					Volumes:                       volumes,
					Affinity:                      affinity,
					NodeSelector:                  nodeSelector,
					Tolerations:                   tolerations,
					TerminationGracePeriodSeconds: ptr.To[int64](120),
					EnableServiceLinks:            ptr.To(false),
					AutomountServiceAccountToken:  ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](999), RunAsGroup: ptr.To[int64](999), FSGroup: ptr.To[int64](999),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: Labels(ds)},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: topo.Storage.StorageClassName,
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: storage}},
				},
			}},
		},
	}
	sts.Annotations = map[string]string{StepAnnotation: string(step)}
	return sts, nil
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
