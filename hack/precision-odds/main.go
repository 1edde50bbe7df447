// Command precision-odds estimates how often a study's stopping rule reaches its precision
// target within a number of rounds, for a given spread of its paired runs. It draws the
// per-round log ratios of one cell against its baseline, applies the study's own statistics
// (stats.ComparePaired: Hodges-Lehmann estimate, exact signed-rank interval) and its rule (start
// with the planned repetitions, add a round while the interval's half-width exceeds the
// target), and prints the share of simulated studies precise after each round.
//
// Why: spec.precision.maxRounds trades wall time against the chance of an answer; the spread
// of a pair is what a study's report shows (its runs by round), so the odds of a bound can be
// read off before spending a study on it.
//
// With -pair, it compares the two ways a study of two compared cells (two datastores of a
// baseline and a profile each, like make demo's) may spend a budget of -to rounds: every
// round measures all four cells until both overheads are precise at once, or a cell that is
// precise stops and the rounds after it measure only the other one with its baseline, two runs
// where a round took four (study.Extend).
//
// Usage: go run ./hack/precision-odds [-spread 5] [-target 5] [-from 6] [-to 12] [-df 0] [-pair]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"secured.dev/operator/internal/stats"
)

func main() {
	spread := flag.Float64("spread", 5, "standard deviation of a pair's log ratio (cell against baseline) times 100: about points of overhead while the overhead is small")
	target := flag.Float64("target", 5, "spec.precision.halfWidthPercent")
	from := flag.Int("from", 6, "spec.repetitions: the rounds every study runs")
	to := flag.Int("to", 12, "the last round to report")
	df := flag.Int("df", 0, "draw from Student's t with these degrees of freedom (heavier tails; 0: normal)")
	trials := flag.Int("trials", 4000, "simulated studies")
	seed := flag.Uint64("seed", 1, "random seed")
	pair := flag.Bool("pair", false, "two compared cells within a budget of -to rounds: whole rounds against rounds of the imprecise cell only")
	flag.Parse()
	if *from < 1 || *to < *from || *trials < 1 || *spread < 0 || *target <= 0 || (*df != 0 && *df <= 2) {
		fmt.Fprintln(os.Stderr, "precision-odds: need 1 <= -from <= -to, -trials >= 1, -spread >= 0, -target > 0 and -df 0 or above 2")
		os.Exit(2)
	}
	draw, tails := normal, "normal"
	if *df > 0 {
		draw, tails = student(*df), fmt.Sprintf("Student's t, %d df", *df)
	}
	if *pair {
		whole, apart := pairBy(rand.New(rand.NewPCG(*seed, 0)), draw, *spread/100, *target/100, *from, *to, *trials)
		fmt.Printf("two cells, pairs spread %.1f points (%s), target half-width %.1f points, a budget of %d rounds, %d studies\n", *spread, tails, *target, *to, *trials)
		fmt.Printf("both precise, every round measuring every cell:       %5.1f%%\n", 100*whole)
		fmt.Printf("both precise, added rounds measuring the imprecise cell: %5.1f%%\n", 100*apart)
		return
	}
	by := preciseBy(rand.New(rand.NewPCG(*seed, 0)), draw, *spread/100, *target/100, *from, *to, *trials)
	fmt.Printf("pairs spread %.1f points (%s), target half-width %.1f points, %d studies\n", *spread, tails, *target, *trials)
	for n := *from; n <= *to; n++ {
		fmt.Printf("precise within %2d rounds: %5.1f%%\n", n, 100*by[n-*from])
	}
}

// preciseBy[i] is the share of studies the rule stops as precise within from+i rounds.
func preciseBy(rng *rand.Rand, draw func(*rand.Rand) float64, sd, target float64, from, to, trials int) []float64 {
	counts := make([]float64, to-from+1)
	baseline := make([]float64, to)
	for i := range baseline {
		baseline[i] = 1
	}
	for range trials {
		cell := make([]float64, 0, to)
		for n := 1; n <= to; n++ {
			cell = append(cell, math.Exp(sd*draw(rng)))
			if n < from {
				continue
			}
			if c := stats.ComparePaired(baseline[:n], cell); c.HasCI && c.HalfWidth() <= target {
				for i := n - from; i < len(counts); i++ {
					counts[i]++
				}
				break
			}
		}
	}
	for i := range counts {
		counts[i] /= float64(trials)
	}
	return counts
}

// pairBy is the share of two-cell studies that end with both overheads precise within a budget
// of to rounds' runs: whole, when every round measures both cells; apart, when a cell that is
// precise stops and the other then gets two rounds for each round left.
func pairBy(rng *rand.Rand, draw func(*rand.Rand) float64, sd, target float64, from, to, trials int) (whole, apart float64) {
	ones := make([]float64, 2*to)
	for i := range ones {
		ones[i] = 1
	}
	precise := func(cell []float64) bool {
		c := stats.ComparePaired(ones[:len(cell)], cell)
		return c.HasCI && c.HalfWidth() <= target
	}
	for range trials {
		var cells [2][]float64
		for i := range cells {
			for range 2 * to {
				cells[i] = append(cells[i], math.Exp(sd*draw(rng)))
			}
		}
		for n := from; n <= to; n++ {
			if precise(cells[0][:n]) && precise(cells[1][:n]) {
				whole++
				break
			}
		}
		if preciseApart(cells, precise, from, to) {
			apart++
		}
	}
	return whole / float64(trials), apart / float64(trials)
}

// preciseApart: both cells measured until one is precise, then the other alone, two rounds for
// each round of the budget left, until it is precise too or the budget is spent.
func preciseApart(cells [2][]float64, precise func([]float64) bool, from, to int) bool {
	for n := from; n <= to; n++ {
		a, b := precise(cells[0][:n]), precise(cells[1][:n])
		switch {
		case a && b:
			return true
		case a || b:
			lagging := cells[1]
			if b {
				lagging = cells[0]
			}
			for m := n + 1; m <= 2*to-n; m++ {
				if precise(lagging[:m]) {
					return true
				}
			}
			return false
		}
	}
	return false
}

func normal(rng *rand.Rand) float64 { return rng.NormFloat64() }

// student draws from Student's t with df degrees of freedom, scaled to unit variance so that
// -spread stays the standard deviation.
func student(df int) func(*rand.Rand) float64 {
	scale := math.Sqrt(float64(df-2) / float64(df))
	return func(rng *rand.Rand) float64 {
		chi2 := 0.0
		for range df {
			z := rng.NormFloat64()
			chi2 += z * z
		}
		return scale * rng.NormFloat64() / math.Sqrt(chi2/float64(df))
	}
}
