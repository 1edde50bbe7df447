package study

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/stats"
)

// AccelerationEffect is what emulating hardware AES off adds to a profile's overhead: seed 000's
// question, asked of one study. Each round gives the profile's capacity ratio to its baseline
// with AES emulated off and with hardware AES; the comparison of the two ratio series, paired
// by round, says how much more capacity the profile loses without hardware AES. Comparing the
// two overheads' intervals instead would add both cells' noise twice and discard the pairing.
type AccelerationEffect struct {
	Compared
	// Comparison: Overhead is the further fraction of capacity the profile loses with AES
	// emulated off, on the report's overhead metric; negative when it loses less.
	Comparison stats.Comparison `json:"comparison"`
}

// accelerationEffects compares, for every non-baseline profile and size measured at both
// accelerations, its overhead with AES emulated off against its overhead with hardware AES.
func accelerationEffects(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, m v1alpha1.OverheadMetric) []AccelerationEffect {
	metric := metricOf(m)
	var out []AccelerationEffect
	for i := range cells {
		on := &cells[i]
		if on.Profile == spec.Matrix.Baseline {
			continue
		}
		off := emulatedOff(cells, on)
		baseOn := cellAt(cells, spec.Matrix.Baseline, settingOf(on))
		baseOff := emulatedOff(cells, baseOn)
		if off == nil || baseOff == nil {
			continue
		}
		bOn, xOff, bOff := byRound(baseOn, metric), byRound(off, metric), byRound(baseOff, metric)
		var ratioOn, ratioOff []float64
		for _, r := range on.Runs {
			xOn, ok := metric(r)
			if !ok || r.Round <= 0 || bOn[r.Round] == 0 || xOff[r.Round] == 0 || bOff[r.Round] == 0 {
				continue
			}
			ratioOn, ratioOff = append(ratioOn, xOn/bOn[r.Round]), append(ratioOff, xOff[r.Round]/bOff[r.Round])
		}
		if len(ratioOn) == 0 {
			continue
		}
		out = append(out, AccelerationEffect{Compared: comparedOf(on), Comparison: stats.ComparePaired(ratioOn, ratioOff)})
	}
	return out
}

// metricOf is the per-run figure of an overhead metric.
func metricOf(m v1alpha1.OverheadMetric) metric {
	if m == v1alpha1.OverheadMetricServerCPU {
		return cpuEfficiency
	}
	return throughput
}

// emulatedOff is the live cell of on's profile and setting with AES emulated off, when on is a
// live cell with hardware AES; nil otherwise.
func emulatedOff(cells []v1alpha1.StudyCell, on *v1alpha1.StudyCell) *v1alpha1.StudyCell {
	if on == nil || on.Acceleration != v1alpha1.AccelerationAvailable || on.State == v1alpha1.CellFailed {
		return nil
	}
	s := settingOf(on)
	s.acceleration = v1alpha1.AccelerationEmulatedOff
	off := cellAt(cells, on.Profile, s)
	if off == nil || off.State == v1alpha1.CellFailed {
		return nil
	}
	return off
}

// BaselineSpread compares the baseline with AES emulated off against itself with hardware AES,
// paired by round. A profile that uses no AES, as plaintext, runs the same code either way, so
// for it this is the difference between two datastores of one configuration: each cell is one
// datastore, so every cell's overhead may carry such a difference, and its interval, built from
// the rounds' run-to-run noise, does not include it.
type BaselineSpread struct {
	Compared
	// Comparison: Overhead is the fraction of capacity the datastore with AES emulated off
	// loses against the one with hardware AES, on the report's overhead metric.
	Comparison stats.Comparison `json:"comparison"`
	// Shared: the study measured every profile on its baseline's datastore (spec.datastores
	// Shared), so no overhead carries this spread.
	Shared bool `json:"shared,omitempty"`
}

// baselineSpreads compares the baseline's two datastores of every size measured at both
// accelerations.
func baselineSpreads(spec *v1alpha1.TradeoffStudySpec, cells []v1alpha1.StudyCell, m v1alpha1.OverheadMetric) []BaselineSpread {
	metric := metricOf(m)
	var out []BaselineSpread
	for i := range cells {
		on := &cells[i]
		off := emulatedOff(cells, on)
		if on.Profile != spec.Matrix.Baseline || off == nil {
			continue
		}
		xOff := byRound(off, metric)
		var withAES, without []float64
		for _, r := range on.Runs {
			x, ok := metric(r)
			if !ok || r.Round <= 0 || xOff[r.Round] == 0 {
				continue
			}
			withAES, without = append(withAES, x), append(without, xOff[r.Round])
		}
		if len(withAES) > 0 {
			out = append(out, BaselineSpread{Compared: comparedOf(on), Comparison: stats.ComparePaired(withAES, without), Shared: Shared(spec)})
		}
	}
	return out
}

// Sentence says how far apart the baseline's two datastores are, and what that means.
func (b BaselineSpread) Sentence() string {
	cmp := b.Comparison
	what := fmt.Sprintf("%s%s with AES emulated off against itself with hardware AES", b.Profile, b.size())
	meaning := "For a profile that uses no AES, as plaintext, this is the difference between two datastores of one configuration"
	if b.Shared {
		meaning += "; every overhead here compares runs on one datastore (spec.datastores Shared), so none carries it."
	} else {
		meaning += ", which any cell's overhead may carry (each cell is one datastore) and its interval, built from run-to-run noise, does not include."
	}
	switch {
	case !cmp.HasCI:
		return fmt.Sprintf("%s: %s%% of capacity lost (%d paired rounds, too few for a 95%% interval). %s", what, percent(cmp.Overhead), cmp.Pairs, meaning)
	case cmp.Significant:
		return fmt.Sprintf("%s: they differ, by %s%% of capacity (%s). %s", what, percent(cmp.Overhead), pairedInterval(cmp), meaning)
	}
	return fmt.Sprintf("%s: no difference found (estimate %s%%, %s). %s", what, percent(cmp.Overhead), pairedInterval(cmp), meaning)
}

// pairedInterval: "95% interval 1.0..3.0%, p=0.0312, 6 paired rounds".
func pairedInterval(cmp stats.Comparison) string {
	return fmt.Sprintf("95%% interval %s..%s%%, p=%.4f, %d paired rounds", percent(cmp.CI.Low), percent(cmp.CI.High), cmp.Test.P, cmp.Pairs)
}

// Compared names what a comparison of the report is about: a profile at a cluster size and
// value size, at both accelerations.
type Compared struct {
	Profile     string `json:"profile"`
	Nodes       int32  `json:"nodes"`
	FieldLength int32  `json:"fieldLength,omitempty"`
}

func comparedOf(c *v1alpha1.StudyCell) Compared {
	return Compared{Profile: c.Profile, Nodes: c.Nodes, FieldLength: c.FieldLength}
}

// size names the cells' size and value size in a sentence: "", " on 3 nodes with 100-byte values".
func (c Compared) size() string {
	size := ""
	if c.Nodes > 1 {
		size = fmt.Sprintf(" on %d nodes", c.Nodes)
	}
	if c.FieldLength > 0 {
		size += fmt.Sprintf(" with %d-byte values", c.FieldLength)
	}
	return size
}

// setting is what a cell shares with the baseline cell it is compared with: every factor but
// the profile.
type setting struct {
	acceleration v1alpha1.Acceleration
	nodes        int32
	fieldLength  int32
}

func settingOf(c *v1alpha1.StudyCell) setting {
	return setting{acceleration: c.Acceleration, nodes: c.Nodes, fieldLength: c.FieldLength}
}

// String names the setting in a report: "Available, 3 nodes, 100-byte values".
func (s setting) String() string {
	out := fmt.Sprintf("%s, %d nodes", s.acceleration, s.nodes)
	if s.nodes == 1 {
		out = fmt.Sprintf("%s, 1 node", s.acceleration)
	}
	if s.fieldLength > 0 {
		out += fmt.Sprintf(", %d-byte values", s.fieldLength)
	}
	return out
}

func cellAt(cells []v1alpha1.StudyCell, profile string, s setting) *v1alpha1.StudyCell {
	i := slices.IndexFunc(cells, func(c v1alpha1.StudyCell) bool {
		return c.Profile == profile && settingOf(&c) == s
	})
	if i < 0 {
		return nil
	}
	return &cells[i]
}

// byRound: the cell's value of m in each round that has one.
func byRound(c *v1alpha1.StudyCell, m metric) map[int32]float64 {
	out := map[int32]float64{}
	for _, r := range c.Runs {
		if v, ok := m(r); ok && r.Round > 0 {
			out[r.Round] = v
		}
	}
	return out
}

// Sentence says what hardware AES is worth to the profile, and whether the data can tell.
func (e AccelerationEffect) Sentence() string {
	cmp := e.Comparison
	size := e.size()
	if !cmp.HasCI {
		more := "more"
		if cmp.Overhead < 0 {
			more = "less"
		}
		return fmt.Sprintf("%s%s: with AES emulated off it loses %s%% %s (%d paired rounds, too few for a 95%% interval).",
			e.Profile, size, percent(math.Abs(cmp.Overhead)), more, cmp.Pairs)
	}
	interval := pairedInterval(cmp)
	switch {
	case cmp.Significant && cmp.Overhead > 0:
		return fmt.Sprintf("%s%s costs more without hardware AES: it loses a further %s%% of the capacity it keeps with AES (%s).",
			e.Profile, size, percent(cmp.Overhead), interval)
	case cmp.Significant:
		return fmt.Sprintf("%s%s costs less with AES emulated off: %s%% of capacity back (%s).",
			e.Profile, size, percent(-cmp.Overhead), interval)
	}
	return fmt.Sprintf("%s%s: no difference found between hardware AES and AES emulated off (estimate %s%%, %s).",
		e.Profile, size, percent(cmp.Overhead), interval)
}

// accelerationText is the report's section on hardware AES; empty when no profile ran at both.
func (r Report) accelerationText() string {
	if len(r.AccelerationEffects) == 0 && len(r.BaselineSpreads) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Hardware AES: each round's overhead with AES emulated off against the same round's with hardware AES, on %s.\n", metricName(r.OverheadMetric))
	for _, e := range r.AccelerationEffects {
		b.WriteString("- " + e.Sentence() + "\n")
	}
	for _, s := range r.BaselineSpreads {
		b.WriteString("- " + s.Sentence() + "\n")
	}
	return b.String()
}
