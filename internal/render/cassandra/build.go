package cassandra

import (
	"fmt"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

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
	// VPNImage runs the tunnel sidecar of a VPN profile; KeyServer is where the sidecar fetches
	// its key.
	VPNImage  string
	KeyServer vpn.KeyServer
	// Tunnel is the step's VPN (Tunnel(Datastore, Step, ClusterDomain)); nil without one.
	Tunnel *vpn.Plan
	// CertSecret names the Secret with the node certificate and TrustConfigMap the ConfigMap
	// with the trust bundle; both are mounted when the step enables TLS on any channel.
	CertSecret, TrustConfigMap string
	// AtRestSecret names the Secret with the at-rest keystore and its password: mounted when
	// given (the step encrypts at rest, or did before, so that its commit logs can replay);
	// required when the step encrypts at rest.
	AtRestSecret string
	// VolumeEncryptionImage runs the init container that encrypts the data volume
	// (cmd/volume-encryption); required when the step encrypts volumes.
	VolumeEncryptionImage string
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

// datacenterName is the CRD's pattern for spec.cassandra.datacenter.
var datacenterName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,47}$`)

// Build renders the objects of a Cassandra datastore.
func Build(c Cluster) (Objects, error) {
	ds := c.Datastore
	n := NamesOf(ds)
	dc := Datacenter(ds)
	if !datacenterName.MatchString(dc) {
		// The CRD refuses it too; the builder does not rely on that, since the name becomes a
		// line of cassandra-rackdc.properties.
		return Objects{}, fmt.Errorf("spec.cassandra.datacenter %q: use letters, digits, '-' and '_' only, at most 48, starting with a letter or digit", dc)
	}
	bound := Bound(c.Tunnel, c.Step)
	auth := Authentication(ds, bound, c.Step, c.ClusterDomain)
	layout := PodLayout
	if podtemplate.EncryptsVolume(c.Step.Encryption) {
		layout.DataDir = EncryptedDataDir
	}
	t := Topology{ClusterName: ds.Name, Datacenter: dc, Seeds: Seeds(ds, c.ClusterDomain), Layout: layout, AtRestKeys: c.AtRestSecret != "",
		PasswordAuthentication: auth != AuthenticationNone, CertificateAuthentication: auth == AuthenticationCertificate}
	if bound != nil && bound.CarriesNodes() {
		t.Seeds = TunnelSeeds(*bound)
	}
	yaml, err := Config(t, c.Step)
	if err != nil {
		return Objects{}, err
	}
	emulate := ds.Spec.Placement != nil && ds.Spec.Placement.EmulateNoAcceleration
	data := map[string]string{
		"cassandra.yaml":              string(yaml),
		"cassandra-rackdc.properties": string(RackDC(t)),
		"jvm-server.options":          string(JVMOptions(jvm(ds, emulate), c.Step.Encryption)),
	}
	if bound != nil {
		data[VPNAddressesFile] = string(bound.Addresses())
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(ds, n.ConfigMap(podtemplate.ConfigHash(data)[:configHashLen])),
		Data:       data,
		Immutable:  ptr.To(true),
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
		NetworkPolicy:   networkPolicy(ds, c.OperatorNamespace, c.Tunnel),
	}, nil
}

func meta(ds *v1alpha1.SecuredDatastore, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: Labels(ds)}
}

// jvm is what the node's JVM options take from the datastore's spec.
func jvm(ds *v1alpha1.SecuredDatastore, emulate bool) JVM {
	t := topologyOf(ds)
	j := JVM{
		HeapMiB: HeapMiB(t), EmulateNoAcceleration: emulate, Alone: Nodes(ds) == 1,
		NoSizeEstimates: t.SizeEstimates == v1alpha1.SizeEstimatesDisabled,
	}
	if t.JIT != nil {
		j.CompileThresholdScaling = t.JIT.CompileThresholdScaling
	}
	return j
}
