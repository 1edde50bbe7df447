//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/test/dataplane"
)

// A 1-node Cassandra on Kind with TLS 1.3, engine-level encryption at rest and client-side
// encryption and signatures: the operator makes both key Secrets (no owner: they outlive the
// datastore, as the data does), the node starts with the keystore from its Secret and the
// password kept out of the ConfigMap, and then:
//   - the on-disk canary: a marker written over CQL is nowhere in clear on the node's volume
//     (read on the Kind worker) while it is in the commit log; after the node's graceful restart
//     (preStop drains: the memtable is flushed) it reads back, and is in the SSTables in clear,
//     the limit of open-source Cassandra that the profile's notes state;
//   - a benchmark whose client seals five of ten fields (AES-256-GCM + Ed25519) reads back
//     every acknowledged write through the envelopes, and its runs say what the client applied.
func TestDataProtectedAtRestAndInTheClient(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "data", "restricted")
	applyProfile(t, c, "tls13-aes128-gcm")
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "sealed", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:    v1alpha1.EngineCassandra,
			Cassandra: smallCassandra(1),
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "tls13-aes128-gcm", EncryptionSettings: v1alpha1.EncryptionSettings{
				AtRest:     &v1alpha1.AtRestEncryption{Engine: &v1alpha1.EngineAtRest{}},
				ClientSide: &v1alpha1.ClientSideEncryption{Signature: v1alpha1.ClientEd25519, Fields: ptr.To[int32](5)},
			}},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	t.Logf("1-node datastore with at-rest and client-side protection Ready in %s", time.Since(start).Round(time.Second))
	n := cassandra.NamesOf(ds)
	for _, name := range []string{datakeys.AtRestSecret(ds), datakeys.ClientKeysSecret(ds)} {
		sec := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, sec); err != nil {
			t.Fatalf("Secret %s: %v", name, err)
		}
		if len(sec.OwnerReferences) > 0 {
			t.Errorf("Secret %s is owned by %v: the keys would go with the datastore object while the data stays", name, sec.OwnerReferences)
		}
		// The namespace is deleted at the end; these Secrets go with it.
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(ns.Name)); err != nil {
		t.Fatal(err)
	}
	password := secretValue(t, c, ns.Name, datakeys.AtRestSecret(ds), datakeys.PasswordFile)
	for _, cm := range cms.Items {
		for key, v := range cm.Data {
			if strings.Contains(v, password) {
				t.Errorf("ConfigMap %s/%s holds the at-rest keystore's password", cm.Name, key)
			}
		}
	}

	// The on-disk canary. The client writes at ONE with replication factor 1: the only copy is
	// on this node's volume.
	marker := dataplane.Marker(t)
	dir, node := dataDir(t, c, ds, n.Pod(0))
	writeMarker(t, c, ds, "canary-write", marker)
	// The encrypted commit log reaches the disk at each periodic sync (10 s).
	time.Sleep(12 * time.Second)
	if found := grepNode(t, node, marker, dir); found != "" {
		t.Fatalf("the marker is in clear on the node's volume before any flush:\n%s", found)
	}
	t.Logf("on-disk canary: no clear marker under %s on %s", dir, node)
	restartPod(t, c, ns.Name, n.Pod(0))
	if found := grepNode(t, node, marker, dir); !strings.Contains(found, "/data/e2e/kv-") {
		t.Errorf("after the drain the marker is not in the SSTables (found: %q): if Cassandra now encrypts them, update the profile's notes and this test", found)
	}
	readMarker(t, c, ds, "canary-read", marker)

	// A benchmark that seals five of ten fields in the client and reads back every write.
	b := sealedBenchmark(t, c, ds, true)
	for _, r := range b.Status.Runs {
		t.Logf("run %d %s: %d ops/s, %s %s, client side %q, client CPU %d ms, writes %+v", r.Index, r.Phase, r.ThroughputOpsPerSec,
			r.NegotiatedProtocol, r.NegotiatedCipherSuite, r.ClientSide, r.ClientCPUMillis, r.Writes)
		if r.ClientSide != "AES-GCM + Ed25519 on 5 fields" {
			t.Errorf("run %d: client side %q; want AES-GCM + Ed25519 on 5 fields", r.Index, r.ClientSide)
		}
		if w := r.Writes; w == nil || w.Checked == 0 || w.Verified != w.Checked {
			t.Errorf("run %d: writes %+v; want every acknowledged write read back through its envelope", r.Index, w)
		}
	}
}

func secretValue(t *testing.T, c client.Client, namespace, name, key string) string {
	t.Helper()
	sec := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, sec); err != nil {
		t.Fatal(err)
	}
	if len(sec.Data[key]) == 0 {
		t.Fatalf("Secret %s has no %s", name, key)
	}
	return string(sec.Data[key])
}

// dataDir is where a pod's data volume lives on its Kind worker (local-path's host directory),
// and the worker's name.
func dataDir(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, pod string) (string, string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: pod}, p); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: "data-" + pod}, pvc); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{}
	if err := c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		t.Fatal(err)
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, nodeName(t, p.Spec.NodeName)
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nodeName(t, p.Spec.NodeName)
	}
	t.Fatalf("PersistentVolume %s is neither hostPath nor local: %+v", pv.Name, pv.Spec.PersistentVolumeSource)
	return "", ""
}

// grepNode lists the files under dir on the Kind worker that hold marker in clear.
func grepNode(t *testing.T, node, marker, dir string) string {
	t.Helper()
	if !strings.HasPrefix(marker, "canary-") && !strings.HasPrefix(marker, "canary_") || !filepath.IsAbs(dir) || strings.ContainsAny(dir, "\x00\n") {
		t.Fatalf("refusing to search %q for %q", dir, marker)
	}
	// grep exits 1 when nothing matches: that is the answer, not an error.
	out, err := exec.Command("docker", "exec", node, "grep", "-r", "-l", "-a", "-F", "--", marker, dir).CombinedOutput()
	if code := exitCode(err); code > 1 {
		t.Fatalf("grep on %s: %v: %s", node, err, out)
	}
	return strings.TrimSpace(string(out))
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	return 255
}

// writeMarker and readMarker run cql-client against the datastore as its superuser, writing
// the marker (replication factor 1) or reading it back.
func writeMarker(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, name, marker string) {
	t.Helper()
	waitJob(t, c, cqlClientJob(t, c, ds, name, cassandra.NamesOf(ds).SuperuserSecret(), "--replication-factor=1", "--value="+marker))
}

func readMarker(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, name, marker string) {
	t.Helper()
	waitJob(t, c, cqlClientJob(t, c, ds, name, cassandra.NamesOf(ds).SuperuserSecret(), "--replication-factor=1", "--expect="+marker))
}

func waitJob(t *testing.T, c client.Client, job *batchv1.Job) {
	t.Helper()
	eventually(t, 3*time.Minute, "Job "+job.Name+" succeeds", func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		if job.Status.Failed > 2 {
			t.Fatalf("Job %s failed %d times", job.Name, job.Status.Failed)
		}
		if job.Status.Succeeded == 0 {
			return fmt.Errorf("succeeded %d, failed %d", job.Status.Succeeded, job.Status.Failed)
		}
		return nil
	})
}

// HBase on Kind with engine-level encryption at rest and client-side encryption: the Master and
// RegionServer start with the operator's keystore (a key provider HBase cannot load fails the
// encrypted table's creation), the benchmark driver creates YCSB's table with an encrypted
// column family and seals five of ten fields in the client, and every operation succeeds.
func TestHBaseDataProtectedAtRestAndInTheClient(t *testing.T) {
	c := newClient(t)
	ns := testNamespace(t, c, "hbase-data", "restricted")
	enc := liveEncryption(v1alpha1.ChannelDisabled)
	enc.AtRest = &v1alpha1.AtRestEncryption{Engine: &v1alpha1.EngineAtRest{}}
	enc.ClientSide = &v1alpha1.ClientSideEncryption{Signature: v1alpha1.ClientEd25519, Fields: ptr.To[int32](5)}
	ds := smallHBase("sealedlog", ns.Name, enc)
	t.Logf("HBase with at-rest and client-side protection Ready in %s", createHBase(t, c, ds).Round(time.Second))
	for _, name := range []string{datakeys.AtRestSecret(ds), datakeys.ClientKeysSecret(ds)} {
		secretValue(t, c, ns.Name, name, map[string]string{datakeys.AtRestSecret(ds): datakeys.PropertiesFile, datakeys.ClientKeysSecret(ds): "encryption-key-1"}[name])
	}
	b := sealedBenchmark(t, c, ds, false)
	for _, r := range b.Status.Runs {
		t.Logf("run %d %s: %d ops/s, %s, client side %q, client CPU %d ms, %s", r.Index, r.Phase, r.ThroughputOpsPerSec, r.NegotiatedProtocol, r.ClientSide, r.ClientCPUMillis, r.InvalidReason)
		if r.Phase != v1alpha1.RunSucceeded || r.ClientSide != "AES-GCM + Ed25519 on 5 fields" {
			t.Errorf("run %d: %s, client side %q; want a successful run with AES-GCM + Ed25519 on 5 fields", r.Index, r.Phase, r.ClientSide)
		}
	}
}

// sealedBenchmark runs one 30 s workload-A run against ds, whose clients apply its client-side
// protection, and returns the benchmark once it succeeded.
func sealedBenchmark(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, verifyWrites bool) *v1alpha1.DatastoreBenchmark {
	t.Helper()
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-a", Namespace: ds.Namespace},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:       v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: ds.Name}},
			Workload:     v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](2000), Duration: &metav1.Duration{Duration: 30 * time.Second}},
			Load:         v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, VirtualUsers: ptr.To[int32](8)},
			Repetitions:  ptr.To[int32](1),
			WarmUp:       &metav1.Duration{Duration: 5 * time.Second},
			VerifyWrites: verifyWrites,
		},
	}
	runBenchmark(t, c, b, 10*time.Minute)
	return b
}

// restartPod deletes a datastore's pod gracefully (its preStop drains the node) and waits for
// its replacement to be ready.
func restartPod(t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	uid := pod.UID
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, "pod "+name+" restarts", func() error {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		if p.UID == uid || !podReady(p) {
			return fmt.Errorf("pod %s not replaced and ready yet", p.Name)
		}
		return nil
	})
}
