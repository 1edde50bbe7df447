// Package benchrun judges the runs of a DatastoreBenchmark: what a finished client Job
// produced, read from its pods' termination messages, and whether a run counts.
package benchrun

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/stats"
)

// Outcome is a finished Job's merged result, or why it has none.
type Outcome struct {
	Summary benchresult.Summary
	// Throughput is the pods' throughputs added up.
	Throughput float64
	// Failed: the client itself failed (a refused pin, a script error); repeating won't help.
	Failed string
	// Invalid: the run was disturbed (a pod lost, the deadline hit); repeating may help.
	Invalid string
	// Clients: the client pods that reported, by name, with the node each ran on.
	Clients map[string]string
}

// Succeeded: exactly want client pods, and every one of them ended with its client's exit
// code 0. Such pods are final (they never restart), so their result can be read before the
// Job controller marks the Job complete, which on Kind took 2 s more after the kubelet had
// reported the pod (make demo, 2026-12-01). Anything else waits for the Job's own verdict.
func Succeeded(pods []corev1.Pod, want int) bool {
	if len(pods) != want || want == 0 {
		return false
	}
	for _, p := range pods {
		i := slices.IndexFunc(p.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool { return c.Name == benchmark.ContainerName })
		if p.Status.Phase != corev1.PodSucceeded || i < 0 {
			return false
		}
		if term := p.Status.ContainerStatuses[i].State.Terminated; term == nil || term.ExitCode != 0 {
			return false
		}
	}
	return true
}

// Collect reads each client pod's termination message; want is the number of pods the Job
// completes with. A client that exited with an error of its own failed the run; a pod killed
// from outside, or missing, made it invalid.
func Collect(pods []corev1.Pod, want int) Outcome {
	var out Outcome
	var parts []benchresult.Summary
	for _, p := range pods {
		i := slices.IndexFunc(p.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool { return c.Name == benchmark.ContainerName })
		if i < 0 || p.Status.ContainerStatuses[i].State.Terminated == nil {
			continue // a replacement the Job started, or a pod that never ran; counted below
		}
		term := p.Status.ContainerStatuses[i].State.Terminated
		if term.ExitCode == 0 {
			sum, err := benchresult.Parse([]byte(term.Message))
			if err != nil {
				out.Invalid = fmt.Sprintf("pod %s: %v", p.Name, err)
				continue
			}
			parts = append(parts, sum)
			if out.Clients == nil {
				out.Clients = map[string]string{}
			}
			out.Clients[p.Name] = p.Spec.NodeName
			continue
		}
		killed := term.ExitCode == 137 || term.ExitCode == 143 || term.Reason == "OOMKilled"
		if killed || slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget }) {
			out.Invalid = fmt.Sprintf("client pod %s was stopped from outside (%s, exit code %d)", p.Name, term.Reason, term.ExitCode)
			continue
		}
		if out.Failed == "" {
			why := LastLines(term.Message, 3)
			// A script that threw still writes its summary, whose firstError is the exception
			// k6 printed only to the pod's log (a schema not created, a session not opened).
			if sum, err := benchresult.Parse([]byte(term.Message)); err == nil && sum.FirstError != "" {
				why = sum.FirstError
			}
			out.Failed = fmt.Sprintf("client pod %s exited with code %d: %s", p.Name, term.ExitCode, why)
		}
	}
	if len(parts) < want && out.Failed == "" && out.Invalid == "" {
		out.Invalid = fmt.Sprintf("%d of %d client pods reported a result; a pod was lost", len(parts), want)
	}
	out.Summary, out.Throughput = benchresult.Merge(parts)
	return out
}

// LastLines keeps the end of a log, where k6 says why it stopped.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// Record writes a finished run's results into run and judges whether it counts: its phase
// and, when it does not count, why. With spec.verifyWrites, a run whose acknowledged writes were
// not all read back intact Fails: that is a finding about the datastore, not a disturbance a
// repetition would smooth over.
func Record(run *v1alpha1.BenchmarkRun, out Outcome, spec *v1alpha1.DatastoreBenchmarkSpec) {
	sum := out.Summary
	if !sum.Start.IsZero() {
		run.StartTime, run.CompletionTime = timePtr(sum.Start), timePtr(sum.End)
	}
	run.ThroughputOpsPerSec = int64(out.Throughput + 0.5)
	run.BytesPerSec = 0
	if d := sum.End.Sub(sum.Start).Seconds(); sum.Bytes > 0 && d > 0 {
		run.BytesPerSec = int64(float64(sum.Bytes)/d + 0.5)
	}
	run.Errors, run.DroppedIterations = sum.Errors, sum.DroppedIterations
	run.NegotiatedProtocol, run.NegotiatedCipherSuite = sum.Protocol, sum.Suite
	run.ClientSide = ""
	if cs := sum.ClientSide; cs != nil {
		run.ClientSide = fmt.Sprintf("%s + %s on %d fields", cs.Cipher, cs.Signature, cs.Fields)
	}
	run.ClientCPUMillis = int64(sum.ClientCPUSeconds * 1000)
	run.Latencies = nil
	for _, l := range sum.Latencies {
		run.Latencies = append(run.Latencies, v1alpha1.LatencySummary{Operation: l.Operation, Count: l.Count, Errors: l.Errors,
			P50Micros: l.P50, P95Micros: l.P95, P99Micros: l.P99, MaxMicros: l.Max})
	}
	run.ThroughputSeries, run.SeriesStepSeconds, run.ThroughputCV = sum.Series, int32(sum.SeriesStepSeconds), ""
	if cv, ok := sum.CoefficientOfVariation(); ok {
		run.ThroughputCV = strconv.FormatFloat(cv, 'f', 3, 64)
	}
	run.WarmUpSeconds, run.WarmUpSteady = "", nil
	if w := sum.WarmUp; w != nil {
		run.WarmUpSeconds, run.WarmUpSteady = strconv.FormatFloat(w.Seconds, 'f', 1, 64), &w.Steady
	}
	run.Writes = nil
	if w := sum.Writes; w != nil {
		run.Writes = &v1alpha1.RunWrites{Acknowledged: w.Acknowledged, Checked: w.Checked, Verified: w.Verified,
			Lost: w.Lost, Stale: w.Stale, Corrupted: w.Corrupted, Unreadable: w.Unreadable, FirstProblem: w.FirstProblem}
	}
	run.Phase, run.InvalidReason = v1alpha1.RunSucceeded, ""
	switch {
	case out.Failed != "":
		run.Phase, run.InvalidReason = v1alpha1.RunFailed, out.Failed
	case spec.VerifyWrites && sum.Writes == nil && out.Invalid == "":
		run.Phase, run.InvalidReason = v1alpha1.RunFailed, "spec.verifyWrites: the client reported no check of its writes"
	case sum.Writes != nil && !sum.Writes.Intact():
		w := sum.Writes
		run.Phase, run.InvalidReason = v1alpha1.RunFailed, fmt.Sprintf("%d of %d acknowledged key-fields not read back intact at %s: %d lost, %d stale, %d corrupted, %d unreadable (first: %s)",
			w.Checked-w.Verified, w.Checked, w.Consistency, w.Lost, w.Stale, w.Corrupted, w.Unreadable, w.FirstProblem)
	case out.Invalid != "":
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, out.Invalid
	case sum.Errors > 0:
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, fmt.Sprintf("%d client errors (first: %s)", sum.Errors, sum.FirstError)
	case tooManyDropped(sum, spec.Load):
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, fmt.Sprintf("%d dropped iterations (%.2f%% of the schedule, %d%% allowed by load.maxDroppedPercent): %s",
			sum.DroppedIterations, droppedPercent(sum), ptr.Deref(spec.Load.MaxDroppedPercent, 0), rateNotKept)
	case sum.Operations == 0:
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, "no operation completed"
	}
}

// rateNotKept ends the invalid reason of a run that RateNotKept recognises.
const rateNotKept = "the clients could not keep the fixed rate; add clientPods or virtualUsers"

// RateNotKept: the run does not count only because its clients dropped more of the fixed
// rate's schedule than load.maxDroppedPercent allows. On a shared machine that is often a
// moment's contention rather than the datastore's limit, which a later attempt can tell apart.
func RateNotKept(run v1alpha1.BenchmarkRun) bool {
	return run.Phase == v1alpha1.RunInvalid && strings.HasSuffix(run.InvalidReason, rateNotKept)
}

// tooManyDropped: the clients dropped more of the schedule than load.maxDroppedPercent allows.
func tooManyDropped(sum benchresult.Summary, load v1alpha1.Load) bool {
	return sum.DroppedIterations > 0 && droppedPercent(sum) > float64(ptr.Deref(load.MaxDroppedPercent, 0))
}

// droppedPercent of the operations the measured window scheduled.
func droppedPercent(sum benchresult.Summary) float64 {
	return 100 * float64(sum.DroppedIterations) / float64(sum.Operations+sum.DroppedIterations)
}

// ValidThroughputs are the throughputs of the runs that count.
func ValidThroughputs(runs []v1alpha1.BenchmarkRun) []float64 {
	var out []float64
	for _, r := range runs {
		if r.Phase == v1alpha1.RunSucceeded {
			out = append(out, float64(r.ThroughputOpsPerSec))
		}
	}
	return out
}

// MedianThroughput of the runs that count, in whole operations per second.
func MedianThroughput(runs []v1alpha1.BenchmarkRun) int64 {
	v := ValidThroughputs(runs)
	if len(v) == 0 {
		return 0
	}
	return int64(stats.Median(v))
}

func timePtr(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }
