package controllers

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchrun"
	"secured.dev/operator/internal/render/benchmark"
)

// started: the benchmark has begun loading or measuring, so it no longer waits for its
// target to be Ready (a run in progress decides for itself whether it is valid).
func started(b *v1alpha1.DatastoreBenchmark) bool {
	return len(b.Status.Runs) > 0 || meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionLoaded) != nil
}

// maxLoadAttempts bounds how often a load with failed inserts runs.
const maxLoadAttempts = 3

// load runs the load phase, again where some inserts failed (see status.loadAttempts).
func (r *DatastoreBenchmarkReconciler) load(ctx context.Context, s *benchmarkScope) (ctrl.Result, error) {
	b := s.b
	// A storage workload's file is laid out by each run on its own scratch volume.
	if b.Spec.SkipLoad || b.Spec.Workload.Storage != nil || isTrue(b.Status.Conditions, v1alpha1.ConditionLoaded) {
		return ctrl.Result{}, nil
	}
	b.Status.Phase = v1alpha1.BenchmarkLoading
	job, err := r.job(s, benchmark.PhaseLoad, b.Status.LoadAttempts)
	if err != nil {
		return ctrl.Result{}, err
	}
	out, err := r.observe(ctx, s, job)
	if err != nil || out == nil {
		return ctrl.Result{}, waitOr(err)
	}
	switch {
	case out.Failed == "" && out.Invalid == "" && out.Summary.Errors > 0 && b.Status.LoadAttempts+1 < maxLoadAttempts:
		b.Status.LoadAttempts++
		r.Recorder.Eventf(b, nil, "Warning", v1alpha1.ReasonLoadRetried, "Load", "the load had %d failed inserts (first: %s): loading again, attempt %d of %d",
			out.Summary.Errors, out.Summary.FirstError, b.Status.LoadAttempts+1, maxLoadAttempts)
	case out.Failed != "":
		r.fail(b, v1alpha1.ReasonLoadFailed, "the load phase failed: "+out.Failed)
	case out.Invalid != "":
		r.fail(b, v1alpha1.ReasonLoadFailed, "the load phase did not complete: "+out.Invalid)
	case out.Summary.Errors > 0:
		attempts := ""
		if n := b.Status.LoadAttempts; n > 0 {
			attempts = fmt.Sprintf(", in the last of %d attempts", n+1)
		}
		r.fail(b, v1alpha1.ReasonLoadFailed, fmt.Sprintf("the load phase had %d failed inserts (first: %s)%s", out.Summary.Errors, out.Summary.FirstError, attempts))
	case out.Summary.Operations == 0:
		// A client that could not connect (a refused login) may still write an empty summary.
		r.fail(b, v1alpha1.ReasonLoadFailed, "the load phase inserted no record: the client could not reach the datastore (its log says why)")
	default:
		msg := fmt.Sprintf("%d records inserted at %.0f inserts/s", out.Summary.Operations, out.Throughput)
		setCondition(&b.Status.Conditions, b.Generation, v1alpha1.ConditionLoaded, metav1.ConditionTrue, v1alpha1.ReasonLoaded, msg)
		r.Recorder.Eventf(b, nil, "Normal", v1alpha1.ReasonLoaded, "Load", "%s", msg)
	}
	s.collected = append(s.collected, job)
	return ctrl.Result{}, errPhaseBlocked // the next pass starts the runs
}

// runs measures the repetitions one Job at a time and concludes.
func (r *DatastoreBenchmarkReconciler) runs(ctx context.Context, s *benchmarkScope) (ctrl.Result, error) {
	b, st := s.b, &s.b.Status
	st.Phase = v1alpha1.BenchmarkRunning
	if n := len(st.Runs); n > 0 && st.Runs[n-1].Phase == v1alpha1.RunPending {
		return r.startWhenQuiet(ctx, s, &st.Runs[n-1])
	}
	if n := len(st.Runs); n > 0 && (st.Runs[n-1].Phase == v1alpha1.RunRunning || st.Runs[n-1].Phase == v1alpha1.RunAccounting) {
		run := &st.Runs[n-1]
		job, err := r.job(s, benchmark.PhaseRun, run.Index)
		if err != nil {
			return ctrl.Result{}, err
		}
		out, err := r.observe(ctx, s, job)
		if err != nil || out == nil {
			return ctrl.Result{}, waitOr(err)
		}
		if wait := r.cpuSettling(s, out); wait > 0 {
			return awaitFigures(b, run, out, wait)
		}
		var cpu *v1alpha1.RunCPU
		if succeeds(b, *run, out) {
			var again time.Duration
			if cpu, again = r.accountCPU(ctx, s, out); again > 0 {
				return awaitFigures(b, run, out, again)
			}
		}
		r.record(b, run, out)
		if run.Phase == v1alpha1.RunSucceeded {
			run.CPU = cpu
		}
		s.collected = append(s.collected, job)
		if run.Phase == v1alpha1.RunFailed {
			r.fail(b, v1alpha1.ReasonRunFailed, fmt.Sprintf("run %d failed: %s", run.Index, run.InvalidReason))
			return ctrl.Result{}, errPhaseBlocked
		}
	}

	valid := benchrun.ValidThroughputs(st.Runs)
	reps := benchmark.Repetitions(b)
	switch {
	case int32(len(valid)) >= reps:
		st.Phase = v1alpha1.BenchmarkSucceeded
		st.MedianThroughputOpsPerSec = benchrun.MedianThroughput(st.Runs)
		msg := fmt.Sprintf("%d valid runs of %d, median %d ops/s", len(valid), len(st.Runs), st.MedianThroughputOpsPerSec)
		setCondition(&st.Conditions, b.Generation, v1alpha1.ConditionComplete, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, msg)
		r.Recorder.Eventf(b, nil, "Normal", v1alpha1.ReasonSucceeded, "Conclude", "%s", msg)
		return ctrl.Result{}, nil
	case int32(len(st.Runs)) >= 2*reps:
		r.fail(b, v1alpha1.ReasonTooManyInvalidRuns, fmt.Sprintf("only %d of %d runs were valid; the last was invalid because %s", len(valid), len(st.Runs), st.Runs[len(st.Runs)-1].InvalidReason))
		return ctrl.Result{}, nil
	}
	st.Runs = append(st.Runs, v1alpha1.BenchmarkRun{Index: int32(len(st.Runs)), Phase: v1alpha1.RunPending})
	return r.startWhenQuiet(ctx, s, &st.Runs[len(st.Runs)-1])
}

// lastWindow: the run that just ended counts, and it completes the benchmark's repetitions,
// so no further window of the benchmark will open (its CPU figures decide nothing about that).
func lastWindow(b *v1alpha1.DatastoreBenchmark, run v1alpha1.BenchmarkRun, out *benchrun.Outcome) bool {
	return succeeds(b, run, out) && int32(len(benchrun.ValidThroughputs(b.Status.Runs)))+1 >= benchmark.Repetitions(b)
}

// succeeds: the run, once recorded, is valid (its copy is recorded, not the run itself).
func succeeds(b *v1alpha1.DatastoreBenchmark, run v1alpha1.BenchmarkRun, out *benchrun.Outcome) bool {
	benchrun.Record(&run, *out, &b.Spec)
	return run.Phase == v1alpha1.RunSucceeded
}

// awaitFigures holds a finished run until its CPU figures can be read.
func awaitFigures(b *v1alpha1.DatastoreBenchmark, run *v1alpha1.BenchmarkRun, out *benchrun.Outcome, wait time.Duration) (ctrl.Result, error) {
	if lastWindow(b, *run, out) {
		// Saying that no window of this benchmark is open any more lets a study start its
		// next run while this one waits for its figures.
		run.Phase = v1alpha1.RunAccounting
		run.StartTime, run.CompletionTime = &metav1.Time{Time: out.Summary.Start}, &metav1.Time{Time: out.Summary.End}
	}
	return ctrl.Result{RequeueAfter: wait}, errPhaseBlocked
}

// startWhenQuiet starts a pending run's Job once its nodes are quiet (spec.quietStart).
func (r *DatastoreBenchmarkReconciler) startWhenQuiet(ctx context.Context, s *benchmarkScope, run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	if wait := r.awaitQuiet(ctx, s, run); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, errPhaseBlocked
	}
	job, err := r.job(s, benchmark.PhaseRun, run.Index)
	if err != nil {
		return ctrl.Result{}, err
	}
	run.Phase, run.Job = v1alpha1.RunRunning, job.Name
	if _, err := r.observe(ctx, s, job); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(s.b, nil, "Normal", "RunStarted", fmt.Sprintf("Run%d", run.Index), "run %d of %d started (Job %s)", run.Index, benchmark.Repetitions(s.b), job.Name)
	return ctrl.Result{}, errPhaseBlocked
}

// job renders one Job; the driver follows the workload and the engine: fio for a storage
// workload, k6 for Cassandra, YCSB's JVM client for HBase.
func (r *DatastoreBenchmarkReconciler) job(s *benchmarkScope, phase string, run int32) (*batchv1.Job, error) {
	url := r.Options.PrometheusRemoteWriteURL
	if p := s.b.Spec.Prometheus; p != nil && p.RemoteWriteURL != "" {
		url = p.RemoteWriteURL
	}
	image := r.Options.K6Image
	switch {
	case s.b.Spec.Workload.Storage != nil:
		image = r.Options.StorageBenchImage
	case s.target.HBase != nil:
		image = r.Options.YCSBHBaseImage
	}
	return benchmark.Build(benchmark.Job{Benchmark: s.b, Target: s.target, Phase: phase, Run: run, Image: image, RemoteWriteURL: url,
		VPNImage: r.Options.VPNImage, KeyServer: r.Options.keyServer(), VolumeEncryptionImage: r.Options.VolumeEncryptionImage, FeatureLabelPrefix: r.Options.FeatureLabelPrefix})
}

// record writes a finished run's results, judges whether it counts and says so in an event.
func (r *DatastoreBenchmarkReconciler) record(b *v1alpha1.DatastoreBenchmark, run *v1alpha1.BenchmarkRun, out *benchrun.Outcome) {
	benchrun.Record(run, *out, &b.Spec)
	action := fmt.Sprintf("Run%d", run.Index)
	if run.Phase == v1alpha1.RunSucceeded {
		note := ""
		if w := run.Writes; w != nil {
			note = fmt.Sprintf("; all %d acknowledged key-fields read back intact", w.Checked)
		}
		r.Recorder.Eventf(b, nil, "Normal", "RunSucceeded", action, "run %d: %d ops/s over %s %s%s", run.Index, run.ThroughputOpsPerSec, run.NegotiatedProtocol, run.NegotiatedCipherSuite, note)
	} else {
		r.Recorder.Eventf(b, nil, "Warning", "Run"+string(run.Phase), action, "run %d does not count: %s", run.Index, run.InvalidReason)
	}
}

func (r *DatastoreBenchmarkReconciler) fail(b *v1alpha1.DatastoreBenchmark, reason, msg string) {
	b.Status.Phase = v1alpha1.BenchmarkFailed
	setCondition(&b.Status.Conditions, b.Generation, v1alpha1.ConditionComplete, metav1.ConditionTrue, reason, msg)
	r.Recorder.Eventf(b, nil, "Warning", reason, "Conclude", "%s", msg)
}

// observe creates the Job if it does not exist and, once it finished, collects its pods'
// summaries; the outcome is nil while the Job runs.
func (r *DatastoreBenchmarkReconciler) observe(ctx context.Context, s *benchmarkScope, want *batchv1.Job) (*benchrun.Outcome, error) {
	var job batchv1.Job
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &job); {
	case apierrors.IsNotFound(err):
		// A benchmark read from a cache that has not seen our last status write would start
		// again a Job whose results are already collected (and the Job deleted): create only
		// from the API server's current version.
		var live v1alpha1.DatastoreBenchmark
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.b), &live); err != nil {
			return nil, err
		}
		if live.ResourceVersion != s.b.ResourceVersion {
			return nil, errStale
		}
		_, err := applyOwned(ctx, r.Client, s.b, want)
		return nil, err
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(&job, s.b):
		return nil, &NotOwnedError{Kind: "Job", Name: job.Name, Owner: "benchmark"}
	}
	complete, failed := jobCondition(&job, batchv1.JobComplete), jobCondition(&job, batchv1.JobFailed)
	completions, inPods := int(*job.Spec.Completions), client.MatchingLabels(job.Spec.Template.Labels)
	finished := complete != nil || failed != nil
	if !finished {
		// Pods that all succeeded are the result, seconds before the Job says so: each of a
		// study's runs waits for the one before. The cache only says when to look.
		var cached corev1.PodList
		if err := r.Client.List(ctx, &cached, client.InNamespace(job.Namespace), inPods); err != nil || !benchrun.Succeeded(cached.Items, completions) {
			return nil, err
		}
	}
	// The Job controller marks the Job finished only after it saw its pods terminate, but our
	// pod cache can lag behind our Job cache: a pod read from it may still look running and
	// turn a failed run into a lost one. Read them live, once per finished Job.
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(job.Namespace), inPods); err != nil {
		return nil, err
	}
	if !finished && !benchrun.Succeeded(pods.Items, completions) {
		return nil, nil
	}
	out := benchrun.Collect(pods.Items, completions)
	if failed != nil && out.Failed == "" && out.Invalid == "" {
		out.Invalid = fmt.Sprintf("Job %s failed: %s", job.Name, failed.Message)
	}
	return &out, nil
}

func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

func (r *DatastoreBenchmarkReconciler) deleteJob(ctx context.Context, job *batchv1.Job) error {
	err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return client.IgnoreNotFound(err)
}
