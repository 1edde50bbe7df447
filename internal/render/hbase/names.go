package hbase

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
)

// Names of a datastore's objects.
type Names struct{ ds *v1alpha1.SecuredDatastore }

// NamesOf a datastore.
func NamesOf(ds *v1alpha1.SecuredDatastore) Names { return Names{ds} }

// StatefulSet (and headless Service) of a role.
func (n Names) StatefulSet(r Role) string { return n.ds.Name + "-" + string(r) }

// ConfigMap with the rendered files of the step last applied, for clients (krb5.conf), and the
// step itself (StepAnnotation). The pods mount their role's configuration (RoleConfigMap).
func (n Names) ConfigMap() string { return n.ds.Name + "-hbase-config" }

// RoleConfigMap holds the files role r reads, as of one configuration (hash). It never changes:
// a pod the StatefulSet recreates from an earlier revision in the middle of a roll mounts that
// revision's files, not the next step's, which its volumes may not match.
func (n Names) RoleConfigMap(r Role, hash string) string {
	return n.ds.Name + "-" + string(r) + "-config-" + hash[:min(len(hash), configHashLen)]
}

// IsRoleConfigMap: name is one of role r's configurations, of any version.
func (n Names) IsRoleConfigMap(r Role, name string) bool {
	hash, ok := strings.CutPrefix(name, n.ds.Name+"-"+string(r)+"-config-")
	return ok && len(hash) == configHashLen && strings.Trim(hash, "0123456789abcdef") == ""
}

// configHashLen hex digits of a configuration's hash name a role's ConfigMap.
const configHashLen = 10

// NetworkPolicy of the whole datastore.
func (n Names) NetworkPolicy() string { return n.ds.Name }

// KeytabSecret of a role: the keys of every principal of its pods.
func (n Names) KeytabSecret(r Role) string { return n.ds.Name + "-" + string(r) + "-keytab" }

// PrincipalsSecret is what the managed KDC serves: every principal and its password.
func (n Names) PrincipalsSecret() string { return n.ds.Name + "-kdc-principals" }

// ClientKeytabSecret holds the client principal's keytab, for benchmarks and applications.
func (n Names) ClientKeytabSecret() string { return n.ds.Name + "-client-keytab" }

// PodHost is the stable DNS name of a role's pod.
func (n Names) PodHost(r Role, ordinal int, domain string) string {
	return n.Host(fmt.Sprintf("%s-%d", n.StatefulSet(r), ordinal), domain)
}

// Host is the stable DNS name of the pod named pod: every role's StatefulSet has a headless
// Service of its own name, and a pod's name is that name and its ordinal.
func (n Names) Host(pod, domain string) string {
	set := pod
	if i := strings.LastIndex(pod, "-"); i > 0 {
		set = pod[:i]
	}
	return fmt.Sprintf("%s.%s.%s.svc.%s", pod, set, n.ds.Namespace, domain)
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
	case Master:
		return ptr.Deref(t.Masters, 1)
	}
	return 1
}

// TopologyOf is the configuration's view of a datastore in Kubernetes.
func TopologyOf(ds *v1alpha1.SecuredDatastore, domain string) Topology {
	n := NamesOf(ds)
	dataNodes := int(Replicas(ds, DataNode))
	c := Topology{NameNode: n.PodHost(NameNode, 0, domain), Replication: min(3, dataNodes), DataNodes: dataNodes, Layout: PodLayout}
	for i := range int(Replicas(ds, ZooKeeper)) {
		c.ZooKeeper = append(c.ZooKeeper, n.PodHost(ZooKeeper, i, domain))
	}
	for _, r := range []struct {
		role Role
		port int32
	}{{Master, MasterPort}, {RegionServer, RegionServerPort}} {
		for i := range int(Replicas(ds, r.role)) {
			c.Bootstrap = append(c.Bootstrap, fmt.Sprintf("%s:%d", n.PodHost(r.role, i, domain), r.port))
		}
	}
	c.Realm = Realm(ds)
	c.KDC = fmt.Sprintf("%s.%s.svc.%s:88", n.StatefulSet(KDC), ds.Namespace, domain)
	return c
}

// Principals of each role's pods, as the operator creates them: service/pod-host@REALM.
func Principals(ds *v1alpha1.SecuredDatastore, domain string) map[Role][]string {
	n, realm := NamesOf(ds), Realm(ds)
	services := map[Role][]string{ZooKeeper: {ZooKeeperService}, NameNode: {NameNodeService, HTTPService}, DataNode: {DataNodeService, HTTPService},
		Master: {HBaseService}, RegionServer: {HBaseService}}
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
