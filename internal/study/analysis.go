package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/benchmark"
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
// setting (acceleration, size, value size), and the recommendation the decision rule picks.
func Analyze(name string, spec *v1alpha1.TradeoffStudySpec, seed int64, cells []v1alpha1.StudyCell) Analysis {
	cells = slices.Clone(cells)
	rep := Report{
		Study: name, Engine: string(spec.Template.Engine), Baseline: spec.Matrix.Baseline,
		Workload: workloadName(spec.Workload), Repetitions: rounds(spec, cells), Seed: seed,
		Method: methodOf(spec), Precision: precisionOf(spec),
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
		if cpu := serverCPU(c); len(cpu) > 0 {
			cr.ServerCPUMicrosPerOp = ptr.To(stats.Median(cpu))
			c.ServerCPUMicrosPerOp = decimal(*cr.ServerCPUMicrosPerOp)
		}
		if base := cellAt(cells, spec.Matrix.Baseline, settingOf(c)); base != nil && base != c {
			if cmp, ok := compare(base, c, throughput); ok {
				c.OverheadPercent = percent(cmp.Overhead)
				cr.Throughput = &cmp
				if cmp.HasCI {
					c.OverheadCI95 = percent(cmp.CI.Low) + ".." + percent(cmp.CI.High)
				}
			}
			if cmp, ok := compare(base, c, cpuEfficiency); ok {
				c.ServerCPUOverheadPercent = percent(cmp.Overhead)
				cr.ServerCPU = &cmp
				if cmp.HasCI {
					c.ServerCPUOverheadCI95 = percent(cmp.CI.Low) + ".." + percent(cmp.CI.High)
				}
			}
		}
		cr.MedianThroughput = c.MedianThroughputOpsPerSec
		cr.P99Micros = c.P99Micros
		rep.Cells = append(rep.Cells, cr)
	}
	rep.OverheadMetric = overheadMetric(spec, cells, rep.Cells)
	for i := range rep.Cells {
		cr, c := &rep.Cells[i], &cells[i]
		cr.Comparison = cr.Throughput
		if rep.OverheadMetric == v1alpha1.OverheadMetricServerCPU {
			cr.Comparison = cr.ServerCPU
		}
		if cmp := cr.Comparison; cmp != nil {
			c.PValue = strconv.FormatFloat(cmp.Test.P, 'f', 4, 64)
			c.Significant, c.Meaningful = ptr.To(cmp.Significant), ptr.To(cmp.Meaningful)
			cr.ExtraNodesFraction = ptr.To(stats.ExtraNodes(cmp.Overhead))
		}
	}
	if rep.Precision != nil {
		rep.Precision.imprecise, rep.Precision.Imprecise, rep.Precision.Failed = imprecise(cells, rep.Cells, rep.Precision.TargetHalfWidth)
		rep.Precision.StoppedEarly = stoppedEarly(spec, cells, rep.Cells, rep.Repetitions)
	}
	a := Analysis{Cells: cells}
	a.ParetoFrontier = frontier(spec, cells)
	a.Recommendation, rep.Candidates = recommend(spec, cells, rep.Cells, rep.OverheadMetric)
	rep.AccelerationEffects = accelerationEffects(spec, cells, rep.OverheadMetric)
	rep.BaselineSpreads = baselineSpreads(spec, cells, rep.OverheadMetric)
	rep.CheaperThanBaseline = cheaperThanBaseline(spec, rep.Cells)
	rep.ParetoFrontier, rep.Recommendation, rep.DecidingAcceleration = a.ParetoFrontier, a.Recommendation, string(deciding(cells))
	if spec.Cost != nil {
		rep.Currency = currency(spec.Cost)
		rep.PricePerNodeHour = price(spec.Cost.PricePerNodeHour)
	}
	a.Report = rep
	return a
}

const methodRounds = "Throughput per cell: median of the valid repetitions, 95% confidence interval from order statistics " +
	"(distribution-free; needs 6 repetitions). Repetitions ran in randomized interleaved order (RMIT): every round " +
	"measures every cell once, in a fresh random order. "

// methodWarmUp: how a YCSB study's runs warm up. The count and the rate's share follow
// WarmUpsTogether, so the text cannot drift from what the controller does.
var methodWarmUp = "A cell's first run follows a warm-up that lasts until its " +
	"throughput is steady (the last 10 seconds within a 10% coefficient of variation and without a trend over 5%, " +
	"between spec.steadyWarmUp's minimum and maximum); later runs warm up for spec.warmUp. At a fixed rate or a fixed " +
	"operation count, where throughput cannot show when the JIT is done, the cells instead warm up before round 1, " +
	fmt.Sprintf("once all are up, each datastore's in turn and at most %d datastores at once, each for spec.steadyWarmUp's minimum "+
		"and, at a fixed rate, at 1/%d of the rate, so that %d side by side offer what one run does (its benchmark <datastore>-warm, ",
		WarmUpsTogether, WarmUpsTogether, WarmUpsTogether) +
	"which also loads the data unless another cell's warm-up loaded it into the same datastore, and whose " +
	"figures are discarded); then every cell runs once as in a round, one at a time (its benchmark <datastore>-runin), " +
	"and those figures are discarded too, because a cell's first run after the warm-ups is not yet typical " +
	"(in one make demo study a TLS cell's first run cost 1.5 to 1.8 times its later runs' CPU per operation). " +
	"Every run warms up for spec.warmUp. "

// methodStorage replaces methodWarmUp for a storage workload.
const methodStorage = "Each run measures the volume with fio (spec.workload.storage): it lays its file out on a new scratch " +
	"volume of the datastore's StorageClass, encrypted as the datastore's are, before its measured window, so no run " +
	"warms up and no data is loaded; operations are I/Os, and the datastore's CPU is not the cost. "

// methodComparison: how cells are compared and what a decision rests on.
const methodComparison = "Overhead: 1 - exp(Hodges-Lehmann estimate of the log " +
	"throughput ratio of the cell's run to the baseline's run of the same round, the baseline of the same " +
	"acceleration, cluster size and value size), with the 95% interval that inverts the two-sided Wilcoxon signed-rank test " +
	"(exact without ties). Paired because runs of one round share the machine's state (a neighbour's load, " +
	"compactions, warm-up), which a shared machine changes from round to round by more than TLS costs; the ratio " +
	"cancels it. Rank-based because a few runs are neither normal nor free of outliers; the signed-rank test needs 6 " +
	"rounds to ever reach p < 0.05. Runs without a partner in the same round are left out of the comparison; a cell " +
	"with no paired round at all is compared unpaired (Hodges-Lehmann shift and Mann-Whitney U test). " +
	"Significant: p < 0.05. Meaningful: significant and at least 2% either way. Two metrics, compared the same " +
	"way: throughput, and operations per server CPU-second, from the kubelets' cgroup counters of the datastore's " +
	"containers over exactly the measured window (warm-up excluded; the CPU between the samples inside the window " +
	"over the operations completed between the same instants, or else their rate times the window; the samples " +
	"must span three tenths of it), plus their sidecars' CPU over the window (a VPN profile encrypts in its tunnel " +
	"sidecar, and so does WireGuard where the node has no kernel module; the module's workers, and the clients' own " +
	"tunnel sidecars, belong to no datastore container and show as background). A CPU overhead of 20% means an " +
	"operation costs 1/(1 - 0.2) = 1.25 times the baseline's CPU, so a CPU-bound datastore loses a fifth of its capacity; unlike throughput, it is barely moved " +
	"by what else runs on the machine, which each run's background cores record; a run whose background exceeds " +
	"spec.background.maxCores (500m unless set) is set aside and its round measured again, up to " +
	"spec.background.repeats times (2), then kept and marked busy; so is a run that lost its server CPU figure " +
	"while other runs have theirs (its samples too sparse, say), then kept for its throughput. The decision rests on server CPU " +
	"per operation when every compared cell has it, unless spec.decision.metric says otherwise. Cost: extra nodes " +
	"to restore baseline capacity, 1/(1 - overhead) - 1, assuming capacity scales linearly with nodes."

// methodSwitched: what a Switched study does between runs, with runs per switch.
func methodSwitched(runs int) string {
	return "The profiles of one acceleration and size share a datastore (spec.datastores Switched): the study switches " +
		"it to a profile through the operator's live-change path and waits until it is Ready and its wire verified; the " +
		"switch is not measured (its durations are listed per cell), every switch restarts the nodes, so every run warms " +
		"up for spec.warmUp, and the first run after each switch loads the data again and warms up until steady where the " +
		"load allows (without that load, the run after a switch found HBase still reopening its regions). " +
		fmt.Sprintf("Rounds come in blocks of %d (spec.runsPerSwitch) that share one order and run each profile %d ", runs, runs) +
		"times in a row after its switch (the first block is the short one when the rounds are no multiple of it): fewer " +
		"switches, and a round's runs are all of the same rank after their switch, so the paired comparison sets like " +
		"beside like. "
}

// methodShared: what a Shared study measures on one datastore.
func methodShared(spec *v1alpha1.TradeoffStudySpec) string {
	return fmt.Sprintf("Both profiles of one acceleration and size are measured on the same datastore (spec.datastores Shared): it runs %s "+
		"with its client-to-node channel Optional, verified on the wire to accept both; the baseline's runs connect in plaintext "+
		"and the other profile's over TLS, pinned to its suite, so the overhead does not carry how far two datastores of one "+
		"configuration are apart. Accepting both costs the plaintext runs nothing per operation: the node tells TLS from "+
		"plaintext once per connection. In every round the two cells of a datastore run one after the other, each first in "+
		"half the rounds, so the runs the analysis pairs are measured next to each other. ", SharedProfile(spec))
}

// methodPrecision: which cells a round added for precision measures (see Extend).
const methodPrecision = "A round added by spec.precision measures only the cells whose interval is still wider than the " +
	"target, each with its baseline, in that round's random order; a cell that reached the target is not measured again, " +
	"and the study runs no more runs than spec.precision.maxRounds rounds of every cell. "

// methodTimeBudget: spec.precision.maxDuration (see Extend).
const methodTimeBudget = "No round is added that, at the pace of the study's last runs of its size, would end after " +
	"spec.precision.maxDuration from the study's creation. "

// methodOf says how the study measured and compared.
func methodOf(spec *v1alpha1.TradeoffStudySpec) string {
	rounds := methodRounds
	if spec.Precision != nil && !Switched(spec) {
		rounds += methodPrecision
	}
	if spec.Precision != nil && spec.Precision.MaxDuration != nil {
		rounds += methodTimeBudget
	}
	switch {
	case spec.Workload.Storage != nil:
		return rounds + methodStorage + methodComparison
	case Switched(spec):
		return rounds + methodSwitched(RoundsTogether(spec)) + methodComparison
	case Shared(spec):
		return rounds + methodWarmUp + methodShared(spec) + methodComparison
	}
	return rounds + methodWarmUp + methodComparison
}

// overheadMetric is the metric the decision weighs: the spec's, or under Auto server CPU per
// operation when every compared cell has its comparison.
func overheadMetric(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, reports []CellReport) v1alpha1.OverheadMetric {
	if m := spec.Decision.Metric; m != "" && m != v1alpha1.OverheadMetricAuto {
		return m
	}
	compared := false
	for i, r := range reports {
		if r.Throughput == nil || cells[i].State == v1alpha1.CellFailed {
			continue
		}
		if r.ServerCPU == nil {
			return v1alpha1.OverheadMetricThroughput
		}
		compared = true
	}
	if !compared {
		return v1alpha1.OverheadMetricThroughput
	}
	return v1alpha1.OverheadMetricServerCPU
}

// A metric reads one run's capacity figure, higher is better; ok is false when the run lacks it.
type metric func(r v1alpha1.StudyRun) (float64, bool)

func throughput(r v1alpha1.StudyRun) (float64, bool) {
	return float64(r.ThroughputOpsPerSec), r.ThroughputOpsPerSec > 0
}

// cpuEfficiency is operations per server CPU-second: its loss against the baseline is the
// capacity a CPU-bound datastore loses, the same reading as a throughput overhead.
func cpuEfficiency(r v1alpha1.StudyRun) (float64, bool) {
	us, err := strconv.ParseFloat(r.ServerCPUMicrosPerOp, 64)
	if err != nil || us <= 0 {
		return 0, false
	}
	return 1e6 / us, true
}

// compare measures a cell against its baseline on m: paired by round over the rounds both
// ran, unpaired only when no round has both (runs recorded before rounds were).
func compare(base, c *v1alpha1.StudyCell, m metric) (stats.Comparison, bool) {
	partner := byRound(base, m)
	var b, x []float64
	for _, r := range c.Runs {
		vx, ok := m(r)
		if vb := partner[r.Round]; ok && r.Round > 0 && vb > 0 {
			b, x = append(b, vb), append(x, vx)
		}
	}
	if len(x) > 0 {
		return stats.ComparePaired(b, x), true
	}
	if b, x := values(base, m), values(c, m); len(b) > 0 && len(x) > 0 {
		return stats.Compare(b, x), true
	}
	return stats.Comparison{}, false
}

func values(c *v1alpha1.StudyCell, m metric) []float64 {
	var out []float64
	for _, r := range c.Runs {
		if v, ok := m(r); ok {
			out = append(out, v)
		}
	}
	return out
}

func clearStatistics(c *v1alpha1.StudyCell) {
	c.MedianThroughputOpsPerSec, c.ThroughputCI95, c.OverheadPercent, c.OverheadCI95 = 0, "", "", ""
	c.ServerCPUMicrosPerOp, c.ServerCPUOverheadPercent, c.ServerCPUOverheadCI95 = "", "", ""
	c.PValue, c.Significant, c.Meaningful, c.P99Micros = "", nil, nil, 0
	c.RunsDone = int32(len(c.Runs))
}

func throughputs(c *v1alpha1.StudyCell) []float64 { return values(c, throughput) }

// serverCPU: the runs' server CPU-microseconds per operation, where they have them.
func serverCPU(c *v1alpha1.StudyCell) []float64 {
	var out []float64
	for _, r := range c.Runs {
		if e, ok := cpuEfficiency(r); ok {
			out = append(out, 1e6/e)
		}
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
		if f := parsed(r.ClientCPUMicrosPerOp); f != nil {
			v = append(v, *f)
		}
	}
	if len(v) == 0 {
		return nil
	}
	return ptr.To(stats.Median(v))
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

// frontier: per setting (acceleration, size, value size), the cells not dominated in
// (preference, throughput).
func frontier(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell) []string {
	groups := map[setting][]stats.Point{}
	var keys []setting
	for i := range cells {
		c := &cells[i]
		if len(c.Runs) == 0 {
			continue
		}
		key := settingOf(c)
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
	if s := w.Storage; s != nil {
		return fmt.Sprintf("fio %s of %d KiB blocks (operations are I/Os)", s.Pattern, benchmark.BlockSizeKiB(s))
	}
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
