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
// YCSB's JVM client.
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
	start := time.Now()
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logPods(t, c, ns.Name)
		}
	})
	waitReady(t, c, ds, start, "RegionServers ready")
	t.Logf("Kerberos + privacy HBase Ready in %s", time.Since(start).Round(time.Second))
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
