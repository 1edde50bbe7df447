package controllers

import (
	"context"
	"errors"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/cpuacct"
)

const (
	// quietWindow is how far back a run's start looks at its nodes: the kubelet refreshes its
	// counters every 10-20 s at the default housekeeping interval, so the window holds two
	// samples at least.
	quietWindow = 30 * time.Second
	// quietLeast is the shortest time a waiting run judges its nodes on: a second of calm
	// between a neighbour's bursts is not quiet.
	quietLeast = 10 * time.Second
	// quietShortest is the shortest span a look judges: three of Kind's 2 s kubelet samples.
	quietShortest = 6 * time.Second
	// quietPoll is how often a waiting run looks again: as often as Kind's kubelets refresh
	// their counters. At 5 s, half the runs of make demo's study waited one whole poll.
	quietPoll = 2 * time.Second
	// defaultQuietMaxWait applies when spec.quietStart.maxWait is unset.
	defaultQuietMaxWait = 90 * time.Second
)

// defaultQuietMaxCores applies when spec.quietStart.maxCores is unset.
var defaultQuietMaxCores = resource.MustParse("250m")

// awaitQuiet holds a pending run until the datastore's nodes are quiet (spec.quietStart) and
// records the wait in the run's status. It returns how long to wait before looking again, 0
// once the run may start: quiet, waited maxWait, or nothing to measure the quiet with.
func (r *DatastoreBenchmarkReconciler) awaitQuiet(ctx context.Context, s *benchmarkScope, run *v1alpha1.BenchmarkRun) time.Duration {
	q := s.b.Spec.QuietStart
	if q == nil {
		return 0
	}
	now := time.Now()
	first := run.QuietStart == nil
	if first {
		run.QuietStart = &v1alpha1.RunQuietStart{Since: metav1.NewTime(now), Outcome: v1alpha1.QuietWaiting}
	}
	rq := run.QuietStart
	waited := now.Sub(rq.Since.Time)
	rq.WaitedSeconds = int32(waited.Seconds())
	maxWait := q.MaxWait.Duration
	if maxWait <= 0 {
		maxWait = defaultQuietMaxWait
	}
	limit := defaultQuietMaxCores
	if q.MaxCores != nil {
		limit = *q.MaxCores
	}
	action := "Run" + strconv.Itoa(int(run.Index))

	// The first look covers the last quietWindow; later ones only the time since the run began
	// waiting, and at least quietLeast, so a load that had already ended (a study's previous run
	// on the same node) does not hold the run back once quietLeast of what followed is measured.
	// Nothing before q.After counts: a study's previous run was its own load, and what it left
	// behind comes after it.
	window := cpuacct.Window{Start: now.Add(-quietWindow), End: now}
	if since := rq.Since.Time; !first {
		if least := now.Add(-quietLeast); least.Before(since) {
			since = least
		}
		if since.After(window.Start) {
			window.Start = since
		}
	}
	if q.After != nil && q.After.After(window.Start) {
		window.Start = q.After.Time
	}
	req, why := r.serverRequest(ctx, s, window, nil)
	if why == "" && window.Duration() < quietShortest {
		// Look again exactly when there is enough to judge: a poll's rounding would add a
		// second to every run of a study on average.
		rq.Message = "waiting for " + quietShortest.String() + " after the previous run to judge the nodes on"
		return quietShortest - window.Duration()
	}
	if why == "" {
		res, err := r.Options.CPUAccounting.Account(ctx, req)
		if err == nil && res.BackgroundUnmeasured != "" {
			// The quiet is what is judged here: without it, the look failed.
			err = errors.New(res.BackgroundUnmeasured)
		}
		if err == nil {
			cores := res.Background / window.Duration().Seconds()
			rq.BackgroundCores, rq.Message = strconv.FormatFloat(cores, 'f', 2, 64), ""
			switch {
			case cores <= limit.AsApproximateFloat64():
				rq.Outcome = v1alpha1.QuietReached
				if waited > 0 {
					r.Recorder.Eventf(s.b, nil, "Normal", v1alpha1.ReasonRunQuiet, action, "run %d starts on quiet nodes (background %s cores) after waiting %s",
						run.Index, rq.BackgroundCores, waited.Round(time.Second))
				}
				return 0
			case waited >= maxWait:
				rq.Outcome = v1alpha1.QuietTimedOut
				r.Recorder.Eventf(s.b, nil, "Warning", v1alpha1.ReasonRunNotQuiet, action, "run %d starts although its nodes' background is %s cores, above %s, after waiting %s (spec.quietStart.maxWait)",
					run.Index, rq.BackgroundCores, limit.String(), maxWait)
				return 0
			}
			if first {
				r.Recorder.Eventf(s.b, nil, "Normal", v1alpha1.ReasonRunWaitsForQuiet, action, "run %d waits for quiet nodes: background %s cores, above %s",
					run.Index, rq.BackgroundCores, limit.String())
			}
			return quietPoll
		}
		why = err.Error()
	}
	// Without accounting, or for servers outside the cluster, waiting cannot help; a series
	// Prometheus does not have yet (a pod that just started) can.
	rq.Message = why
	if r.Options.CPUAccounting == nil || s.target.ServerPods() == nil || waited >= maxWait {
		rq.Outcome = v1alpha1.QuietUnmeasured
		return 0
	}
	return quietPoll
}
