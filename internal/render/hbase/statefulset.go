package hbase

import (
	"fmt"
	"slices"

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

// statefulSet runs one role; configHash ("" for none) rolls its pods when what they read
// changes.
func statefulSet(s Cluster, n Names, r Role, kerberized, tls bool, configHash, configMap string) *appsv1.StatefulSet {
	ds := s.Datastore
	var annotations map[string]string
	if configHash != "" {
		annotations = map[string]string{podtemplate.ConfigHashAnnotation: configHash}
	}
	container, volumes := roleContainer(s, n, r, kerberized, tls, configMap)
	affinity, nodeSelector, tolerations := podtemplate.Scheduling(ds.Spec.Placement, s.FeatureLabelPrefix, Selector(ds, r))
	if r == RegionServer {
		// Bring RegionServers to the DataNodes' machines: block reads stay on the host.
		affinity.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			podtemplate.PreferSameHost(50, Selector(ds, DataNode)),
		}}
	}
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: meta(ds, n.StatefulSet(r), r),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(Replicas(ds, r)),
			ServiceName: n.StatefulSet(r),
			Selector:    &metav1.LabelSelector{MatchLabels: Selector(ds, r)},
			// ZooKeeper servers and DataNodes may start together; ordering buys nothing.
			PodManagementPolicy:                  appsv1.ParallelPodManagement,
			UpdateStrategy:                       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			PersistentVolumeClaimRetentionPolicy: podtemplate.Claims(whenDeleted(ds)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(ds, r), Annotations: annotations},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{container}, Volumes: volumes,
					Affinity: affinity, NodeSelector: nodeSelector, Tolerations: tolerations,
					EnableServiceLinks: ptr.To(false), AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: podtemplate.PodSecurity(HBaseUser),
				},
			},
		},
	}
	if persistent(r) {
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{dataClaim(s, r)}
	}
	if r == DataNode && podtemplate.EncryptsVolume(s.Encryption) {
		// The blocks, HFiles and WALs alike, are the DataNodes'; the NameNode's and ZooKeeper's
		// volumes hold names and metadata, on the default StorageClass.
		pod := &sts.Spec.Template.Spec
		pod.InitContainers = []corev1.Container{podtemplate.VolumeEncryption(s.VolumeEncryptionImage, "data", PodLayout.DataDir, DataNodeDir)}
		pod.Volumes = append(pod.Volumes, podtemplate.VolumeKey(s.AtRestSecret))
	}
	if t := s.Tunnel; t != nil && r != KDC {
		// The tunnel is up before the role starts, and stays until it has stopped.
		pod := &sts.Spec.Template.Spec
		sidecar, volumes := vpn.Sidecar(*t, s.VPNImage, ds.Name, s.KeyServer)
		pod.InitContainers = append(pod.InitContainers, sidecar)
		pod.Volumes = append(pod.Volumes, volumes...)
	}
	deviations := append(podtemplate.WorkloadDeviations(sts.Spec.Template.Spec), podtemplate.ImageServiceUser)
	if s.Tunnel != nil && r != KDC {
		deviations = append(deviations, podtemplate.TunnelNetAdmin)
	}
	if slices.ContainsFunc(container.Env, func(e corev1.EnvVar) bool { return e.Name == KeystorePasswordEnv }) {
		deviations = append(deviations, podtemplate.KeystorePasswordEnv)
	}
	podtemplate.Annotate(&sts.ObjectMeta, deviations...)
	return sts
}

// persistent: the role keeps state on a volume.
func persistent(r Role) bool { return r == ZooKeeper || r == NameNode || r == DataNode }

// dataClaim: DataNodes hold the data (spec.hbase.storage, 10 GiB by default); ZooKeeper and
// the NameNode hold metadata (1 GiB).
// whenDeleted applies spec.hbase.storage's choice to every role's claims: a datastore's data is
// all of them, the DataNodes' blocks and the NameNode's and ZooKeeper's metadata alike.
func whenDeleted(ds *v1alpha1.SecuredDatastore) v1alpha1.VolumeRetention {
	if ds.Spec.HBase == nil {
		return v1alpha1.VolumeRetain
	}
	return ds.Spec.HBase.Storage.WhenDeleted
}

func dataClaim(s Cluster, r Role) corev1.PersistentVolumeClaim {
	ds := s.Datastore
	size := resource.MustParse("1Gi")
	var class *string
	if r == DataNode {
		size = resource.MustParse("10Gi")
		if h := ds.Spec.HBase; h != nil {
			if h.Storage.Size != nil {
				size = *h.Storage.Size
			}
			class = h.Storage.StorageClassName
		}
	}
	return podtemplate.DataClaim(Labels(ds, r), class, size)
}

// roleContainer is the role's process with what it mounts: its configuration, keytab,
// certificate and trust bundle as the profile needs them.
func roleContainer(s Cluster, n Names, r Role, kerberized, tls bool, configMap string) (corev1.Container, []corev1.Volume) {
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
	volumes := []corev1.Volume{podtemplate.ConfigMapVolume("config", configMap), podtemplate.EmptyDirVolume("tmp")}
	secretVolume := func(name, secret, path string) {
		volumes = append(volumes, podtemplate.SecretVolume(name, secret))
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: true})
	}
	image := s.Image
	switch {
	case r == KDC:
		image = s.KDCImage
		env = []corev1.EnvVar{{Name: "REALM", Value: Realm(ds)}}
		mounts, volumes = mounts[1:], volumes[1:]
		secretVolume("principals", n.PrincipalsSecret(), "/etc/kdc")
	default:
		if kerberized {
			secretVolume("keytab", n.KeytabSecret(r), PodLayout.KeytabDir)
		}
		// HDFS needs certificates only to serve HTTPS, which secure (Kerberos) HDFS requires;
		// so enabling HBase's RPC TLS leaves the NameNode and DataNodes running. ZooKeeper's
		// client port follows HBase's RPC TLS.
		certificates := kerberized || tls && (r == Master || r == RegionServer)
		if r == ZooKeeper {
			certificates = tls
		}
		if certificates {
			secretVolume("tls", s.CertSecret, PodLayout.TLSDir)
			volumes = append(volumes, podtemplate.ConfigMapVolume("trust", s.TrustConfigMap))
			mounts = append(mounts, corev1.VolumeMount{Name: "trust", MountPath: PodLayout.TrustDir, ReadOnly: true})
		}
		if certificates && r != ZooKeeper {
			env = append(env, corev1.EnvVar{Name: KeystorePasswordEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: s.KeystorePasswordSecret}, Key: "password"}}})
		}
	}
	if a := s.Encryption.AtRest; a != nil && a.Engine != nil && (r == Master || r == RegionServer) {
		// The Master hosts regions too (its local store and, in HBase 2, meta may move to it).
		secretVolume(datakeys.AtRestVolume, s.AtRestSecret, PodLayout.AtRestDir)
	}
	if persistent(r) {
		mounts = append(mounts, corev1.VolumeMount{Name: "data", MountPath: PodLayout.DataDir})
	}
	tcp := podtemplate.TCPProbe(rolePorts[r][0].Name)
	tunnelled := s.Tunnel != nil && r != KDC
	if tunnelled {
		// The shell finds the pod's tunnel address (tunnelStart); its table is in the public
		// tunnel Secret the sidecar mounts.
		env = slices.DeleteFunc(env, func(e corev1.EnvVar) bool { return e.Name == HostEnv || e.Name == BindEnv })
		mounts = append(mounts, corev1.VolumeMount{Name: vpn.SecretVolume, MountPath: tunnelAddressesDir, ReadOnly: true})
		tcp = tunnelPortProbe(rolePorts[r][0].ContainerPort)
	}
	container := corev1.Container{
		Name: string(r), Image: image, Command: command(r, s.Encryption, kerberized, tunnelled), Env: env, Ports: rolePorts[r],
		// A process that dies leaves the end of its log where kubectl describe shows it.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		StartupProbe:             &corev1.Probe{ProbeHandler: tcp, PeriodSeconds: 5, FailureThreshold: 60},
		ReadinessProbe:           &corev1.Probe{ProbeHandler: tcp, PeriodSeconds: 10, FailureThreshold: 3},
		LivenessProbe:            &corev1.Probe{ProbeHandler: tcp, PeriodSeconds: 20, FailureThreshold: 6},
		Resources: corev1.ResourceRequirements{
			// A CPU request of its own for every role, so that the scheduler never packs a
			// datastore onto a node that has no CPU left for it.
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", heapMiB[r]+256))},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 2*heapMiB[r]+256))},
		},
		VolumeMounts:    mounts,
		SecurityContext: podtemplate.Restricted(),
	}
	if h := ds.Spec.HBase; r == RegionServer && h != nil && len(h.Resources.Requests)+len(h.Resources.Limits) > 0 {
		container.Resources = h.Resources
	}
	return container, volumes
}
