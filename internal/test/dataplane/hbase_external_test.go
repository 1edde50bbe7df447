package dataplane

import (
	"maps"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/test/testpki"
)

// jobDriver is the YCSB client of a benchmark Job, run here as its pod would run it: its
// -p properties and its krb5.conf, with every file the pod mounts from a ConfigMap or Secret
// key replaced by the local file that key holds.
type jobDriver struct {
	props map[string]string
	jvm   []string
}

func (d jobDriver) driverTarget(*testing.T) (map[string]string, []string) {
	return maps.Clone(d.props), d.jvm
}

// driverOfJob reads the Job's container: the shell script's JVM options and the properties
// after it. keys maps "ConfigMap-or-Secret/key" to the local file with that key's content.
func driverOfJob(t *testing.T, spec benchmark.Job, keys map[string]string) jobDriver {
	t.Helper()
	job, err := benchmark.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	files := map[string]string{} // the pod's path -> the local file
	for _, m := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name {
				continue
			}
			var source string
			var items []corev1.KeyToPath
			switch {
			case v.Secret != nil:
				source, items = v.Secret.SecretName, v.Secret.Items
			case v.ConfigMap != nil:
				source, items = v.ConfigMap.Name, v.ConfigMap.Items
			}
			for _, it := range items {
				local, ok := keys[source+"/"+it.Key]
				if !ok {
					t.Fatalf("the Job mounts key %s of %s, which the test does not provide", it.Key, source)
				}
				files[path.Join(m.MountPath, it.Path)] = local
			}
		}
	}
	cmd := pod.Containers[0].Command
	d := jobDriver{props: map[string]string{}}
	for _, opt := range strings.Fields(cmd[2]) {
		if name, file, ok := strings.Cut(opt, "-Djava.security.krb5.conf="); ok && name == "" {
			if files[file] == "" {
				t.Fatalf("the driver reads krb5.conf from %s, which the pod does not mount", file)
			}
			d.jvm = append(d.jvm, "-Djava.security.krb5.conf="+files[file])
		}
	}
	for i := 3; i+1 < len(cmd); i++ {
		if cmd[i] != "-p" {
			continue
		}
		k, v, _ := strings.Cut(strings.ReplaceAll(cmd[i+1], "$$", "$"), "=") // the kubelet's unescaping
		if local, ok := files[v]; ok {
			v = local
		}
		d.props[k] = v
		i++
	}
	return d
}

// An external HBase (one the operator does not manage) is measured from what the benchmark's
// spec says of it: the Job's client logs in from the keytab Secret with the ConfigMap's
// krb5.conf, speaks SASL privacy, pins TLS 1.2 with ECDHE-ECDSA and AES-256-GCM (what the server
// accepts) verified against the CA
// Secret, finds the regions over RPC or through ZooKeeper, and gets nothing through with a
// CA that did not sign the servers.
func externalHBaseBenchmark(t *testing.T, h *HBaseStandalone, kdc *KDC) {
	ext := &v1alpha1.ExternalTarget{Engine: v1alpha1.EngineHBase, Endpoints: []string{h.Address + ":16020"},
		TLS: &v1alpha1.ClientTLS{Protocol: v1alpha1.TLSv12, CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
			CASecretRef: &v1alpha1.SecretKeyReference{Name: "hbase-ca", Key: "ca.pem"}},
		HBase: &v1alpha1.ExternalHBase{Kerberos: &v1alpha1.ExternalKerberos{Principal: "ycsb@" + kdc.Realm,
			KeytabSecretRef:  v1alpha1.SecretKeyReference{Name: "ycsb-keytab", Key: "keytab"},
			Krb5ConfigMapRef: v1alpha1.ConfigMapKeyReference{Name: "realm", Key: "krb5.conf"}}}}
	keys := map[string]string{"hbase-ca/ca.pem": path.Join(h.Security.tlsDir, "ca.crt"), "ycsb-keytab/keytab": kdc.Keytab("ycsb"), "realm/krb5.conf": kdc.Krb5Conf()}
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "external", Namespace: "db"}, Spec: v1alpha1.DatastoreBenchmarkSpec{
		Target:   v1alpha1.BenchmarkTarget{External: ext},
		Workload: v1alpha1.Workload{Preset: "B", RecordCount: ptr.To[int64](300), Duration: &metav1.Duration{Duration: 3 * time.Second}},
		WarmUp:   &metav1.Duration{Duration: 2 * time.Second}, Load: v1alpha1.Load{VirtualUsers: ptr.To[int32](4)}}}
	run := func(phase string) benchmark.Job {
		target, err := benchmark.ExternalTarget(ext)
		if err != nil {
			t.Fatal(err)
		}
		return benchmark.Job{Benchmark: b, Target: target, Phase: phase, Image: "ycsb-hbase"}
	}
	load := driverOfJob(t, run(benchmark.PhaseLoad), keys)
	load.props["table"] = "external" // a table of its own: the test's earlier load filled usertable
	if s := runYCSBHBase(t, load, "load", nil); s.Operations != 300 || s.Errors != 0 || s.Protocol != "tls+kerberos/privacy" {
		t.Fatalf("the external benchmark's load: %+v; want 300 inserts over TLS with Kerberos privacy", s)
	}
	s := runYCSBHBase(t, withTable(driverOfJob(t, run(benchmark.PhaseRun), keys)), "run", nil)
	if s.Operations == 0 || s.Errors != 0 || s.Protocol != "tls+kerberos/privacy" {
		t.Fatalf("the external benchmark's run over RPC: %+v", s)
	}

	ext.HBase.Registry, ext.Endpoints = v1alpha1.RegistryZooKeeper, []string{"127.0.0.1:" + strconv.Itoa(h.ZooKeeperPort)}
	s = runYCSBHBase(t, withTable(driverOfJob(t, run(benchmark.PhaseRun), keys)), "run", nil)
	if s.Operations == 0 || s.Errors != 0 || s.Protocol != "tls+kerberos/privacy" {
		t.Fatalf("the external benchmark's run through ZooKeeper: %+v", s)
	}

	// Fails closed: a CA that did not sign the servers' certificates lets no operation through.
	other := path.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(other, testpki.New(t).PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	keys["hbase-ca/ca.pem"] = other
	d := withTable(driverOfJob(t, run(benchmark.PhaseRun), keys))
	d.props["hbase.client.retries.number"], d.props["hbase.rpc.timeout"], d.props["hbase.client.operation.timeout"] = "1", "5000", "10000"
	s, log, err := tryYCSBHBase(t, d, "run", nil)
	if err == nil && s.Operations > 0 {
		t.Fatalf("a client trusting another CA completed %d operations:\n%s", s.Operations, tail(log, 20))
	}
	t.Logf("a client trusting another CA: %v, %d operations, first error %q", err, s.Operations, s.FirstError)
}

// withTable points a run at the table the external load filled.
func withTable(d jobDriver) jobDriver {
	d.props["table"] = "external"
	return d
}
