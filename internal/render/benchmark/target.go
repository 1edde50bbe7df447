// Package benchmark builds the Jobs of a DatastoreBenchmark: the k6 YCSB client (the product's
// k6 binary and bench/k6/ycsb.js in the k6 image) configured for the target, one Job for the
// load phase and one per measured run. Spec in, objects out.
package benchmark

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
)

// Target is what the client connects to, resolved from a SecuredDatastore or spec.external.
type Target struct {
	// Datastore names the SecuredDatastore measured; empty for an external target.
	Datastore string
	// Hosts are host:port contact points.
	Hosts []string
	// Profile labels the results (the datastore's profile; "external" otherwise).
	Profile string
	// TLS pins the session; nil is plaintext.
	TLS *TLS
	// ReplicationFactor of the YCSB keyspace the load phase creates.
	ReplicationFactor int32
	// HBase: the target is HBase, measured by the JVM driver; nil for Cassandra.
	HBase *HBaseTarget
	// Tunnel the clients join, when the datastore's VPN carries client traffic; nil otherwise.
	Tunnel *vpn.Plan
	// LoginSecret holds the CQL login (username, password) of a datastore with password
	// authentication: its benchmark clients' role, which may use the ycsb keyspace only.
	LoginSecret string
	// ClientSide: the clients encrypt and sign fields with the keys in ClientKeysSecret, as the
	// datastore's applications would; nil stores values as they are.
	ClientSide       *v1alpha1.ClientSideEncryption
	ClientKeysSecret string
	// StorageClass of the datastore's volumes ("" is the cluster's default) and, when its
	// profile encrypts them, VolumeKeySecret with their key: a storage workload's scratch
	// volume is made the same way, on the kind of node Placement admits.
	StorageClass, VolumeKeySecret string
	Placement                     *v1alpha1.PlacementSpec
}

// ServerPods selects the datastore's pods, whose CPU a run accounts for; nil for an external
// target.
func (t Target) ServerPods() map[string]string {
	if t.Datastore == "" {
		return nil
	}
	engine := "cassandra"
	if t.HBase != nil {
		engine = "hbase"
	}
	return map[string]string{"app.kubernetes.io/instance": t.Datastore, "app.kubernetes.io/name": engine}
}

// TLS is the pinned session and where its trust comes from.
type TLS struct {
	Protocol, CipherSuite, ServerName string
	// CA: a ConfigMap or Secret key with the PEM bundle.
	CA KeySource
	// ClientCertSecret holds the certificate (tls.crt, tls.key) the clients present, where
	// the datastore's client channel demands one; its identity is the clients' role.
	ClientCertSecret string
}

// KeySource is one key of a ConfigMap or a Secret.
type KeySource struct {
	ConfigMap, Secret, Key string
}

func (k KeySource) String() string {
	if k.Secret != "" {
		return fmt.Sprintf("key %s of Secret %s", k.Key, k.Secret)
	}
	return fmt.Sprintf("key %s of ConfigMap %s", k.Key, k.ConfigMap)
}

// volume mounts the key alone, as the file path; a Secret's file is readable by the pod's
// group only.
func (k KeySource) volume(name, path string) corev1.Volume {
	items := []corev1.KeyToPath{{Key: k.Key, Path: path}}
	if k.Secret != "" {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: k.Secret, Items: items, DefaultMode: ptr.To[int32](0o440)}}}
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: k.ConfigMap}, Items: items}}}
}

// DatastoreTarget measures a managed datastore as an application in the cluster would reach
// it: through its client Service, verifying the certificate against the datastore's trust
// bundle, pinned to the highest protocol of its client channel and the first suite the
// profile lists for it.
func DatastoreTarget(ds *v1alpha1.SecuredDatastore, clusterDomain string) (Target, error) {
	enc := ds.Status.Encryption
	if enc == nil || enc.Effective == nil {
		return Target{}, fmt.Errorf("SecuredDatastore %s has not resolved its encryption profile yet", ds.Name)
	}
	var t Target
	var err error
	if ds.Spec.Engine == v1alpha1.EngineHBase {
		t, err = hbaseTarget(ds, clusterDomain, enc)
	} else {
		t, err = cassandraTarget(ds, clusterDomain, enc)
	}
	switch {
	case ds.Spec.Cassandra != nil:
		t.StorageClass = ptr.Deref(ds.Spec.Cassandra.Storage.StorageClassName, "")
	case ds.Spec.HBase != nil:
		t.StorageClass = ptr.Deref(ds.Spec.HBase.Storage.StorageClassName, "")
	}
	if podtemplate.EncryptsVolume(*enc.Effective) {
		t.VolumeKeySecret = datakeys.AtRestSecret(ds)
	}
	t.Placement = ds.Spec.Placement
	return t, err
}

// InPlaintext is the target reached without TLS, as spec.target.datastoreRef.plaintext asks.
// Only a Cassandra client channel that accepts plaintext, beside TLS (Optional) or instead of
// it (Disabled), lets such a client in; a Required channel would refuse every connection, so
// the benchmark refuses first and says why.
func InPlaintext(t Target, ds *v1alpha1.SecuredDatastore) (Target, error) {
	if t.HBase != nil {
		return Target{}, fmt.Errorf("spec.target.datastoreRef.plaintext: SecuredDatastore %s is HBase, whose clients connect as its profile says; remove plaintext", ds.Name)
	}
	if ds.Status.Encryption.Effective.ClientToNode.Mode == v1alpha1.ChannelRequired {
		return Target{}, fmt.Errorf("spec.target.datastoreRef.plaintext: SecuredDatastore %s requires TLS from clients (clientToNode mode Required) and refuses plaintext; set its clientToNode.mode to Optional, or remove plaintext", ds.Name)
	}
	t.TLS = nil
	t.Profile += "/plaintext"
	return t, nil
}

func cassandraTarget(ds *v1alpha1.SecuredDatastore, clusterDomain string, enc *v1alpha1.EncryptionStatus) (Target, error) {
	n := cassandra.NamesOf(ds)
	svc := fmt.Sprintf("%s.%s.svc", n.ClientService(), ds.Namespace)
	t := Target{
		Datastore:         ds.Name,
		Hosts:             []string{net.JoinHostPort(svc, strconv.Itoa(cassandra.NativePort))},
		Profile:           enc.Profile,
		ReplicationFactor: min(cassandra.Nodes(ds), 3),
	}
	if t.Profile == "" {
		t.Profile = "inline"
	}
	if v := enc.Effective.VPN; v != nil && v.Scope != v1alpha1.VPNScopeNodeToNode {
		// Clients reach the nodes at their tunnel addresses, as an application's sidecar would.
		names := make([]string, cassandra.Nodes(ds))
		for i := range names {
			names[i] = n.Pod(i)
		}
		plan, err := vpn.NewPlan(*v, names, names)
		if err != nil {
			return Target{}, fmt.Errorf("SecuredDatastore %s vpn: %w", ds.Name, err)
		}
		t.Tunnel, t.Hosts = &plan, nil
		for _, m := range plan.Nodes() {
			t.Hosts = append(t.Hosts, net.JoinHostPort(m.Address.String(), strconv.Itoa(cassandra.NativePort)))
		}
	}
	if cassandra.PasswordAuthentication(ds, t.Tunnel) {
		t.LoginSecret = n.ClientSecret()
	}
	if cs := enc.Effective.ClientSide; cs != nil {
		t.ClientSide, t.ClientKeysSecret = cs, datakeys.ClientKeysSecret(ds)
	}
	ch := enc.Effective.ClientToNode
	if ch.Mode == v1alpha1.ChannelDisabled {
		return t, nil
	}
	protocol, suite, err := pinFor(ch)
	if err != nil {
		return Target{}, fmt.Errorf("SecuredDatastore %s clientToNode: %w", ds.Name, err)
	}
	t.TLS = &TLS{Protocol: protocol, CipherSuite: suite, ServerName: svc + "." + clusterDomain,
		CA: KeySource{ConfigMap: certs.TrustConfigMap(ds), Key: certs.BundleKey}}
	if cassandra.ClientCertificates(cassandra.Target(*enc.Effective)) {
		t.TLS.ClientCertSecret = n.ClientCertSecret()
	}
	return t, nil
}

// pinFor picks the highest protocol the channel accepts and its first suite for it.
func pinFor(ch v1alpha1.EffectiveChannel) (string, string, error) {
	best := uint16(0)
	for _, p := range ch.Protocols {
		if v, ok := crypto.ProtocolVersion(string(p)); ok && v > best {
			best = v
		}
	}
	for _, name := range ch.CipherSuites {
		if s, ok := crypto.Lookup(name); ok && s.SupportsVersion(best) {
			return crypto.ProtocolName(best), name, nil
		}
	}
	return "", "", fmt.Errorf("no cipher suite of [%s] works with %s", strings.Join(ch.CipherSuites, ", "), crypto.ProtocolName(best))
}

// ExternalTarget measures endpoints the operator does not manage.
func ExternalTarget(e *v1alpha1.ExternalTarget) (Target, error) {
	if e.Engine == v1alpha1.EngineHBase {
		return externalHBase(e), nil
	}
	if e.Engine != v1alpha1.EngineCassandra {
		return Target{}, fmt.Errorf("spec.target.external.engine %s: external benchmarks speak CQL or HBase RPC; use Cassandra or HBase", e.Engine)
	}
	t := Target{Hosts: e.Endpoints, Profile: "external", ReplicationFactor: 1}
	if e.TLS != nil {
		t.TLS = &TLS{Protocol: string(e.TLS.Protocol), CipherSuite: string(e.TLS.CipherSuite), ServerName: e.TLS.ServerName}
		if ref := e.TLS.CASecretRef; ref != nil {
			t.TLS.CA = KeySource{Secret: ref.Name, Key: ref.Key}
		}
		if t.TLS.ServerName == "" {
			host, _, err := net.SplitHostPort(e.Endpoints[0])
			if err != nil {
				host = e.Endpoints[0]
			}
			t.TLS.ServerName = host
		}
	}
	return t, nil
}
