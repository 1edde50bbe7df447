package hbase

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

// Cluster is what the Kubernetes objects of an HBase datastore are built from.
type Cluster struct {
	Datastore  *v1alpha1.SecuredDatastore
	Encryption v1alpha1.EffectiveEncryption
	// Image runs ZooKeeper, HDFS and HBase; KDCImage the managed KDC.
	Image, KDCImage    string
	ClusterDomain      string
	FeatureLabelPrefix string
	// OperatorNamespace: the NetworkPolicy admits the operator's wire prober from there.
	OperatorNamespace string
	// CertSecret (cert-manager's, with tls-combined.pem and keystore.p12), its keystore
	// password Secret, and the trust bundle ConfigMap; needed with TLS or Kerberos.
	CertSecret, KeystorePasswordSecret, TrustConfigMap string
	// AtRestSecret holds the at-rest keystore, mounted by the Master and RegionServers when the
	// profile encrypts at rest, and the volume key of the DataNodes' encrypted volumes.
	AtRestSecret string
	// VolumeEncryptionImage runs the DataNodes' init container that encrypts their data
	// directory (atRest.volume).
	VolumeEncryptionImage string
	// KeyVersion is the newest Kerberos key version in the keytabs (Keys.HeldVersion): when
	// a rotation pre-publishes new keys, the pods that mount keytabs restart to load them.
	KeyVersion int
	// CertRevision is cert-manager's revision of the node certificate: ZooKeeper reads its
	// client port's certificate once, so with TLS its servers restart when it is renewed.
	CertRevision int
	// Tunnel is the profile's VPN (Tunnel), nil without one; VPNImage runs its sidecars,
	// which fetch their keys from KeyServer.
	Tunnel    *vpn.Plan
	VPNImage  string
	KeyServer vpn.KeyServer
}

// Objects are the desired objects of an HBase datastore, in apply order.
type Objects struct {
	ConfigMap *corev1.ConfigMap
	// RoleConfigMaps: each role's files, immutable and named by their hash, by role.
	RoleConfigMaps map[Role]*corev1.ConfigMap
	NetworkPolicy  *networkingv1.NetworkPolicy
	Services       []*corev1.Service
	StatefulSets   []*appsv1.StatefulSet
}

// All objects, in apply order.
func (o Objects) All() []client.Object {
	out := []client.Object{o.ConfigMap}
	for _, r := range Roles { // a role's files exist before the StatefulSet that mounts them
		if cm := o.RoleConfigMaps[r]; cm != nil {
			out = append(out, cm)
		}
	}
	out = append(out, o.NetworkPolicy)
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
	if s.Tunnel != nil {
		if s.VPNImage == "" {
			return Objects{}, fmt.Errorf("the profile has a VPN but no sidecar image is configured")
		}
		c = c.InTunnel(*s.Tunnel)
	}
	files, err := Files(c, s.Encryption)
	if err != nil {
		return Objects{}, err
	}
	kerberized := s.Encryption.HBase.Authentication == v1alpha1.AuthenticationKerberos
	tls := s.Encryption.ClientToNode.Mode != v1alpha1.ChannelDisabled
	if (kerberized || tls) && (s.CertSecret == "" || s.TrustConfigMap == "" || s.KeystorePasswordSecret == "") {
		return Objects{}, fmt.Errorf("the profile needs certificates (TLS, or HTTPS for secure HDFS) but no certificate Secret, keystore password or trust bundle is given")
	}
	if a := s.Encryption.AtRest; a != nil && a.Engine != nil && s.AtRestSecret == "" {
		return Objects{}, fmt.Errorf("the profile encrypts at rest but no at-rest keys Secret is given")
	}
	n := NamesOf(ds)
	step, err := json.Marshal(s.Encryption)
	if err != nil {
		return Objects{}, err
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(ds, n.ConfigMap(), ""), Data: files}
	cm.Annotations = map[string]string{StepAnnotation: string(step)}
	o := Objects{ConfigMap: cm, RoleConfigMaps: map[Role]*corev1.ConfigMap{}}
	roles := Roles
	if kerberized {
		roles = append([]Role{KDC}, Roles...)
	}
	o.NetworkPolicy = networkPolicy(ds, s.OperatorNamespace, roles, kerberized, s.Tunnel)
	for _, r := range roles {
		o.Services = append(o.Services, service(ds, n, r))
		read := RoleFiles(files, r)
		hash, configMap := "", ""
		if len(read) > 0 {
			hash = podtemplate.ConfigHash(read)
			configMap = n.RoleConfigMap(r, hash)
			o.RoleConfigMaps[r] = &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: meta(ds, configMap, r), Data: read, Immutable: ptr.To(true)}
		}
		if kerberized && r != ZooKeeper && r != KDC {
			hash = podtemplate.ConfigHash(map[string]string{"files": hash}, fmt.Sprint("keys v", s.KeyVersion))
		}
		if tls && r == ZooKeeper && s.CertRevision > 1 {
			// Not before a renewal: no pod starts before the first certificate exists to mount,
			// and a TLS step may be applied while cert-manager still issues it.
			hash = podtemplate.ConfigHash(map[string]string{"files": hash}, fmt.Sprint("certificate revision ", s.CertRevision))
		}
		o.StatefulSets = append(o.StatefulSets, statefulSet(s, n, r, kerberized, tls, hash, configMap))
	}
	return o, nil
}

// filesRead by each role: a change restarts only the roles that read the file, so a change of
// HBase's RPC TLS leaves ZooKeeper and HDFS running.
var filesRead = map[Role][]string{
	ZooKeeper:    {"zoo.cfg", zooKeeperJAAS, "krb5.conf", "log4j.properties"},
	NameNode:     {"core-site.xml", "hdfs-site.xml", "ssl-server.xml", "krb5.conf", "log4j.properties"},
	DataNode:     {"core-site.xml", "hdfs-site.xml", "ssl-server.xml", "krb5.conf", "log4j.properties"},
	Master:       {"core-site.xml", "hdfs-site.xml", "hbase-site.xml", "krb5.conf", "log4j.properties"},
	RegionServer: {"core-site.xml", "hdfs-site.xml", "hbase-site.xml", "krb5.conf", "log4j.properties"},
}

// RoleFiles are the files role r reads, its configuration; none for the KDC.
func RoleFiles(files map[string]string, r Role) map[string]string {
	read := map[string]string{}
	for _, name := range filesRead[r] {
		if body, ok := files[name]; ok {
			read[name] = body
		}
	}
	return read
}
