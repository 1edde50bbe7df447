package benchrun

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/benchmark"
)

var t0 = time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)

func summary(t *testing.T, ops, errs int64) string {
	t.Helper()
	b, err := benchresult.Summary{Driver: "k6-ycsb", Phase: "run", Start: t0, End: t0.Add(10 * time.Second), Operations: ops, Errors: errs,
		Protocol: "TLSv1.3", Suite: "TLS_AES_128_GCM_SHA256", FirstError: "read: timeout"}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func terminated(name string, code int32, reason, msg string, conds ...corev1.PodCondition) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Conditions: conds,
		ContainerStatuses: []corev1.ContainerStatus{{Name: benchmark.ContainerName, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: msg}}}}}}
}

func TestCollect(t *testing.T) {
	ok := func(name string, ops int64) corev1.Pod { return terminated(name, 0, "Completed", summary(t, ops, 0)) }
	running := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c-2"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
		{Name: benchmark.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	tests := map[string]struct {
		pods                []corev1.Pod
		want                int
		ops                 int64
		failed, invalid     string
		throughputOpsPerSec float64
	}{
		"two pods merge":           {pods: []corev1.Pod{ok("c-0", 1000), ok("c-1", 3000)}, want: 2, ops: 4000, throughputOpsPerSec: 400},
		"a pod lost":               {pods: []corev1.Pod{ok("c-0", 1000), running}, want: 2, ops: 1000, invalid: "1 of 2 client pods reported a result; a pod was lost"},
		"killed from outside":      {pods: []corev1.Pod{terminated("c-0", 137, "Error", "")}, want: 1, invalid: "client pod c-0 was stopped from outside (Error, exit code 137)"},
		"OOM killed":               {pods: []corev1.Pod{terminated("c-0", 1, "OOMKilled", "")}, want: 1, invalid: "stopped from outside (OOMKilled"},
		"evicted":                  {pods: []corev1.Pod{terminated("c-0", 2, "Error", "", corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue})}, want: 1, invalid: "stopped from outside"},
		"the client's own failure": {pods: []corev1.Pod{terminated("c-0", 107, "Error", "a\nb\nc\nrefused the pin")}, want: 1, failed: "client pod c-0 exited with code 107: b | c | refused the pin"},
		"a summary that says why":  {pods: []corev1.Pod{terminated("c-0", 107, "Error", summary(t, 0, 0))}, want: 1, failed: "client pod c-0 exited with code 107: read: timeout"},
		"an unreadable summary":    {pods: []corev1.Pod{terminated("c-0", 0, "Completed", "{")}, want: 1, invalid: "pod c-0: benchmark summary"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out := Collect(tc.pods, tc.want)
			if out.Summary.Operations != tc.ops {
				t.Errorf("operations %d, want %d", out.Summary.Operations, tc.ops)
			}
			if tc.throughputOpsPerSec != 0 && out.Throughput != tc.throughputOpsPerSec {
				t.Errorf("throughput %v, want %v", out.Throughput, tc.throughputOpsPerSec)
			}
			if !strings.Contains(out.Failed, tc.failed) || (tc.failed == "") != (out.Failed == "") {
				t.Errorf("failed %q, want %q", out.Failed, tc.failed)
			}
			if !strings.Contains(out.Invalid, tc.invalid) || (tc.invalid == "") != (out.Invalid == "") {
				t.Errorf("invalid %q, want %q", out.Invalid, tc.invalid)
			}
		})
	}
}

// Pods are read before the Job's verdict only when all of them succeeded: any doubt waits.
func TestSucceeded(t *testing.T) {
	done := func(name string, code int32) corev1.Pod {
		p := terminated(name, code, "Completed", "")
		p.Status.Phase = corev1.PodSucceeded
		if code != 0 {
			p.Status.Phase = corev1.PodFailed
		}
		return p
	}
	running := corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: benchmark.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	terminatedNotReported := terminated("c-1", 0, "Completed", "") // the pod's phase not yet Succeeded
	for name, tc := range map[string]struct {
		pods []corev1.Pod
		want int
		ok   bool
	}{
		"all succeeded":                {pods: []corev1.Pod{done("c-0", 0), done("c-1", 0)}, want: 2, ok: true},
		"one still running":            {pods: []corev1.Pod{done("c-0", 0), running}, want: 2},
		"one failed":                   {pods: []corev1.Pod{done("c-0", 0), done("c-1", 3)}, want: 2},
		"one not listed yet":           {pods: []corev1.Pod{done("c-0", 0)}, want: 2},
		"a replacement beside them":    {pods: []corev1.Pod{done("c-0", 0), done("c-1", 0), done("c-2", 0)}, want: 2},
		"container ended, pod not yet": {pods: []corev1.Pod{done("c-0", 0), terminatedNotReported}, want: 2},
		"nothing wanted":               {want: 0},
	} {
		if got := Succeeded(tc.pods, tc.want); got != tc.ok {
			t.Errorf("%s: %v, want %v", name, got, tc.ok)
		}
	}
}

func TestRecord(t *testing.T) {
	sum := benchresult.Summary{Start: t0, End: t0.Add(time.Second), Operations: 10, Protocol: "TLSv1.3", Suite: "TLS_AES_128_GCM_SHA256", ClientCPUSeconds: 1.5,
		Latencies: []benchresult.Latency{{Operation: "read", Count: 10, P50: 100, P99: 900}}}
	withWrites := func(w benchresult.Writes) benchresult.Summary { s := sum; s.Writes = &w; return s }
	tests := map[string]struct {
		out          Outcome
		verifyWrites bool
		phase        v1alpha1.RunPhase
		reason       string
	}{
		"counts": {Outcome{Summary: sum, Throughput: 99.6}, false, v1alpha1.RunSucceeded, ""},
		"writes intact": {Outcome{Summary: withWrites(benchresult.Writes{Acknowledged: 9, Checked: 5, Verified: 5, Consistency: "ALL"})}, true,
			v1alpha1.RunSucceeded, ""},
		"writes lost": {Outcome{Summary: withWrites(benchresult.Writes{Acknowledged: 9, Checked: 5, Verified: 2, Lost: 1, Stale: 1, Corrupted: 1, Consistency: "ALL", FirstProblem: "user1 field0: gone"})}, true,
			v1alpha1.RunFailed, "3 of 5 acknowledged key-fields not read back intact at ALL: 1 lost, 1 stale, 1 corrupted, 0 unreadable (first: user1 field0: gone)"},
		"no check reported": {Outcome{Summary: sum}, true, v1alpha1.RunFailed, "spec.verifyWrites: the client reported no check"},
		"the client fails":  {Outcome{Summary: sum, Failed: "pin refused"}, true, v1alpha1.RunFailed, "pin refused"},
		"disturbed":         {Outcome{Summary: sum, Invalid: "a pod was lost"}, true, v1alpha1.RunInvalid, "a pod was lost"},
		"client errors": {Outcome{Summary: func() benchresult.Summary { s := sum; s.Errors, s.FirstError = 3, "timeout"; return s }()}, false,
			v1alpha1.RunInvalid, "3 client errors (first: timeout)"},
		"dropped iterations": {Outcome{Summary: func() benchresult.Summary { s := sum; s.DroppedIterations = 7; return s }()}, false,
			v1alpha1.RunInvalid, "7 dropped iterations"},
		"nothing done": {Outcome{Summary: benchresult.Summary{}}, false, v1alpha1.RunInvalid, "no operation completed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := v1alpha1.BenchmarkRun{Index: 1, Phase: v1alpha1.RunRunning, InvalidReason: "stale"}
			Record(&run, tc.out, &v1alpha1.DatastoreBenchmarkSpec{VerifyWrites: tc.verifyWrites})
			if run.Phase != tc.phase || !strings.Contains(run.InvalidReason, tc.reason) || (tc.reason == "") != (run.InvalidReason == "") {
				t.Errorf("run %s %q, want %s %q", run.Phase, run.InvalidReason, tc.phase, tc.reason)
			}
			if got, want := RateNotKept(run), name == "dropped iterations"; got != want {
				t.Errorf("RateNotKept = %t for a run %s %q, want %t: only a rate the clients could not keep is one", got, run.Phase, run.InvalidReason, want)
			}
			if w := tc.out.Summary.Writes; w != nil && (run.Writes == nil || run.Writes.Checked != w.Checked || run.Writes.Lost != w.Lost || run.Writes.FirstProblem != w.FirstProblem) {
				t.Errorf("writes in status %+v; want the client's %+v", run.Writes, *w)
			}
		})
	}
	// A fixed-rate run may drop up to load.maxDroppedPercent of its schedule and still count.
	for _, tc := range []struct {
		ops, dropped int64
		allowed      *int32
		phase        v1alpha1.RunPhase
	}{
		{990, 10, nil, v1alpha1.RunInvalid},
		{990, 10, ptr.To[int32](1), v1alpha1.RunSucceeded},
		{989, 11, ptr.To[int32](1), v1alpha1.RunInvalid},
	} {
		s := sum
		s.Operations, s.DroppedIterations = tc.ops, tc.dropped
		run := v1alpha1.BenchmarkRun{}
		Record(&run, Outcome{Summary: s, Throughput: 990}, &v1alpha1.DatastoreBenchmarkSpec{Load: v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, MaxDroppedPercent: tc.allowed}})
		if run.Phase != tc.phase {
			t.Errorf("%d of %d dropped with %v%% allowed: %s %q, want %s", tc.dropped, tc.ops+tc.dropped, ptr.Deref(tc.allowed, 0), run.Phase, run.InvalidReason, tc.phase)
		}
	}
	run := v1alpha1.BenchmarkRun{}
	steady := sum
	steady.Series, steady.SeriesStepSeconds = []int64{1000, 1010, 990, 1000}, 1
	Record(&run, Outcome{Summary: steady, Throughput: 99.6}, &v1alpha1.DatastoreBenchmarkSpec{})
	if run.ThroughputOpsPerSec != 100 || run.ClientCPUMillis != 1500 || run.NegotiatedCipherSuite != "TLS_AES_128_GCM_SHA256" ||
		len(run.Latencies) != 1 || run.Latencies[0].P99Micros != 900 || !run.StartTime.Time.Equal(t0) {
		t.Errorf("recorded %+v", run)
	}
	if len(run.ThroughputSeries) != 4 || run.SeriesStepSeconds != 1 || run.ThroughputCV != "0.008" {
		t.Errorf("series %v (step %d), CV %q; want the four seconds and 0.008", run.ThroughputSeries, run.SeriesStepSeconds, run.ThroughputCV)
	}
	Record(&run, Outcome{Summary: sum, Throughput: 99.6}, &v1alpha1.DatastoreBenchmarkSpec{})
	if run.ThroughputSeries != nil || run.ThroughputCV != "" || run.ClientSide != "" {
		t.Errorf("a rerun without a series keeps the old one: %v %q; client side %q", run.ThroughputSeries, run.ThroughputCV, run.ClientSide)
	}
	sealed := sum
	sealed.ClientSide = &benchresult.ClientSide{Cipher: "AES-GCM", Signature: "Ed25519", Fields: 5}
	Record(&run, Outcome{Summary: sealed, Throughput: 99.6}, &v1alpha1.DatastoreBenchmarkSpec{})
	if run.ClientSide != "AES-GCM + Ed25519 on 5 fields" {
		t.Errorf("client side %q; want what the client applied", run.ClientSide)
	}
	Record(&run, Outcome{Summary: sum, Throughput: 99.6}, &v1alpha1.DatastoreBenchmarkSpec{})
	if run.ClientSide != "" {
		t.Errorf("a rerun without client-side protection keeps %q", run.ClientSide)
	}
}

func TestMedianThroughput(t *testing.T) {
	runs := func(phases []v1alpha1.RunPhase, tput ...int64) []v1alpha1.BenchmarkRun {
		var out []v1alpha1.BenchmarkRun
		for i, p := range phases {
			out = append(out, v1alpha1.BenchmarkRun{Phase: p, ThroughputOpsPerSec: tput[i]})
		}
		return out
	}
	ok, bad := v1alpha1.RunSucceeded, v1alpha1.RunInvalid
	tests := map[string]struct {
		runs []v1alpha1.BenchmarkRun
		want int64
	}{
		"none":                  {nil, 0},
		"odd":                   {runs([]v1alpha1.RunPhase{ok, ok, ok}, 30, 10, 20), 20},
		"even rounds down":      {runs([]v1alpha1.RunPhase{ok, ok}, 10, 21), 15},
		"invalid runs excluded": {runs([]v1alpha1.RunPhase{ok, bad, ok, ok}, 10, 1000, 20, 30), 20},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := MedianThroughput(tc.runs); got != tc.want {
				t.Errorf("MedianThroughput = %d, want %d", got, tc.want)
			}
		})
	}
}
