package cassandra

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"secured.dev/operator/api/v1alpha1"
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

// Names of a datastore's objects.
type Names struct{ ds *v1alpha1.SecuredDatastore }

// NamesOf returns the naming scheme of a datastore's objects.
func NamesOf(ds *v1alpha1.SecuredDatastore) Names { return Names{ds} }

func (n Names) StatefulSet() string     { return n.ds.Name }
func (n Names) HeadlessService() string { return n.ds.Name + "-nodes" }
func (n Names) ClientService() string   { return n.ds.Name }

// ConfigMap holds one rendered configuration, named by its content's hash: a pod the
// StatefulSet recreates from its previous revision in the middle of a roll (a node killed, a
// node lost) must find that revision's configuration, not the next step's, which may need
// certificates its template does not mount. A configuration never changes under its name.
func (n Names) ConfigMap(hash string) string { return n.ds.Name + "-config-" + hash }

// IsConfigMap: name is one of the datastore's configurations, of any version (the unversioned
// one of earlier operators included).
func (n Names) IsConfigMap(name string) bool {
	hash, ok := strings.CutPrefix(name, n.ds.Name+"-config")
	if !ok {
		return false
	}
	if hash == "" {
		return true
	}
	hash, ok = strings.CutPrefix(hash, "-")
	return ok && len(hash) == configHashLen && strings.Trim(hash, "0123456789abcdef") == ""
}

// configHashLen hex digits of the configuration's hash name a ConfigMap.
const configHashLen = 10

// SuperuserSecret and ClientSecret hold the CQL logins (username, password) of the generated
// superuser and of the benchmark clients' role, under Password authentication.
func (n Names) SuperuserSecret() string { return n.ds.Name + "-superuser" }
func (n Names) ClientSecret() string    { return n.ds.Name + "-client" }

// Pod is the name of the pod with the ordinal.
func (n Names) Pod(ordinal int) string { return fmt.Sprintf("%s-%d", n.ds.Name, ordinal) }

// PodHost is the stable DNS name of a pod through the headless Service.
func (n Names) PodHost(ordinal int, domain string) string { return n.Host(n.Pod(ordinal), domain) }

// Host is the stable DNS name of the pod named pod.
func (n Names) Host(pod, domain string) string {
	return fmt.Sprintf("%s.%s.%s.svc.%s", pod, n.HeadlessService(), n.ds.Namespace, domain)
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

// PasswordAuthentication: CQL clients log in unless the datastore asks for None (an empty field,
// spec.cassandra omitted so that the API server had nothing to default, is closed too), or its
// tunnel carries client traffic: then CQL listens inside the tunnel only, tunnel membership (a
// key of the datastore's) is what admits a client, and the operator, which is no member, could
// not reach CQL to replace the default superuser.
func PasswordAuthentication(ds *v1alpha1.SecuredDatastore, tunnel *vpn.Plan) bool {
	return topologyOf(ds).Authentication != v1alpha1.CassandraAuthenticationNone && (tunnel == nil || !tunnel.CarriesClients())
}

// Datacenter the nodes report (cassandra-rackdc.properties).
func Datacenter(ds *v1alpha1.SecuredDatastore) string {
	if dc := topologyOf(ds).Datacenter; dc != "" {
		return dc
	}
	return DefaultDatacenter
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
