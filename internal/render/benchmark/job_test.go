package benchmark

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/test/golden"
)

func tlsDatastore() *v1alpha1.SecuredDatastore {
	return &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"},
		Spec:       v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra},
		Status: v1alpha1.SecuredDatastoreStatus{Encryption: &v1alpha1.EncryptionStatus{
			Profile: "tls13-aes128-gcm",
			Effective: &v1alpha1.EffectiveEncryption{ClientToNode: v1alpha1.EffectiveChannel{
				Mode:         v1alpha1.ChannelRequired,
				Protocols:    []v1alpha1.TLSProtocol{"TLSv1.2", "TLSv1.3"},
				CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"},
			}},
		}},
	}
}

// A datastore target pins the highest protocol and its first suite, trusts the datastore's
// bundle and names the client Service; the Jobs render to golden files.
func TestJobsForADatastore(t *testing.T) {
	target, err := DatastoreTarget(tlsDatastore(), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	if target.TLS == nil || target.TLS.Protocol != "TLSv1.3" || target.TLS.CipherSuite != "TLS_AES_128_GCM_SHA256" ||
		target.TLS.ServerName != "orders.shop.svc.cluster.local" || target.ReplicationFactor != 3 {
		t.Fatalf("target %+v %+v", target, target.TLS)
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-a", Namespace: "shop"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "orders"}},
			Workload: v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](50_000), FieldLength: ptr.To[int32](1000), Table: "usertable_f1000"},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](3000), ClientPods: ptr.To[int32](2)},
			WarmUp:   &metav1.Duration{Duration: 10 * time.Second},
		},
	}
	out := renderJobs(t,
		Job{Benchmark: b, Target: target, Phase: PhaseLoad, Image: "secured.dev/k6:test"},
		Job{Benchmark: b, Target: target, Phase: PhaseRun, Run: 1, Image: "secured.dev/k6:test", RemoteWriteURL: "http://prometheus.monitoring:9090/api/v1/write"},
	)
	golden.Check(t, "datastore-jobs.yaml", out)
	if !strings.Contains(string(out), "name: YCSB_RATE\n          value: \"1500\"") {
		t.Error("a fixed rate of 3000/s over two client pods must give each 1500/s")
	}
}

// Where the datastore's client channel demands certificates, the clients present theirs: the
// clients' certificate, whose identity is their role, never the nodes'.
func TestClientsPresentTheirCertificate(t *testing.T) {
	ds := tlsDatastore()
	ds.Status.Encryption.Effective.ClientToNode.ClientAuth = v1alpha1.ClientAuthRequired
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	if target.TLS.ClientCertSecret != "orders-client-tls" {
		t.Fatalf("client certificate %q; want the clients' own, orders-client-tls", target.TLS.ClientCertSecret)
	}
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "orders-a", Namespace: "shop"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{Target: v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "orders"}}}}
	job, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseRun, Image: "secured.dev/k6:test"})
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	var mounted bool
	for _, v := range pod.Volumes {
		mounted = mounted || v.Secret != nil && v.Secret.SecretName == "orders-client-tls"
	}
	env := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if !mounted || env["CQL_TLS_CERT_FILE"] != clientCertMount+"/tls.crt" || env["CQL_TLS_KEY_FILE"] != clientCertMount+"/tls.key" {
		t.Errorf("the client certificate is not handed to the client: mounted %v, env %v", mounted, env)
	}
	ds.Status.Encryption.Effective.ClientToNode.ClientAuth = v1alpha1.ClientAuthNone
	if target, _ := DatastoreTarget(ds, "cluster.local"); target.TLS.ClientCertSecret != "" {
		t.Errorf("a client certificate %q where none is asked for", target.TLS.ClientCertSecret)
	}
}

// A steady warm-up replaces the fixed one in the first run only, and the run's deadline
// allows for its maximum.
func TestTheFirstRunWarmsUpUntilSteady(t *testing.T) {
	target, err := DatastoreTarget(tlsDatastore(), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-a", Namespace: "shop"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:       v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "orders"}},
			Workload:     v1alpha1.Workload{Preset: "A", Duration: &metav1.Duration{Duration: time.Minute}},
			WarmUp:       &metav1.Duration{Duration: 10 * time.Second},
			SteadyWarmUp: &v1alpha1.SteadyWarmUp{Minimum: metav1.Duration{Duration: 20 * time.Second}, Maximum: metav1.Duration{Duration: 3 * time.Minute}},
		},
	}
	env := func(j *batchv1.Job) map[string]string {
		out := map[string]string{}
		for _, e := range j.Spec.Template.Spec.Containers[0].Env {
			out[e.Name] = e.Value
		}
		return out
	}
	for run, want := range map[int32]struct {
		min, max, fixed string
		deadline        int64
	}{0: {"20s", "3m0s", "", 4*60 + 600}, 1: {"", "", "10s", 70 + 600}} {
		j, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseRun, Run: run, Image: "secured.dev/k6:test"})
		if err != nil {
			t.Fatal(err)
		}
		e := env(j)
		if e["YCSB_WARMUP_MIN"] != want.min || e["YCSB_WARMUP_MAX"] != want.max || e["YCSB_WARMUP"] != want.fixed || *j.Spec.ActiveDeadlineSeconds != want.deadline {
			t.Errorf("run %d: min %q max %q fixed %q deadline %d; want %+v", run, e["YCSB_WARMUP_MIN"], e["YCSB_WARMUP_MAX"], e["YCSB_WARMUP"], *j.Spec.ActiveDeadlineSeconds, want)
		}
	}

	// The JVM driver for HBase takes the same warm-ups as properties, in seconds, and its
	// run is bounded by the longest warm-up and the window.
	hb, err := DatastoreTarget(hbaseDatastore(), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	for run, want := range map[int32][]string{
		0: {"-p warmup.min=20 ", "-p warmup.max=180 ", "-p window.seconds=60 ", "-p maxexecutiontime=300 "},
		1: {"-p warmup.seconds=10 ", "-p window.seconds=60 ", "-p maxexecutiontime=130 "},
	} {
		j, err := Build(Job{Benchmark: b, Target: hb, Phase: PhaseRun, Run: run, Image: "secured.dev/ycsb-hbase:test"})
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(j.Spec.Template.Spec.Containers[0].Command, " ") + " "
		for _, w := range want {
			if !strings.Contains(args, w) {
				t.Errorf("HBase run %d lacks %q: %s", run, w, args)
			}
		}
		if strings.Contains(args, "warmup.seconds") == (run == 0) {
			t.Errorf("HBase run %d: a fixed warm-up only after the first run: %s", run, args)
		}
	}
}

// Targets that cannot be measured are refused with the reason.
func TestTargetsRefused(t *testing.T) {
	ds := tlsDatastore()
	ds.Status.Encryption.Effective.ClientToNode.CipherSuites = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}
	ds.Status.Encryption.Effective.ClientToNode.Protocols = []v1alpha1.TLSProtocol{"TLSv1.3"}
	if _, err := DatastoreTarget(ds, "cluster.local"); err == nil || !strings.Contains(err.Error(), "no cipher suite") {
		t.Errorf("a TLS 1.2 suite with only TLS 1.3: %v", err)
	}
	ds.Status.Encryption = nil
	if _, err := DatastoreTarget(ds, "cluster.local"); err == nil || !strings.Contains(err.Error(), "not resolved") {
		t.Errorf("no resolved profile yet: %v", err)
	}
	ext, err := ExternalTarget(&v1alpha1.ExternalTarget{Engine: v1alpha1.EngineCassandra, Endpoints: []string{"cassandra.eu-west-1.amazonaws.com:9142"},
		TLS: &v1alpha1.ClientTLS{Protocol: "TLSv1.2", CipherSuite: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}})
	if err != nil || ext.TLS.ServerName != "cassandra.eu-west-1.amazonaws.com" || ext.TLS.CA.Secret != "" {
		t.Errorf("external target %+v: %v", ext.TLS, err)
	}
}

// An HBase datastore is measured by YCSB's JVM client with our binding: the client logs in from
// the datastore's client keytab, speaks the profile's SASL level, shares the load phase over
// the client pods and writes its summary as the termination message.
// With verifyWrites, a measured run records its writes where it may write and checks them at
// the end, with either driver; the load does not.
func TestRunsThatVerifyWritesKeepAHistory(t *testing.T) {
	target, err := DatastoreTarget(tlsDatastore(), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-a", Namespace: "shop"},
		Spec:       v1alpha1.DatastoreBenchmarkSpec{Workload: v1alpha1.Workload{Preset: "A"}, VerifyWrites: true},
	}
	for phase, want := range map[string]bool{PhaseRun: true, PhaseLoad: false} {
		j, err := Build(Job{Benchmark: b, Target: target, Phase: phase, Image: "secured.dev/k6:test"})
		if err != nil {
			t.Fatal(err)
		}
		c := j.Spec.Template.Spec.Containers[0]
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "history" && m.MountPath == "/var/run/ycsb" && !m.ReadOnly
		})
		if got := env["YCSB_HISTORY_FILE"] == "/var/run/ycsb/history" && env["YCSB_VERIFY_WRITES"] == "true" && mounted; got != want {
			t.Errorf("%s: history %q, verify %q, mounted %v; want a checked history: %v", phase, env["YCSB_HISTORY_FILE"], env["YCSB_VERIFY_WRITES"], mounted, want)
		}
	}
	ht, err := DatastoreTarget(hbaseDatastore(), "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	for phase, want := range map[string]bool{PhaseRun: true, PhaseLoad: false} {
		j, err := Build(Job{Benchmark: b, Target: ht, Phase: phase, Image: "secured.dev/ycsb:test"})
		if err != nil {
			t.Fatal(err)
		}
		c := j.Spec.Template.Spec.Containers[0]
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "history" && m.MountPath == "/var/run/ycsb" && !m.ReadOnly
		})
		args := strings.Join(c.Command, " ")
		recorded := strings.Contains(args, "-p writehistory=/var/run/ycsb/history") && strings.Contains(args, "-p verifywrites=true")
		if got := recorded && mounted; got != want {
			t.Errorf("HBase %s: history and check in the driver's properties %v, mounted %v; want a checked history: %v", phase, recorded, mounted, want)
		}
	}
}

// hbaseDatastore is a Kerberos HBase datastore that has resolved its profile.
func hbaseDatastore() *v1alpha1.SecuredDatastore {
	on := true
	return &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "events", Namespace: "db"},
		Spec:       v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineHBase},
		Status: v1alpha1.SecuredDatastoreStatus{Encryption: &v1alpha1.EncryptionStatus{
			Profile: "hbase-kerberos-privacy",
			Effective: &v1alpha1.EffectiveEncryption{
				ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}, NodeToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled},
				HBase: &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos, HBaseRPCProtection: v1alpha1.ProtectionPrivacy,
					HadoopRPCProtection: v1alpha1.ProtectionPrivacy, AESTransform: new(bool), DataTransfer: &v1alpha1.HDFSDataTransfer{Encrypt: &on}},
			},
		}},
	}
}

func TestHBaseJobsRunTheJVMDriver(t *testing.T) {
	ds := hbaseDatastore()
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "events-a", Namespace: "db"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "events"}},
			Workload: v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](10_001), Table: "usertable_f100"},
			Load:     v1alpha1.Load{ClientPods: ptr.To[int32](2), VirtualUsers: ptr.To[int32](16)},
		},
	}
	out := renderJobs(t,
		Job{Benchmark: b, Target: target, Phase: PhaseLoad, Image: "secured.dev/ycsb-hbase:test"},
		Job{Benchmark: b, Target: target, Phase: PhaseRun, Run: 0, Image: "secured.dev/ycsb-hbase:test", RemoteWriteURL: "http://prometheus.monitoring:9090/api/v1/write"},
	)
	golden.Check(t, "hbase-jobs.yaml", out)
	for _, want := range []string{"- principal=client@EVENTS.DB", "- table=usertable_f100", "- hbase.rpc.protection=privacy", "insertstart=$((JOB_COMPLETION_INDEX * 5001))",
		"- exportfile=/dev/termination-log", "- workload=dev.secured.ycsb.GatedWorkload", "- warmup.seconds=30", "- window.seconds=60", "- maxexecutiontime=150", "-Djava.security.krb5.conf=/etc/hbase/conf/krb5.conf", "secretName: events-client-keytab"} {
		if !strings.Contains(strings.Join(strings.Fields(string(out)), " "), want) { // YAML folds long lines
			t.Errorf("the Jobs lack %s", want)
		}
	}
}

// An external HBase is measured with what its spec says: the client logs in from the keytab
// Secret with the ConfigMap's krb5.conf, asks for the SASL level, pins TLS to one protocol and
// suite verified against the CA Secret, and finds the regions over RPC or through ZooKeeper.
func TestExternalHBaseJobs(t *testing.T) {
	ext := &v1alpha1.ExternalTarget{Engine: v1alpha1.EngineHBase, Endpoints: []string{"hmaster-0.hbase.example:16000", "hmaster-1.hbase.example:16000"},
		TLS: &v1alpha1.ClientTLS{Protocol: "TLSv1.3", CipherSuite: "TLS_AES_256_GCM_SHA384", CASecretRef: &v1alpha1.SecretKeyReference{Name: "hbase-ca", Key: "ca.pem"}},
		HBase: &v1alpha1.ExternalHBase{Kerberos: &v1alpha1.ExternalKerberos{Principal: "ycsb/bench@HBASE.EXAMPLE",
			KeytabSecretRef:  v1alpha1.SecretKeyReference{Name: "ycsb-keytab", Key: "ycsb.keytab"},
			Krb5ConfigMapRef: v1alpha1.ConfigMapKeyReference{Name: "realm", Key: "krb5.conf"}, RPCProtection: v1alpha1.ProtectionIntegrity}}}
	target, err := ExternalTarget(ext)
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "managed-hbase", Namespace: "db"},
		Spec:       v1alpha1.DatastoreBenchmarkSpec{Target: v1alpha1.BenchmarkTarget{External: ext}, Workload: v1alpha1.Workload{Preset: "B", RecordCount: ptr.To[int64](1000)}},
	}
	out := renderJobs(t,
		Job{Benchmark: b, Target: target, Phase: PhaseLoad, Image: "secured.dev/ycsb-hbase:test"},
		Job{Benchmark: b, Target: target, Phase: PhaseRun, Run: 0, Image: "secured.dev/ycsb-hbase:test"},
	)
	golden.Check(t, "external-hbase-jobs.yaml", out)
	flat := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{"- principal=ycsb/bench@HBASE.EXAMPLE", "- hbase.rpc.protection=integrity",
		"- hbase.master.kerberos.principal=hbase/_HOST@HBASE.EXAMPLE", "- hbase.client.bootstrap.servers=hmaster-0.hbase.example:16000,hmaster-1.hbase.example:16000",
		"- hbase.rpc.tls.enabledProtocols=TLSv1.3", "- hbase.rpc.tls.ciphersuites=TLS_AES_256_GCM_SHA384", "- hbase.rpc.tls.truststore.type=PEM",
		"- hbase.rpc.tls.truststore.location=/etc/secured/trust/ca.crt", "- key: ca.pem path: ca.crt", "secretName: hbase-ca",
		"- key: ycsb.keytab path: client.keytab", "secretName: ycsb-keytab", "- key: krb5.conf path: krb5.conf name: realm"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the Jobs lack %s", want)
		}
	}
	if target.ServerPods() != nil || target.Profile != "external" {
		t.Errorf("an external target has no server pods to account and is labelled external: %v %q", target.ServerPods(), target.Profile)
	}

	// Through ZooKeeper, with the cluster's own server principal and no CA of its own.
	ext.HBase.Registry, ext.HBase.ZNodeParent = v1alpha1.RegistryZooKeeper, "/hbase-secure"
	ext.HBase.Kerberos.ServerPrincipal = "hbase/_HOST@CORP.EXAMPLE"
	ext.TLS.CASecretRef = nil
	ext.Endpoints = []string{"zk-0.example:2181", "zk-1.example:2181", "zk-2.example:2181"}
	target, err = ExternalTarget(ext)
	if err != nil {
		t.Fatal(err)
	}
	p := target.HBase.Properties
	for k, want := range map[string]string{"hbase.client.registry.impl": "org.apache.hadoop.hbase.client.ZKConnectionRegistry",
		"hbase.zookeeper.quorum": "zk-0.example:2181,zk-1.example:2181,zk-2.example:2181", "zookeeper.znode.parent": "/hbase-secure",
		"hbase.regionserver.kerberos.principal": "hbase/_HOST@CORP.EXAMPLE", "hbase.client.bootstrap.servers": "", "hbase.rpc.tls.truststore.location": ""} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	if target.HBase.Trust != nil {
		t.Errorf("no CA Secret, yet the client mounts %s", target.HBase.Trust)
	}

	// Simple authentication in plaintext: nothing to mount but scratch space.
	target, err = ExternalTarget(&v1alpha1.ExternalTarget{Engine: v1alpha1.EngineHBase, Endpoints: []string{"10.0.0.7:16020"}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseRun, Image: "secured.dev/ycsb-hbase:test"})
	if err != nil {
		t.Fatal(err)
	}
	if v := job.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].Name != "tmp" {
		t.Errorf("a plaintext external HBase mounts %+v", v)
	}
	if p := target.HBase.Properties; p["hbase.security.authentication"] != "" || p["hbase.client.netty.tls.enabled"] != "" {
		t.Errorf("a plaintext external HBase gets security properties: %v", p)
	}
}

// renderJobs builds the Jobs and concatenates them as YAML documents.
func renderJobs(t *testing.T, jobs ...Job) []byte {
	t.Helper()
	var objs []client.Object
	for _, j := range jobs {
		job, err := Build(j)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, job)
	}
	return golden.YAML(t, objs)
}

// A VPN carrying client traffic: the clients dial the nodes' tunnel addresses from inside
// the tunnel, pod i of the Job being its client-i, and more pods than slots are refused.
func TestClientsJoinTheTunnel(t *testing.T) {
	ds := tlsDatastore()
	ds.Spec.Cassandra = &v1alpha1.CassandraTopology{Nodes: ptr.To[int32](3)}
	ds.Status.Encryption.Profile = "openvpn"
	ds.Status.Encryption.Effective = &v1alpha1.EffectiveEncryption{
		ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled},
		VPN:          &v1alpha1.VPNSettings{Type: v1alpha1.VPNOpenVPN, Scope: v1alpha1.VPNScopeAll, OpenVPN: &v1alpha1.OpenVPNSettings{Cipher: "AES-256-GCM"}},
	}
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"100.80.0.1:9042", "100.80.0.2:9042", "100.80.0.3:9042"}; strings.Join(target.Hosts, ",") != strings.Join(want, ",") || target.Tunnel == nil {
		t.Fatalf("hosts %v (tunnel %v), want the nodes' tunnel addresses", target.Hosts, target.Tunnel)
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-vpn", Namespace: "shop"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "orders"}},
			Workload: v1alpha1.Workload{Preset: "A"},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, ClientPods: ptr.To[int32](2)},
		},
	}
	golden.Check(t, "tunnel-job.yaml", renderJobs(t, Job{Benchmark: b, Target: target, Phase: PhaseRun, Image: "secured.dev/k6:test", VPNImage: "secured.dev/vpn:test",
		KeyServer: vpn.KeyServer{URL: "https://keys.secured-system.svc:9444/v1/tunnel-key"}}))

	b.Spec.Load.ClientPods = ptr.To[int32](5)
	if _, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseRun}); err == nil || !strings.Contains(err.Error(), "spec.load.clientPods is 5, but the tunnel of SecuredDatastore orders admits 4 clients") {
		t.Errorf("five clients for four slots: %v", err)
	}
	ds.Status.Encryption.Effective.VPN.Scope = v1alpha1.VPNScopeNodeToNode
	if target, _ := DatastoreTarget(ds, "cluster.local"); target.Tunnel != nil || target.Hosts[0] != "orders.shop.svc:9042" {
		t.Errorf("a node-to-node tunnel leaves clients on the Service: %+v", target)
	}
}

// A datastore with client-side protection gets clients that apply it: the keys' Secret mounted
// read-only, the algorithms in pkg/fieldcrypt's names, the field count passed on.
func TestClientsApplyClientSideProtection(t *testing.T) {
	ds := tlsDatastore()
	ds.Status.Encryption.Effective.ClientSide = &v1alpha1.ClientSideEncryption{Cipher: v1alpha1.ClientAES128GCM, Signature: v1alpha1.ClientECDSAP256, Fields: ptr.To[int32](3)}
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "orders-a", Namespace: "shop"}, Spec: v1alpha1.DatastoreBenchmarkSpec{Workload: v1alpha1.Workload{Preset: "A"}}}
	j, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseRun, Image: "secured.dev/k6:test"})
	if err != nil {
		t.Fatal(err)
	}
	pod := j.Spec.Template.Spec
	env := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e.Value
	}
	want := map[string]string{"YCSB_CLIENT_CIPHER": "AES-GCM", "YCSB_CLIENT_SIGNATURE": "ECDSA-P256", "YCSB_CLIENT_FIELDS": "3", "YCSB_CLIENT_KEY_DIR": "/etc/secured/client-keys"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q; want %q", k, env[k], v)
		}
	}
	mounted := slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "client-keys" && m.MountPath == "/etc/secured/client-keys" && m.ReadOnly
	})
	fromSecret := slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.Name == "client-keys" && v.Secret != nil && v.Secret.SecretName == "orders-client-keys"
	})
	if !mounted || !fromSecret {
		t.Errorf("keys mounted read-only %v, from Secret orders-client-keys %v", mounted, fromSecret)
	}

	// Without client-side protection, nothing of it.
	plain, _ := DatastoreTarget(tlsDatastore(), "cluster.local")
	j, _ = Build(Job{Benchmark: b, Target: plain, Phase: PhaseRun, Image: "secured.dev/k6:test"})
	for _, e := range j.Spec.Template.Spec.Containers[0].Env {
		if strings.HasPrefix(e.Name, "YCSB_CLIENT_") {
			t.Errorf("%s set without client-side protection", e.Name)
		}
	}
}

// Against an HBase datastore that encrypts at rest, the load phase creates the table's column
// family encrypted: HBase encrypts only the HFiles of families that ask for it.
func TestHBaseTablesAreCreatedEncryptedAtRest(t *testing.T) {
	ds := hbaseDatastore()
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "events-a", Namespace: "db"}, Spec: v1alpha1.DatastoreBenchmarkSpec{Workload: v1alpha1.Workload{Preset: "A"}}}
	for _, atRest := range []bool{false, true} {
		if atRest {
			ds.Status.Encryption.Effective.AtRest = &v1alpha1.AtRestEncryption{Engine: &v1alpha1.EngineAtRest{KeyBits: 128}}
		}
		target, err := DatastoreTarget(ds, "cluster.local")
		if err != nil {
			t.Fatal(err)
		}
		j, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseLoad, Image: "secured.dev/ycsb:test"})
		if err != nil {
			t.Fatal(err)
		}
		cmd := strings.Join(j.Spec.Template.Spec.Containers[0].Command, " ")
		if got := strings.Contains(cmd, "columnfamily.encryption=AES"); got != atRest {
			t.Errorf("at rest %v: the driver creates the family encrypted: %v\n%s", atRest, got, cmd)
		}
	}
}

// The JVM driver applies client-side protection too: the algorithms and the mounted keys go to
// it as YCSB properties.
func TestHBaseClientsApplyClientSideProtection(t *testing.T) {
	ds := hbaseDatastore()
	ds.Status.Encryption.Effective.ClientSide = &v1alpha1.ClientSideEncryption{Cipher: v1alpha1.ClientChaCha20Poly1305, Signature: v1alpha1.ClientRSA2048}
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "events-a", Namespace: "db"}, Spec: v1alpha1.DatastoreBenchmarkSpec{Workload: v1alpha1.Workload{Preset: "A"}}}
	j, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseRun, Image: "secured.dev/ycsb:test"})
	if err != nil {
		t.Fatal(err)
	}
	pod := j.Spec.Template.Spec
	cmd := strings.Join(pod.Containers[0].Command, " ")
	for _, want := range []string{"clientside.cipher=ChaCha20-Poly1305", "clientside.signature=RSA-2048", "clientside.keydir=/etc/secured/client-keys"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the driver's command lacks %s:\n%s", want, cmd)
		}
	}
	if strings.Contains(cmd, "clientside.fields") {
		t.Errorf("fields unset means every field, but the command names some:\n%s", cmd)
	}
	if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == "events-client-keys" }) {
		t.Errorf("the keys' Secret is not mounted: %+v", pod.Volumes)
	}
}

// HBase clients always join the datastore's tunnel: they reach ZooKeeper, the Master and the
// RegionServers at their tunnel addresses, the addresses the servers register.
func TestHBaseClientsJoinTheTunnel(t *testing.T) {
	ds := hbaseDatastore()
	ds.Spec.HBase = &v1alpha1.HBaseTopology{RegionServers: ptr.To[int32](1)}
	ds.Status.Encryption.Profile = "wireguard"
	ds.Status.Encryption.Effective.HBase = &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationSimple, AESTransform: new(bool), DataTransfer: &v1alpha1.HDFSDataTransfer{Encrypt: new(bool)}}
	ds.Status.Encryption.Effective.VPN = &v1alpha1.VPNSettings{Type: v1alpha1.VPNWireGuard, Scope: v1alpha1.VPNScopeAll}
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	// ZooKeeper, the NameNode, one DataNode, one Master, one RegionServer: 100.80.0.1 to .5.
	if want := "100.80.0.4:16000,100.80.0.5:16020"; target.Tunnel == nil || strings.Join(target.Hosts, ",") != want {
		t.Fatalf("hosts %v (tunnel %v); want the servers' tunnel addresses %s", target.Hosts, target.Tunnel, want)
	}
	for k, v := range target.HBase.Properties {
		if strings.Contains(v, ".svc.") {
			t.Errorf("client property %s names a server by its pod name: %s", k, v)
		}
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "events-vpn", Namespace: "db"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: "events"}},
			Workload: v1alpha1.Workload{Preset: "A"},
			Load:     v1alpha1.Load{ClientPods: ptr.To[int32](1)},
		},
	}
	job, err := Build(Job{Benchmark: b, Target: target, Phase: PhaseRun, Image: "secured.dev/ycsb-hbase:test", VPNImage: "secured.dev/vpn:test"})
	if err != nil {
		t.Fatal(err)
	}
	if init := job.Spec.Template.Spec.InitContainers; len(init) == 0 || init[len(init)-1].Name != "vpn" {
		t.Errorf("the HBase client does not join the tunnel: init containers %v", init)
	}
}

// A plaintext target leaves TLS out, and is labelled so, only where the client channel accepts
// plaintext; a Required channel or HBase is refused with the field and the fix.
func TestPlaintextTargetNeedsAChannelThatAcceptsIt(t *testing.T) {
	ds := tlsDatastore()
	ds.Status.Encryption.Effective.ClientToNode.Mode = v1alpha1.ChannelOptional
	target, err := DatastoreTarget(ds, "cluster.local")
	if err != nil || target.TLS == nil {
		t.Fatalf("an Optional channel's clients speak TLS unless asked otherwise: %+v, %v", target, err)
	}
	plain, err := InPlaintext(target, ds)
	if err != nil {
		t.Fatal(err)
	}
	if plain.TLS != nil || plain.Profile != "tls13-aes128-gcm/plaintext" || plain.Datastore != "orders" {
		t.Errorf("plaintext target: TLS %+v, profile %q, datastore %q", plain.TLS, plain.Profile, plain.Datastore)
	}

	ds = tlsDatastore()
	target, _ = DatastoreTarget(ds, "cluster.local")
	if _, err := InPlaintext(target, ds); err == nil || !strings.Contains(err.Error(), "spec.target.datastoreRef.plaintext") || !strings.Contains(err.Error(), "set its clientToNode.mode to Optional, or remove plaintext") {
		t.Errorf("a Required channel: %v", err)
	}
	hb := hbaseDatastore()
	target, _ = DatastoreTarget(hb, "cluster.local")
	if _, err := InPlaintext(target, hb); err == nil || !strings.Contains(err.Error(), "is HBase") {
		t.Errorf("HBase: %v", err)
	}
}
