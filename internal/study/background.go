package study

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	"secured.dev/operator/api/v1alpha1"
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

// Judge applies the quiet-machine rule to a cell's run: a run whose background exceeds the
// limit is marked busy, and repeat says whether the study sets it aside and measures the round
// again (it has repeats left) or keeps it, flagged. A run without a background figure (no CPU
// accounting) cannot be judged and is kept as it is.
func Judge(spec *v1alpha1.TradeoffStudySpec, cell *v1alpha1.StudyCell, run v1alpha1.StudyRun) (judged v1alpha1.StudyRun, repeat bool) {
	limit, repeats := backgroundRule(spec)
	bg, err := strconv.ParseFloat(run.BackgroundCores, 64)
	if limit <= 0 || err != nil || bg <= limit {
		return run, false
	}
	done := Attempt(cell, int(run.Round))
	if done < repeats {
		run.Busy = fmt.Sprintf("background %.2f cores exceeded the %.2f-core limit: set aside and measured again (repeat %d of %d)",
			bg, limit, done+1, repeats)
		return run, true
	}
	run.Busy = fmt.Sprintf("background %.2f cores exceeded the %.2f-core limit after %d repeats: kept, the machine stayed busy", bg, limit, repeats)
	return run, false
}

// Attempt is how many runs of a cell's round were set aside for their background: the next
// measurement of that round is attempt number Attempt (0 for the first).
func Attempt(cell *v1alpha1.StudyCell, round int) int {
	n := 0
	for _, r := range cell.SetAside {
		if int(r.Round) == round {
			n++
		}
	}
	return n
}
