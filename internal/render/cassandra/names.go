package cassandra

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
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

// Roles the operator creates under Password authentication: the generated superuser, which
// replaces Cassandra's default one, and the benchmark clients', which may use keyspace ycsb only.
const (
	SuperuserRole = "sdo_admin"
	ClientRole    = "sdo_client"
)

// SuperuserSecret and ClientSecret hold the CQL logins (username, password) of the generated
// superuser and of the benchmark clients' role, under Password authentication.
func (n Names) SuperuserSecret() string { return n.ds.Name + "-superuser" }
func (n Names) ClientSecret() string    { return n.ds.Name + "-client" }

// SuperuserCertSecret and ClientCertSecret hold the client certificates of the superuser (the
// operator's) and of the benchmark clients, where the client channel demands certificates.
func (n Names) SuperuserCertSecret() string { return n.ds.Name + "-superuser-tls" }
func (n Names) ClientCertSecret() string    { return n.ds.Name + "-client-tls" }

// Identity is the SPIFFE ID of the datastore's client certificate for a CQL role: the URI name
// the certificate carries and Cassandra's SpiffeCertificateValidator reads. Namespace and name
// are DNS labels and roles CQL identifiers, so the ID needs no escaping.
func Identity(ds *v1alpha1.SecuredDatastore, domain, role string) string {
	return fmt.Sprintf("spiffe://%s/ns/%s/secureddatastore/%s/role/%s", domain, ds.Namespace, ds.Name, role)
}

// Certificates is what the datastore's certificates are built from: the node certificate for
// the step its nodes run next, and where that step or another one the datastore runs or heads
// for (the one its pods run now, its target) demands client certificates, the superuser's (the
// operator's) and the benchmark clients'. They exist from the start of a change that makes
// client certificates the logins, so that the operator can map their identities before the
// nodes need them.
func Certificates(ds *v1alpha1.SecuredDatastore, domain string, step Step, others ...Step) certs.Request {
	enc := step.Encryption
	r := certs.Request{Datastore: ds, Labels: Labels(ds), DNSNames: DNSNames(ds, domain),
		Channels: []v1alpha1.EffectiveChannel{enc.ClientToNode, enc.NodeToNode}}
	if ClientCertificates(step) || slices.ContainsFunc(others, ClientCertificates) {
		n := NamesOf(ds)
		secrets := map[string]string{SuperuserRole: n.SuperuserCertSecret(), ClientRole: n.ClientCertSecret()}
		for _, id := range Identities(ds, domain) {
			r.Clients = append(r.Clients, certs.ClientCertificate{Role: id.Role, Identity: id.Identity, SecretName: secrets[id.Role]})
		}
	}
	return r
}

// Identities are the client-certificate identities of the superuser and of the benchmark
// clients, mapped to their roles.
func Identities(ds *v1alpha1.SecuredDatastore, domain string) []v1alpha1.CertificateIdentity {
	return []v1alpha1.CertificateIdentity{
		{Identity: Identity(ds, domain, SuperuserRole), Role: SuperuserRole},
		{Identity: Identity(ds, domain, ClientRole), Role: ClientRole},
	}
}

// IdentitiesMapped: status.identities says both identities are mapped to their roles.
func IdentitiesMapped(ds *v1alpha1.SecuredDatastore, domain string) bool {
	for _, want := range Identities(ds, domain) {
		if !slices.Contains(ds.Status.Identities, want) {
			return false
		}
	}
	return true
}

// ClientCertificates: clients must present a certificate on the client channel of the step,
// so the datastore issues them theirs.
func ClientCertificates(step Step) bool {
	ch := step.Encryption.ClientToNode
	return ch.Mode != v1alpha1.ChannelDisabled && ch.ClientAuth == v1alpha1.ClientAuthRequired
}

// CertificateLogins: the step's client channel lets nodes authenticate CQL clients by their
// certificate alone: every client must speak TLS (Required, not Optional, where a plaintext
// client has no certificate to show) and present one.
func CertificateLogins(step Step) bool {
	return ClientCertificates(step) && step.Encryption.ClientToNode.Mode == v1alpha1.ChannelRequired
}

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

// How the nodes of a step authenticate CQL clients.
const (
	AuthenticationNone        = "none"
	AuthenticationPassword    = "password"
	AuthenticationCertificate = "client certificate"
)

// Authentication says how the nodes of the step authenticate CQL clients: by password
// (PasswordAuthentication), and by client certificate instead once the superuser's and the
// clients' identities are mapped to their roles, wherever the step's client channel demands
// certificates.
func Authentication(ds *v1alpha1.SecuredDatastore, tunnel *vpn.Plan, step Step, domain string) string {
	switch {
	case !PasswordAuthentication(ds, tunnel):
		return AuthenticationNone
	case IdentitiesMapped(ds, domain) && CertificateLogins(step):
		return AuthenticationCertificate
	}
	return AuthenticationPassword
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
