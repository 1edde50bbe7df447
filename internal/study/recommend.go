package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/stats"
)

// Candidate is a profile as the decision rule saw it: its worst overhead over the cluster
// sizes of the deciding acceleration, and whether the rule allowed it.
type Candidate struct {
	Profile    string  `json:"profile"`
	Rank       int32   `json:"rank"`
	Preference float64 `json:"preference"`
	// Cell with the worst overhead, which the decision and the cost rest on.
	Cell          string  `json:"cell,omitempty"`
	WorstOverhead float64 `json:"worstOverhead"`
	Nodes         int32   `json:"nodes,omitempty"`
	Eligible      bool    `json:"eligible"`
	// Inconclusive: the intervals cannot say whether the profile is within the budget.
	Inconclusive bool   `json:"inconclusive,omitempty"`
	Why          string `json:"why"`
	// cmps: the comparisons of its cells with the baseline, which the budget rule weighs.
	cmps []cellComparison
}

// deciding is the acceleration the recommendation is for: hardware AES as the nodes have it
// when that was measured (production runs with it); emulated-off cells only inform.
func deciding(cells []v1alpha1.StudyCell) v1alpha1.Acceleration {
	if slices.ContainsFunc(cells, func(c v1alpha1.StudyCell) bool { return c.Acceleration == v1alpha1.AccelerationAvailable }) {
		return v1alpha1.AccelerationAvailable
	}
	return v1alpha1.AccelerationEmulatedOff
}

func recommend(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, reports []CellReport, m v1alpha1.OverheadMetric) (*v1alpha1.Recommendation, []Candidate) {
	acc := deciding(cells)
	var candidates []Candidate
	for _, profile := range spec.Matrix.Profiles {
		c, ok := candidate(spec, cells, reports, profile, acc)
		if ok {
			candidates = append(candidates, c)
		}
	}
	best := -1
	for i := range candidates {
		c := &candidates[i]
		switch spec.Decision.Objective {
		case v1alpha1.ObjectiveBestThroughputAboveRank:
			min := int32(0)
			if spec.Constraints != nil && spec.Constraints.MinimumRank != nil {
				min = *spec.Constraints.MinimumRank
			}
			if c.Why == "" && c.Rank < min {
				c.Why = fmt.Sprintf("rank %d is below the minimum %d", c.Rank, min)
			}
		default:
			budget := budgetOf(spec)
			if c.Why != "" {
				break
			}
			switch verdict, decisive := judge(c.cmps, budget); verdict {
			case overBudget:
				c.Why = fmt.Sprintf("overhead %s%% (95%% CI %s..%s%%) exceeds the %s%% budget", percent(decisive.cmp.Overhead),
					percent(decisive.cmp.CI.Low), percent(decisive.cmp.CI.High), percent(budget))
			case inconclusive:
				c.Why, c.Inconclusive = inconclusiveWhy(spec, cells, decisive, budget), true
			}
		}
		c.Eligible = c.Why == ""
		if c.Eligible {
			c.Why = "eligible"
		}
		if c.Eligible && (best < 0 || better(spec, c, &candidates[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil, candidates
	}
	w := &candidates[best]
	w.Why = "recommended"
	rec := &v1alpha1.Recommendation{Profile: w.Profile, Reason: reason(spec, acc, w, candidates, reports, m)}
	if w.Profile != spec.Matrix.Baseline {
		// A profile measured faster than the baseline needs no extra node.
		extra := stats.ExtraNodes(max(0, w.WorstOverhead))
		rec.ExtraNodesPercent = percent(extra)
		if spec.Cost != nil && !math.IsInf(extra, 1) {
			cost := extra * float64(w.Nodes) * price(spec.Cost.PricePerNodeHour)
			rec.ExtraCostPerHour = strconv.FormatFloat(cost, 'f', 2, 64)
		}
	}
	return rec, candidates
}

func budgetOf(spec *v1alpha1.TradeoffStudySpec) float64 {
	if spec.Decision.OverheadBudgetPercent == nil {
		return 0
	}
	return float64(*spec.Decision.OverheadBudgetPercent) / 100
}

// better: under the budget rule the more preferred profile wins and then the faster; under
// the throughput rule the faster wins and then the more preferred.
func better(spec *v1alpha1.TradeoffStudySpec, a, b *Candidate) bool {
	if spec.Decision.Objective == v1alpha1.ObjectiveBestThroughputAboveRank {
		if a.WorstOverhead != b.WorstOverhead {
			return a.WorstOverhead < b.WorstOverhead
		}
		return a.Preference > b.Preference
	}
	if a.Preference != b.Preference {
		return a.Preference > b.Preference
	}
	return a.WorstOverhead < b.WorstOverhead
}

// candidate gathers a profile's cells at the deciding acceleration. A profile with a failed
// or unmeasured cell there is listed with the reason and never recommended.
func candidate(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, reports []CellReport, profile string, acc v1alpha1.Acceleration) (Candidate, bool) {
	out := Candidate{Profile: profile}
	found, worst := false, math.Inf(-1)
	for i := range cells {
		c := &cells[i]
		if c.Profile != profile || c.Acceleration != acc {
			continue
		}
		found = true
		out.Rank, out.Preference = c.Rank, preference(spec, c)
		switch {
		case c.State == v1alpha1.CellPruned:
			return Candidate{}, false // listed with the pruned cells instead
		case c.State == v1alpha1.CellFailed:
			out.Why = fmt.Sprintf("cell %s failed: %s", c.Name, c.Reason)
		case len(c.Runs) == 0:
			out.Why = fmt.Sprintf("cell %s has no valid repetition", c.Name)
		}
		if out.Why != "" {
			return out, true
		}
		overhead := 0.0
		if profile != spec.Matrix.Baseline {
			cmp := reports[i].Comparison
			if cmp == nil {
				out.Why = fmt.Sprintf("cell %s has no baseline to compare with", c.Name)
				return out, true
			}
			overhead = cmp.Overhead
			out.cmps = append(out.cmps, cellComparison{cell: c.Name, rounds: len(c.Runs), cmp: cmp})
		}
		if overhead > worst {
			worst, out.WorstOverhead, out.Cell, out.Nodes = overhead, overhead, c.Name, c.Nodes
		}
	}
	return out, found
}

// reason is the sentence a person checks against the report's tables.
func reason(spec *v1alpha1.TradeoffStudySpec, acc v1alpha1.Acceleration, w *Candidate, all []Candidate, reports []CellReport, m v1alpha1.OverheadMetric) string {
	where := "with hardware AES"
	if acc == v1alpha1.AccelerationEmulatedOff {
		where = "with AES acceleration emulated off"
	}
	ranked := fmt.Sprintf("rank %d", w.Rank)
	if len(spec.Decision.PreferenceOrder) > 0 {
		ranked = "preference " + strconv.Itoa(len(spec.Decision.PreferenceOrder)-int(w.Preference)+1)
	}
	var s string
	ci := interval(reports, w.Cell)
	switch {
	case w.Profile == spec.Matrix.Baseline:
		s = fmt.Sprintf("%s (%s) is the baseline itself: no other measured profile met the rule", w.Profile, ranked)
	case w.WorstOverhead <= 0:
		// "costs -11.0%" reads as a typo: a profile faster than the baseline everywhere says so.
		if ci != "" {
			ci = ", " + ci
		}
		// Only the deciding acceleration's cells count: the other acceleration may differ.
		s = fmt.Sprintf("%s (%s) was no slower than %s in any cell %s (highest overhead %s%%%s, cell %s)",
			w.Profile, ranked, spec.Matrix.Baseline, where, percent(w.WorstOverhead), ci, w.Cell)
	default:
		if ci != "" {
			ci = " (" + ci + ")"
		}
		s = fmt.Sprintf("%s (%s) costs %s%% %s%s at worst (cell %s, %s)", w.Profile, ranked, percent(w.WorstOverhead), lost(m), ci, w.Cell, where)
	}
	if cmp := comparisonOf(reports, w.Cell); w.Profile != spec.Matrix.Baseline && cmp != nil && !cmp.Significant {
		s += fmt.Sprintf(", a difference from %s these repetitions cannot tell from noise (p = %.2f)", spec.Matrix.Baseline, cmp.Test.P)
	}
	switch spec.Decision.Objective {
	case v1alpha1.ObjectiveBestThroughputAboveRank:
		s += "; it is the fastest profile at or above the minimum rank"
	default:
		s += fmt.Sprintf("; it is the most preferred profile within the %s%% overhead budget", percent(budgetOf(spec)))
	}
	s += equals(w, all, reports)
	// Every stronger profile the data could not judge, else the first stronger one that lost.
	said := false
	for _, c := range all {
		if c.Inconclusive && c.Preference > w.Preference {
			s += fmt.Sprintf("; %s ranks higher but is %s", c.Profile, c.Why)
			said = true
		}
	}
	for _, c := range all {
		if !said && !c.Eligible && c.Preference > w.Preference {
			s += fmt.Sprintf("; %s ranks higher but %s", c.Profile, c.Why)
			break
		}
	}
	return s + "."
}

// equals names the eligible profiles of the winner's preference that lost on the point estimate
// alone. Between equals the rule picks the lower estimate; where the two overheads' intervals
// overlap, or one has none, the data did not decide between them and the sentence says so.
func equals(w *Candidate, all []Candidate, reports []CellReport) string {
	var s string
	for i := range all {
		c := &all[i]
		if c.Profile == w.Profile || !c.Eligible || c.Preference != w.Preference {
			continue
		}
		s += fmt.Sprintf("; %s ranks the same at %s%% (cell %s", c.Profile, percent(c.WorstOverhead), c.Cell)
		if ci := interval(reports, c.Cell); ci != "" {
			s += ", " + ci
		}
		s += ")"
		if separated(comparisonOf(reports, w.Cell), comparisonOf(reports, c.Cell)) {
			s += ", measured costlier"
		} else {
			s += ": between the two the lower point estimate chose, which these intervals do not decide"
		}
	}
	return s
}

// separated: the first overhead's interval lies wholly below the second's. The baseline has no
// comparison (a nil first): its overhead is zero by definition.
func separated(a, b *stats.Comparison) bool {
	if b == nil || !b.HasCI {
		return false
	}
	if a == nil {
		return b.CI.Low > 0
	}
	return a.HasCI && a.CI.High < b.CI.Low
}

func comparisonOf(reports []CellReport, cell string) *stats.Comparison {
	if i := slices.IndexFunc(reports, func(r CellReport) bool { return r.Name == cell }); i >= 0 {
		return reports[i].Comparison
	}
	return nil
}

func interval(reports []CellReport, cell string) string {
	cmp := comparisonOf(reports, cell)
	if cmp == nil || !cmp.HasCI {
		return ""
	}
	return fmt.Sprintf("95%% CI %s..%s%%", percent(cmp.CI.Low), percent(cmp.CI.High))
}

// lost names what an overhead on m takes away.
func lost(m v1alpha1.OverheadMetric) string {
	if m == v1alpha1.OverheadMetricServerCPU {
		return "of the operations a server CPU-second serves"
	}
	return "throughput"
}

// price of a node-hour to a millionth: a quantity's float is approximate, and "0.175" would
// otherwise be reported as 0.17500000000000002.
func price(q resource.Quantity) float64 { return math.Round(q.AsApproximateFloat64()*1e6) / 1e6 }
