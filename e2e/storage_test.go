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
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/stats"
)

// The storage workload (seed 002's question as a DatastoreBenchmark) on Kind: fio reads 8 KiB
// blocks at random from a file on a scratch volume of the "encryptable" class, once for a
// datastore in clear and once for one whose profile encrypts volumes. The encrypted
// benchmark's pods prepare their volume with the datastore's own init container (it reports
// the key it encrypted under), the plain one's have none; both report I/Os and bytes per
// second, read latencies, fio's CPU, and say why the datastore's CPU is not accounted.
func TestStorageBenchmarkMeasuresPlainAndEncryptedVolumes(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "storage", "restricted")
	applyProfile(t, c, "plaintext")
	datastores := map[string]*v1alpha1.SecuredDatastore{}
	start := time.Now()
	for _, name := range []string{"plain-disk", "sealed-disk"} {
		topology := smallCassandra(1)
		topology.Storage.StorageClassName = ptr.To("encryptable")
		ds := &v1alpha1.SecuredDatastore{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name},
			Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra, Cassandra: topology,
				Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "plaintext"}},
		}
		if name == "sealed-disk" {
			ds.Spec.Encryption.AtRest = &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{}}
		}
		if err := c.Create(ctx, ds); err != nil {
			t.Fatal(err)
		}
		datastores[name] = ds
	}
	for _, ds := range datastores {
		waitReady(t, c, ds, start, "ready")
	}
	t.Logf("two 1-node datastores on the encryptable class Ready in %s", time.Since(start).Round(time.Second))

	medians := map[string][]float64{}
	for _, name := range []string{"plain-disk", "sealed-disk"} {
		b := &v1alpha1.DatastoreBenchmark{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-rr", Namespace: ns.Name},
			Spec: v1alpha1.DatastoreBenchmarkSpec{
				Target: v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: name}},
				Workload: v1alpha1.Workload{Duration: &metav1.Duration{Duration: 10 * time.Second},
					Storage: &v1alpha1.StorageWorkload{Pattern: v1alpha1.StorageRandomRead, FileSizeMiB: ptr.To[int32](128)}},
				Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
				Repetitions: ptr.To[int32](3),
			},
		}
		began := time.Now()
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		initSaid := ""
		eventually(t, 10*time.Minute, "storage benchmark "+b.Name+" succeeds", func() error {
			// The Jobs' pods go with their Jobs once collected: look at them while they run.
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(ns.Name), client.MatchingLabels{benchmark.LabelBenchmark: b.Name}); err != nil {
				return err
			}
			for _, p := range pods.Items {
				if n := len(p.Spec.InitContainers); name == "plain-disk" && n > 0 {
					t.Fatalf("pod %s of the plain datastore's benchmark has init containers %v", p.Name, p.Spec.InitContainers)
				}
				for _, s := range p.Status.InitContainerStatuses {
					if s.Name == podtemplate.VolumeEncryptionContainer && s.State.Terminated != nil && s.State.Terminated.ExitCode == 0 {
						initSaid = p.Name
					}
				}
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			switch b.Status.Phase {
			case v1alpha1.BenchmarkSucceeded:
				return nil
			case v1alpha1.BenchmarkFailed:
				t.Fatalf("benchmark failed: %+v, runs %+v", meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionComplete), b.Status.Runs)
			}
			return fmt.Errorf("phase %s, %d runs", b.Status.Phase, len(b.Status.Runs))
		})
		if name == "sealed-disk" && initSaid == "" {
			t.Errorf("no pod of %s was seen preparing its encrypted scratch volume (init container %s)", b.Name, podtemplate.VolumeEncryptionContainer)
		}
		for _, r := range b.Status.Runs {
			if r.Phase != v1alpha1.RunSucceeded {
				continue
			}
			if r.ThroughputOpsPerSec <= 0 || r.BytesPerSec < r.ThroughputOpsPerSec*8192*9/10 || r.BytesPerSec > r.ThroughputOpsPerSec*8192*11/10 {
				t.Errorf("run %d: %d IOPS of 8 KiB but %d bytes/s", r.Index, r.ThroughputOpsPerSec, r.BytesPerSec)
			}
			if len(r.Latencies) != 1 || r.Latencies[0].Operation != "read" || r.ClientCPUMillis <= 0 {
				t.Errorf("run %d: latencies %+v, fio's CPU %d ms", r.Index, r.Latencies, r.ClientCPUMillis)
			}
			if r.CPU == nil || !strings.Contains(r.CPU.Unavailable, "storage workload") {
				t.Errorf("run %d: CPU %+v; a storage run says why the datastore's CPU is not its cost", r.Index, r.CPU)
			}
			medians[name] = append(medians[name], float64(r.BytesPerSec)/1e6)
		}
		t.Logf("%s: random 8 KiB reads, %d runs in %s, median %d IOPS, MB/s per run %.1f", b.Name, len(b.Status.Runs),
			time.Since(began).Round(time.Second), b.Status.MedianThroughputOpsPerSec, medians[name])
	}
	t.Logf("median MB/s: plain %.1f, encrypted %.1f (3 unpaired runs each: a description, not a comparison; a TradeoffStudy pairs them)",
		stats.Median(medians["plain-disk"]), stats.Median(medians["sealed-disk"]))
}
