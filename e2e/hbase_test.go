//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
)

// The paper's "native security" on the Kind cluster: an HBase SecuredDatastore with Kerberos,
// SASL privacy on HBase and Hadoop RPC and encrypted HDFS block transfer, in a namespace that
// enforces the restricted Pod Security Standard. The managed KDC, ZooKeeper, HDFS and HBase
// start from the operator's Secrets and certificates, the datastore becomes Ready, and the wire
// probe verifies the Master's and RegionServer's RPC ports, and a benchmark measures it with
// YCSB's JVM client, as a managed datastore and as an external HBase.
func TestHBaseKerberosPrivacyDatastoreBecomesReady(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "hbase", "restricted")
	applyProfile(t, c, "hbase-kerberos-privacy")

	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "events", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine: v1alpha1.EngineHBase,
			// Three ZooKeeper servers: they must authenticate each other (quorum SASL) to form
			// the ensemble HBase needs.
			HBase: &v1alpha1.HBaseTopology{RegionServers: ptr.To[int32](1), DataNodes: ptr.To[int32](1),
				ZooKeeper: v1alpha1.ZooKeeperSpec{Replicas: ptr.To[int32](3)}},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "hbase-kerberos-privacy"},
		},
	}
	t.Logf("Kerberos + privacy HBase Ready in %s", createHBase(t, c, ds).Round(time.Second))
	k := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionKerberosReady)
	if k == nil || k.Status != metav1.ConditionTrue {
		t.Errorf("KerberosReady %+v", k)
	}
	for i := range 3 {
		pod := &corev1.Pod{}
		name := fmt.Sprintf("%s-%d", hbase.NamesOf(ds).StatefulSet(hbase.ZooKeeper), i)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, pod); err != nil {
			t.Fatal(err)
		}
		log := podLog(t, pod, string(hbase.ZooKeeper))
		if !strings.Contains(log, "QuorumServer successfully logged in") || !strings.Contains(log, "QuorumLearner successfully logged in") ||
			!strings.Contains(log, "LEADING") && !strings.Contains(log, "FOLLOWING") {
			t.Errorf("ZooKeeper %s: no Kerberos login of the quorum, or no place in the ensemble", name)
		}
	}
	// The Master and the RegionServer answer on their RPC ports exactly as the profile says:
	// SASL (no TLS) on HBase RPC.
	waitVerified(t, c, ds)
	hbaseIsClosedToStrangers(t, c, ds)

	// The benchmark's HBase driver logs in with the datastore's client keytab and measures it
	// over SASL privacy.
	benchmarkDatastore(t, c, ds, "kerberos/privacy", "")
	benchmarkAsExternal(t, c, ds)
}

// benchmarkAsExternal measures the datastore as a user measures an HBase the operator does not
// manage: spec.target.external with its Masters' and RegionServers' RPC addresses, the client
// principal, its keytab Secret and the krb5.conf of the datastore's ConfigMap, SASL privacy.
func benchmarkAsExternal(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore) {
	t.Helper()
	n := hbase.NamesOf(ds)
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-external", Namespace: ds.Namespace},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target: v1alpha1.BenchmarkTarget{External: &v1alpha1.ExternalTarget{Engine: v1alpha1.EngineHBase,
				Endpoints: hbase.TopologyOf(ds, "cluster.local").Bootstrap,
				HBase: &v1alpha1.ExternalHBase{Kerberos: &v1alpha1.ExternalKerberos{Principal: hbase.ClientPrincipal(ds),
					KeytabSecretRef:  v1alpha1.SecretKeyReference{Name: n.ClientKeytabSecret(), Key: hbase.ClientKeytab},
					Krb5ConfigMapRef: v1alpha1.ConfigMapKeyReference{Name: n.ConfigMap(), Key: "krb5.conf"},
					RPCProtection:    v1alpha1.ProtectionPrivacy}}}},
			Workload:    v1alpha1.Workload{Preset: "B", RecordCount: ptr.To[int64](2000), Duration: &metav1.Duration{Duration: 20 * time.Second}},
			Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, VirtualUsers: ptr.To[int32](8)},
			Repetitions: ptr.To[int32](2),
			WarmUp:      &metav1.Duration{Duration: 5 * time.Second},
		},
	}
	runBenchmark(t, c, b, 6*time.Minute)
	ready := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady)
	t.Logf("external HBase benchmark: %s; median %d ops/s", ready.Message, b.Status.MedianThroughputOpsPerSec)
	if b.Status.Profile != "external" || !strings.Contains(ready.Message, "logged in as "+hbase.ClientPrincipal(ds)+" (SASL privacy)") {
		t.Errorf("profile %q, Ready %q; want an external target logged in with SASL privacy", b.Status.Profile, ready.Message)
	}
	for _, r := range b.Status.Runs {
		t.Logf("run %d %s: %d ops/s, %s, latencies %+v %s", r.Index, r.Phase, r.ThroughputOpsPerSec, r.NegotiatedProtocol, r.Latencies, r.InvalidReason)
		if r.Phase == v1alpha1.RunSucceeded && (r.NegotiatedProtocol != "kerberos/privacy" || r.ThroughputOpsPerSec <= 0) {
			t.Errorf("run %d: %s at %d ops/s; want kerberos/privacy", r.Index, r.NegotiatedProtocol, r.ThroughputOpsPerSec)
		}
	}
}

// smallHBase is an HBase of one RegionServer and one DataNode protected by enc, the size most
// tests need on two cores.
func smallHBase(name, namespace string, enc v1alpha1.DatastoreEncryption) *v1alpha1.SecuredDatastore {
	return &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:     v1alpha1.EngineHBase,
			HBase:      &v1alpha1.HBaseTopology{RegionServers: ptr.To[int32](1), DataNodes: ptr.To[int32](1)},
			Encryption: enc,
		},
	}
}

// createHBase creates an HBase datastore, logs its pods should the test fail, and returns once it
// is Ready, with how long that took.
func createHBase(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore) time.Duration {
	t.Helper()
	start := time.Now()
	if err := c.Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logPods(t, c, ds.Namespace)
		}
	})
	waitReady(t, c, ds, start, "RegionServers ready")
	return time.Since(start)
}

// logPods logs each pod's phase and the end of its log, for a failed test.
func logPods(t *testing.T, c client.Client, namespace string) {
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(namespace)); err != nil {
		t.Logf("listing pods: %v", err)
		return
	}
	for _, p := range pods.Items {
		t.Logf("pod %s: %s", p.Name, p.Status.Phase)
		for _, s := range p.Status.ContainerStatuses {
			if s.LastTerminationState.Terminated != nil {
				t.Logf("  %s last terminated: %s", s.Name, s.LastTerminationState.Terminated.Message)
			}
		}
	}
}
