package study

import (
	"fmt"
	"math"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/stats"
)

// The budget rule decides on intervals, never on a point estimate alone: a profile is within
// the budget when every one of its cells' 95% overhead intervals lies below it, over it when
// one interval lies wholly above it, and inconclusive otherwise. An estimate of 14% with an
// interval of 2..26% says nothing about a 15% budget, and the recommendation says so.

type budgetVerdict int

const (
	withinBudget budgetVerdict = iota
	overBudget
	inconclusive
)

// judge weighs a profile's comparisons (one per cell of the deciding acceleration) against
// the budget, and returns the cell that decided: the one over the budget, or the first
// inconclusive one.
func judge(cmps []cellComparison, budget float64) (budgetVerdict, cellComparison) {
	verdict, decisive := withinBudget, cellComparison{}
	for _, c := range cmps {
		switch {
		case c.cmp.HasCI && c.cmp.CI.Low > budget:
			return overBudget, c
		case !c.cmp.HasCI || c.cmp.CI.High > budget:
			if verdict == withinBudget {
				verdict, decisive = inconclusive, c
			}
		}
	}
	return verdict, decisive
}

// cellComparison is one cell's comparison with the baseline, after rounds rounds.
type cellComparison struct {
	cell   string
	rounds int
	cmp    *stats.Comparison
}

// moreRounds estimates the rounds to add before the cell's interval leaves the budget on one
// side: the interval's half-width shrinks about as 1/√rounds, and it must fall below the
// distance from the estimate to the budget. Without an interval yet, the rounds still missing
// for one (6 pairs). ok is false when the estimate sits on the budget, where no number of
// rounds is enough.
func moreRounds(c cellComparison, budget float64) (int, bool) {
	n, cmp := max(c.rounds, 1), c.cmp
	if !cmp.HasCI {
		return max(minRoundsForCI-n, 1), true
	}
	half, gap := cmp.HalfWidth(), math.Abs(cmp.Overhead-budget)
	if gap < 1e-9 {
		return 0, false
	}
	need := int(math.Ceil(float64(n) * (half / gap) * (half / gap)))
	return max(need-n, 1), true
}

// minRoundsForCI: the signed-rank test's 95% interval needs 6 pairs.
const minRoundsForCI = 6

// roundTime is the least a round takes: every measured cell's warm-up and run, one after the
// other, and in a Switched study its share of the median switch into its profile so far (one
// switch per block of rounds, RoundsTogether). Zero when runs stop after an operation count
// rather than a duration.
func roundTime(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell) time.Duration {
	if spec.Workload.OperationCount != nil && spec.Workload.Duration == nil {
		return 0
	}
	run, warm := benchmark.DefaultDuration, benchmark.DefaultWarmUp
	if spec.Workload.Duration != nil {
		run = spec.Workload.Duration.Duration
	}
	if spec.WarmUp != nil {
		warm = spec.WarmUp.Duration
	}
	if spec.Workload.Storage != nil {
		warm = 0 // each run lays out its file instead
	}
	var total time.Duration
	for _, c := range cells {
		if c.State == v1alpha1.CellPruned || c.State == v1alpha1.CellFailed {
			continue
		}
		total += run + warm
		if seconds := switchSeconds(&c); len(seconds) > 0 && Switched(spec) {
			total += time.Duration(stats.Median(seconds) * float64(time.Second) / float64(RoundsTogether(spec)))
		}
	}
	return total
}

// inconclusiveWhy says why a profile could not be judged and what would settle it.
func inconclusiveWhy(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, c cellComparison, budget float64) string {
	var s string
	if c.cmp.HasCI {
		s = fmt.Sprintf("inconclusive: the overhead's 95%% interval %s..%s%% (cell %s) straddles the %s%% budget",
			percent(c.cmp.CI.Low), percent(c.cmp.CI.High), c.cell, percent(budget))
	} else {
		s = fmt.Sprintf("inconclusive: cell %s has %d rounds, too few for a 95%% interval", c.cell, c.rounds)
	}
	more, ok := moreRounds(c, budget)
	if !ok {
		return s + ", and its estimate sits on the budget: more rounds would not settle it"
	}
	least := ""
	if t := roundTime(spec, cells); t > 0 {
		least = humanDuration(time.Duration(more) * t)
	}
	if c.cmp.HasCI && more > impractical*c.rounds {
		s += fmt.Sprintf(", and its estimate is %s points from the budget: no practical number of rounds would settle it (about %d more",
			percent(math.Abs(c.cmp.Overhead-budget)), more)
		if least != "" {
			s += ", at least " + least
		}
		return s + ")"
	}
	noun := "rounds"
	if more == 1 {
		noun = "round"
	}
	s += fmt.Sprintf(", and about %d more %s would settle it", more, noun)
	if least != "" {
		s += " (at least " + least + ")"
	}
	return s
}

// impractical: rounds beyond this many times those already run are not worth proposing; the
// estimate is then too close to the budget for any study to tell which side it is on.
const impractical = 10

// humanDuration rounds to what a person plans with: seconds under a minute, minutes above.
func humanDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
