package controllers

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/benchrun"
	"secured.dev/operator/internal/cpuacct"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/test/dataplane"
)

// A run's CPU comes from the kubelets' counters in Prometheus for the pods the API server says
// make up the datastore: a real process keeps the Cassandra container's CPU busy, a real
// Prometheus scrapes the kernel's account of it, and the run's record must match the kernel at
// the rate the process ran between the samples inside the window (what a loaded machine gives a
// busy loop changes from second to second; see internal/cpuacct's test).
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
	kubelet := dataplane.KubeletResourceMetrics(t, "127.0.0.121:0", "default", "worker-1",
		map[string]int{"cpu-db-0/cassandra": busy, "cpu-db-0/tls-reloader": idle})
	prom := dataplane.StartPrometheus(t, "127.0.0.121:19090", kubelet.Address)
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
	whole := dataplane.ProcessCPU(t, busy) - before

	account := func(s *benchmarkScope, out *benchrun.Outcome) *v1alpha1.RunCPU {
		t.Helper()
		cpu, again := r.accountCPU(ctx, s, out)
		g.Expect(again).To(BeZero(), "figures the run need not wait for")
		return cpu
	}

	// Until Prometheus holds a sample after the window, samples inside it may still be on
	// their way: the run looks again shortly, and records nothing yet.
	ahead := *out
	ahead.Summary.End = time.Now().Add(time.Minute)
	cpu, again := r.accountCPU(ctx, s, &ahead)
	g.Expect(cpu).To(BeNil())
	g.Expect(again).To(Equal(cpuRetry))

	wait := r.cpuSettling(s, out)
	g.Expect(wait).To(BeNumerically("~", 3*time.Second, time.Second), "a run is recorded once its last samples can have reached Prometheus")
	time.Sleep(wait)
	g.Eventually(func() time.Duration { cpu, again = r.accountCPU(ctx, s, out); return again }, 10*time.Second, 500*time.Millisecond).Should(BeZero())
	rate, _ := kubelet.Rate(t, busy, start, out.Summary.End)
	truth := rate * out.Summary.End.Sub(start).Seconds()
	t.Logf("kernel %.2f CPU-s at the rate between the samples, %.2f over the whole window; run %+v", truth, whole, *cpu)
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
	matched := account(s, out)
	t.Logf("matched: %+v", *matched)
	g.Expect(strconv.ParseFloat(matched.ServerMicrosPerOp, 64)).To(BeNumerically("~", rate*1e6/20_000, rate*1e6/20_000*0.15),
		"the kernel's CPU per operation at 20,000 operations per second, within 15%")

	// A client's node that Prometheus does not know costs the run its background only.
	elsewhere := *out
	elsewhere.Clients = map[string]string{"cpu-bench-client": "worker-9"}
	far := account(s, &elsewhere)
	g.Expect(far.Unavailable).To(BeEmpty())
	g.Expect(far.ServerMicrosPerOp).To(Equal(matched.ServerMicrosPerOp))
	g.Expect(far.BackgroundMillis).To(BeZero())
	g.Expect(far.BackgroundUnavailable).To(ContainSubstring(`node="worker-9"`))

	// What cannot be measured says why, and never blocks the run.
	external := &benchmarkScope{b: s.b, target: benchmark.Target{Hosts: []string{"cassandra.example:9042"}}}
	g.Expect(r.cpuSettling(external, out)).To(BeZero())
	g.Expect(account(external, out).Unavailable).To(Equal("an external target's servers are not in this cluster"))
	gone := &benchmarkScope{b: s.b, target: benchmark.Target{Datastore: "no-such-db"}}
	g.Expect(account(gone, out).Unavailable).To(Equal("no datastore pod, or no node, to account for"))
	// A window whose proof never came (a kubelet that stopped reporting) is taken as it is
	// once the settle and cpuLate have passed: here, before Prometheus began, with nothing.
	stale := *out
	stale.Summary.Start, stale.Summary.End = start.Add(-time.Hour), start.Add(-time.Hour+10*time.Second)
	g.Expect(account(s, &stale).Unavailable).To(ContainSubstring("Prometheus has no"))
	r.Options.CPUAccounting = nil
	g.Expect(r.cpuSettling(s, out)).To(BeZero())
	g.Expect(account(s, out).Unavailable).To(ContainSubstring("--cpu-accounting-prometheus-url"))
}

// A run waits for quiet nodes: neighbours that keep cores busy on the datastore's node hold it
// back; once they stop, the run starts when the kernel says the last quietLeast held at most
// maxCores of their work, and records how long it waited and how quiet the node was; a node
// that stays busy lets the run start after maxWait, saying so. The node is made of real
// processes, so its background is known whatever else the machine runs; two busy loops, so
// they still take well above maxCores of a machine that CI loads with datastores.
func TestBenchmarkRunWaitsForQuietNodes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	server := dataplane.StartProcess(t, "sleep", "600")
	neighbours := []int{dataplane.StartProcess(t, "sh", "-c", "while :; do :; done"), dataplane.StartProcess(t, "sh", "-c", "while :; do :; done")}
	signal := func(sig syscall.Signal) {
		for _, pid := range neighbours {
			g.Expect(syscall.Kill(pid, sig)).To(Succeed())
		}
	}
	create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "quiet-db-0", Namespace: "default", Labels: map[string]string{"app.kubernetes.io/instance": "quiet-db", "app.kubernetes.io/name": "cassandra"}},
		Spec:       corev1.PodSpec{NodeName: "worker-q", Containers: []corev1.Container{{Name: "cassandra", Image: "secured.dev/cassandra:test"}}},
	})
	kubelet := dataplane.KubeletNodeMetrics(t, "127.0.0.122:0", "default", "worker-q", map[string]int{"quiet-db-0/cassandra": server}, append([]int{server}, neighbours...))
	prom := dataplane.StartPrometheus(t, "127.0.0.122:19090", kubelet.Address)
	// The neighbours' work between two moments, by the kernel.
	work := func(from, to time.Time) float64 {
		sum := 0.0
		for _, pid := range neighbours {
			sum += kubelet.CPUAt(pid, to) - kubelet.CPUAt(pid, from)
		}
		return sum
	}
	u, err := cpuacct.ParseURL("http://" + prom.Address)
	g.Expect(err).NotTo(HaveOccurred())

	rec := events.NewFakeRecorder(10)
	r := &DatastoreBenchmarkReconciler{Client: env.Client, Recorder: rec, Options: Options{CPUAccounting: &cpuacct.Prometheus{URL: u}}}
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "quiet-bench", Namespace: "default"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{QuietStart: &v1alpha1.QuietStart{MaxCores: ptr.To(resource.MustParse("200m")), MaxWait: metav1.Duration{Duration: 2 * time.Minute}}}}
	s := &benchmarkScope{b: b, target: benchmark.Target{Datastore: "quiet-db"}}
	time.Sleep(quietWindow) // samples over the whole window the check looks at

	run := &v1alpha1.BenchmarkRun{Index: 0, Phase: v1alpha1.RunPending}
	g.Expect(r.awaitQuiet(ctx, s, run)).To(Equal(quietPoll), "a busy node holds the run back")
	g.Expect(run.QuietStart.Outcome).To(Equal(v1alpha1.QuietWaiting))
	busy, _ := strconv.ParseFloat(run.QuietStart.BackgroundCores, 64)
	g.Expect(busy).To(BeNumerically(">", 0.2), "the neighbours' cores")
	g.Expect(<-rec.Events).To(ContainSubstring(v1alpha1.ReasonRunWaitsForQuiet))

	// A run that has waited maxWait starts on the busy node, and says so.
	late := &v1alpha1.BenchmarkRun{Index: 1, Phase: v1alpha1.RunPending,
		QuietStart: &v1alpha1.RunQuietStart{Since: metav1.NewTime(time.Now().Add(-3 * time.Minute)), Outcome: v1alpha1.QuietWaiting}}
	g.Expect(r.awaitQuiet(ctx, s, late)).To(BeZero())
	g.Expect(late.QuietStart.Outcome).To(Equal(v1alpha1.QuietTimedOut))
	g.Expect(late.QuietStart.WaitedSeconds).To(BeNumerically(">=", 180))
	g.Expect(<-rec.Events).To(ContainSubstring(v1alpha1.ReasonRunNotQuiet))

	stopped := time.Now()
	signal(syscall.SIGSTOP)
	var reached time.Time
	g.Eventually(func() time.Duration { reached = time.Now(); return r.awaitQuiet(ctx, s, run) }, quietWindow+20*time.Second, time.Second).Should(BeZero(),
		"the run starts once the window no longer holds the neighbours' work")
	t.Logf("quiet start: %+v", *run.QuietStart)
	g.Expect(run.QuietStart.Outcome).To(Equal(v1alpha1.QuietReached))
	// A look's first sample can come a scrape (1 s) after its window begins, so it may miss
	// that much of the neighbours' last work: at their rate in the 3 s before they stopped.
	time.Sleep(2 * time.Second) // samples after the moments the kernel is asked about
	held, last := work(reached.Add(-quietLeast), reached)/quietLeast.Seconds(), work(stopped.Add(-3*time.Second), stopped)/3
	t.Logf("the neighbours ran at %.2f cores before they stopped; the last %s before the run started held %.2f cores of their work", last, quietLeast, held)
	g.Expect(held).To(BeNumerically("<=", 0.2+last*1.5/quietLeast.Seconds()), "the run started while the last quietLeast still held the neighbours' work")
	quiet, _ := strconv.ParseFloat(run.QuietStart.BackgroundCores, 64)
	g.Expect(quiet).To(BeNumerically("<=", 0.2))
	g.Expect(<-rec.Events).To(ContainSubstring(v1alpha1.ReasonRunQuiet))

	// A load that ended before a run began waiting (a study's previous run) holds it back only
	// until what followed is measured: the first look covers the last 30s and sees the load,
	// the later ones start where the wait began.
	signal(syscall.SIGCONT)
	time.Sleep(15 * time.Second)
	signal(syscall.SIGSTOP)
	next := &v1alpha1.BenchmarkRun{Index: 2, Phase: v1alpha1.RunPending}
	g.Expect(r.awaitQuiet(ctx, s, next)).To(Equal(quietPoll), "the last 30s hold the neighbours' load")
	g.Expect(<-rec.Events).To(ContainSubstring(v1alpha1.ReasonRunWaitsForQuiet))
	g.Eventually(func() time.Duration { return r.awaitQuiet(ctx, s, next) }, quietWindow, time.Second).Should(BeZero())
	t.Logf("quiet start after an earlier load: %+v", *next.QuietStart)
	g.Expect(next.QuietStart.Outcome).To(Equal(v1alpha1.QuietReached))
	g.Expect(next.QuietStart.WaitedSeconds).To(BeNumerically("<", 20), "the wait ends before the load leaves a 30s window")

	// A study's previous run was its own load: with quietStart.after at its end, the first
	// look starts there and needs only quietShortest of what followed, not quietLeast.
	signal(syscall.SIGCONT)
	time.Sleep(15 * time.Second)
	signal(syscall.SIGSTOP)
	s.b.Spec.QuietStart.After = ptr.To(metav1.Now())
	after := &v1alpha1.BenchmarkRun{Index: 3, Phase: v1alpha1.RunPending}
	g.Expect(r.awaitQuiet(ctx, s, after)).To(BeNumerically("~", quietShortest, time.Second), "nothing after the previous run to judge yet: it looks again once there is")
	g.Expect(after.QuietStart.Message).To(ContainSubstring("after the previous run"))
	g.Eventually(func() time.Duration { return r.awaitQuiet(ctx, s, after) }, quietWindow, time.Second).Should(BeZero())
	t.Logf("quiet start after the previous run's end: %+v", *after.QuietStart)
	g.Expect(after.QuietStart.Outcome).To(Equal(v1alpha1.QuietReached))
	g.Expect(after.QuietStart.WaitedSeconds).To(BeNumerically("<", quietLeast.Seconds()))
	calm, _ := strconv.ParseFloat(after.QuietStart.BackgroundCores, 64)
	g.Expect(calm).To(BeNumerically("<", 0.05), "the neighbours' load before quietStart.after does not count")
}

// A run waiting for its CPU figures says its window closed (Accounting) only when it counts and
// is the benchmark's last: otherwise another window of the benchmark follows, and a study that
// started its next run meanwhile would measure two at once.
func TestOnlyTheLastCountingRunWaitsAsAccounting(t *testing.T) {
	ok := &benchrun.Outcome{Summary: benchresult.Summary{Start: time.Now().Add(-16 * time.Second), End: time.Now(), Operations: 16_000}, Throughput: 1000}
	errs := &benchrun.Outcome{Summary: benchresult.Summary{Start: ok.Summary.Start, End: ok.Summary.End, Operations: 16_000, Errors: 3, FirstError: "timeout"}, Throughput: 1000}
	bench := func(reps int32, runs ...v1alpha1.BenchmarkRun) *v1alpha1.DatastoreBenchmark {
		return &v1alpha1.DatastoreBenchmark{Spec: v1alpha1.DatastoreBenchmarkSpec{Repetitions: ptr.To(reps)}, Status: v1alpha1.DatastoreBenchmarkStatus{Runs: runs}}
	}
	valid := v1alpha1.BenchmarkRun{Phase: v1alpha1.RunSucceeded, ThroughputOpsPerSec: 1000}
	running := v1alpha1.BenchmarkRun{Index: 1, Phase: v1alpha1.RunRunning}
	tests := map[string]struct {
		b    *v1alpha1.DatastoreBenchmark
		out  *benchrun.Outcome
		want bool
	}{
		"a study's run, valid":             {b: bench(1, running), out: ok, want: true},
		"a study's run with client errors": {b: bench(1, running), out: errs},
		"the second of three runs":         {b: bench(3, valid, running), out: ok},
		"the third of three runs":          {b: bench(3, valid, valid, running), out: ok, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := tc.b.Status.Runs[len(tc.b.Status.Runs)-1]
			if got := lastWindow(tc.b, run, tc.out); got != tc.want {
				t.Errorf("lastWindow = %v, want %v", got, tc.want)
			}
			if tc.b.Status.Runs[len(tc.b.Status.Runs)-1].Phase != v1alpha1.RunRunning {
				t.Error("judging the run changed its record")
			}
		})
	}
}
