package hbase

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/placement"
	"secured.dev/operator/internal/render/podtemplate"
)

// Role is one kind of process of the cluster; each runs as its own StatefulSet.
//
// RegionServers and DataNodes run in separate pods (the API sizes them separately), placed on
// the same machines where the scheduler can: block reads then stay on one host, as in the
// paper's co-located deployment, without tying the two counts together.
type Role string

const (
	ZooKeeper    Role = "zk"
	NameNode     Role = "nn"
	DataNode     Role = "dn"
	Master       Role = "master"
	RegionServer Role = "rs"
	KDC          Role = "kdc"
)

// Roles of an HBase cluster in start order (the KDC only with Kerberos).
var Roles = []Role{ZooKeeper, NameNode, DataNode, Master, RegionServer}

// Paths in the image (hack/images.sh builds it from Maven Central's jars).
const (
	confDir      = "/etc/hbase/conf"
	libDir       = "/opt/hbase/lib"
	resourcesDir = "/opt/hbase/resources"
	kdcDir       = "/opt/kdc"
	kdcPort      = 8800 // unprivileged in the pod; the Service offers 88
	// HBaseUser runs every process; with simple authentication it is also the HDFS user.
	HBaseUser = 1000
)

// JDK17Options are the module openings HBase 2.6 needs on Java 17 (what bin/hbase adds).
var JDK17Options = []string{
	"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/sun.net.dns=ALL-UNNAMED",
	"--add-exports=java.base/sun.net.util=ALL-UNNAMED", "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
}

// Install is where a process finds its configuration directory, the extra resources HDFS
// needs on the classpath (images/hbase/resources) and the jars.
type Install struct{ Conf, Resources, Lib string }

// PodInstall is the image's layout.
var PodInstall = Install{Conf: confDir, Resources: resourcesDir, Lib: libDir}

// JVM is the java command line of a role: heap, Kerberos configuration, module openings,
// classpath (configuration first), main class and arguments.
func JVM(in Install, heapMiB int, kerberized bool, r Role) []string {
	args := []string{"java", fmt.Sprintf("-Xmx%dm", heapMiB), "-Djava.net.preferIPv4Stack=true"}
	if kerberized {
		args = append(args, "-Djava.security.krb5.conf="+in.Conf+"/krb5.conf")
	}
	args = append(args, JDK17Options...)
	args = append(args, "-cp", in.Conf+":"+in.Resources+":"+in.Lib+"/*", mains[r])
	if r == ZooKeeper {
		args = append(args, in.Conf+"/zoo.cfg")
	}
	if r == Master || r == RegionServer {
		args = append(args, "start")
	}
	return args
}

var mains = map[Role]string{
	ZooKeeper:    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
	NameNode:     "org.apache.hadoop.hdfs.server.namenode.NameNode",
	DataNode:     "org.apache.hadoop.hdfs.server.datanode.DataNode",
	Master:       "org.apache.hadoop.hbase.master.HMaster",
	RegionServer: "org.apache.hadoop.hbase.regionserver.HRegionServer",
}

var rolePorts = map[Role][]corev1.ContainerPort{
	ZooKeeper:    {{Name: "client", ContainerPort: ZooKeeperPort}, {Name: "peer", ContainerPort: ZooKeeperPeerPort}, {Name: "election", ContainerPort: ZooKeeperElectionPort}},
	NameNode:     {{Name: "rpc", ContainerPort: NameNodePort}, {Name: "http", ContainerPort: NameNodeHTTPPort}, {Name: "https", ContainerPort: NameNodeHTTPSPort}},
	DataNode:     {{Name: "data", ContainerPort: DataNodePort}, {Name: "ipc", ContainerPort: DataNodeIPCPort}, {Name: "http", ContainerPort: DataNodeHTTPPort}, {Name: "https", ContainerPort: DataNodeHTTPSPort}},
	Master:       {{Name: "rpc", ContainerPort: MasterPort}},
	RegionServer: {{Name: "rpc", ContainerPort: RegionServerPort}},
	KDC:          {{Name: "kerberos", ContainerPort: kdcPort}},
}

// Names of a datastore's objects.
type Names struct{ ds *v1alpha1.SecuredDatastore }

// NamesOf a datastore.
func NamesOf(ds *v1alpha1.SecuredDatastore) Names { return Names{ds} }

// StatefulSet (and headless Service) of a role.
func (n Names) StatefulSet(r Role) string { return n.ds.Name + "-" + string(r) }

// ConfigMap with the rendered files.
func (n Names) ConfigMap() string { return n.ds.Name + "-hbase-config" }

// KeytabSecret of a role: the keys of every principal of its pods.
func (n Names) KeytabSecret(r Role) string { return n.ds.Name + "-" + string(r) + "-keytab" }

// PrincipalsSecret is what the managed KDC serves: every principal and its password.
func (n Names) PrincipalsSecret() string { return n.ds.Name + "-kdc-principals" }

// ClientKeytabSecret holds the client principal's keytab, for benchmarks and applications.
func (n Names) ClientKeytabSecret() string { return n.ds.Name + "-client-keytab" }

// PodHost is the stable DNS name of a role's pod.
func (n Names) PodHost(r Role, ordinal int, domain string) string {
	return fmt.Sprintf("%s-%d.%s.%s.svc.%s", n.StatefulSet(r), ordinal, n.StatefulSet(r), n.ds.Namespace, domain)
}

// Realm of a datastore's managed KDC: its name and namespace, upper case.
func Realm(ds *v1alpha1.SecuredDatastore) string {
	return strings.ToUpper(ds.Name + "." + ds.Namespace)
}

// ClientPrincipal is the principal clients of the datastore log in as.
func ClientPrincipal(ds *v1alpha1.SecuredDatastore) string { return "client@" + Realm(ds) }

// Replicas of a role.
func Replicas(ds *v1alpha1.SecuredDatastore, r Role) int32 {
	t := v1alpha1.HBaseTopology{}
	if ds.Spec.HBase != nil {
		t = *ds.Spec.HBase
	}
	rs := ptr.Deref(t.RegionServers, 3)
	switch r {
	case ZooKeeper:
		return ptr.Deref(t.ZooKeeper.Replicas, 1)
	case DataNode:
		return ptr.Deref(t.DataNodes, rs)
	case RegionServer:
		return rs
	}
	return 1
}

// TopologyOf is the configuration's view of a datastore in Kubernetes.
func TopologyOf(ds *v1alpha1.SecuredDatastore, domain string) Topology {
	n := NamesOf(ds)
	c := Topology{NameNode: n.PodHost(NameNode, 0, domain), Replication: int(min(3, Replicas(ds, DataNode))), Layout: PodLayout}
	for i := range int(Replicas(ds, ZooKeeper)) {
		c.ZooKeeper = append(c.ZooKeeper, n.PodHost(ZooKeeper, i, domain))
	}
	c.Realm = Realm(ds)
	c.KDC = fmt.Sprintf("%s.%s.svc.%s:88", n.StatefulSet(KDC), ds.Namespace, domain)
	return c
}

// Principals of each role's pods, as the operator creates them: service/pod-host@REALM.
func Principals(ds *v1alpha1.SecuredDatastore, domain string) map[Role][]string {
	n, realm := NamesOf(ds), Realm(ds)
	services := map[Role][]string{NameNode: {NameNodeService, HTTPService}, DataNode: {DataNodeService, HTTPService}, Master: {HBaseService}, RegionServer: {HBaseService}}
	out := map[Role][]string{}
	for _, r := range Roles {
		for i := range int(Replicas(ds, r)) {
			for _, s := range services[r] {
				out[r] = append(out[r], kerberos.Service(s, n.PodHost(r, i, domain), realm))
			}
		}
	}
	return out
}

// Cluster is what the Kubernetes objects of an HBase datastore are built from.
type Cluster struct {
	Datastore  *v1alpha1.SecuredDatastore
	Encryption v1alpha1.EffectiveEncryption
	// Image runs ZooKeeper, HDFS and HBase; KDCImage the managed KDC.
	Image, KDCImage    string
	ClusterDomain      string
	FeatureLabelPrefix string
	// CertSecret (cert-manager's, with tls-combined.pem and keystore.p12), its keystore
	// password Secret, and the trust bundle ConfigMap; needed with TLS or Kerberos.
	CertSecret, KeystorePasswordSecret, TrustConfigMap string
	// KeyVersion is the newest Kerberos key version in the keytabs (Keys.HeldVersion): when
	// a rotation pre-publishes new keys, the pods that mount keytabs restart to load them.
	KeyVersion int
}

// Objects are the desired objects of an HBase datastore, in apply order.
type Objects struct {
	ConfigMap    *corev1.ConfigMap
	Services     []*corev1.Service
	StatefulSets []*appsv1.StatefulSet
}

// All objects, in apply order.
func (o Objects) All() []client.Object {
	out := []client.Object{o.ConfigMap}
	for _, s := range o.Services {
		out = append(out, s)
	}
	for _, s := range o.StatefulSets {
		out = append(out, s)
	}
	return out
}

// Build renders the objects of an HBase datastore.
func Build(s Cluster) (Objects, error) {
	ds := s.Datastore
	c := TopologyOf(ds, s.ClusterDomain)
	files, err := Files(c, s.Encryption)
	if err != nil {
		return Objects{}, err
	}
	kerberized := s.Encryption.HBase.Authentication == v1alpha1.AuthenticationKerberos
	tls := s.Encryption.ClientToNode.Mode != v1alpha1.ChannelDisabled
	if (kerberized || tls) && (s.CertSecret == "" || s.TrustConfigMap == "" || s.KeystorePasswordSecret == "") {
		return Objects{}, fmt.Errorf("the profile needs certificates (TLS, or HTTPS for secure HDFS) but no certificate Secret, keystore password or trust bundle is given")
	}
	n := NamesOf(ds)
	step, err := json.Marshal(s.Encryption)
	if err != nil {
		return Objects{}, err
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(ds, n.ConfigMap(), ""), Data: files}
	cm.Annotations = map[string]string{StepAnnotation: string(step)}
	o := Objects{ConfigMap: cm}
	roles := Roles
	if kerberized {
		roles = append([]Role{KDC}, Roles...)
	}
	for _, r := range roles {
		o.Services = append(o.Services, service(ds, n, r))
		hash := roleConfigHash(files, r)
		if kerberized && r != ZooKeeper && r != KDC {
			hash = podtemplate.ConfigHash(map[string]string{"files": hash}, fmt.Sprint("keys v", s.KeyVersion))
		}
		o.StatefulSets = append(o.StatefulSets, statefulSet(s, n, r, kerberized, tls, hash))
	}
	return o, nil
}

// filesRead by each role: a change restarts only the roles that read the file, so a change of
// HBase's RPC TLS leaves ZooKeeper and HDFS running.
var filesRead = map[Role][]string{
	ZooKeeper:    {"zoo.cfg", "log4j.properties"},
	NameNode:     {"core-site.xml", "hdfs-site.xml", "ssl-server.xml", "krb5.conf", "log4j.properties"},
	DataNode:     {"core-site.xml", "hdfs-site.xml", "ssl-server.xml", "krb5.conf", "log4j.properties"},
	Master:       {"core-site.xml", "hdfs-site.xml", "hbase-site.xml", "krb5.conf", "log4j.properties"},
	RegionServer: {"core-site.xml", "hdfs-site.xml", "hbase-site.xml", "krb5.conf", "log4j.properties"},
}

// roleConfigHash is "" for the KDC, which reads no file of the ConfigMap.
func roleConfigHash(files map[string]string, r Role) string {
	if len(filesRead[r]) == 0 {
		return ""
	}
	read := map[string]string{}
	for _, name := range filesRead[r] {
		if body, ok := files[name]; ok {
			read[name] = body
		}
	}
	return podtemplate.ConfigHash(read)
}

// Labels of every object of the datastore; a role adds its own.
func Labels(ds *v1alpha1.SecuredDatastore, r Role) map[string]string {
	l := map[string]string{
		"app.kubernetes.io/name":       "hbase",
		"app.kubernetes.io/instance":   ds.Name,
		"app.kubernetes.io/managed-by": "secured-datastore-operator",
	}
	if r != "" {
		l["app.kubernetes.io/component"] = string(r)
	}
	return l
}

// Selector of a role's pods.
func Selector(ds *v1alpha1.SecuredDatastore, r Role) map[string]string {
	return map[string]string{"app.kubernetes.io/instance": ds.Name, "app.kubernetes.io/component": string(r)}
}

func meta(ds *v1alpha1.SecuredDatastore, name string, r Role) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: Labels(ds, r)}
}

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

var heapMiB = map[Role]int{ZooKeeper: 256, NameNode: 512, DataNode: 512, Master: 512, RegionServer: 1024, KDC: 128}

// command runs a role's process; the NameNode formats its volume once, ZooKeeper writes its
// server id from the pod's ordinal.
func command(r Role, kerberized bool) []string {
	if r == KDC {
		// The image holds Kdc.class, compiled from images/kdc/Kdc.java: a JRE cannot compile.
		return []string{"java", "-Xmx128m", "-cp", kdcDir + "/lib/*:" + kdcDir, "Kdc", "$(REALM)", "0.0.0.0", fmt.Sprint(kdcPort), "/etc/kdc/principals"}
	}
	java := strings.Join(JVM(PodInstall, heapMiB[r], kerberized, r), " ")
	switch r {
	case ZooKeeper:
		return []string{"sh", "-c", `mkdir -p /data/zookeeper && echo $(( ${POD_NAME##*-} + 1 )) > /data/zookeeper/myid && exec ` + java}
	case NameNode:
		format := java + " -format -nonInteractive"
		return []string{"sh", "-c", `[ -f /data/namenode/current/VERSION ] || ` + format + ` && exec ` + java}
	}
	return []string{"sh", "-c", "exec " + java}
}

func statefulSet(s Cluster, n Names, r Role, kerberized, tls bool, configHash string) *appsv1.StatefulSet {
	ds := s.Datastore
	host := fmt.Sprintf("$(POD_NAME).%s.%s.svc.%s", n.StatefulSet(r), ds.Namespace, s.ClusterDomain)
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: HostEnv, Value: host},
		{Name: BindEnv, Value: "0.0.0.0"},
		// Without Kerberos, HDFS knows users by this name; the pod's uid has none.
		{Name: "HADOOP_USER_NAME", Value: "hbase"},
	}
	mounts := []corev1.VolumeMount{{Name: "config", MountPath: confDir, ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}}
	volumes := []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: n.ConfigMap()}}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	secretVolume := func(name, secret, path string) {
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: ptr.To[int32](0o440)}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: true})
	}
	image := s.Image
	switch {
	case r == KDC:
		image = s.KDCImage
		env = []corev1.EnvVar{{Name: "REALM", Value: Realm(ds)}}
		mounts = mounts[1:]
		volumes = volumes[1:]
		secretVolume("principals", n.PrincipalsSecret(), "/etc/kdc")
	case r == ZooKeeper:
		// ZooKeeper runs without SASL and TLS: it needs neither keys nor certificates.
	default:
		if kerberized {
			secretVolume("keytab", n.KeytabSecret(r), PodLayout.KeytabDir)
		}
		// HDFS needs certificates only to serve HTTPS, which secure (Kerberos) HDFS requires;
		// so enabling HBase's RPC TLS leaves the NameNode and DataNodes running.
		if kerberized || (tls && (r == Master || r == RegionServer)) {
			secretVolume("tls", s.CertSecret, PodLayout.TLSDir)
			volumes = append(volumes, corev1.Volume{Name: "trust", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.TrustConfigMap}}}})
			mounts = append(mounts, corev1.VolumeMount{Name: "trust", MountPath: PodLayout.TrustDir, ReadOnly: true})
			env = append(env, corev1.EnvVar{Name: KeystorePasswordEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: s.KeystorePasswordSecret}, Key: "password"}}})
		}
	}
	persistent := r == ZooKeeper || r == NameNode || r == DataNode
	if persistent {
		mounts = append(mounts, corev1.VolumeMount{Name: "data", MountPath: PodLayout.DataDir})
	}
	port := rolePorts[r][0].Name
	tcp := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(port)}}
	container := corev1.Container{
		Name: string(r), Image: image, Command: command(r, kerberized), Env: env, Ports: rolePorts[r],
		// A process that dies leaves the end of its log where kubectl describe shows it.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		StartupProbe:             &corev1.Probe{ProbeHandler: tcp, PeriodSeconds: 5, FailureThreshold: 60},
		ReadinessProbe:           &corev1.Probe{ProbeHandler: tcp, PeriodSeconds: 10, FailureThreshold: 3},
		LivenessProbe:            &corev1.Probe{ProbeHandler: tcp, PeriodSeconds: 20, FailureThreshold: 6},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", heapMiB[r]+256))},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 2*heapMiB[r]+256))},
		},
		VolumeMounts:    mounts,
		SecurityContext: podtemplate.Restricted(),
	}
	if r == RegionServer && ds.Spec.HBase != nil && len(ds.Spec.HBase.Resources.Requests)+len(ds.Spec.HBase.Resources.Limits) > 0 {
		container.Resources = ds.Spec.HBase.Resources
	}
	affinity := placement.Affinity(ds.Spec.Placement, s.FeatureLabelPrefix)
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	// Spread a role's pods over machines; bring RegionServers to the DataNodes' machines.
	affinity.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
		Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: Selector(ds, r)}},
	}}}
	if r == RegionServer {
		affinity.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 50, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: Selector(ds, DataNode)}},
		}}}
	}
	var nodeSelector map[string]string
	var tolerations []corev1.Toleration
	if p := ds.Spec.Placement; p != nil {
		nodeSelector, tolerations = p.NodeSelector, p.Tolerations
	}
	var annotations map[string]string
	if configHash != "" {
		annotations = map[string]string{podtemplate.ConfigHashAnnotation: configHash}
	}
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: meta(ds, n.StatefulSet(r), r),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(Replicas(ds, r)),
			ServiceName: n.StatefulSet(r),
			Selector:    &metav1.LabelSelector{MatchLabels: Selector(ds, r)},
			// ZooKeeper servers and DataNodes may start together; ordering buys nothing.
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(ds, r), Annotations: annotations},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{container}, Volumes: volumes,
					Affinity: affinity, NodeSelector: nodeSelector, Tolerations: tolerations,
					EnableServiceLinks: ptr.To(false), AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](HBaseUser), RunAsGroup: ptr.To[int64](HBaseUser), FSGroup: ptr.To[int64](HBaseUser),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
				},
			},
		},
	}
	if persistent {
		size := resource.MustParse("1Gi")
		var class *string
		if r == DataNode && ds.Spec.HBase != nil {
			if ds.Spec.HBase.Storage.Size != nil {
				size = *ds.Spec.HBase.Storage.Size
			}
			class = ds.Spec.HBase.Storage.StorageClassName
		}
		if r == DataNode && (ds.Spec.HBase == nil || ds.Spec.HBase.Storage.Size == nil) {
			size = resource.MustParse("10Gi")
		}
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: Labels(ds, r)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: class,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			},
		}}
	}
	return sts
}

// DNSNames the node certificate covers: every pod of every role by a wildcard under its
// headless Service, so scaling needs no new certificate.
func DNSNames(ds *v1alpha1.SecuredDatastore, domain string) []string {
	n := NamesOf(ds)
	var out []string
	for _, r := range Roles {
		out = append(out, fmt.Sprintf("*.%s.%s.svc.%s", n.StatefulSet(r), ds.Namespace, domain))
	}
	return out
}
