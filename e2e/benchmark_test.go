//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/dataplane"
)

// benchmarkDatastore runs a short workload-A DatastoreBenchmark against a Ready datastore: the
// operator's Jobs (k6 for Cassandra, YCSB's JVM client for HBase) load and measure it with the
// datastore's security (protocol and suite as the client reports them; "" is not checked), the
// results land in status, and the clients' samples are in Prometheus as native histograms.
func benchmarkDatastore(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, protocol, suite string) {
	t.Helper()
	ctx := context.Background()
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-a", Namespace: ds.Namespace},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target: v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: ds.Name}},
			// 45 s: the kubelet refreshes its CPU counters every 10-15 s, and the server CPU of a
			// run needs two samples of every container over three tenths of its window. At 30 s
			// one of HBase's six containers had a single sample in both runs (seen on Kind).
			Workload:    v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](5000), Duration: &metav1.Duration{Duration: 45 * time.Second}},
			Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, VirtualUsers: ptr.To[int32](16)},
			Repetitions: ptr.To[int32](2),
			WarmUp:      &metav1.Duration{Duration: 5 * time.Second},
			// The first run warms up until steady, the second for warmUp; with either driver
			// each run keeps its per-second series.
			SteadyWarmUp: &v1alpha1.SteadyWarmUp{Minimum: metav1.Duration{Duration: 10 * time.Second}, Maximum: metav1.Duration{Duration: 40 * time.Second}},
		},
	}
	runBenchmark(t, c, b, 8*time.Minute)
	accounted := 0
	for _, r := range b.Status.Runs {
		t.Logf("run %d %s: %d ops/s, %s %s, client CPU %d ms, server CPU %+v, latencies %+v %s", r.Index, r.Phase, r.ThroughputOpsPerSec,
			r.NegotiatedProtocol, r.NegotiatedCipherSuite, r.ClientCPUMillis, r.CPU, r.Latencies, r.InvalidReason)
		if r.Phase == v1alpha1.RunSucceeded && r.CPU != nil && r.CPU.Unavailable == "" && r.CPU.ServerMillis > 0 && r.CPU.ServerMicrosPerOp != "" {
			accounted++
		}
		t.Logf("run %d: warm-up %s s (steady %v), throughput CV %s, series %v (step %d s)", r.Index, r.WarmUpSeconds, ptr.Deref(r.WarmUpSteady, false), r.ThroughputCV, r.ThroughputSeries, r.SeriesStepSeconds)
		if r.Phase == v1alpha1.RunSucceeded && (r.ThroughputCV == "" || len(r.ThroughputSeries) < 20 || (r.Index == 0) != (r.WarmUpSeconds != "")) {
			t.Errorf("run %d: CV %q over %d seconds, warm-up until steady %q; want a CV over the window and a steady warm-up before the first run only",
				r.Index, r.ThroughputCV, len(r.ThroughputSeries), r.WarmUpSeconds)
		}
		if r.Phase == v1alpha1.RunSucceeded && (r.NegotiatedCipherSuite != suite || (protocol != "" && r.NegotiatedProtocol != protocol) || r.ThroughputOpsPerSec <= 0 || len(r.Latencies) != 2) {
			t.Errorf("run %d: %s %s at %d ops/s with %d operation types; want %s %s, reads and updates", r.Index, r.NegotiatedProtocol, r.NegotiatedCipherSuite,
				r.ThroughputOpsPerSec, len(r.Latencies), protocol, suite)
		}
	}
	if b.Status.MedianThroughputOpsPerSec <= 0 {
		t.Errorf("median throughput %d", b.Status.MedianThroughputOpsPerSec)
	}
	// make deploy points the operator at a Prometheus that scrapes the kubelets every 5 s.
	if accounted == 0 {
		t.Errorf("no run has the datastore's CPU from the kubelets' counters")
	}

	// Percentiles from the native histograms the clients remote-wrote, per operation.
	q := fmt.Sprintf(`histogram_quantile(0.99, sum by (op, suite) (rate(k6_ycsb_operation_duration_seconds{benchmark=%q,namespace=%q,scenario="run"}[10m])))`, b.Name, b.Namespace)
	eventually(t, time.Minute, "p99 per operation in Prometheus", func() error {
		res, err := promQuery(ctx, q)
		if err != nil {
			return err
		}
		if len(res) != 2 {
			return fmt.Errorf("%d series for %s: %v", len(res), q, res)
		}
		for _, r := range res {
			if suite != "" && r.Metric["suite"] != suite {
				return fmt.Errorf("series %v: want suite %s", r.Metric, suite)
			}
			t.Logf("Prometheus: p99 %s = %s s", r.Metric["op"], r.Value[1])
		}
		return nil
	})
}

// runBenchmark creates b and waits until it succeeds, logging each change of phase and runs;
// a failed benchmark fails the test with its Complete condition and runs.
func runBenchmark(t *testing.T, c client.Client, b *v1alpha1.DatastoreBenchmark, timeout time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	start, last := time.Now(), ""
	eventually(t, timeout, "benchmark "+b.Name+" succeeds", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		line := fmt.Sprintf("%s, %d runs", b.Status.Phase, len(b.Status.Runs))
		if line != last {
			t.Logf("%6s benchmark %s", time.Since(start).Round(time.Second), line)
			last = line
		}
		switch b.Status.Phase {
		case v1alpha1.BenchmarkSucceeded:
			return nil
		case v1alpha1.BenchmarkFailed:
			t.Fatalf("benchmark failed: %+v, runs %+v", meta.FindStatusCondition(b.Status.Conditions, "Complete"), b.Status.Runs)
		}
		return fmt.Errorf("phase %s", b.Status.Phase)
	})
}

// promQuery asks the Kind cluster's Prometheus through the API server's service proxy.
func promQuery(ctx context.Context, query string) ([]dataplane.Sample, error) {
	cs, err := kubernetes.NewForConfig(ctrl.GetConfigOrDie())
	if err != nil {
		return nil, err
	}
	raw, err := cs.CoreV1().Services("monitoring").ProxyGet("http", "prometheus", "9090", "/api/v1/query", map[string]string{"query": query}).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w (%s)", query, err, raw)
	}
	return dataplane.DecodeQuery(query, raw)
}
