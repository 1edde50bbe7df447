package study

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"secured.dev/operator/api/v1alpha1"
)

// chartWidth is the width of the overhead bars in characters.
const chartWidth = 40

// Text renders the report for a terminal: per setting (acceleration, cluster size, value size), a bar of each
// profile's overhead against the baseline with its 95% interval drawn as [ ], and the
// recommendation marked.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TradeoffStudy %s: %s, %s, %d repetitions per cell (seed %d)\n", r.Study, r.Engine, r.Workload, r.Repetitions, r.Seed)
	if r.Phase != "" {
		fmt.Fprintf(&b, "Phase: %s\n", r.Phase)
	}
	if r.WallTime != "" {
		b.WriteString(r.wallTimeText() + "\n")
	}
	if r.Precision != nil {
		b.WriteString(r.Precision.text(r.Repetitions, r.compared()) + "\n")
	}
	scale := r.scale()
	fmt.Fprintf(&b, "Overhead on %s against %s, 95%% CI as [ ]; full width is %s%%\n", metricName(r.OverheadMetric), r.Baseline, percent(scale))
	group := ""
	for _, c := range r.Cells {
		g := setting{acceleration: v1alpha1.Acceleration(c.Acceleration), nodes: c.Nodes, fieldLength: c.FieldLength}.String()
		if g != group {
			group = g
			fmt.Fprintf(&b, "\n%s\n", g)
		}
		fmt.Fprintf(&b, "  %-24s %s\n", c.Profile, r.line(c, scale))
	}
	for _, caution := range r.CheaperThanBaseline {
		fmt.Fprintf(&b, "\nCaution: %s\n", caution)
	}
	b.WriteString(r.roundsText())
	if sw := r.switchesText(); sw != "" {
		b.WriteString("\n" + sw)
	}
	if acc := r.accelerationText(); acc != "" {
		b.WriteString("\n" + acc)
	}
	fmt.Fprintf(&b, "\n%s\n", strings.ReplaceAll(r.recommendationText(), "**", ""))
	return b.String()
}

// scale is the overhead the full bar width stands for: the largest upper bound, at least 10%.
func (r Report) scale() float64 {
	s := 0.1
	for _, c := range r.Cells {
		if c.Comparison == nil {
			continue
		}
		s = math.Max(s, c.Comparison.Overhead)
		if c.Comparison.HasCI {
			s = math.Max(s, c.Comparison.CI.High)
		}
	}
	return s
}

func (r Report) line(c CellReport, scale float64) string {
	mark := ""
	if r.Recommendation != nil && r.Recommendation.Profile == c.Profile && r.DecidingAcceleration == c.Acceleration {
		mark = "  <== recommended"
	}
	switch {
	case c.Profile == r.Baseline && len(c.Runs) > 0:
		return fmt.Sprintf("%-*s baseline, %d ops/s%s", chartWidth+2, "|", c.MedianThroughput, mark)
	case c.Comparison == nil:
		state := strings.ToLower(c.State)
		if c.Reason != "" {
			state += ": " + c.Reason
		}
		return fmt.Sprintf("%-*s %s", chartWidth+2, "|", state)
	}
	cmp := c.Comparison
	pos := func(f float64) int { return min(chartWidth, max(0, int(math.Round(f/scale*chartWidth)))) }
	bar := []rune(strings.Repeat("=", pos(cmp.Overhead)) + strings.Repeat(" ", chartWidth+1-pos(cmp.Overhead)))
	ci := ""
	if cmp.HasCI {
		bar[pos(cmp.CI.Low)], bar[pos(cmp.CI.High)] = '[', ']'
		ci = fmt.Sprintf(" (%s..%s)", percent(cmp.CI.Low), percent(cmp.CI.High))
	}
	verdict := "not significant"
	switch {
	case cmp.Meaningful:
		verdict = "meaningful"
	case cmp.Significant:
		verdict = "significant, under 2%"
	}
	return fmt.Sprintf("|%s %5s%%%s p=%.4f %s%s", string(bar), percent(cmp.Overhead), ci, cmp.Test.P, verdict, mark)
}

// roundsText is every run's figure on the decision's metric, a row per cell and a column per
// round: the pairs the overheads compare, and how far the rounds drift.
func (r Report) roundsText() string {
	rounds := 0
	for _, c := range r.Cells {
		for _, rc := range c.RunCosts {
			rounds = max(rounds, int(rc.Round))
		}
	}
	if rounds == 0 {
		return ""
	}
	unit, value := "operations per second", func(rc RunCost) string { return orDash(rc.ThroughputOpsPerSec) }
	if r.OverheadMetric == v1alpha1.OverheadMetricServerCPU {
		unit, value = "server CPU-µs per operation", func(rc RunCost) string { return decimalOrDash(rc.ServerCPUMicrosPerOp) }
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nRuns by round, %s:\n  %-24s", unit, "cell")
	for k := 1; k <= rounds; k++ {
		fmt.Fprintf(&b, " %7s", fmt.Sprintf("r%d", k))
	}
	b.WriteString("\n")
	for _, c := range r.Cells {
		if len(c.RunCosts) == 0 {
			continue
		}
		cols := make([]string, rounds)
		for _, rc := range c.RunCosts {
			if rc.Round > 0 {
				cols[rc.Round-1] = value(rc)
			}
		}
		fmt.Fprintf(&b, "  %-24s", c.Name)
		for _, v := range cols {
			fmt.Fprintf(&b, " %7s", cmp.Or(v, "–"))
		}
		b.WriteString("\n")
	}
	return b.String()
}
