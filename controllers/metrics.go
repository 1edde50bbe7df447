package controllers

import (
	"slices"
	"strconv"
	"strings"

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

	datastoreInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_info",
		Help: "1 per datastore with its engine, effective profile and phase; count by phase or profile with sum by (...).",
	}, []string{"namespace", "datastore", "engine", "profile", "phase"})
	datastoreNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_nodes",
		Help: "Nodes of a datastore by state: desired (spec) and ready (status.readyNodes); a roll shows as ready below desired.",
	}, []string{"namespace", "datastore", "state"})
	endpointLabels   = []string{"namespace", "datastore", "channel", "endpoint"}
	acceptedProtocol = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_accepted_protocol",
		Help: "1 for each TLS protocol an endpoint accepted at the last wire probe.",
	}, append(endpointLabels, "protocol"))
	acceptedSuite = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_accepted_cipher_suite",
		Help: "1 for each cipher suite an endpoint accepted at the last wire probe.",
	}, append(endpointLabels, "suite"))
	plaintextAccepted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_plaintext_accepted",
		Help: "1 when an endpoint answered a plaintext client at the last wire probe, 0 when it refused.",
	}, endpointLabels)
	certificateExpiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_certificate_expiry_timestamp_seconds",
		Help: "Expiry (Unix time) of the certificate an endpoint presented at the last wire probe; subtract time() for the seconds left.",
	}, endpointLabels)
	datastoreGauges = []*prometheus.GaugeVec{encryptionVerified, datastoreInfo, datastoreNodes, acceptedProtocol, acceptedSuite, plaintextAccepted, certificateExpiry}

	benchmarkLabels = []string{"namespace", "benchmark", "datastore", "profile", "workload"}
	benchmarkRunOps = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_benchmark_run_throughput_ops",
		Help: "Operations per second of one valid benchmark run (status.runs[].throughputOpsPerSec).",
	}, append(benchmarkLabels, "run"))
	benchmarkRunLatency = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_benchmark_run_latency_seconds",
		Help: "Latency percentile of one operation type in one valid benchmark run, as the clients measured it.",
	}, append(benchmarkLabels, "run", "op", "quantile"))
	benchmarkRunCPU = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_benchmark_run_cpu_seconds",
		Help: "CPU time spent during the measured window of one valid benchmark run, by part: server (the datastore's containers), sidecars, background (everything else on their nodes), client (the benchmark clients' own account).",
	}, append(benchmarkLabels, "run", "part"))
	benchmarkMedianOps = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "secured_datastore_benchmark_median_throughput_ops",
		Help: "Median throughput over a succeeded benchmark's valid runs.",
	}, benchmarkLabels)
)

// Study series, one per measured cell; bounds of 95% intervals are series of their own so a
// dashboard can draw them as a band.
var (
	studyLabels = []string{"namespace", "study", "engine", "profile", "acceleration", "nodes", "workload"}
	studyGauge  = func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "secured_datastore_study_" + name, Help: help}, studyLabels)
	}
	studyThroughput       = studyGauge("throughput_ops", "Median throughput of a study cell over its valid repetitions.")
	studyThroughputLow    = studyGauge("throughput_ops_ci_low", "Lower bound of the 95% confidence interval of a cell's median throughput (from 6 repetitions).")
	studyThroughputHigh   = studyGauge("throughput_ops_ci_high", "Upper bound of the 95% confidence interval of a cell's median throughput (from 6 repetitions).")
	studyOverhead         = studyGauge("overhead_ratio", "Throughput lost against the baseline of the same acceleration and size (0.2 = 20%; negative = faster).")
	studyOverheadLow      = studyGauge("overhead_ratio_ci_low", "Lower bound of the 95% confidence interval of a cell's overhead.")
	studyOverheadHigh     = studyGauge("overhead_ratio_ci_high", "Upper bound of the 95% confidence interval of a cell's overhead.")
	studyServerCPU        = studyGauge("server_cpu_seconds_per_op", "Median over repetitions of the datastore pods' CPU time per operation, sidecars included (a VPN tunnel encrypts in its sidecar), from the kubelets' counters.")
	studyCPUOverhead      = studyGauge("server_cpu_overhead_ratio", "Operations per server CPU-second lost against the baseline of the same acceleration and size (0.2 = 20%: an operation costs 1.25 times the CPU).")
	studyCPUOverheadLow   = studyGauge("server_cpu_overhead_ratio_ci_low", "Lower bound of the 95% confidence interval of a cell's server CPU overhead.")
	studyCPUOverheadHigh  = studyGauge("server_cpu_overhead_ratio_ci_high", "Upper bound of the 95% confidence interval of a cell's server CPU overhead.")
	studyP99              = studyGauge("p99_latency_seconds", "Median over repetitions of a cell's p99 latency (slowest operation type).")
	studyRecommendedCells = studyGauge("recommended", "1 for the cells of the recommended profile, 0 for the others.")
	studyGauges           = []*prometheus.GaugeVec{studyThroughput, studyThroughputLow, studyThroughputHigh, studyOverhead, studyOverheadLow, studyOverheadHigh,
		studyServerCPU, studyCPUOverhead, studyCPUOverheadLow, studyCPUOverheadHigh, studyP99, studyRecommendedCells}
)

func init() {
	ctrlmetrics.Registry.MustRegister(probeDuration, benchmarkRunOps, benchmarkRunLatency, benchmarkRunCPU, benchmarkMedianOps)
	for _, g := range append(slices.Clone(datastoreGauges), studyGauges...) {
		ctrlmetrics.Registry.MustRegister(g)
	}
}

// publishStudy exports a study's per-cell results from its status.
func publishStudy(st *v1alpha1.TradeoffStudy) {
	workload := string(st.Spec.Workload.Preset)
	if st.Spec.Workload.Proportions != nil || workload == "" {
		workload = "custom"
	}
	for _, c := range st.Status.Cells {
		if c.RunsDone == 0 {
			continue
		}
		l := []string{st.Namespace, st.Name, string(st.Spec.Template.Engine), c.Profile, string(c.Acceleration), strconv.Itoa(int(c.Nodes)), workload}
		studyThroughput.WithLabelValues(l...).Set(float64(c.MedianThroughputOpsPerSec))
		setRange(studyThroughputLow, studyThroughputHigh, l, c.ThroughputCI95, 1)
		if v, err := strconv.ParseFloat(c.OverheadPercent, 64); err == nil {
			studyOverhead.WithLabelValues(l...).Set(v / 100)
		}
		setRange(studyOverheadLow, studyOverheadHigh, l, c.OverheadCI95, 0.01)
		if v, err := strconv.ParseFloat(c.ServerCPUMicrosPerOp, 64); err == nil {
			studyServerCPU.WithLabelValues(l...).Set(v / 1e6)
		}
		if v, err := strconv.ParseFloat(c.ServerCPUOverheadPercent, 64); err == nil {
			studyCPUOverhead.WithLabelValues(l...).Set(v / 100)
		}
		setRange(studyCPUOverheadLow, studyCPUOverheadHigh, l, c.ServerCPUOverheadCI95, 0.01)
		studyP99.WithLabelValues(l...).Set(float64(c.P99Micros) / 1e6)
		recommended := 0.0
		if rec := st.Status.Recommendation; rec != nil && rec.Profile == c.Profile {
			recommended = 1
		}
		studyRecommendedCells.WithLabelValues(l...).Set(recommended)
	}
}

// setRange sets two gauges from a "low..high" status string, scaled.
func setRange(low, high *prometheus.GaugeVec, labels []string, r string, scale float64) {
	lo, hi, ok := strings.Cut(r, "..")
	if !ok {
		return
	}
	l, errL := strconv.ParseFloat(lo, 64)
	h, errH := strconv.ParseFloat(hi, 64)
	if errL == nil && errH == nil {
		low.WithLabelValues(labels...).Set(l * scale)
		high.WithLabelValues(labels...).Set(h * scale)
	}
}

// forgetStudy drops the series of a study that no longer exists.
func forgetStudy(namespace, name string) {
	for _, g := range studyGauges {
		g.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "study": name})
	}
}

// forgetMetrics drops the series of a datastore that no longer exists.
func forgetMetrics(namespace, name string) {
	for _, g := range datastoreGauges {
		g.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "datastore": name})
	}
}

// publishDatastore exports a datastore's phase, nodes and what its last wire probe observed,
// from status; series of endpoints and phases that are gone are dropped.
func publishDatastore(ds *v1alpha1.SecuredDatastore) {
	id := prometheus.Labels{"namespace": ds.Namespace, "datastore": ds.Name}
	for _, g := range []*prometheus.GaugeVec{datastoreInfo, acceptedProtocol, acceptedSuite, plaintextAccepted, certificateExpiry} {
		g.DeletePartialMatch(id)
	}
	profile := "inline"
	if enc := ds.Status.Encryption; enc != nil && enc.Profile != "" {
		profile = enc.Profile
	}
	datastoreInfo.WithLabelValues(ds.Namespace, ds.Name, string(ds.Spec.Engine), profile, string(ds.Status.Phase)).Set(1)
	datastoreNodes.WithLabelValues(ds.Namespace, ds.Name, "desired").Set(float64(ds.Status.Nodes))
	datastoreNodes.WithLabelValues(ds.Namespace, ds.Name, "ready").Set(float64(ds.Status.ReadyNodes))
	if ds.Status.Encryption == nil {
		return
	}
	for _, o := range ds.Status.Encryption.Observed {
		l := []string{ds.Namespace, ds.Name, o.Channel, o.Endpoint}
		for _, p := range o.Protocols {
			acceptedProtocol.WithLabelValues(append(l, p)...).Set(1)
		}
		for _, suite := range o.CipherSuites {
			acceptedSuite.WithLabelValues(append(l, suite)...).Set(1)
		}
		if o.PlaintextAccepted != nil {
			v := 0.0
			if *o.PlaintextAccepted {
				v = 1
			}
			plaintextAccepted.WithLabelValues(l...).Set(v)
		}
		if c := o.Certificate; c != nil && !c.NotAfter.IsZero() {
			certificateExpiry.WithLabelValues(l...).Set(float64(c.NotAfter.Unix()))
		}
	}
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
		if r.ClientCPUMillis > 0 {
			benchmarkRunCPU.WithLabelValues(append(base, run, "client")...).Set(float64(r.ClientCPUMillis) / 1000)
		}
		if c := r.CPU; c != nil && c.Unavailable == "" {
			parts := map[string]int64{"server": c.ServerMillis, "sidecars": c.SidecarMillis, "background": c.BackgroundMillis}
			if c.BackgroundUnavailable != "" {
				delete(parts, "background")
			}
			for part, ms := range parts {
				benchmarkRunCPU.WithLabelValues(append(base, run, part)...).Set(float64(ms) / 1000)
			}
		}
	}
	if b.Status.Phase == v1alpha1.BenchmarkSucceeded {
		benchmarkMedianOps.WithLabelValues(base...).Set(float64(b.Status.MedianThroughputOpsPerSec))
	}
}

// forgetBenchmark drops the series of a benchmark that no longer exists.
func forgetBenchmark(namespace, name string) {
	for _, v := range []*prometheus.GaugeVec{benchmarkRunOps, benchmarkRunLatency, benchmarkRunCPU, benchmarkMedianOps} {
		v.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "benchmark": name})
	}
}
