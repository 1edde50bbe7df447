package controllers

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"secured.dev/operator/api/v1alpha1"
)

// Metrics the operator exports on its metrics endpoint (README, "Metrics").
var (
	encryptionVerified = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_encryption_verified",
		Help: "1 when every endpoint of the channel accepted exactly the effective profile at the last wire probe, 0 when one drifted.",
	}, []string{"namespace", "datastore", "channel"})
	probeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "secured_datastore_probe_duration_seconds",
		Help:    "Time to scan one endpoint: one ClientHello per protocol and catalogue suite, a full handshake and the plaintext test.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10},
	}, []string{"channel"})

	benchmarkLabels = []string{"namespace", "benchmark", "datastore", "profile", "workload"}
	benchmarkRunOps = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_benchmark_run_throughput_ops",
		Help: "Operations per second of one valid benchmark run (status.runs[].throughputOpsPerSec).",
	}, append(benchmarkLabels, "run"))
	benchmarkRunLatency = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_benchmark_run_latency_seconds",
		Help: "Latency percentile of one operation type in one valid benchmark run, as the clients measured it.",
	}, append(benchmarkLabels, "run", "op", "quantile"))
	benchmarkMedianOps = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_benchmark_median_throughput_ops",
		Help: "Median throughput over a succeeded benchmark's valid runs.",
	}, benchmarkLabels)
)

func init() {
	ctrlmetrics.Registry.MustRegister(encryptionVerified, probeDuration, benchmarkRunOps, benchmarkRunLatency, benchmarkMedianOps)
}

// forgetMetrics drops the series of a datastore that no longer exists.
func forgetMetrics(namespace, name string) {
	encryptionVerified.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "datastore": name})
}

// publishBenchmark exports a benchmark's results from its status, so the series survive an
// operator restart (the next reconcile publishes them again).
func publishBenchmark(b *v1alpha1.DatastoreBenchmark) {
	workload := string(b.Spec.Workload.Preset)
	if b.Spec.Workload.Proportions != nil || workload == "" {
		workload = "custom"
	}
	datastore := "external"
	if ref := b.Spec.Target.DatastoreRef; ref != nil {
		datastore = ref.Name
	}
	base := []string{b.Namespace, b.Name, datastore, b.Status.Profile, workload}
	for _, r := range b.Status.Runs {
		if r.Phase != v1alpha1.RunSucceeded {
			continue
		}
		run := strconv.Itoa(int(r.Index))
		benchmarkRunOps.WithLabelValues(append(base, run)...).Set(float64(r.ThroughputOpsPerSec))
		for _, l := range r.Latencies {
			for q, us := range map[string]int64{"0.5": l.P50Micros, "0.95": l.P95Micros, "0.99": l.P99Micros, "1": l.MaxMicros} {
				benchmarkRunLatency.WithLabelValues(append(base, run, l.Operation, q)...).Set(float64(us) / 1e6)
			}
		}
	}
	if b.Status.Phase == v1alpha1.BenchmarkSucceeded {
		benchmarkMedianOps.WithLabelValues(base...).Set(float64(b.Status.MedianThroughputOpsPerSec))
	}
}

// forgetBenchmark drops the series of a benchmark that no longer exists.
func forgetBenchmark(namespace, name string) {
	for _, v := range []*prometheus.GaugeVec{benchmarkRunOps, benchmarkRunLatency, benchmarkMedianOps} {
		v.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "benchmark": name})
	}
}
