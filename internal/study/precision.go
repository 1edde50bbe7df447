package study

import (
	"fmt"
	"slices"
	"strings"

	"secured.dev/operator/api/v1alpha1"
)

// Defaults of spec.precision.
const (
	DefaultHalfWidthPercent = 5
	DefaultMaxRounds        = 20
)

// PrecisionReport says whether the study's stopping rule was met.
type PrecisionReport struct {
	// TargetHalfWidth of every compared cell's 95% overhead interval, as a fraction.
	TargetHalfWidth float64 `json:"targetHalfWidth"`
	MaxRounds       int     `json:"maxRounds"`
	// Imprecise: the compared cells that miss the target, with the half-width they reached.
	Imprecise []string `json:"imprecise,omitempty"`
}

// precisionOf reads spec.precision with its defaults; nil when the study has no stopping rule.
func precisionOf(spec *v1alpha1.TradeoffStudySpec) *PrecisionReport {
	p := spec.Precision
	if p == nil {
		return nil
	}
	half, rounds := int(p.HalfWidthPercent), int(p.MaxRounds)
	if half == 0 {
		half = DefaultHalfWidthPercent
	}
	if rounds == 0 {
		rounds = DefaultMaxRounds
	}
	return &PrecisionReport{TargetHalfWidth: float64(half) / 100, MaxRounds: rounds}
}

// imprecise lists the cells compared with a baseline whose overhead interval is wider than the
// target on either side of the estimate, or that have none yet. Failed cells are not measured
// any more, so they are not waited for.
func imprecise(cells []v1alpha1.StudyCell, reports []CellReport, target float64) (out []string) {
	for i, r := range reports {
		cmp := r.Comparison
		if cmp == nil || cells[i].State == v1alpha1.CellFailed {
			continue
		}
		switch {
		case !cmp.HasCI:
			out = append(out, r.Name+" (no interval yet)")
		case cmp.HalfWidth() > target:
			out = append(out, fmt.Sprintf("%s (%s..%s%%)", r.Name, percent(cmp.CI.Low), percent(cmp.CI.High)))
		}
	}
	return out
}

// AddRound decides, once every scheduled round has run, whether the stopping rule asks for
// another block of together rounds (RoundsTogether): some compared cell is less precise than
// the target and the block fits under the maximum. why names those cells.
func AddRound(a Analysis, rounds, together int) (add bool, why string) {
	p := a.Report.Precision
	together = max(together, 1)
	if p == nil || len(p.Imprecise) == 0 || rounds+together > p.MaxRounds {
		return false, ""
	}
	which := fmt.Sprintf("round %d", rounds+1)
	if together > 1 {
		which = fmt.Sprintf("rounds %d to %d", rounds+1, rounds+together)
	}
	return true, fmt.Sprintf("%s of at most %d: the overhead intervals of %s are wider than ±%s points",
		which, p.MaxRounds, strings.Join(p.Imprecise, ", "), percent(p.TargetHalfWidth))
}

// rounds the cells ran: the highest round a run records, at least the planned repetitions.
func rounds(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell) int {
	n := Repetitions(spec)
	for _, c := range cells {
		for _, r := range c.Runs {
			n = max(n, int(r.Round))
		}
	}
	return n
}

// text is the report's sentence on the stopping rule. compared: some cell has a comparison
// with the baseline; with none (a study cancelled before its baseline ran) no precision is
// reached, however few cells are imprecise.
func (p *PrecisionReport) text(rounds int, compared bool) string {
	target := fmt.Sprintf("every overhead's 95%% interval within ±%s points, at most %d rounds", percent(p.TargetHalfWidth), p.MaxRounds)
	if !compared {
		return fmt.Sprintf("Precision (%s): nothing compared with the baseline after %d rounds, so no interval to judge.", target, rounds)
	}
	if len(p.Imprecise) == 0 {
		return fmt.Sprintf("Precision (%s): reached after %d rounds.", target, rounds)
	}
	return fmt.Sprintf("Precision (%s): not reached after %d rounds by %s.", target, rounds, strings.Join(p.Imprecise, ", "))
}

// compared: some cell of the report has a comparison with the baseline.
func (r *Report) compared() bool {
	return slices.ContainsFunc(r.Cells, func(c CellReport) bool { return c.Comparison != nil })
}
