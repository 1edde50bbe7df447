package controllers

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/benchrun"
	"secured.dev/operator/internal/cpuacct"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/test/dataplane"
)

// A run's CPU comes from the kubelets' counters in Prometheus for the pods the API server says
// make up the datastore: a real process keeps the Cassandra container's CPU busy, a real
// Prometheus scrapes the kernel's account of it, and the run's record must match the kernel.
func TestBenchmarkRunAccountsTheDatastoresCPU(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	busy := dataplane.StartProcess(t, "sh", "-c", "while :; do :; done")
	idle := dataplane.StartProcess(t, "sleep", "600")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cpu-db-0", Namespace: "default", Labels: map[string]string{"app.kubernetes.io/instance": "cpu-db", "app.kubernetes.io/name": "cassandra"}},
		Spec: corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{
			{Name: "cassandra", Image: "secured.dev/cassandra:test"}, {Name: "tls-reloader", Image: "secured.dev/cassandra:test"}}},
	}
	create(t, pod)
	exporter := dataplane.KubeletResourceMetrics(t, "127.0.0.121:0", "default", "worker-1",
		map[string]int{"cpu-db-0/cassandra": busy, "cpu-db-0/tls-reloader": idle})
	prom := dataplane.StartPrometheus(t, "127.0.0.121:19090", exporter)
	u, err := cpuacct.ParseURL("http://" + prom.Address)
	g.Expect(err).NotTo(HaveOccurred())

	r := &DatastoreBenchmarkReconciler{Client: env.Client, Options: Options{CPUAccounting: &cpuacct.Prometheus{URL: u}, CPUSettle: 3 * time.Second}}
	s := &benchmarkScope{b: &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "cpu-bench", Namespace: "default"}}, target: benchmark.Target{Datastore: "cpu-db"}}
	time.Sleep(3 * time.Second)
	start := time.Now()
	before := dataplane.ProcessCPU(t, busy)
	time.Sleep(10 * time.Second)
	out := &benchrun.Outcome{
		Summary: benchresult.Summary{Start: start, End: time.Now(), Operations: 200_000},
		Clients: map[string]string{"cpu-bench-client": "worker-1"},
	}
	truth := dataplane.ProcessCPU(t, busy) - before

	wait := r.cpuSettling(s, out)
	g.Expect(wait).To(BeNumerically("~", 3*time.Second, time.Second), "a run is recorded once its last samples can have reached Prometheus")
	time.Sleep(wait)
	cpu := r.accountCPU(ctx, s, out)
	t.Logf("kernel %.2f CPU-s; run %+v", truth, *cpu)
	g.Expect(cpu.Unavailable).To(BeEmpty())
	g.Expect(float64(cpu.ServerMillis)).To(BeNumerically("~", truth*1000, truth*150), "the Cassandra container's CPU, within 15% of the kernel's")
	g.Expect(strconv.ParseFloat(cpu.ServerMicrosPerOp, 64)).To(BeNumerically("~", float64(cpu.ServerMillis)*1000/200_000, 0.01))
	g.Expect(cpu.SidecarMillis).To(BeNumerically("<", 100), "the sleeping sidecar")
	g.Expect(cpu.CoveredSeconds).To(BeNumerically(">=", 5))

	// With the client's per-second series, an operation's CPU is the server's CPU between its
	// samples over the operations completed between the same instants.
	end := out.Summary.End
	out.Summary.SeriesStepSeconds, out.Summary.Series = 1, nil
	for range int(end.Sub(start).Seconds()) {
		out.Summary.Series = append(out.Summary.Series, 20_000)
	}
	out.Summary.Operations = int64(20_000 * end.Sub(start).Seconds())
	matched := r.accountCPU(ctx, s, out)
	t.Logf("matched: %+v", *matched)
	g.Expect(strconv.ParseFloat(matched.ServerMicrosPerOp, 64)).To(BeNumerically("~", truth*1e6/float64(out.Summary.Operations), truth*1e6/float64(out.Summary.Operations)*0.15),
		"the kernel's CPU per operation at 20,000 operations per second, within 15%")

	// What cannot be measured says why, and never blocks the run.
	external := &benchmarkScope{b: s.b, target: benchmark.Target{Hosts: []string{"cassandra.example:9042"}}}
	g.Expect(r.cpuSettling(external, out)).To(BeZero())
	g.Expect(r.accountCPU(ctx, external, out).Unavailable).To(Equal("an external target's servers are not in this cluster"))
	gone := &benchmarkScope{b: s.b, target: benchmark.Target{Datastore: "no-such-db"}}
	g.Expect(r.accountCPU(ctx, gone, out).Unavailable).To(Equal("no datastore pod, or no node, to account for"))
	r.Options.CPUAccounting = nil
	g.Expect(r.cpuSettling(s, out)).To(BeZero())
	g.Expect(r.accountCPU(ctx, s, out).Unavailable).To(ContainSubstring("--cpu-accounting-prometheus-url"))
}
