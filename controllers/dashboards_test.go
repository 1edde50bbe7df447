package controllers

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/dashboards"
	"secured.dev/operator/internal/study"
	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/internal/verify"
)

// The profile-comparison and security-health dashboards against a real Prometheus scraping
// the operator's metrics endpoint: the operator publishes a datastore, a benchmark and a study
// from their status (as its reconcilers do), and every panel's and variable's query must parse
// and return data. The benchmark-run dashboard is checked where real k6 clients write
// (internal/k6ycsb).
func TestDashboardQueriesReturnData(t *testing.T) {
	g := NewWithT(t)
	ln, err := net.Listen("tcp", "127.0.0.94:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	const ns = "dash"
	ds := &v1alpha1.SecuredDatastore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"},
		Spec: v1alpha1.SecuredDatastoreSpec{Engine: v1alpha1.EngineCassandra},
		Status: v1alpha1.SecuredDatastoreStatus{Phase: v1alpha1.PhaseReady, Nodes: 3, ReadyNodes: 3, Encryption: &v1alpha1.EncryptionStatus{
			Profile: "tls13-aes128-gcm",
			Observed: []v1alpha1.ObservedChannel{{Channel: verify.ChannelClientToNode, Endpoint: "10.0.0.1:9042", Protocols: []string{"TLSv1.3"},
				CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}, PlaintextAccepted: ptr.To(false),
				Certificate: &v1alpha1.ObservedCertificate{NotAfter: metav1.NewTime(time.Now().Add(90 * 24 * time.Hour))}}},
		}}}
	publishDatastore(ds)
	encryptionVerified.WithLabelValues(ns, ds.Name, verify.ChannelClientToNode).Set(1)
	probeDuration.WithLabelValues(verify.ChannelClientToNode).Observe(0.3)

	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-a"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{Target: v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: ds.Name}}, Workload: v1alpha1.Workload{Preset: "A"}},
		Status: v1alpha1.DatastoreBenchmarkStatus{Phase: v1alpha1.BenchmarkSucceeded, Profile: "tls13-aes128-gcm", MedianThroughputOpsPerSec: 4000,
			Runs: []v1alpha1.BenchmarkRun{{Index: 0, Phase: v1alpha1.RunSucceeded, ThroughputOpsPerSec: 4000,
				Latencies: []v1alpha1.LatencySummary{{Operation: "read", Count: 1000, P50Micros: 900, P95Micros: 2000, P99Micros: 4000, MaxMicros: 9000}}}}}}
	publishBenchmark(b)

	st := &v1alpha1.TradeoffStudy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cost"},
		Spec: v1alpha1.TradeoffStudySpec{Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
			Matrix:   v1alpha1.StudyMatrix{Profiles: []string{"plaintext", "tls13-aes128-gcm"}, Baseline: "plaintext"},
			Workload: v1alpha1.Workload{Preset: "A"},
			Decision: v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](30)}}}
	cells := study.Cells(st.Name, &st.Spec, map[string]study.Profile{"plaintext": {}, "tls13-aes128-gcm": {Rank: 120}})
	for i, base := range []int64{5000, 4000} {
		for k := range 6 {
			cells[i].Runs = append(cells[i].Runs, v1alpha1.StudyRun{Round: int32(k + 1), ThroughputOpsPerSec: base + int64(13*k), P99Micros: 3000,
				ServerCPUMicrosPerOp: strconv.Itoa(200 + 40*i + k), BackgroundCores: "0.30"})
		}
	}
	a := study.Analyze(st.Name, &st.Spec, 1, cells)
	st.Status = v1alpha1.TradeoffStudyStatus{Phase: v1alpha1.StudySucceeded, Cells: a.Cells, Recommendation: a.Recommendation}
	publishStudy(st)
	t.Cleanup(func() { forgetMetrics(ns, ds.Name); forgetBenchmark(ns, b.Name); forgetStudy(ns, st.Name) })

	prom := dataplane.StartPrometheus(t, "127.0.0.95:19095", ln.Addr().String())
	values := map[string]string{"namespace": ns, "study": st.Name, "datastore": ds.Name, "__rate_interval": "1m"}
	ctx := context.Background()
	for _, d := range []dashboards.Dashboard{dashboards.ProfileComparison(), dashboards.SecurityHealth()} {
		for _, q := range d.Queries() {
			expr := dashboards.Substitute(q.Expr, values)
			g.Eventually(func() error {
				res, err := prom.Query(ctx, expr)
				if err != nil {
					return err
				}
				if len(res) == 0 {
					return fmt.Errorf("%s: no data for %s", q.Where, expr)
				}
				return nil
			}, 30*time.Second, time.Second).Should(Succeed())
		}
	}
}
