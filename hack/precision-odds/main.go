// Command precision-odds estimates how often a study's stopping rule reaches its precision
// target within a number of rounds, for a given spread of its paired runs. It draws the
// per-round log ratios of one cell against its baseline, applies the study's own statistics
// (stats.ComparePaired: Hodges-Lehmann estimate, exact signed-rank interval) and its rule (start
// with the planned repetitions, add a round while the interval is wider than the target on
// either side), and prints the share of simulated studies precise after each round.
//
// Why: spec.precision.maxRounds trades wall time against the chance of an answer; the spread
// of a pair is what a study's report shows (its runs by round), so the odds of a bound can be
// read off before spending a study on it.
//
// Usage: go run ./hack/precision-odds [-spread 5] [-target 5] [-from 6] [-to 12] [-df 0]
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
	flag.Parse()
	if *from < 1 || *to < *from || *trials < 1 || *spread < 0 || *target <= 0 || (*df != 0 && *df <= 2) {
		fmt.Fprintln(os.Stderr, "precision-odds: need 1 <= -from <= -to, -trials >= 1, -spread >= 0, -target > 0 and -df 0 or above 2")
		os.Exit(2)
	}
	draw, tails := normal, "normal"
	if *df > 0 {
		draw, tails = student(*df), fmt.Sprintf("Student's t, %d df", *df)
	}
	by := preciseBy(rand.New(rand.NewPCG(*seed, 0)), draw, *spread/100, *target/100, *from, *to, *trials)
	fmt.Printf("pairs spread %.1f points (%s), target ±%.1f points, %d studies\n", *spread, tails, *target, *trials)
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
