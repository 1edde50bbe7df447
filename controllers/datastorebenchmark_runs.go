package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/benchmark"
)

// started: the benchmark has begun loading or measuring, so it no longer waits for its
// target to be Ready (a run in progress decides for itself whether it is valid).
func started(b *v1alpha1.DatastoreBenchmark) bool {
	return len(b.Status.Runs) > 0 || meta.FindStatusCondition(b.Status.Conditions, ConditionLoaded) != nil
}

// errStale stops a pass that read an outdated benchmark; the next one reads it again.
var errStale = errors.New("the cached benchmark is older than the API server's")

// jobOutcome is a finished Job's merged result, or why it has none.
type jobOutcome struct {
	finished bool
	summary  benchresult.Summary
	// throughput is the pods' throughputs added up.
	throughput float64
	// failed: the client itself failed (a refused pin, a script error); repeating won't help.
	failed string
	// invalid: the run was disturbed (a pod lost, the deadline hit); repeating may help.
	invalid string
}

// load runs the load phase once.
func (r *DatastoreBenchmarkReconciler) load(ctx context.Context, s *benchmarkScope) (bool, error) {
	b := s.b
	if b.Spec.SkipLoad || isTrue(b.Status.Conditions, ConditionLoaded) {
		return true, nil
	}
	b.Status.Phase = v1alpha1.BenchmarkLoading
	job, err := r.job(s, benchmark.PhaseLoad, 0)
	if err != nil {
		return false, err
	}
	out, err := r.observe(ctx, s, job)
	if err != nil || !out.finished {
		return false, err
	}
	switch {
	case out.failed != "":
		r.fail(b, "LoadFailed", "the load phase failed: "+out.failed)
	case out.invalid != "":
		r.fail(b, "LoadFailed", "the load phase did not complete: "+out.invalid)
	case out.summary.Errors > 0:
		r.fail(b, "LoadFailed", fmt.Sprintf("the load phase had %d failed inserts (first: %s)", out.summary.Errors, out.summary.FirstError))
	case out.summary.Operations == 0:
		// A client that could not connect (a refused login) may still write an empty summary.
		r.fail(b, "LoadFailed", "the load phase inserted no record: the client could not reach the datastore (its log says why)")
	default:
		msg := fmt.Sprintf("%d records inserted at %.0f inserts/s", out.summary.Operations, out.throughput)
		setCondition(&b.Status.Conditions, b.Generation, ConditionLoaded, metav1.ConditionTrue, "Loaded", msg)
		r.Recorder.Eventf(b, nil, "Normal", "Loaded", "Load", "%s", msg)
	}
	s.collected = append(s.collected, job)
	return false, nil // the next pass starts the runs
}

// runs measures the repetitions one Job at a time and concludes.
func (r *DatastoreBenchmarkReconciler) runs(ctx context.Context, s *benchmarkScope) (bool, error) {
	b, st := s.b, &s.b.Status
	st.Phase = v1alpha1.BenchmarkRunning
	if n := len(st.Runs); n > 0 && (st.Runs[n-1].Phase == v1alpha1.RunRunning || st.Runs[n-1].Phase == v1alpha1.RunPending) {
		run := &st.Runs[n-1]
		job, err := r.job(s, benchmark.PhaseRun, run.Index)
		if err != nil {
			return false, err
		}
		out, err := r.observe(ctx, s, job)
		if err != nil || !out.finished {
			return false, err
		}
		r.record(b, run, out)
		s.collected = append(s.collected, job)
		if run.Phase == v1alpha1.RunFailed {
			r.fail(b, "RunFailed", fmt.Sprintf("run %d failed: %s", run.Index, run.InvalidReason))
			return false, nil
		}
	}

	valid := validRuns(st.Runs)
	reps := benchmark.Repetitions(b)
	switch {
	case int32(len(valid)) >= reps:
		st.Phase = v1alpha1.BenchmarkSucceeded
		st.MedianThroughputOpsPerSec = median(valid)
		msg := fmt.Sprintf("%d valid runs of %d, median %d ops/s", len(valid), len(st.Runs), st.MedianThroughputOpsPerSec)
		setCondition(&st.Conditions, b.Generation, ConditionComplete, metav1.ConditionTrue, "Succeeded", msg)
		r.Recorder.Eventf(b, nil, "Normal", "Succeeded", "Conclude", "%s", msg)
		return true, nil
	case int32(len(st.Runs)) >= 2*reps:
		r.fail(b, "TooManyInvalidRuns", fmt.Sprintf("only %d of %d runs were valid; the last was invalid because %s", len(valid), len(st.Runs), st.Runs[len(st.Runs)-1].InvalidReason))
		return true, nil
	}
	index := int32(len(st.Runs))
	job, err := r.job(s, benchmark.PhaseRun, index)
	if err != nil {
		return false, err
	}
	st.Runs = append(st.Runs, v1alpha1.BenchmarkRun{Index: index, Phase: v1alpha1.RunRunning, Job: job.Name})
	if _, err := r.observe(ctx, s, job); err != nil {
		return false, err
	}
	r.Recorder.Eventf(b, nil, "Normal", "RunStarted", fmt.Sprintf("Run%d", index), "run %d of %d started (Job %s)", index, reps, job.Name)
	return false, nil
}

// job renders one Job; the driver follows the engine: k6 for Cassandra, YCSB's JVM client
// for HBase.
func (r *DatastoreBenchmarkReconciler) job(s *benchmarkScope, phase string, run int32) (*batchv1.Job, error) {
	url := r.Options.PrometheusRemoteWriteURL
	if p := s.b.Spec.Prometheus; p != nil && p.RemoteWriteURL != "" {
		url = p.RemoteWriteURL
	}
	image := r.Options.K6Image
	if s.target.HBase != nil {
		image = r.Options.YCSBHBaseImage
	}
	return benchmark.Build(benchmark.Job{Benchmark: s.b, Target: s.target, Phase: phase, Run: run, Image: image, RemoteWriteURL: url, VPNImage: r.Options.VPNImage})
}

// record writes a finished run's results and judges whether it counts.
func (r *DatastoreBenchmarkReconciler) record(b *v1alpha1.DatastoreBenchmark, run *v1alpha1.BenchmarkRun, out jobOutcome) {
	sum := out.summary
	if !sum.Start.IsZero() {
		run.StartTime, run.CompletionTime = &metav1.Time{Time: sum.Start}, &metav1.Time{Time: sum.End}
	}
	run.ThroughputOpsPerSec = int64(out.throughput + 0.5)
	run.Errors, run.DroppedIterations = sum.Errors, sum.DroppedIterations
	run.NegotiatedProtocol, run.NegotiatedCipherSuite = sum.Protocol, sum.Suite
	run.ClientCPUMillis = int64(sum.ClientCPUSeconds * 1000)
	run.Latencies = nil
	for _, l := range sum.Latencies {
		run.Latencies = append(run.Latencies, v1alpha1.LatencySummary{Operation: l.Operation, Count: l.Count, Errors: l.Errors,
			P50Micros: l.P50, P95Micros: l.P95, P99Micros: l.P99, MaxMicros: l.Max})
	}
	run.Phase, run.InvalidReason = v1alpha1.RunSucceeded, ""
	switch {
	case out.failed != "":
		run.Phase, run.InvalidReason = v1alpha1.RunFailed, out.failed
	case out.invalid != "":
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, out.invalid
	case sum.Errors > 0:
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, fmt.Sprintf("%d client errors (first: %s)", sum.Errors, sum.FirstError)
	case sum.DroppedIterations > 0:
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, fmt.Sprintf("%d dropped iterations: the clients could not keep the fixed rate; add clientPods or virtualUsers", sum.DroppedIterations)
	case sum.Operations == 0:
		run.Phase, run.InvalidReason = v1alpha1.RunInvalid, "no operation completed"
	}
	action := fmt.Sprintf("Run%d", run.Index)
	if run.Phase == v1alpha1.RunSucceeded {
		r.Recorder.Eventf(b, nil, "Normal", "RunSucceeded", action, "run %d: %d ops/s over %s %s", run.Index, run.ThroughputOpsPerSec, sum.Protocol, sum.Suite)
	} else {
		r.Recorder.Eventf(b, nil, "Warning", "Run"+string(run.Phase), action, "run %d does not count: %s", run.Index, run.InvalidReason)
	}
}

func (r *DatastoreBenchmarkReconciler) fail(b *v1alpha1.DatastoreBenchmark, reason, msg string) {
	b.Status.Phase = v1alpha1.BenchmarkFailed
	setCondition(&b.Status.Conditions, b.Generation, ConditionComplete, metav1.ConditionTrue, reason, msg)
	r.Recorder.Eventf(b, nil, "Warning", reason, "Conclude", "%s", msg)
}

// observe creates the Job if it does not exist and, once it finished, collects its pods'
// summaries.
func (r *DatastoreBenchmarkReconciler) observe(ctx context.Context, s *benchmarkScope, want *batchv1.Job) (jobOutcome, error) {
	var job batchv1.Job
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &job); {
	case apierrors.IsNotFound(err):
		// A benchmark read from a cache that has not seen our last status write would start
		// again a Job whose results are already collected (and the Job deleted): create only
		// from the API server's current version.
		var live v1alpha1.DatastoreBenchmark
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.b), &live); err != nil {
			return jobOutcome{}, err
		}
		if live.ResourceVersion != s.b.ResourceVersion {
			s.requeue = time.Second
			return jobOutcome{}, errStale
		}
		_, err := applyOwned(ctx, r.Client, s.b, want)
		return jobOutcome{}, err
	case err != nil:
		return jobOutcome{}, err
	}
	complete, failed := jobCondition(&job, batchv1.JobComplete), jobCondition(&job, batchv1.JobFailed)
	if complete == nil && failed == nil {
		return jobOutcome{}, nil
	}
	// The Job controller marks the Job finished only after it saw its pods terminate, but our
	// pod cache can lag behind our Job cache: a pod read from it may still look running and
	// turn a failed run into a lost one. Read them live, once per finished Job.
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return jobOutcome{}, err
	}
	out := collect(pods.Items, int(*job.Spec.Completions))
	if failed != nil && out.failed == "" && out.invalid == "" {
		out.invalid = fmt.Sprintf("Job %s failed: %s", job.Name, failed.Message)
	}
	return out, nil
}

func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// collect reads each client pod's termination message. A client that exited with an error
// of its own failed the run; a pod killed from outside or missing made it invalid.
func collect(pods []corev1.Pod, want int) jobOutcome {
	out := jobOutcome{finished: true}
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
				out.invalid = fmt.Sprintf("pod %s: %v", p.Name, err)
				continue
			}
			parts = append(parts, sum)
			continue
		}
		killed := term.ExitCode == 137 || term.ExitCode == 143 || term.Reason == "OOMKilled"
		if killed || slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget }) {
			out.invalid = fmt.Sprintf("client pod %s was stopped from outside (%s, exit code %d)", p.Name, term.Reason, term.ExitCode)
			continue
		}
		if out.failed == "" {
			out.failed = fmt.Sprintf("client pod %s exited with code %d: %s", p.Name, term.ExitCode, lastLines(term.Message, 3))
		}
	}
	if len(parts) < want && out.failed == "" && out.invalid == "" {
		out.invalid = fmt.Sprintf("%d of %d client pods reported a result; a pod was lost", len(parts), want)
	}
	out.summary, out.throughput = benchresult.Merge(parts)
	return out
}

// lastLines keeps the end of a log, where k6 says why it stopped.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

func (r *DatastoreBenchmarkReconciler) deleteJob(ctx context.Context, job *batchv1.Job) error {
	err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return client.IgnoreNotFound(err)
}

func validRuns(runs []v1alpha1.BenchmarkRun) []int64 {
	var out []int64
	for _, r := range runs {
		if r.Phase == v1alpha1.RunSucceeded {
			out = append(out, r.ThroughputOpsPerSec)
		}
	}
	return out
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
