package study

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

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
	// MaxDuration: the study's time budget (spec.precision.maxDuration), when it has one.
	MaxDuration string `json:"maxDuration,omitempty"`
	// Imprecise: the compared cells that miss the target, with the half-width they reached.
	Imprecise []string `json:"imprecise,omitempty"`
	// StoppedEarly: the compared cells that reached the target before the study's last round
	// and were not measured after it ("cell after 7").
	StoppedEarly []string `json:"stoppedEarly,omitempty"`
	// Failed: the compared cells that failed short of the target, with what they reached. They
	// are not measured any more, so the rule no longer waits for them, but their overhead is
	// not precise either.
	Failed    []string `json:"failed,omitempty"`
	imprecise []string // the names of Imprecise's cells
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
	r := &PrecisionReport{TargetHalfWidth: float64(half) / 100, MaxRounds: rounds}
	if p.MaxDuration != nil {
		r.MaxDuration = p.MaxDuration.Duration.String()
	}
	return r
}

// imprecise lists the cells compared with a baseline whose overhead interval has a half-width
// above the target, or that have none yet, by name and described with their interval. Failed
// cells are not measured any more, so they are not waited for: they are listed apart (failed).
func imprecise(cells []v1alpha1.StudyCell, reports []CellReport, target float64) (names, described, failed []string) {
	for i, r := range reports {
		cmp := r.Comparison
		if cmp == nil {
			continue
		}
		var what string
		switch {
		case !cmp.HasCI && cells[i].State == v1alpha1.CellFailed:
			what = r.Name + " (no interval)"
		case !cmp.HasCI:
			what = r.Name + " (no interval yet)"
		case cmp.HalfWidth() > target:
			what = fmt.Sprintf("%s (%s..%s%%)", r.Name, percent(cmp.CI.Low), percent(cmp.CI.High))
		default:
			continue
		}
		if cells[i].State == v1alpha1.CellFailed {
			failed = append(failed, what)
			continue
		}
		names, described = append(names, r.Name), append(described, what)
	}
	return names, described, failed
}

// stoppedEarly: the compared cells whose last run came before the study's last round, because
// they reached the target and the rounds after it measured only the others.
func stoppedEarly(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, reports []CellReport, rounds int) (out []string) {
	for i, r := range reports {
		c := &cells[i]
		if r.Comparison == nil || c.State == v1alpha1.CellFailed || len(c.Runs) == 0 || c.Profile == spec.Matrix.Baseline {
			continue
		}
		if last := int(c.Runs[len(c.Runs)-1].Round); last < rounds {
			out = append(out, fmt.Sprintf("%s after %d", r.Name, last))
		}
	}
	return out
}

// Extend is the block the stopping rule appends to the schedule once every scheduled round
// has run, empty when it adds none; why says what it adds and for which cells.
//
// The block is the next RoundsTogether rounds of the seeded order (Schedule), of the compared
// cells still less precise than the target, each with the baseline it is compared with: a
// cell that reached the target is not measured again, so the time goes to the cells that need
// it (in make demo's studies one overhead was often precise after 7 rounds while the other
// still missed after 9). A cell's k-th run is its round k+1, so only cells that ran in every
// round so far are measured: a cell left out never comes back, and none needs to, as a cell's
// interval changes only with its own rounds. A Switched study measures every cell: its
// switches, not its runs, take the time.
//
// The block must fit the study's budget of runs, maxRounds rounds of every planned cell, so a
// study that adds rounds for some cells only takes no longer than maxRounds full rounds; and
// its time budget, spec.precision.maxDuration: elapsed is the time since the study's creation,
// and the block takes as long as the study's last runs of its size took (pace). A block that
// does not fit is not added, and why says so when the time budget refused it.
func Extend(a Analysis, spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, schedule []string, rounds int, seed int64, elapsed time.Duration) (block []string, why string) {
	p := a.Report.Precision
	if p == nil || len(p.imprecise) == 0 {
		return nil, ""
	}
	together := RoundsTogether(spec)
	planned, live := 0, 0
	for _, c := range cells {
		if c.State != v1alpha1.CellPruned {
			planned++
		}
		if c.State != v1alpha1.CellPruned && c.State != v1alpha1.CellFailed {
			live++
		}
	}
	measure := map[string]bool{}
	for i := range cells {
		c := &cells[i]
		switch {
		case c.State == v1alpha1.CellPruned || c.State == v1alpha1.CellFailed:
		case Switched(spec):
			measure[c.Name] = true
		case slices.Contains(p.imprecise, c.Name) && Scheduled(schedule, c.Name) == rounds:
			if base := cellAt(cells, spec.Matrix.Baseline, settingOf(c)); base != nil && Scheduled(schedule, base.Name) == rounds {
				measure[c.Name], measure[base.Name] = true, true
			}
		}
	}
	if len(measure) == 0 {
		return nil, ""
	}
	which := fmt.Sprintf("round %d", rounds+1)
	if together > 1 {
		which = fmt.Sprintf("rounds %d to %d", rounds+1, rounds+together)
	}
	cause := fmt.Sprintf("the overhead intervals of %s have a half-width above %s points", strings.Join(p.Imprecise, ", "), percent(p.TargetHalfWidth))
	budget := p.MaxRounds * planned
	if runs := len(schedule) + together*len(measure); runs > budget {
		return nil, fmt.Sprintf("%s not added: its %d runs would bring the study to %d, past spec.precision.maxRounds %d (%d runs: %d rounds of %d cells), although %s",
			which, together*len(measure), runs, p.MaxRounds, budget, p.MaxRounds, planned, cause)
	}
	next := Schedule(cells, rounds+together, together, Shared(spec), seed)
	for _, name := range next[len(next)-together*planned:] {
		if measure[name] {
			block = append(block, name)
		}
	}
	if limit := spec.Precision.MaxDuration; limit != nil {
		need, known := pace(cells, len(block))
		if end := elapsed + need; end > limit.Duration {
			took := ""
			if known {
				took = fmt.Sprintf(" would take about %s (the study's last %d runs took that long) and", need.Round(time.Second), len(block))
			}
			return nil, fmt.Sprintf("%s not added: its %d runs%s would end %s after the study's creation, past spec.precision.maxDuration %s, although %s",
				which, len(block), took, end.Round(time.Second), limit.Duration, cause)
		}
	}
	if len(measure) == live {
		return block, fmt.Sprintf("%s of at most %d: %s", which, p.MaxRounds, cause)
	}
	return block, fmt.Sprintf("%s for %s only, runs %d of at most %d (%d rounds of %d cells): %s", which,
		strings.Join(slices.Sorted(maps.Keys(measure)), " and "), len(schedule)+len(block), budget, p.MaxRounds, planned, cause)
}

// pace is how long the study's last n runs took: from the start of the measured window of the
// run before them to the start of the last one's, so the time between runs (the next
// benchmark's start, its quiet start and warm-up, the wait for a round's CPU figures) counts as
// it did. Runs set aside took their time too. With n or fewer runs it scales what all took; with
// fewer than two it is unknown (false, and 0).
func pace(cells []v1alpha1.StudyCell, n int) (time.Duration, bool) {
	var starts []time.Time
	for _, c := range cells {
		for _, r := range slices.Concat(c.Runs, c.SetAside) {
			if r.Start != nil {
				starts = append(starts, r.Start.Time)
			}
		}
	}
	if len(starts) < 2 || n <= 0 {
		return 0, false
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	last := len(starts) - 1
	if last >= n {
		return starts[last].Sub(starts[last-n]), true
	}
	return starts[last].Sub(starts[0]) * time.Duration(n) / time.Duration(last), true
}

// Scheduled is how many places the cell has in the schedule.
func Scheduled(schedule []string, cell string) int {
	n := 0
	for _, c := range schedule {
		if c == cell {
			n++
		}
	}
	return n
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
	target := fmt.Sprintf("every overhead's 95%% interval with a half-width of at most %s points, at most %d rounds' runs", percent(p.TargetHalfWidth), p.MaxRounds)
	if p.MaxDuration != "" {
		target += " and " + p.MaxDuration + " from the study's creation"
	}
	if !compared {
		return fmt.Sprintf("Precision (%s): nothing compared with the baseline after %d rounds, so no interval to judge.", target, rounds)
	}
	early := ""
	if len(p.StoppedEarly) > 0 {
		early = fmt.Sprintf(" (%s; later rounds measured only the cells still short of the target, with their baselines)", strings.Join(p.StoppedEarly, ", "))
	}
	failed := ""
	if len(p.Failed) > 0 {
		failed = fmt.Sprintf("; not by %s, failed before it got there", strings.Join(p.Failed, ", "))
	}
	switch {
	case len(p.Imprecise) == 0 && failed == "":
		return fmt.Sprintf("Precision (%s): reached after %d rounds%s.", target, rounds, early)
	case len(p.Imprecise) == 0:
		return fmt.Sprintf("Precision (%s): reached after %d rounds by the cells still measured%s%s.", target, rounds, early, failed)
	}
	return fmt.Sprintf("Precision (%s): not reached after %d rounds by %s%s%s.", target, rounds, strings.Join(p.Imprecise, ", "), early, failed)
}

// compared: some cell of the report has a comparison with the baseline.
func (r *Report) compared() bool {
	return slices.ContainsFunc(r.Cells, func(c CellReport) bool { return c.Comparison != nil })
}
