package stats

import (
	"fmt"
	"math"
	"slices"
)

const (
	// Level of every confidence interval the operator reports.
	Level = 0.95
	// Alpha of the significance test, matching Level.
	Alpha = 1 - Level
	// MeaningfulOverhead is the smallest overhead worth acting on. Repetitions of one profile on
	// a shared two-core node differ by a few percent; a significant difference below this
	// changes no decision and the report says so.
	MeaningfulOverhead = 0.02
)

// Comparison of a profile's repetitions against the baseline's, in throughput.
type Comparison struct {
	// Overhead is the fraction of baseline throughput lost (negative: faster than baseline):
	// 1 - exp(shift), with shift the Hodges-Lehmann estimate on log throughput, so it reads as
	// a ratio of typical throughputs and stays consistent with its interval and test.
	Overhead float64 `json:"overhead"`
	// CI of Overhead, when the repetitions suffice for Level.
	CI    Interval `json:"ci"`
	HasCI bool     `json:"hasCI"`
	// Test is the signed-rank test of the paired log ratios when Paired, otherwise the
	// Mann-Whitney U test of the two samples' log throughputs.
	Test Test `json:"test"`
	// Paired: the estimate, interval and test come from Pairs runs paired by round.
	Paired bool `json:"paired"`
	Pairs  int  `json:"pairs,omitempty"`
	// Significant: P < Alpha.
	Significant bool `json:"significant"`
	// Meaningful: significant and |Overhead| ≥ MeaningfulOverhead.
	Meaningful bool `json:"meaningful"`
}

// Compare measures cell throughputs against baseline throughputs (both positive), as two
// independent samples.
func Compare(baseline, cell []float64) Comparison {
	lc, lb := logs(cell), logs(baseline)
	return conclude(Comparison{Test: MannWhitney(lc, lb)}, HodgesLehmann(lc, lb, Level))
}

// ComparePaired measures cell throughputs against baseline throughputs (both positive) run in
// the same rounds: cell[i] and baseline[i] ran in round i. Drift from round to round cancels
// in each pair's log ratio.
func ComparePaired(baseline, cell []float64) Comparison {
	d := make([]float64, len(cell))
	for i := range cell {
		d[i] = math.Log(cell[i]) - math.Log(baseline[i])
	}
	return conclude(Comparison{Test: SignedRank(d), Paired: true, Pairs: len(d)}, PairedShift(d, Level))
}

// HalfWidth is half the interval's width: what a precision target bounds. The exact intervals
// come from order statistics and are rarely centred on the estimate, so this is not how far the
// interval reaches on either side of it. Only meaningful when HasCI.
func (c Comparison) HalfWidth() float64 {
	return (c.CI.High - c.CI.Low) / 2
}

// Summary writes the overhead for a benchmark's report: "12.3% [8.1, 15.0], p 0.031", with
// ": no difference found" when the interval holds zero, and without an interval when the rounds
// are too few for one.
func (c Comparison) Summary() string {
	if !c.HasCI {
		return fmt.Sprintf("%.1f%% (too few rounds for an interval)", 100*c.Overhead)
	}
	s := fmt.Sprintf("%.1f%% [%.1f, %.1f], p %.3f", 100*c.Overhead, 100*c.CI.Low, 100*c.CI.High, c.Test.P)
	if c.CI.Low <= 0 && c.CI.High >= 0 {
		s += ": no difference found"
	}
	return s
}

// conclude completes a comparison from the shift of log throughput and the test.
func conclude(c Comparison, shift Shift) Comparison {
	c.Overhead = 1 - math.Exp(shift.Estimate)
	if shift.HasCI {
		// A larger shift is a smaller overhead: the bounds swap.
		c.CI = Interval{Low: 1 - math.Exp(shift.CI.High), High: 1 - math.Exp(shift.CI.Low), Level: shift.CI.Level}
		c.HasCI = true
	}
	c.Significant = c.Test.P < Alpha
	c.Meaningful = c.Significant && math.Abs(c.Overhead) >= MeaningfulOverhead
	return c
}

func logs(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Log(v)
	}
	return out
}

// ExtraNodes is the fraction of nodes to add so that a profile losing overhead of each
// node's throughput serves the baseline's load again, assuming throughput scales linearly
// with nodes (the papers' "+90% cost" for a 47% loss). It is +Inf for a total loss.
func ExtraNodes(overhead float64) float64 {
	if overhead >= 1 {
		return math.Inf(1)
	}
	return 1/(1-overhead) - 1
}

// Point is a candidate in the (security rank, throughput) plane.
type Point struct {
	Name       string
	Rank       float64
	Throughput float64
}

// ParetoFrontier returns the names of the points no other point dominates (at least as
// secure and as fast, and better in one), in the order given.
func ParetoFrontier(points []Point) []string {
	var out []string
	for _, p := range points {
		dominated := slices.ContainsFunc(points, func(q Point) bool {
			return q.Rank >= p.Rank && q.Throughput >= p.Throughput && (q.Rank > p.Rank || q.Throughput > p.Throughput)
		})
		if !dominated {
			out = append(out, p.Name)
		}
	}
	return out
}
