package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadPreset is one of YCSB's core workloads.
// +kubebuilder:validation:Enum=A;B;C;D;E;F
type WorkloadPreset string

// RequestDistribution is how YCSB picks keys.
// +kubebuilder:validation:Enum=uniform;zipfian;latest;hotspot
type RequestDistribution string

// OperationProportions are the shares of each operation, in percent; they must add up to 100.
// +kubebuilder:validation:XValidation:rule="self.read + self.update + self.insert + self.scan + self.readModifyWrite == 100",message="read + update + insert + scan + readModifyWrite must add up to 100 (percent)"
type OperationProportions struct {
	// read: percent of operations that read one record (YCSB readproportion).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Read int32 `json:"read"`
	// update: percent that overwrite one field of a record (updateproportion).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Update int32 `json:"update"`
	// insert: percent that insert a new record (insertproportion).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Insert int32 `json:"insert"`
	// scan: percent that read a short range of records (scanproportion).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Scan int32 `json:"scan"`
	// readModifyWrite: percent that read a record and write it back (readmodifywriteproportion).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	ReadModifyWrite int32 `json:"readModifyWrite"`
}

// StoragePattern is one of seed 002's SQLIO runs: which way the volume is read or written.
// +kubebuilder:validation:Enum=SequentialRead;SequentialWrite;RandomRead;RandomWrite
type StoragePattern string

const (
	StorageSequentialRead  StoragePattern = "SequentialRead"
	StorageSequentialWrite StoragePattern = "SequentialWrite"
	StorageRandomRead      StoragePattern = "RandomRead"
	StorageRandomWrite     StoragePattern = "RandomWrite"
)

// StorageWorkload measures the datastore's storage instead of the datastore: fio reads or
// writes one file on a scratch volume of the datastore's StorageClass, encrypted exactly as
// its data volumes are (encryption.atRest.volume) or not at all, one request at a time through
// the page cache as a datastore does. Reads begin with the file's cache dropped; writes end
// with an fsync, which the run's time includes. Sequential patterns go over the whole file
// once, random ones run for workload.duration (60s by default) or until they covered the file.
// The client's memory limit keeps the page cache small beside the file. A study of a plaintext
// and a volume-encrypted profile then shows what the encryption costs the disk, as seed 002's
// SQLIO runs did.
type StorageWorkload struct {
	// pattern of the I/O: SequentialRead, SequentialWrite, RandomRead or RandomWrite.
	Pattern StoragePattern `json:"pattern"`
	// blockSizeKiB of each I/O. Defaults to 64 for sequential patterns and 8 for random ones,
	// seed 002's sizes.
	// +optional
	// +kubebuilder:validation:Minimum=4
	// +kubebuilder:validation:Maximum=16384
	BlockSizeKiB *int32 `json:"blockSizeKiB,omitempty"`
	// fileSizeMiB of the file the I/O goes to; the scratch volume is a quarter larger. Defaults
	// to 1024.
	// +optional
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=262144
	FileSizeMiB *int32 `json:"fileSizeMiB,omitempty"`
}

// Workload is a YCSB core workload (a preset, optionally with explicit proportions and sizes),
// or a storage workload that measures the datastore's volumes instead.
// +kubebuilder:validation:XValidation:rule="has(self.preset) || has(self.proportions) || has(self.storage)",message="set preset (A-F), proportions, or storage"
// +kubebuilder:validation:XValidation:rule="!has(self.storage) || !(has(self.preset) || has(self.proportions) || has(self.recordCount) || has(self.fieldCount) || has(self.fieldLength) || has(self.table) || has(self.requestDistribution) || has(self.operationCount))",message="spec.workload.storage measures the volume with fio: leave out the YCSB fields (preset, proportions, recordCount, fieldCount, fieldLength, table, requestDistribution, operationCount); duration applies"
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || !has(self.operationCount)",message="set either duration or operationCount, not both"
type Workload struct {
	// preset: YCSB core workload A (50% read, 50% update), B (95/5), C (read only), D (read
	// latest, 5% insert), E (95% short scans, 5% insert) or F (50% read, 50% read-modify-write).
	// +optional
	Preset WorkloadPreset `json:"preset,omitempty"`

	// proportions override the preset's operation mix.
	// +optional
	Proportions *OperationProportions `json:"proportions,omitempty"`

	// recordCount: records loaded before the run (YCSB recordcount). Defaults to 100000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RecordCount *int64 `json:"recordCount,omitempty"`

	// fieldCount per record (YCSB fieldcount). Defaults to 10.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	FieldCount *int32 `json:"fieldCount,omitempty"`

	// fieldLength in bytes (YCSB fieldlength). Defaults to 100, i.e. 1 KB records.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	FieldLength *int32 `json:"fieldLength,omitempty"`

	// table the records live in (YCSB table), in the benchmark's keyspace or namespace.
	// Defaults to usertable. Benchmarks of different record shapes against one datastore need
	// tables of their own: a load overwrites the records of the same keys.
	// +optional
	// +kubebuilder:validation:MaxLength=48
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9_]*$')",message="spec.workload.table must be a table name: a lower-case letter, then lower-case letters, digits or '_' (at most 48 characters), such as usertable"
	Table string `json:"table,omitempty"`

	// requestDistribution of keys. Defaults to the preset's (zipfian; latest for D).
	// +optional
	RequestDistribution RequestDistribution `json:"requestDistribution,omitempty"`

	// duration of each measured run. Defaults to 60s when operationCount is not set.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1s')",message="spec.workload.duration must be a duration of at least 1s written like 60s, 5m or 1h30m"
	Duration *metav1.Duration `json:"duration,omitempty"`

	// operationCount: stop each run after this many operations instead of after a duration.
	// +optional
	// +kubebuilder:validation:Minimum=1
	OperationCount *int64 `json:"operationCount,omitempty"`

	// storage: measure the datastore's storage with fio instead of the datastore with YCSB
	// (seed 002). Needs target.datastoreRef; there is no load phase, and the datastore's CPU
	// is not accounted (the volume is measured, not the datastore).
	// +optional
	Storage *StorageWorkload `json:"storage,omitempty"`
}

// LoadMode is closed-loop or open-loop load.
// +kubebuilder:validation:Enum=MaxThroughput;FixedRate
type LoadMode string

const (
	// LoadMaxThroughput: closed loop; each virtual user issues its next operation when the last
	// one finished. Measures capacity.
	LoadMaxThroughput LoadMode = "MaxThroughput"
	// LoadFixedRate: open loop at a fixed rate; operations that cannot start on time are counted
	// as dropped and invalidate the run beyond load.maxDroppedPercent. Measures latency, or CPU
	// per operation, at a given load.
	LoadFixedRate LoadMode = "FixedRate"
)

// Load is how hard the benchmark pushes.
// +kubebuilder:validation:XValidation:rule="self.mode != 'FixedRate' || has(self.rate)",message="rate (operations per second) is required for mode FixedRate",fieldPath=".rate"
// +kubebuilder:validation:XValidation:rule="self.mode != 'MaxThroughput' || !has(self.rate)",message="rate applies only to mode FixedRate: remove it or set mode: FixedRate",fieldPath=".rate"
// +kubebuilder:validation:XValidation:rule="self.mode == 'FixedRate' || !has(self.maxDroppedPercent)",message="maxDroppedPercent applies only to mode FixedRate: remove it or set mode: FixedRate",fieldPath=".maxDroppedPercent"
type Load struct {
	// mode: MaxThroughput (closed loop) or FixedRate (open loop). Defaults to MaxThroughput.
	// +kubebuilder:default=MaxThroughput
	Mode LoadMode `json:"mode"`

	// virtualUsers: concurrent client sessions per client pod. Defaults to 32.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	VirtualUsers *int32 `json:"virtualUsers,omitempty"`

	// rate in operations per second over all client pods, for FixedRate.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Rate *int64 `json:"rate,omitempty"`

	// maxDroppedPercent: the share of a FixedRate run's scheduled operations the clients may
	// drop (start more than 10ms late) and the run still count. Defaults to 0: any drop makes
	// the run invalid, right when it measures latency at a load. A run measuring CPU per
	// operation on a shared machine, where the client is sometimes descheduled for longer than
	// 10ms, may allow 1: the figure divides by the operations that ran.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	MaxDroppedPercent *int32 `json:"maxDroppedPercent,omitempty"`

	// clientPods running the load in parallel. Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	ClientPods *int32 `json:"clientPods,omitempty"`
}

// SecuredDatastoreReference names a SecuredDatastore in the benchmark's namespace.
type SecuredDatastoreReference struct {
	// name of the SecuredDatastore.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a SecuredDatastore name: lowercase letters, digits and '-', starting and ending with a letter or digit"
	Name string `json:"name"`
	// plaintext: connect without TLS to a datastore whose client-to-node channel accepts both
	// (mode Optional), to measure the plaintext path on the same nodes as TLS runs. Cassandra
	// only; a datastore whose channel is Required refuses it, and the benchmark says so. Its
	// results are labelled with the datastore's profile and "/plaintext".
	// +optional
	Plaintext bool `json:"plaintext,omitempty"`
}

// SecretKeyReference names a key in a Secret in the same namespace.
type SecretKeyReference struct {
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="must be a Secret name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	Name string `json:"name"`
	// key in the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must be a Secret key: letters, digits, '-', '_' and '.'"
	Key string `json:"key"`
}

// ClientTLS is how the benchmark client speaks TLS to an external endpoint. The client pins
// exactly one protocol and one suite and refuses to run when the server negotiates another.
type ClientTLS struct {
	// protocol the client offers.
	Protocol TLSProtocol `json:"protocol"`
	// cipherSuite the client offers (exactly one).
	CipherSuite CipherSuite `json:"cipherSuite"`
	// caSecretRef: a Secret key holding the PEM CA bundle that signed the server certificate.
	// +optional
	CASecretRef *SecretKeyReference `json:"caSecretRef,omitempty"`
	// serverName for SNI and certificate verification. Defaults to the endpoint host.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?$')",message="must be a DNS name, such as cassandra.example.com: the name the server's certificate carries"
	ServerName string `json:"serverName,omitempty"`
}

// ExternalTarget is a datastore the operator does not manage, e.g. a managed cloud service.
// +kubebuilder:validation:XValidation:rule="self.engine == 'HBase' || !has(self.hbase)",message="spec.target.external.hbase applies to engine HBase only: remove it or set engine: HBase",fieldPath=".hbase"
// +kubebuilder:validation:XValidation:rule="self.engine != 'HBase' || !has(self.tls) || !has(self.tls.serverName)",message="spec.target.external.tls.serverName applies to Cassandra only: an HBase client verifies every server by the host name it connects to; remove serverName",fieldPath=".tls.serverName"
type ExternalTarget struct {
	// engine speaking on the endpoints.
	Engine Engine `json:"engine"`
	// endpoints, host:port. Cassandra: CQL contact points. HBase: the RPC addresses of Masters
	// or RegionServers (hbase.client.bootstrap.servers, HBase 2.5 and later), or with
	// hbase.registry ZooKeeper the ZooKeeper quorum.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=261
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.matches('^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\\\\[[0-9A-Fa-f:.]+\\\\])(:[0-9]{1,5})?$'))",message="spec.target.external.endpoints: write every endpoint as host:port, a DNS name or an IP address (IPv6 in brackets) and a port, such as cassandra-0.example:9042 or [fd00::7]:16000"
	// +listType=set
	Endpoints []string `json:"endpoints"`
	// tls settings; omit for plaintext. An HBase client verifies each server's certificate
	// against caSecretRef (PEM) and the host name it connects to.
	// +optional
	TLS *ClientTLS `json:"tls,omitempty"`
	// hbase: how the client finds an external HBase's servers and logs in to them.
	// +optional
	HBase *ExternalHBase `json:"hbase,omitempty"`
}

// HBaseRegistry is where an HBase client learns the location of the cluster's regions.
// +kubebuilder:validation:Enum=RPC;ZooKeeper
type HBaseRegistry string

const (
	// RegistryRPC: the Masters and RegionServers answer over HBase RPC, with its security.
	RegistryRPC HBaseRegistry = "RPC"
	// RegistryZooKeeper: the client reads ZooKeeper, as clients of HBase before 2.5 must.
	RegistryZooKeeper HBaseRegistry = "ZooKeeper"
)

// ExternalHBase is how the benchmark's YCSB client reaches an HBase the operator does not manage.
// +kubebuilder:validation:XValidation:rule="!has(self.zNodeParent) || (has(self.registry) && self.registry == 'ZooKeeper')",message="spec.target.external.hbase.zNodeParent applies to registry ZooKeeper only: set registry: ZooKeeper or remove zNodeParent",fieldPath=".zNodeParent"
type ExternalHBase struct {
	// registry the client asks where the regions are. RPC (the default): the endpoints are
	// Masters' or RegionServers' RPC ports, reached with the same TLS and Kerberos as every
	// other call. ZooKeeper: the endpoints are the ZooKeeper quorum, read without TLS or a SASL
	// login (the location of hbase:meta is world-readable there), as HBase before 2.5 needs.
	// +optional
	// +kubebuilder:default=RPC
	Registry HBaseRegistry `json:"registry,omitempty"`
	// zNodeParent: HBase's root znode (zookeeper.znode.parent), for registry ZooKeeper.
	// Defaults to /hbase.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^(/[A-Za-z0-9._-]+)+$')",message="spec.target.external.hbase.zNodeParent must be an absolute znode path of letters, digits, '.', '_' and '-', such as /hbase"
	ZNodeParent string `json:"zNodeParent,omitempty"`
	// kerberos login of the client; omit when the cluster uses simple authentication.
	// +optional
	Kerberos *ExternalKerberos `json:"kerberos,omitempty"`
}

// ExternalKerberos is the client's Kerberos login to an external HBase: a principal, its keytab
// and the realm's krb5.conf. The benchmark's pods mount the keytab, so whoever may create
// DatastoreBenchmarks in a namespace can use the keytabs of its Secrets: grant it accordingly.
// +kubebuilder:validation:XValidation:rule="!has(self.aesTransform) || !self.aesTransform || !has(self.rpcProtection) || self.rpcProtection == 'Privacy'",message="spec.target.external.hbase.kerberos.aesTransform replaces SASL's privacy wrap and needs rpcProtection: Privacy",fieldPath=".aesTransform"
type ExternalKerberos struct {
	// principal the client logs in as, such as ycsb@EXAMPLE.COM or ycsb/bench@EXAMPLE.COM.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?@[A-Za-z0-9._-]+$')",message="spec.target.external.hbase.kerberos.principal must be name@REALM or name/instance@REALM of letters, digits, '.', '_' and '-', such as ycsb@EXAMPLE.COM"
	Principal string `json:"principal"`
	// keytabSecretRef: the Secret key holding the principal's keytab.
	KeytabSecretRef SecretKeyReference `json:"keytabSecretRef"`
	// krb5ConfigMapRef: the ConfigMap key holding the krb5.conf that names the realm's KDCs.
	Krb5ConfigMapRef ConfigMapKeyReference `json:"krb5ConfigMapRef"`
	// serverPrincipal of the Masters and RegionServers, _HOST standing for the host name the
	// client connects to (hbase.master.kerberos.principal, hbase.regionserver.kerberos.principal).
	// Defaults to hbase/_HOST@ and the principal's realm.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+@[A-Za-z0-9._-]+$')",message="spec.target.external.hbase.kerberos.serverPrincipal must be service/host@REALM of letters, digits, '.', '_' and '-', with _HOST for each server's host name, such as hbase/_HOST@EXAMPLE.COM"
	ServerPrincipal string `json:"serverPrincipal,omitempty"`
	// rpcProtection the client asks for (hbase.rpc.protection): Authentication, Integrity or
	// Privacy, one the servers accept. Defaults to Privacy.
	// +optional
	// +kubebuilder:default=Privacy
	RPCProtection SASLProtection `json:"rpcProtection,omitempty"`
	// aesTransform: the servers encrypt HBase RPC with the AES key SASL negotiates
	// (hbase.rpc.crypto.encryption.aes.enabled), which client and servers must agree on.
	// Needs rpcProtection Privacy. Defaults to false.
	// +optional
	AESTransform *bool `json:"aesTransform,omitempty"`
}

// ConfigMapKeyReference names a key in a ConfigMap in the same namespace.
type ConfigMapKeyReference struct {
	// name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="must be a ConfigMap name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	Name string `json:"name"`
	// key in the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must be a ConfigMap key: letters, digits, '-', '_' and '.'"
	Key string `json:"key"`
}

// BenchmarkTarget is what the benchmark measures: exactly one of datastoreRef and external.
// +kubebuilder:validation:XValidation:rule="has(self.datastoreRef) != has(self.external)",message="set exactly one of datastoreRef and external"
type BenchmarkTarget struct {
	// datastoreRef: a SecuredDatastore; endpoints, credentials and TLS material are found
	// automatically, and the client pins the datastore's first client-to-node suite.
	// +optional
	DatastoreRef *SecuredDatastoreReference `json:"datastoreRef,omitempty"`
	// external endpoints.
	// +optional
	External *ExternalTarget `json:"external,omitempty"`
}

// PrometheusOutput is where benchmark clients publish their samples.
type PrometheusOutput struct {
	// remoteWriteURL of a Prometheus remote-write receiver: an absolute http or https URL with
	// a host. Defaults to the operator's --prometheus-remote-write-url flag; empty disables
	// publishing.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^\\\\s\\\\x60\"\\'$\\\\\\\\<>{}|^]+$') && isURL(self) && url(self).getHostname() != ''",message="spec.prometheus.remoteWriteURL must be an absolute http:// or https:// URL with a host and no spaces, quotes, $, backquotes or backslashes, such as http://prometheus.monitoring:9090/api/v1/write"
	RemoteWriteURL string `json:"remoteWriteURL,omitempty"`
}

// SteadyWarmUp bounds a warm-up that ends when the throughput is steady.
// +kubebuilder:validation:XValidation:rule="duration(self.minimum) <= duration(self.maximum)",message="steadyWarmUp.minimum must not exceed steadyWarmUp.maximum"
type SteadyWarmUp struct {
	// minimum warm-up, however soon the throughput looks steady. Defaults to 20s.
	// +optional
	// +kubebuilder:default="20s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="steadyWarmUp.minimum must be a duration written like 20s or 1m"
	Minimum metav1.Duration `json:"minimum,omitempty"`
	// maximum warm-up: the run is measured then, steady or not, and says which. Defaults to
	// 2m; at least 10s, the samples steadiness is judged on.
	// +optional
	// +kubebuilder:default="2m"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('10s')",message="steadyWarmUp.maximum must be a duration of at least 10s written like 2m"
	Maximum metav1.Duration `json:"maximum,omitempty"`
}

// DatastoreBenchmarkSpec describes a benchmark.
// +kubebuilder:validation:XValidation:rule="!has(self.verifyWrites) || !self.verifyWrites || !has(self.load.clientPods) || self.load.clientPods == 1",message="spec.verifyWrites checks one client's history: set spec.load.clientPods to 1 (or leave it out)"
// +kubebuilder:validation:XValidation:rule="!has(self.verifyWrites) || !self.verifyWrites || !has(self.workload.fieldLength) || self.workload.fieldLength >= 32",message="spec.verifyWrites seals every value in its last 16 bytes: set spec.workload.fieldLength to at least 32 (or leave it out: 100)"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.storage) || (has(self.target.datastoreRef) && !has(self.steadyWarmUp) && !has(self.warmUp) && !(has(self.verifyWrites) && self.verifyWrites) && (!has(self.load) || ((!has(self.load.mode) || self.load.mode == 'MaxThroughput') && (!has(self.load.clientPods) || self.load.clientPods == 1))))",message="spec.workload.storage runs fio on a scratch volume of a SecuredDatastore's StorageClass: set target.datastoreRef, one client pod at full speed (no load.mode FixedRate), and leave out warmUp, steadyWarmUp and verifyWrites"
// +kubebuilder:validation:XValidation:rule="!has(self.steadyWarmUp) || ((!has(self.load) || !has(self.load.mode) || self.load.mode == 'MaxThroughput') && !has(self.workload.operationCount))",message="spec.steadyWarmUp needs a closed-loop run of a duration: load.mode MaxThroughput and workload.duration, not operationCount; or use spec.warmUp"
type DatastoreBenchmarkSpec struct {
	// target to measure: a SecuredDatastore (endpoints and TLS material found automatically) or
	// external endpoints.
	Target BenchmarkTarget `json:"target"`
	// workload to run: a YCSB core workload (A-F) with optional explicit proportions and sizes.
	Workload Workload `json:"workload"`
	// load to apply: closed loop at full speed (MaxThroughput) or open loop at a fixed rate.
	// +optional
	Load Load `json:"load,omitempty"`
	// repetitions of the measured run. Defaults to 3.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Repetitions *int32 `json:"repetitions,omitempty"`
	// warmUp before each measured run; its samples are discarded. Defaults to 30s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="spec.warmUp must be a duration written like 30s or 2m (0s for none)"
	WarmUp *metav1.Duration `json:"warmUp,omitempty"`
	// steadyWarmUp: before the first measured run, warm up until the throughput is steady
	// (its last 10 seconds flat: coefficient of variation at most 10%, no trend over 5%)
	// instead of for warmUp; the run records how long that took. Later runs use warmUp, enough
	// for the JIT once the datastore is warm. Closed loop (MaxThroughput) runs of a duration
	// only. Both drivers (k6 for Cassandra, YCSB's JVM client for HBase) apply the same rule.
	// +optional
	SteadyWarmUp *SteadyWarmUp `json:"steadyWarmUp,omitempty"`
	// skipLoad: the data is already loaded; run only the measured phase.
	// +optional
	SkipLoad bool `json:"skipLoad,omitempty"`
	// quietStart holds each measured run back until the nodes that host the datastore are
	// quiet: what they spent on anything but this datastore (other datastores and their
	// compactions, other workloads) over the last 30 s at most maxCores; once it waits, only
	// the time since it began waiting counts (at least the last 10 s), so a load that had
	// already ended does not hold it back; never what came before quietStart.after. The nodes
	// are looked at every 2 s. A run that waited maxWait starts anyway, and its status says so.
	// Needs the operator's CPU accounting (--cpu-accounting-prometheus-url); without it, or for
	// an external target, runs start at once. Studies set it on every run from spec.background.
	// +optional
	QuietStart *QuietStart `json:"quietStart,omitempty"`
	// prometheus output.
	// +optional
	Prometheus *PrometheusOutput `json:"prometheus,omitempty"`
	// verifyWrites: the client records every write of each measured run (key, field, its
	// timestamp, a seal of the value) and, once the run ends, reads back every key-field whose
	// latest write the datastore acknowledged (Cassandra at consistency ALL; HBase from the
	// region's server). status.runs[].writes reports what it found, and a run in which anything
	// acknowledged is lost, stale or damaged Fails. One client pod; values are sealed in their
	// last 16 bytes.
	// +optional
	VerifyWrites bool `json:"verifyWrites,omitempty"`
}

// QuietStart is how quiet the datastore's nodes must be before a run starts, and how long a run
// waits for it.
type QuietStart struct {
	// maxCores: the background, in cores, below which a run may start ("250m"). Defaults to 250m.
	// +optional
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.quietStart.maxCores must be a CPU quantity above 0, such as 250m"
	MaxCores *resource.Quantity `json:"maxCores,omitempty"`
	// maxWait: the longest a run waits for quiet nodes before it starts anyway. Defaults to 90s.
	// +optional
	// +kubebuilder:default="90s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$')",message="spec.quietStart.maxWait must be a duration written like 90s or 2m"
	MaxWait metav1.Duration `json:"maxWait,omitempty"`
	// after: the nodes are judged only on what they did after this time, and on at least 6 s
	// of it. A study sets it to the end of its previous run's measured window: that run's load
	// was the study's own, not a neighbour's, while what it left behind (a flush, a
	// compaction) comes after it and still holds the next run back.
	// +optional
	After *metav1.Time `json:"after,omitempty"`
}

// LatencySummary of one operation type, in microseconds.
type LatencySummary struct {
	// operation: read, update, insert, scan or readModifyWrite.
	Operation string `json:"operation"`
	// count of completed operations.
	Count int64 `json:"count"`
	// errors of this operation.
	// +optional
	Errors int64 `json:"errors,omitempty"`
	// p50Micros: median latency.
	P50Micros int64 `json:"p50Micros"`
	// p95Micros: 95th percentile latency.
	P95Micros int64 `json:"p95Micros"`
	// p99Micros: 99th percentile latency.
	P99Micros int64 `json:"p99Micros"`
	// maxMicros: slowest operation.
	MaxMicros int64 `json:"maxMicros"`
}

// RunPhase is the state of one benchmark run: Pending while it waits for quiet nodes
// (spec.quietStart), Running once its Job exists, Accounting once its measured window closed
// and it waits for the kubelets' last samples to reach Prometheus before its CPU is read
// (startTime and completionTime are then the window), then Succeeded, Invalid or Failed.
// +kubebuilder:validation:Enum=Pending;Running;Accounting;Succeeded;Invalid;Failed
type RunPhase string

const (
	RunPending    RunPhase = "Pending"
	RunRunning    RunPhase = "Running"
	RunAccounting RunPhase = "Accounting"
	RunSucceeded  RunPhase = "Succeeded"
	RunInvalid    RunPhase = "Invalid"
	RunFailed     RunPhase = "Failed"
)

// BenchmarkRun is the result of one repetition.
type BenchmarkRun struct {
	// index of the repetition, from 0.
	Index int32 `json:"index"`
	// phase of the run.
	Phase RunPhase `json:"phase"`
	// job running it.
	// +optional
	Job string `json:"job,omitempty"`
	// startTime of the measured phase.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime of the measured phase.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// throughput in operations per second (I/Os per second for a storage workload).
	// +optional
	ThroughputOpsPerSec int64 `json:"throughputOpsPerSec,omitempty"`
	// bytesPerSec read or written, for a storage workload.
	// +optional
	BytesPerSec int64 `json:"bytesPerSec,omitempty"`
	// latencies per operation type.
	// +optional
	// +listType=map
	// +listMapKey=operation
	Latencies []LatencySummary `json:"latencies,omitempty"`
	// errors over all operations.
	// +optional
	Errors int64 `json:"errors,omitempty"`
	// droppedIterations in FixedRate mode.
	// +optional
	DroppedIterations int64 `json:"droppedIterations,omitempty"`
	// negotiatedProtocol seen by the client.
	// +optional
	NegotiatedProtocol string `json:"negotiatedProtocol,omitempty"`
	// negotiatedCipherSuite seen by the client.
	// +optional
	NegotiatedCipherSuite string `json:"negotiatedCipherSuite,omitempty"`
	// clientSide protection the client applied to every write and checked on every read, as it
	// reports it: "AES-GCM + Ed25519 on 5 fields" (the datastore's spec.encryption.clientSide).
	// +optional
	ClientSide string `json:"clientSide,omitempty"`
	// clientCPUMillis: CPU time the client pods consumed, in milliseconds.
	// +optional
	ClientCPUMillis int64 `json:"clientCPUMillis,omitempty"`
	// invalidReason says why a run does not count (client errors, dropped iterations, pod loss).
	// +optional
	InvalidReason string `json:"invalidReason,omitempty"`
	// throughputSeries: operations completed in each step of seriesStepSeconds of the measured
	// window (whole steps; at most 120), so you can see whether the window was steady.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=120
	ThroughputSeries []int64 `json:"throughputSeries,omitempty"`
	// seriesStepSeconds: the width of one throughputSeries step.
	// +optional
	SeriesStepSeconds int32 `json:"seriesStepSeconds,omitempty"`
	// warmUpSeconds: how long the warm-up before this run took, when it ran until steady
	// (spec.steadyWarmUp), a decimal string.
	// +optional
	WarmUpSeconds string `json:"warmUpSeconds,omitempty"`
	// warmUpSteady: whether that warm-up ended steady (false: it reached its maximum).
	// +optional
	WarmUpSteady *bool `json:"warmUpSteady,omitempty"`
	// throughputCV: the series' coefficient of variation (standard deviation over mean), a
	// decimal string: a few hundredths in a steady window; more means warm-up, a compaction or a
	// neighbour moved the throughput.
	// +optional
	ThroughputCV string `json:"throughputCV,omitempty"`
	// cpu spent by the datastore and everything else on its nodes during the measured window,
	// from the kubelets' cgroup counters; set on succeeded runs.
	// +optional
	CPU *RunCPU `json:"cpu,omitempty"`
	// quietStart: how long the run waited for quiet nodes before its clients started, and how
	// quiet they were (spec.quietStart).
	// +optional
	QuietStart *RunQuietStart `json:"quietStart,omitempty"`
	// writes: what reading back the run's acknowledged writes found (spec.verifyWrites).
	// +optional
	Writes *RunWrites `json:"writes,omitempty"`
}

// RunWrites is the history checker's verdict on a run: every key-field whose latest write the
// datastore acknowledged, read back at consistency ALL once the run ended.
type RunWrites struct {
	// acknowledged writes the client recorded (an inserted record counts once per field).
	Acknowledged int64 `json:"acknowledged"`
	// checked key-fields: those with at least one acknowledged write.
	Checked int64 `json:"checked"`
	// verified key-fields held the latest acknowledged value (or a later write's whose
	// acknowledgement the client never received).
	Verified int64 `json:"verified"`
	// lost key-fields held nothing, or a value from before the run.
	// +optional
	Lost int64 `json:"lost,omitempty"`
	// stale key-fields held an older value of the run than the latest acknowledged one.
	// +optional
	Stale int64 `json:"stale,omitempty"`
	// corrupted key-fields held bytes whose seal does not match their key, field and content.
	// +optional
	Corrupted int64 `json:"corrupted,omitempty"`
	// unreadable key-fields could not be read at consistency ALL.
	// +optional
	Unreadable int64 `json:"unreadable,omitempty"`
	// firstProblem names the first key-field not verified and why (keys and times, never values).
	// +optional
	FirstProblem string `json:"firstProblem,omitempty"`
}

// QuietOutcome says how a run's wait for quiet nodes ended.
// +kubebuilder:validation:Enum=Waiting;Quiet;TimedOut;Unmeasured
type QuietOutcome string

const (
	QuietWaiting    QuietOutcome = "Waiting"
	QuietReached    QuietOutcome = "Quiet"
	QuietTimedOut   QuietOutcome = "TimedOut"
	QuietUnmeasured QuietOutcome = "Unmeasured"
)

// RunQuietStart records a run's wait for quiet nodes.
type RunQuietStart struct {
	// since: when the run began to wait.
	Since metav1.Time `json:"since"`
	// outcome: Waiting; Quiet (the background fell below spec.quietStart.maxCores); TimedOut
	// (it did not within maxWait, and the run started anyway); Unmeasured (the background
	// could not be read within maxWait: message says why).
	Outcome QuietOutcome `json:"outcome"`
	// waitedSeconds before the clients started.
	// +optional
	WaitedSeconds int32 `json:"waitedSeconds,omitempty"`
	// backgroundCores over the span the last check judged (see spec.quietStart; decimal string).
	// +optional
	BackgroundCores string `json:"backgroundCores,omitempty"`
	// message: why the background could not be read (yet).
	// +optional
	Message string `json:"message,omitempty"`
}

// RunCPU is the CPU time spent during a run's measured window (warm-up excluded), read from
// the container runtime's accounting: the kubelets' container_cpu_usage_seconds_total and
// node_cpu_usage_seconds_total, through the Prometheus the operator was given
// (--cpu-accounting-prometheus-url). Either the figures or unavailable is set.
type RunCPU struct {
	// serverMillis: the datastore's own containers, every node (every role for HBase).
	// +optional
	ServerMillis int64 `json:"serverMillis,omitempty"`
	// serverMicrosPerOp: what an operation costs the datastore, in microseconds (decimal
	// string), the least disturbed by neighbours of all figures. With one client pod, each
	// container's CPU between its first and last sample in the window over the operations the
	// client completed between the same instants; otherwise serverMillis per operation.
	// +optional
	ServerMicrosPerOp string `json:"serverMicrosPerOp,omitempty"`
	// sidecarMillis: the datastore pods' other containers (TLS reloader, VPN tunnel).
	// +optional
	SidecarMillis int64 `json:"sidecarMillis,omitempty"`
	// backgroundMillis: what else the nodes hosting the datastore and the clients spent (other
	// datastores, compactions of other cells, the kubelet, anything else on the machine): how
	// quiet the run was.
	// +optional
	BackgroundMillis int64 `json:"backgroundMillis,omitempty"`
	// backgroundUnavailable says why backgroundMillis is unknown (a node's series Prometheus
	// lacks, or whose samples cannot be placed in the window); the datastore's figures stand.
	// +optional
	BackgroundUnavailable string `json:"backgroundUnavailable,omitempty"`
	// coveredSeconds: how much of the window the kubelets' samples spanned; the figures are the
	// rate over that span times the window (the kubelet refreshes its counters every --housekeeping-interval, 10-20s by default).
	// +optional
	CoveredSeconds int32 `json:"coveredSeconds,omitempty"`
	// unavailable says why there are no figures: no Prometheus configured, an external target,
	// a series Prometheus does not have, a window too short for the kubelet's sampling.
	// +optional
	Unavailable string `json:"unavailable,omitempty"`
}

// BenchmarkPhase summarises a benchmark.
// +kubebuilder:validation:Enum=Pending;Loading;Running;Succeeded;Failed
type BenchmarkPhase string

const (
	BenchmarkPending   BenchmarkPhase = "Pending"
	BenchmarkLoading   BenchmarkPhase = "Loading"
	BenchmarkRunning   BenchmarkPhase = "Running"
	BenchmarkSucceeded BenchmarkPhase = "Succeeded"
	BenchmarkFailed    BenchmarkPhase = "Failed"
)

// DatastoreBenchmarkStatus is the progress and results of a benchmark.
type DatastoreBenchmarkStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase of the benchmark.
	// +optional
	Phase BenchmarkPhase `json:"phase,omitempty"`
	// profile measured: the target datastore's encryption profile when the benchmark started
	// ("external" for external endpoints). Results are labelled with it.
	// +optional
	Profile string `json:"profile,omitempty"`
	// runs, one per repetition.
	// +optional
	// +listType=map
	// +listMapKey=index
	Runs []BenchmarkRun `json:"runs,omitempty"`
	// loadAttempts: load Jobs run after the first. A load in which some inserts failed (a
	// node too busy to answer in time) runs again, up to 3 times in all: inserts write whole
	// records by key, so a second pass completes the data.
	// +optional
	LoadAttempts int32 `json:"loadAttempts,omitempty"`
	// medianThroughputOpsPerSec over valid runs.
	// +optional
	MedianThroughputOpsPerSec int64 `json:"medianThroughputOpsPerSec,omitempty"`
	// conditions: Ready (target found and verified), Complete.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DatastoreBenchmark runs a YCSB workload against a datastore with k6 Jobs (or the YCSB JVM
// driver for Kerberos HBase), repeats it, and reports throughput and latency in status and to
// Prometheus.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dsb;dsbench,categories=secured
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.target.datastoreRef.name`
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.status.profile`
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.spec.workload.preset`
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.spec.workload.storage.pattern`,description="fio pattern of a storage workload",priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ops/s",type=integer,JSONPath=`.status.medianThroughputOpsPerSec`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52",message="metadata.name is too long: at most 52 characters, so that its Jobs' pods have valid host names (<name>-run-<n>-<pod>); choose a shorter name"
type DatastoreBenchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec: what to measure and how.
	Spec DatastoreBenchmarkSpec `json:"spec"`
	// status: progress and results.
	// +optional
	Status DatastoreBenchmarkStatus `json:"status,omitempty"`
}

// DatastoreBenchmarkList is a list of DatastoreBenchmarks.
// +kubebuilder:object:root=true
type DatastoreBenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DatastoreBenchmark `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DatastoreBenchmark{}, &DatastoreBenchmarkList{})
}
