// Package stats compares benchmark repetitions without assuming how throughput is
// distributed: a handful of runs on a shared machine is neither normal nor independent of
// drift, so every figure here is rank-based (medians, order statistics, the Mann-Whitney U
// test and the Hodges-Lehmann shift that inverts it).
package stats

import (
	"math"
	"slices"
)

// Interval is a confidence interval and the confidence it really has: with few repetitions
// order statistics reach only discrete levels, at least the one asked for.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// Level is the achieved coverage, e.g. 0.9785 for a 95% interval of 8 runs.
	Level float64 `json:"level"`
}

// Median of x; NaN for no data.
func Median(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	s := sorted(x)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianCI is the distribution-free confidence interval of the median from order statistics:
// the narrowest [x(j), x(n+1-j)] covering the median with probability at least level (binomial
// with p = 1/2). ok is false when even [min, max] covers less, which at 95% is every n < 6.
func MedianCI(x []float64, level float64) (Interval, bool) {
	n := len(x)
	s := sorted(x)
	var best Interval
	ok := false
	for j := 1; j <= n/2; j++ {
		coverage := 1 - 2*binomialCDF(j-1, n)
		if coverage < level {
			break
		}
		best, ok = Interval{Low: s[j-1], High: s[n-j], Level: coverage}, true
	}
	return best, ok
}

// binomialCDF is P(B ≤ k) for B ~ Binomial(n, 1/2).
func binomialCDF(k, n int) float64 {
	sum, c := 0.0, 1.0 // c = C(n, i)
	for i := 0; i <= k; i++ {
		sum += c
		c = c * float64(n-i) / float64(i+1)
	}
	return sum / math.Pow(2, float64(n))
}

func sorted(x []float64) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s
}
