package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/stats"
)

// Analysis is step 6: the cells with their statistics, the Pareto frontier and the
// recommendation, and the report that explains them.
type Analysis struct {
	Cells          []v1alpha1.StudyCell
	ParetoFrontier []string
	Recommendation *v1alpha1.Recommendation
	Report         Report
}

// Analyze computes the statistics of every measured cell against the baseline of the same
// acceleration and size, and the recommendation the decision rule picks.
func Analyze(name string, spec *v1alpha1.TradeoffStudySpec, seed int64, cells []v1alpha1.StudyCell) Analysis {
	cells = slices.Clone(cells)
	rep := Report{
		Study: name, Engine: string(spec.Template.Engine), Baseline: spec.Matrix.Baseline,
		Workload: workloadName(spec.Workload), Repetitions: rounds(spec, cells), Seed: seed,
		Method: method, Precision: precisionOf(spec),
	}
	for i := range cells {
		c := &cells[i]
		clearStatistics(c)
		cr := cellReport(c)
		if runs := throughputs(c); len(runs) > 0 {
			c.MedianThroughputOpsPerSec = int64(math.Round(stats.Median(runs)))
			if ci, ok := stats.MedianCI(runs, stats.Level); ok {
				c.ThroughputCI95 = fmt.Sprintf("%d..%d", int64(ci.Low), int64(ci.High))
				cr.ThroughputCI = &ci
			}
			c.P99Micros = int64(math.Round(stats.Median(p99s(c))))
			cr.ClientCPUMicrosPerOp = medianCPU(c)
		}
		if base := baselineOf(cells, c, spec.Matrix.Baseline); base != nil && base != c {
			if cmp, ok := compare(base, c); ok {
				c.OverheadPercent = percent(cmp.Overhead)
				c.PValue = strconv.FormatFloat(cmp.Test.P, 'f', 4, 64)
				c.Significant, c.Meaningful = ptr.To(cmp.Significant), ptr.To(cmp.Meaningful)
				cr.Comparison = &cmp
				cr.ExtraNodesFraction = ptr.To(stats.ExtraNodes(cmp.Overhead))
				if cmp.HasCI {
					c.OverheadCI95 = percent(cmp.CI.Low) + ".." + percent(cmp.CI.High)
				}
			}
		}
		cr.MedianThroughput = c.MedianThroughputOpsPerSec
		cr.P99Micros = c.P99Micros
		rep.Cells = append(rep.Cells, cr)
	}
	if rep.Precision != nil {
		rep.Precision.Imprecise = imprecise(cells, rep.Cells, rep.Precision.TargetHalfWidth)
	}
	a := Analysis{Cells: cells}
	a.ParetoFrontier = frontier(spec, cells)
	a.Recommendation, rep.Candidates = recommend(spec, cells, rep.Cells)
	rep.ParetoFrontier, rep.Recommendation, rep.DecidingAcceleration = a.ParetoFrontier, a.Recommendation, string(deciding(cells))
	if spec.Cost != nil {
		rep.Currency = currency(spec.Cost)
		rep.PricePerNodeHour = spec.Cost.PricePerNodeHour.AsApproximateFloat64()
	}
	a.Report = rep
	return a
}

const method = "Throughput per cell: median of the valid repetitions, 95% confidence interval from order statistics " +
	"(distribution-free; needs 6 repetitions). Repetitions ran in randomized interleaved order (RMIT): every round " +
	"measures every cell once, in a fresh random order. Overhead: 1 - exp(Hodges-Lehmann estimate of the log " +
	"throughput ratio of the cell's run to the baseline's run of the same round, the baseline of the same " +
	"acceleration and cluster size), with the 95% interval that inverts the two-sided Wilcoxon signed-rank test " +
	"(exact without ties). Paired because runs of one round share the machine's state (a neighbour's load, " +
	"compactions, warm-up), which a shared machine changes from round to round by more than TLS costs; the ratio " +
	"cancels it. Rank-based because a few runs are neither normal nor free of outliers; the signed-rank test needs 6 " +
	"rounds to ever reach p < 0.05. Runs without a partner in the same round are left out of the comparison; a cell " +
	"with no paired round at all is compared unpaired (Hodges-Lehmann shift and Mann-Whitney U test). " +
	"Significant: p < 0.05. Meaningful: significant and at least 2% either way. Cost: extra nodes to restore " +
	"baseline throughput, 1/(1 - overhead) - 1, assuming throughput scales linearly with nodes."

// compare measures a cell against its baseline: paired by round over the rounds both ran,
// unpaired only when no round has both (runs recorded before rounds were).
func compare(base, c *v1alpha1.StudyCell) (stats.Comparison, bool) {
	var b, x []float64
	for _, r := range c.Runs {
		i := slices.IndexFunc(base.Runs, func(br v1alpha1.StudyRun) bool { return br.Round == r.Round })
		if r.Round > 0 && i >= 0 {
			b, x = append(b, float64(base.Runs[i].ThroughputOpsPerSec)), append(x, float64(r.ThroughputOpsPerSec))
		}
	}
	if len(x) > 0 {
		return stats.ComparePaired(b, x), true
	}
	if b, x := throughputs(base), throughputs(c); len(b) > 0 && len(x) > 0 {
		return stats.Compare(b, x), true
	}
	return stats.Comparison{}, false
}

func clearStatistics(c *v1alpha1.StudyCell) {
	c.MedianThroughputOpsPerSec, c.ThroughputCI95, c.OverheadPercent, c.OverheadCI95 = 0, "", "", ""
	c.PValue, c.Significant, c.Meaningful, c.P99Micros = "", nil, nil, 0
	c.RunsDone = int32(len(c.Runs))
}

func throughputs(c *v1alpha1.StudyCell) []float64 {
	out := make([]float64, 0, len(c.Runs))
	for _, r := range c.Runs {
		out = append(out, float64(r.ThroughputOpsPerSec))
	}
	return out
}

func p99s(c *v1alpha1.StudyCell) []float64 {
	out := make([]float64, 0, len(c.Runs))
	for _, r := range c.Runs {
		out = append(out, float64(r.P99Micros))
	}
	return out
}

func medianCPU(c *v1alpha1.StudyCell) *float64 {
	var v []float64
	for _, r := range c.Runs {
		if f, err := strconv.ParseFloat(r.ClientCPUMicrosPerOp, 64); err == nil && r.ClientCPUMicrosPerOp != "" {
			v = append(v, f)
		}
	}
	if len(v) == 0 {
		return nil
	}
	return ptr.To(stats.Median(v))
}

func baselineOf(cells []v1alpha1.StudyCell, c *v1alpha1.StudyCell, baseline string) *v1alpha1.StudyCell {
	i := slices.IndexFunc(cells, func(b v1alpha1.StudyCell) bool {
		return b.Profile == baseline && b.Acceleration == c.Acceleration && b.Nodes == c.Nodes
	})
	if i < 0 {
		return nil
	}
	return &cells[i]
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) }

// preference orders profiles for the decision: the operator's rank, unless the study gives
// its own order (step 3), where the first name is the most preferred.
func preference(spec *v1alpha1.TradeoffStudySpec, c *v1alpha1.StudyCell) float64 {
	order := spec.Decision.PreferenceOrder
	if len(order) == 0 {
		return float64(c.Rank)
	}
	if i := slices.Index(order, c.Profile); i >= 0 {
		return float64(len(order) - i)
	}
	return 0
}

// frontier: per acceleration and size, the cells not dominated in (preference, throughput).
func frontier(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell) []string {
	groups := map[string][]stats.Point{}
	var keys []string
	for i := range cells {
		c := &cells[i]
		if len(c.Runs) == 0 {
			continue
		}
		key := fmt.Sprintf("%s/%d", c.Acceleration, c.Nodes)
		if _, ok := groups[key]; !ok {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], stats.Point{Name: c.Name, Rank: preference(spec, c), Throughput: float64(c.MedianThroughputOpsPerSec)})
	}
	var out []string
	for _, k := range keys {
		out = append(out, stats.ParetoFrontier(groups[k])...)
	}
	return out
}

func workloadName(w v1alpha1.Workload) string {
	if w.Proportions != nil || w.Preset == "" {
		return "custom"
	}
	return "YCSB " + string(w.Preset)
}

func currency(c *v1alpha1.StudyCost) string {
	if c.Currency == "" {
		return "USD"
	}
	return c.Currency
}

func decimal(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
