package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Engine is the datastore software.
// +kubebuilder:validation:Enum=Cassandra;HBase
type Engine string

const (
	EngineCassandra Engine = "Cassandra"
	EngineHBase     Engine = "HBase"
)

// StorageSpec is the persistent volume of each node.
type StorageSpec struct {
	// size of each node's volume. Defaults to 10Gi.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// storageClassName of the volume claims; empty uses the cluster default. An encrypted
	// volume (encryption.atRest.volume) needs a class whose volumes' filesystem can encrypt.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$`
	StorageClassName *string `json:"storageClassName,omitempty"`
	// whenDeleted: what becomes of the volume claims (every role's, for HBase) when the
	// datastore is deleted. Retain (the default) keeps them, so the data outlives a mistaken
	// delete, and a datastore created again under the same name finds it; Delete removes them
	// with the datastore. A TradeoffStudy's cells use Delete: their data is the benchmark's.
	// +optional
	// +kubebuilder:default=Retain
	WhenDeleted VolumeRetention `json:"whenDeleted,omitempty"`
}

// VolumeRetention says whether a datastore's volume claims outlive it.
// +kubebuilder:validation:Enum=Retain;Delete
type VolumeRetention string

const (
	VolumeRetain VolumeRetention = "Retain"
	VolumeDelete VolumeRetention = "Delete"
)

// CassandraTopology is the shape of a Cassandra cluster: one datacenter of identical nodes.
// +kubebuilder:validation:XValidation:rule="!has(self.heap) || !has(self.resources) || !has(self.resources.limits) || !('memory' in self.resources.limits) || quantity(string(self.heap)).isLessThan(quantity(string(self.resources.limits['memory'])))",message="spec.cassandra.heap must be less than spec.cassandra.resources.limits.memory: the JVM needs memory beyond its heap and the kernel kills a container at its limit; leave heap unset (half the limit) or lower it"
type CassandraTopology struct {
	// datacenter name. Defaults to dc1.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,47}$`
	Datacenter string `json:"datacenter,omitempty"`

	// nodes in the datacenter, one pod each. Defaults to 3. Can grow; shrinking is refused
	// because a node must be decommissioned (its token ranges streamed away) before its pod
	// goes, which this operator version does not do yet.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Nodes *int32 `json:"nodes,omitempty"`

	// heap size of each node's JVM (-Xms/-Xmx), e.g. 1Gi. Defaults to half the memory limit,
	// at most 8Gi.
	// +optional
	Heap *resource.Quantity `json:"heap,omitempty"`

	// resources of each Cassandra container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// storage of each node.
	// +optional
	Storage StorageSpec `json:"storage,omitempty"`

	// authentication of CQL clients. Password (the default): Cassandra's PasswordAuthenticator
	// and CassandraAuthorizer; the operator replaces the well-known default superuser with a
	// generated one (Secret <name>-superuser) and creates a role for benchmark clients that may
	// use the ycsb keyspace only (Secret <name>-client). None lets any client that reaches the
	// CQL port in without a login, and must be asked for.
	// +optional
	// +kubebuilder:default=Password
	Authentication CassandraAuthentication `json:"authentication,omitempty"`

	// sizeEstimates: Recorded (the default) has each node compute every table's partition
	// count and size every 5 minutes, the first time 30s after it starts, into
	// system.size_estimates, which Spark and Hadoop connectors read to split their work.
	// Disabled skips that task, for a datastore that only a benchmark reads: its first run,
	// five and a half minutes into the node's life, ran code the node had not run before, which
	// the JIT then compiled (266 compilations in the next 10 s), and the study's run at that
	// moment cost 15 to 31% more server CPU per operation than its round's others (make demo,
	// 2026-12-01).
	// +optional
	// +kubebuilder:validation:Enum=Recorded;Disabled
	SizeEstimates SizeEstimates `json:"sizeEstimates,omitempty"`

	// jit tunes each node's just-in-time compiler. Unset, the JVM's defaults: right for a
	// datastore that serves for days, which reaches its fastest code at its own pace.
	// +optional
	JIT *JITSettings `json:"jit,omitempty"`
}

// SizeEstimates says whether a Cassandra node records its tables' size estimates.
type SizeEstimates string

const (
	SizeEstimatesRecorded SizeEstimates = "Recorded"
	SizeEstimatesDisabled SizeEstimates = "Disabled"
)

// JITSettings tune the HotSpot JIT compiler of a node's JVM, for measurements that must see
// the datastore's steady state soon after it starts.
type JITSettings struct {
	// compileThresholdScaling multiplies the invocation and loop counts after which HotSpot
	// compiles a method, first with C1, then with its optimizing C2 compiler
	// (-XX:CompileThresholdScaling): a decimal from 0.01 to 1 with at most two decimals,
	// e.g. "0.1". Below 1 the hot code reaches its optimized form after proportionally fewer
	// operations. A study's benchmarks need that: at 800 operations per second a fresh node's
	// C2 compiler was still compiling in the measured runs ten minutes after the node started,
	// and a run it compiled in cost up to 30% more server CPU per operation than its
	// neighbours (make demo, 2026-12-01). The same compilers run, sooner, on profiles
	// gathered over fewer calls.
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0[.](0[1-9]|[1-9][0-9]?)|1([.]0)?)$')",message="spec.cassandra.jit.compileThresholdScaling must be a decimal from 0.01 to 1 with at most two decimals, such as 0.1: HotSpot multiplies its compile thresholds by it"
	CompileThresholdScaling string `json:"compileThresholdScaling"`
}

// CassandraAuthentication says how Cassandra authenticates CQL clients.
// +kubebuilder:validation:Enum=Password;None
type CassandraAuthentication string

const (
	CassandraAuthenticationPassword CassandraAuthentication = "Password"
	CassandraAuthenticationNone     CassandraAuthentication = "None"
)

// ZooKeeperSpec is the ZooKeeper ensemble HBase coordinates through.
type ZooKeeperSpec struct {
	// replicas of the ensemble: 1 (no fault tolerance) or 3. Defaults to 1.
	// +optional
	// +kubebuilder:validation:Enum=1;3
	Replicas *int32 `json:"replicas,omitempty"`
}

// HBaseTopology is the shape of an HBase cluster on HDFS.
type HBaseTopology struct {
	// regionServers: HBase RegionServer pods. Defaults to 3.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	RegionServers *int32 `json:"regionServers,omitempty"`

	// masters: HBase Master pods. One is active; the others are backup masters, which wait in
	// ZooKeeper and take over within seconds when the active one fails (the RegionServers go on
	// serving reads and writes meanwhile). Defaults to 1; 2 survives the loss of a Master.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3
	Masters *int32 `json:"masters,omitempty"`

	// dataNodes: HDFS DataNode pods. Defaults to regionServers.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	DataNodes *int32 `json:"dataNodes,omitempty"`

	// zookeeper ensemble managed for this datastore.
	// +optional
	ZooKeeper ZooKeeperSpec `json:"zookeeper,omitempty"`

	// resources of each RegionServer container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// storage of each DataNode.
	// +optional
	Storage StorageSpec `json:"storage,omitempty"`
}

// DatastoreEncryption selects the datastore's wire encryption: a reusable EncryptionProfile,
// inline settings, or a profile with inline overrides. Inline fields override the profile field
// by field (e.g. set only clientToNode.tls.cipherSuites to pin one suite of a TLS 1.3 profile).
// +kubebuilder:validation:XValidation:rule="has(self.profileRef) || has(self.clientToNode) || has(self.nodeToNode) || has(self.hbase) || has(self.vpn)",message="set profileRef to an EncryptionProfile (kubectl get encryptionprofiles) or describe clientToNode/nodeToNode inline; plaintext must be asked for explicitly with mode: Disabled"
type DatastoreEncryption struct {
	// profileRef names a cluster-scoped EncryptionProfile to start from.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ProfileRef string `json:"profileRef,omitempty"`

	EncryptionSettings `json:",inline"`
}

// IssuerReference names a cert-manager Issuer or ClusterIssuer.
type IssuerReference struct {
	// name of the issuer.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// kind: Issuer (in the datastore's namespace) or ClusterIssuer. Defaults to Issuer.
	// +optional
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	Kind string `json:"kind,omitempty"`
	// group of the issuer. Defaults to cert-manager.io.
	// +optional
	Group string `json:"group,omitempty"`
}

// PrivateKeySpec is the key of node certificates.
// +kubebuilder:validation:XValidation:rule="!has(self.size) || !has(self.algorithm) || (self.algorithm == 'RSA' && self.size in [2048, 3072, 4096, 8192]) || (self.algorithm == 'ECDSA' && self.size in [256, 384, 521]) || (self.algorithm == 'Ed25519' && self.size == 0)",message="size must match algorithm: RSA 2048, 3072, 4096 or 8192; ECDSA 256, 384 or 521; Ed25519 takes no size",fieldPath=".size"
type PrivateKeySpec struct {
	// algorithm: RSA, ECDSA or Ed25519. Defaults to ECDSA. Suites with _RSA_ authentication need
	// an RSA key and _ECDSA_ suites an ECDSA key; TLS 1.3 suites work with any.
	// +optional
	// +kubebuilder:validation:Enum=RSA;ECDSA;Ed25519
	Algorithm string `json:"algorithm,omitempty"`
	// size in bits. Defaults to 256 for ECDSA and 2048 for RSA.
	// +optional
	Size int32 `json:"size,omitempty"`
}

// CertificatesSpec says where node certificates come from.
type CertificatesSpec struct {
	// issuerRef of the cert-manager issuer that signs node certificates. When empty the operator
	// bootstraps a CA for this datastore (SelfSigned issuer → CA certificate → CA Issuer).
	// +optional
	IssuerRef *IssuerReference `json:"issuerRef,omitempty"`

	// privateKey of node certificates.
	// +optional
	PrivateKey PrivateKeySpec `json:"privateKey,omitempty"`

	// duration of node certificates. Defaults to 2160h (90 days).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1h')",message="duration must be at least 1h, written like 2160h"
	Duration *metav1.Duration `json:"duration,omitempty"`

	// renewBefore: how long before expiry cert-manager renews. Defaults to a third of duration.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="spec.certificates.renewBefore must be a duration written like 720h"
	RenewBefore *metav1.Duration `json:"renewBefore,omitempty"`
}

// CryptoAcceleration says how placement treats CPU crypto features.
// +kubebuilder:validation:Enum=Required;Preferred;Forbidden;Any
type CryptoAcceleration string

const (
	// AccelerationRequired: schedule only on nodes with every listed feature.
	AccelerationRequired CryptoAcceleration = "Required"
	// AccelerationPreferred: prefer such nodes, fall back to others.
	AccelerationPreferred CryptoAcceleration = "Preferred"
	// AccelerationForbidden: schedule only on nodes without the features (for experiments).
	AccelerationForbidden CryptoAcceleration = "Forbidden"
	// AccelerationAny: ignore CPU features.
	AccelerationAny CryptoAcceleration = "Any"
)

// CPUFeature is a CPU crypto feature, named as Node Feature Discovery names it in the label
// feature.node.kubernetes.io/cpu-cpuid.<FEATURE>: AESNI (AES instructions), VAES (vector AES),
// CLMUL (PCLMULQDQ, carry-less multiply for GCM), VPCLMULQDQ, GFNI, SHA, AVX2, AVX512F.
// +kubebuilder:validation:Enum=AESNI;VAES;CLMUL;VPCLMULQDQ;GFNI;SHA;AVX2;AVX512F
type CPUFeature string

// PlacementSpec places datastore pods on nodes by their CPU crypto features.
type PlacementSpec struct {
	// cryptoAcceleration: Required, Preferred, Forbidden or Any (default) nodes with features.
	// +optional
	CryptoAcceleration CryptoAcceleration `json:"cryptoAcceleration,omitempty"`

	// features the placement rule is about. Defaults to [AESNI].
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	Features []CPUFeature `json:"features,omitempty"`

	// emulateNoAcceleration switches hardware AES off in software (OPENSSL_ia32cap for the native
	// TLS engine, -XX:-UseAES -XX:-UseAESIntrinsics for the JDK engine), to measure a profile as
	// it would run on CPUs without AES-NI. For experiments; never for production.
	// +optional
	EmulateNoAcceleration bool `json:"emulateNoAcceleration,omitempty"`

	// nodeSelector added to the datastore pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations added to the datastore pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// VerificationSpec tunes the wire prober.
type VerificationSpec struct {
	// interval between wire probes of every endpoint. A probe also runs after each change and
	// when a pod restarts, every 30s while an endpoint still serves a certificate other than
	// the one issued last (a renewal the nodes have not reloaded yet), and 30s after a failed
	// verdict until a second probe has seen it again. Defaults to 5m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('30s')",message="interval must be at least 30s, written like 5m"
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// SecuredDatastoreSpec describes a datastore cluster and its wire encryption.
// +kubebuilder:validation:XValidation:rule="self.engine == 'Cassandra' || !has(self.cassandra)",message="spec.cassandra is only for engine Cassandra: remove it or set engine: Cassandra",fieldPath=".cassandra"
// +kubebuilder:validation:XValidation:rule="self.engine == 'HBase' || !has(self.hbase)",message="spec.hbase is only for engine HBase: remove it or set engine: HBase",fieldPath=".hbase"
// +kubebuilder:validation:XValidation:rule="self.engine == 'HBase' || !has(self.encryption.hbase)",message="encryption.hbase (Kerberos, SASL, HDFS encryption) is only for engine HBase: remove it or set engine: HBase",fieldPath=".encryption.hbase"
// +kubebuilder:validation:XValidation:rule="(has(self.cassandra) && has(self.cassandra.nodes) ? self.cassandra.nodes : 3) >= (has(oldSelf.cassandra) && has(oldSelf.cassandra.nodes) ? oldSelf.cassandra.nodes : 3)",message="removing Cassandra nodes needs a decommission, which this operator version does not do: keep nodes at its current value or create a new datastore",fieldPath=".cassandra.nodes"
// +kubebuilder:validation:XValidation:rule="self.engine == 'Cassandra' || !has(self.encryption.nodeToNode) || !has(self.encryption.nodeToNode.scope)",message="encryption.nodeToNode.scope is Cassandra's internode_encryption and is not supported for engine HBase: remove it",fieldPath=".encryption.nodeToNode.scope"
type SecuredDatastoreSpec struct {
	// engine: Cassandra or HBase. Immutable: create a new datastore to change engines.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="engine is immutable: create a new SecuredDatastore to change engines"
	Engine Engine `json:"engine"`

	// version of the engine, e.g. 5.0.6 for Cassandra or 2.6.4 for HBase. Defaults to the
	// version this operator release is tested with.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+(\.[0-9]+)?(-[a-zA-Z0-9.]+)?$`
	Version string `json:"version,omitempty"`

	// image overrides the engine's container image. It must have the upstream image's layout
	// (for Cassandra: /etc/cassandra, /var/lib/cassandra).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$')",message="spec.image must be an image reference such as registry.example/cassandra:5.0.6 or name@sha256:<64 hex digits>: lower-case repository, optional tag and digest"
	Image string `json:"image,omitempty"`

	// cassandra topology, for engine Cassandra.
	// +optional
	Cassandra *CassandraTopology `json:"cassandra,omitempty"`

	// hbase topology, for engine HBase.
	// +optional
	HBase *HBaseTopology `json:"hbase,omitempty"`

	// encryption of data in transit: an EncryptionProfile reference and/or inline settings.
	Encryption DatastoreEncryption `json:"encryption"`

	// certificates for TLS: issuer and key. Used when any channel uses TLS.
	// +optional
	Certificates *CertificatesSpec `json:"certificates,omitempty"`

	// placement on nodes by CPU crypto features.
	// +optional
	Placement *PlacementSpec `json:"placement,omitempty"`

	// verification: how often the wire prober checks what the endpoints really accept.
	// +optional
	Verification *VerificationSpec `json:"verification,omitempty"`

	// access: who may open a connection to the client ports (Cassandra's CQL; HBase's Master
	// and RegionServer RPC and KDC ports: HBase clients bootstrap over RPC, never through
	// ZooKeeper). Every other port answers only the datastore's own pods and the operator's
	// wire prober.
	// +optional
	Access *AccessSpec `json:"access,omitempty"`
}

// AccessSpec names the clients the datastore's NetworkPolicy admits to its client ports.
type AccessSpec struct {
	// clients admitted, as NetworkPolicy peers (pod and namespace selectors, IP blocks).
	// Without it, pods of the datastore's own namespace are (which is where benchmarks and
	// studies run their clients); with it, exactly these peers, plus the benchmark clients the
	// operator runs in the datastore's namespace. Enforced where the cluster's network plugin
	// enforces NetworkPolicies.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Clients []networkingv1.NetworkPolicyPeer `json:"clients,omitempty"`
}

// DatastorePhase is a one-word summary of a datastore's state; conditions carry the detail.
// +kubebuilder:validation:Enum=Pending;Provisioning;Ready;Updating;Degraded;Failed;Deleting
type DatastorePhase string

const (
	PhasePending      DatastorePhase = "Pending"
	PhaseProvisioning DatastorePhase = "Provisioning"
	PhaseReady        DatastorePhase = "Ready"
	PhaseUpdating     DatastorePhase = "Updating"
	PhaseDegraded     DatastorePhase = "Degraded"
	PhaseFailed       DatastorePhase = "Failed"
	PhaseDeleting     DatastorePhase = "Deleting"
)

// EffectiveChannel is what the operator configures on one channel after resolving the profile
// reference, inline overrides and defaults.
type EffectiveChannel struct {
	// mode of the channel.
	Mode ChannelMode `json:"mode"`
	// protocols accepted.
	// +optional
	Protocols []TLSProtocol `json:"protocols,omitempty"`
	// cipherSuites accepted, IANA names.
	// +optional
	CipherSuites []string `json:"cipherSuites,omitempty"`
	// clientAuth demanded.
	// +optional
	ClientAuth ClientAuth `json:"clientAuth,omitempty"`
	// engine chosen (never Auto here).
	// +optional
	Engine TLSEngine `json:"engine,omitempty"`
	// engineReason says why Auto chose this engine.
	// +optional
	EngineReason string `json:"engineReason,omitempty"`
	// scope of internode encryption (Cassandra nodeToNode).
	// +optional
	Scope InternodeScope `json:"scope,omitempty"`
}

// EffectiveEncryption is the resolved encryption profile of a datastore.
type EffectiveEncryption struct {
	// clientToNode channel.
	ClientToNode EffectiveChannel `json:"clientToNode"`
	// nodeToNode channel.
	NodeToNode EffectiveChannel `json:"nodeToNode"`
	// hbase security, for engine HBase.
	// +optional
	HBase *HBaseSecurity `json:"hbase,omitempty"`
	// vpn tunnel.
	// +optional
	VPN *VPNSettings `json:"vpn,omitempty"`
	// atRest encryption of the datastore's files.
	// +optional
	AtRest *AtRestEncryption `json:"atRest,omitempty"`
	// clientSide protection applied by applications and benchmark clients.
	// +optional
	ClientSide *ClientSideEncryption `json:"clientSide,omitempty"`
	// compliance presets declared by the profile or datastore.
	// +optional
	Compliance []CompliancePreset `json:"compliance,omitempty"`
}

// ObservedCertificate is the leaf certificate an endpoint presented.
type ObservedCertificate struct {
	// subject distinguished name.
	Subject string `json:"subject,omitempty"`
	// issuer distinguished name.
	Issuer string `json:"issuer,omitempty"`
	// dnsNames in the subject alternative names.
	// +optional
	DNSNames []string `json:"dnsNames,omitempty"`
	// notAfter: expiry.
	NotAfter metav1.Time `json:"notAfter,omitempty"`
	// serial number, in decimal: it changes with every issuance, so a renewal shows here once
	// the node serves the new certificate, not when cert-manager writes the Secret.
	// +optional
	Serial string `json:"serial,omitempty"`
	// trusted: the certificate chains to the datastore's trust bundle, is valid now and names
	// the pod's stable DNS name. Absent when the trust bundle was not known to the probe.
	// +optional
	Trusted *bool `json:"trusted,omitempty"`
	// problem: why the certificate is not trusted, in the words of the X.509 verification.
	// +optional
	Problem string `json:"problem,omitempty"`
}

// ObservedChannel is what the wire prober saw on one endpoint of a channel.
type ObservedChannel struct {
	// channel probed: ClientToNode or NodeToNode.
	Channel string `json:"channel"`
	// endpoint probed, host:port.
	Endpoint string `json:"endpoint"`
	// protocols the endpoint accepted.
	// +optional
	Protocols []string `json:"protocols,omitempty"`
	// cipherSuites the endpoint accepted (one ClientHello per suite).
	// +optional
	CipherSuites []string `json:"cipherSuites,omitempty"`
	// plaintextAccepted: whether a plaintext protocol handshake succeeded.
	// +optional
	PlaintextAccepted *bool `json:"plaintextAccepted,omitempty"`
	// clientAuthRequired: whether the handshake failed without a client certificate.
	// +optional
	ClientAuthRequired *bool `json:"clientAuthRequired,omitempty"`
	// certificate presented.
	// +optional
	Certificate *ObservedCertificate `json:"certificate,omitempty"`
	// lastProbeTime of this observation.
	LastProbeTime metav1.Time `json:"lastProbeTime"`
	// error of the probe, when the endpoint could not be probed.
	// +optional
	Error string `json:"error,omitempty"`
}

// EncryptionStatus is the datastore's encryption as configured and as observed on the wire.
type EncryptionStatus struct {
	// profile: the EncryptionProfile the datastore starts from, "+overrides" when inline
	// settings change it, or "inline".
	// +optional
	Profile string `json:"profile,omitempty"`
	// effective profile after resolution and defaults.
	// +optional
	Effective *EffectiveEncryption `json:"effective,omitempty"`
	// assessment: security rank and satisfied compliance presets of the effective profile.
	// +optional
	Assessment *SecurityAssessment `json:"assessment,omitempty"`
	// observed: what the wire prober saw, per endpoint.
	// +optional
	// +listType=atomic
	Observed []ObservedChannel `json:"observed,omitempty"`
}

// Endpoint is an address clients or operators use.
type Endpoint struct {
	// name: client (CQL / HBase client RPC) or internode.
	Name string `json:"name"`
	// address: a Service DNS name.
	Address string `json:"address"`
	// port number.
	Port int32 `json:"port"`
}

// CertificateStatus is the node certificate the datastore's pods mount.
type CertificateStatus struct {
	// secretName of the Secret with the node certificate: tls.crt, tls.key (PKCS#8), ca.crt and
	// tls-combined.pem.
	SecretName string `json:"secretName"`
	// notAfter: expiry of the current certificate.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
	// renewalTime: when cert-manager renews it. Nodes reload a renewed certificate without a
	// restart.
	// +optional
	RenewalTime *metav1.Time `json:"renewalTime,omitempty"`
	// revision of the certificate: one more with every issuance.
	// +optional
	Revision *int `json:"revision,omitempty"`
}

// SecuredDatastoreStatus is the observed state of a SecuredDatastore.
type SecuredDatastoreStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase: Pending, Provisioning, Ready, Updating, Degraded, Failed or Deleting.
	// +optional
	Phase DatastorePhase `json:"phase,omitempty"`

	// nodes the datastore should have (Cassandra nodes or HBase RegionServers).
	// +optional
	Nodes int32 `json:"nodes,omitempty"`

	// readyNodes that are up and serving.
	// +optional
	ReadyNodes int32 `json:"readyNodes,omitempty"`

	// endpoints of the datastore.
	// +optional
	// +listType=map
	// +listMapKey=name
	Endpoints []Endpoint `json:"endpoints,omitempty"`

	// encryption as configured and as observed on the wire.
	// +optional
	Encryption *EncryptionStatus `json:"encryption,omitempty"`

	// certificates: the node certificate in use, when a channel uses TLS.
	// +optional
	Certificates *CertificateStatus `json:"certificates,omitempty"`

	// identities: the client-certificate identities (SPIFFE IDs, the URI names of the
	// certificates in Secrets <name>-superuser-tls and <name>-client-tls) that the operator
	// mapped to CQL roles. Once both are in, Cassandra nodes whose client channel demands
	// certificates (clientToNode.tls.clientAuth: Required) authenticate clients by their
	// certificate (MutualTlsAuthenticator) instead of by password, which takes one rolling
	// restart.
	// +optional
	// +listType=map
	// +listMapKey=identity
	Identities []CertificateIdentity `json:"identities,omitempty"`

	// conditions: Ready, ProfileResolved, CertificatesReady, KerberosReady, PlacementSatisfied,
	// EncryptionVerified, Progressing.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CertificateIdentity is a client certificate's identity and the CQL role it logs in as.
type CertificateIdentity struct {
	// identity: the SPIFFE ID in the certificate's URI name.
	Identity string `json:"identity"`
	// role it logs in as.
	Role string `json:"role"`
}

// SecuredDatastore is a Cassandra or HBase cluster with a declared, verified wire-encryption
// profile. The operator deploys it with cert-manager certificates (and Kerberos keytabs for
// HBase) on nodes with the CPU crypto features the profile needs, changes its encryption without
// downtime, and probes the wire to report what is really accepted (EncryptionVerified).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sds;sdstore;securedatastore,categories=secured
// +kubebuilder:printcolumn:name="Engine",type=string,JSONPath=`.spec.engine`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyNodes`,priority=1
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.status.encryption.profile`
// +kubebuilder:printcolumn:name="Rank",type=integer,JSONPath=`.status.encryption.assessment.rank`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Verified",type=string,JSONPath=`.status.conditions[?(@.type=="EncryptionVerified")].status`
// +kubebuilder:printcolumn:name="Logins",type=string,JSONPath=`.status.conditions[?(@.type=="LoginsReady")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must start with a letter and hold only lower-case letters, digits and '-': the datastore's Services are named after it (RFC 1035 labels)"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= (self.spec.engine == 'HBase' ? 45 : 52)",message="metadata.name is too long: at most 52 characters for Cassandra and 45 for HBase, so that every object, pod and label derived from it (such as <name>-master-<revision>) is valid; choose a shorter name"
type SecuredDatastore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec: the desired datastore.
	Spec SecuredDatastoreSpec `json:"spec"`
	// status: the observed datastore.
	// +optional
	Status SecuredDatastoreStatus `json:"status,omitempty"`
}

// SecuredDatastoreList is a list of SecuredDatastores.
// +kubebuilder:object:root=true
type SecuredDatastoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SecuredDatastore `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SecuredDatastore{}, &SecuredDatastoreList{})
}

// RotateKeytabsAnnotation on a SecuredDatastore asks for new Kerberos keys: give it a value it
// has not had (a date, say) and the operator rotates every principal's keys once for it,
// without a moment in which a ticket cannot be read (README, "Rotating Kerberos keys").
const RotateKeytabsAnnotation = "datastore.secured.dev/rotate-keytabs"
