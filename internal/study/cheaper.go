package study

import (
	"fmt"

	"secured.dev/operator/api/v1alpha1"
)

// cheaperThanBaseline is a caution for every cell whose profile was measured significantly
// cheaper than the baseline: encryption adds work to every operation, so such a figure most
// likely measures something else that differed between the two cells' runs, and the report
// says so rather than let it pass as a finding. Seed 000's AR+RR study, one block of six runs
// per profile, found TLS with AES emulated off 13.3% (5.6..25.5%) cheaper than plaintext,
// whose block ran 25 minutes later, right after its three rolling restarts.
func cheaperThanBaseline(spec *v1alpha1.TradeoffStudySpec, reports []CellReport) []string {
	var out []string
	for _, c := range reports {
		cmp := c.Comparison
		if cmp == nil || !cmp.Significant || !cmp.HasCI || cmp.CI.High >= 0 || c.Profile == spec.Matrix.Baseline {
			continue
		}
		out = append(out, fmt.Sprintf("%s was measured cheaper than %s (%s%%, 95%% interval %s..%s%%). Encryption adds work to every operation, "+
			"so this difference most likely comes from something else that differed between the two cells' runs: %s. "+
			"Read it as a flaw of this measurement, not as a property of the profile.",
			c.Name, spec.Matrix.Baseline, percent(cmp.Overhead), percent(cmp.CI.Low), percent(cmp.CI.High), confounder(spec)))
	}
	return out
}

// confounder is what, by the study's design, differs between a cell's runs and the baseline's
// besides the profile.
func confounder(spec *v1alpha1.TradeoffStudySpec) string {
	switch n := RoundsTogether(spec); {
	case Switched(spec) && n > 1:
		return fmt.Sprintf("when they ran, since each profile ran %d times in a row after its own switch, so a round pairs runs "+
			"minutes apart on nodes restarted at different times (fewer runs per switch interleave them better)", n)
	case Switched(spec):
		return "how long after its nodes' restart each run came"
	case Shared(spec):
		return "the drift between the runs of a round on the shared nodes"
	}
	return "the datastores themselves, one per cell (the baseline spread shows how far two of one configuration are apart)"
}
