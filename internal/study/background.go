package study

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchrun"
)

// DefaultMaxBackgroundCores is the background a run may have when the study does not say. On
// the 2-core machine this project is measured on, the kubelet, containerd, the cluster network
// and the idle datastores of other cells take well under that; a neighbour's compaction or an
// unrelated job on the node takes more.
var DefaultMaxBackgroundCores = resource.MustParse("500m")

// DefaultBackgroundRepeats is how often a busy round of a cell is measured again.
const DefaultBackgroundRepeats = 2

// backgroundRule reads spec.background with its defaults; a limit of 0 turns the rule off.
func backgroundRule(spec *v1alpha1.TradeoffStudySpec) (maxCores float64, repeats int) {
	limit, repeats := DefaultMaxBackgroundCores, DefaultBackgroundRepeats
	if b := spec.Background; b != nil {
		if b.MaxCores != nil {
			limit = *b.MaxCores
		}
		repeats = int(b.Repeats)
	}
	return limit.AsApproximateFloat64(), repeats
}

// DefaultSettle is the longest a run waits for quiet nodes when the study does not say.
const DefaultSettle = 90 * time.Second

// quietStart is what every run of the study waits for before its clients start: a background
// below half the set-aside limit, so that a run rarely starts only to be set aside. What the
// study itself leaves behind — the flushes and compactions after a cell's load and runs — is
// the usual cause, and it passes within a minute on the 2-core machine. Nil when the rule or
// the wait is off.
func quietStart(spec *v1alpha1.TradeoffStudySpec) *v1alpha1.QuietStart {
	limit, _ := backgroundRule(spec)
	settle := DefaultSettle
	if b := spec.Background; b != nil && b.Settle != nil {
		settle = b.Settle.Duration
	}
	if limit <= 0 || settle <= 0 {
		return nil
	}
	return &v1alpha1.QuietStart{
		MaxCores: resource.NewMilliQuantity(int64(limit*1000/2), resource.DecimalSI),
		MaxWait:  metav1.Duration{Duration: settle},
	}
}

// Judge applies the quiet-machine rule to a cell's run: a run whose background exceeds the
// limit is marked busy, and repeat says whether the study sets it aside and measures the round
// again (it has repeats left) or keeps it, flagged. A run without a background figure (no CPU
// accounting) cannot be judged and is kept as it is.
//
// A run that lost its server CPU figure while other runs of the study have theirs (accounted)
// is set aside and measured again too, within the same repeats, unless the study decides on
// throughput: the analysis pairs each run with its round's baseline run, and a run without the
// figure costs its cell a pair, or every cell of its round if it is the baseline's. Such a loss
// is a moment's: a run's samples must span three tenths of its window (cpuacct.MinCoverage), and
// on a busy 2-core node the kubelet's 2 s housekeeping stretches to nearly 4 s; in one make demo
// study (2026-12-02) one run in 36 fell short, with 3 s of its 10 s, and its cell's interval
// missed ±5 points after nine rounds with eight pairs. Once the repeats are spent the run is
// kept, its throughput counting.
func Judge(spec *v1alpha1.TradeoffStudySpec, cell *v1alpha1.StudyCell, run v1alpha1.StudyRun, accounted bool) (judged v1alpha1.StudyRun, repeat bool) {
	limit, repeats := backgroundRule(spec)
	done := Attempt(cell, int(run.Round))
	if run.CPUUnavailable != "" && accounted && decidesOnCPU(spec) {
		if done >= repeats {
			return run, false
		}
		run.Busy = fmt.Sprintf("no server CPU figure (%s): set aside and measured again (repeat %d of %d)",
			strings.TrimSuffix(run.CPUUnavailable, "."), done+1, repeats)
		return run, true
	}
	bg, err := strconv.ParseFloat(run.BackgroundCores, 64)
	if limit <= 0 || err != nil || bg <= limit {
		return run, false
	}
	if done < repeats {
		run.Busy = fmt.Sprintf("background %.2f cores exceeded the %.2f-core limit: set aside and measured again (repeat %d of %d)",
			bg, limit, done+1, repeats)
		return run, true
	}
	run.Busy = fmt.Sprintf("background %.2f cores exceeded the %.2f-core limit after %d repeats: kept, the machine stayed busy", bg, limit, repeats)
	return run, false
}

// decidesOnCPU: the study may decide on server CPU per operation (Auto takes it where every
// compared cell has it).
func decidesOnCPU(spec *v1alpha1.TradeoffStudySpec) bool {
	return spec.Decision.Metric != v1alpha1.OverheadMetricThroughput
}

// Accounted: some run of the study has a server CPU figure, so accounting works and a run
// without one lost it to a moment's cause.
func Accounted(cells []v1alpha1.StudyCell) bool {
	for _, c := range cells {
		for _, r := range c.Runs {
			if r.ServerCPUMicrosPerOp != "" {
				return true
			}
		}
	}
	return false
}

// RateNotKept judges a cell's benchmark that failed: when it failed only because its clients
// could not keep the fixed rate in any of its runs (benchrun.RateNotKept), repeat says that the
// study sets it aside and measures the round again, within the same spec.background.repeats as
// a busy run. On two cores that is often a moment's contention: in one make demo study
// (2026-11-30), TLS with AES emulated off dropped 15% and 11% of the schedule in its two runs of
// round 1 and failed its cell, where the run before kept the rate in all eight rounds. Any other
// failure, or one after the last repeat, fails the cell.
func RateNotKept(spec *v1alpha1.TradeoffStudySpec, cell *v1alpha1.StudyCell, b *v1alpha1.DatastoreBenchmark, round int) (setAside v1alpha1.StudyRun, repeat bool) {
	if b.Status.Phase != v1alpha1.BenchmarkFailed || len(b.Status.Runs) == 0 {
		return v1alpha1.StudyRun{}, false
	}
	var dropped []string
	for _, r := range b.Status.Runs {
		if !benchrun.RateNotKept(r) {
			return v1alpha1.StudyRun{}, false
		}
		var ops int64
		for _, l := range r.Latencies {
			ops += l.Count
		}
		dropped = append(dropped, strconv.FormatFloat(100*float64(r.DroppedIterations)/float64(max(ops+r.DroppedIterations, 1)), 'f', 1, 64)+"%")
	}
	_, repeats := backgroundRule(spec)
	done := Attempt(cell, round)
	if done >= repeats {
		return v1alpha1.StudyRun{}, false
	}
	last := b.Status.Runs[len(b.Status.Runs)-1]
	return v1alpha1.StudyRun{Benchmark: b.Name, Round: int32(round), ThroughputOpsPerSec: last.ThroughputOpsPerSec, ThroughputCV: last.ThroughputCV,
		Busy: fmt.Sprintf("the clients could not keep the fixed rate (dropped %s of the schedule): set aside and measured again (repeat %d of %d)",
			strings.Join(dropped, ", "), done+1, repeats)}, true
}

// Attempt is how many runs of a cell's round were set aside (for their background, or for a
// rate their clients could not keep): the next measurement of that round is attempt number
// Attempt (0 for the first).
func Attempt(cell *v1alpha1.StudyCell, round int) int {
	n := 0
	for _, r := range cell.SetAside {
		if int(r.Round) == round {
			n++
		}
	}
	return n
}
