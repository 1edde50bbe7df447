package stats

import (
	"math"
	"slices"
)

// Paired comparisons. A study's schedule measures every cell once per round, so a cell's run
// and the baseline's run of the same round share whatever the machine did at that time: a
// neighbour's load, a compaction, the JIT's progress. The log ratio of the two cancels it; the
// signed-rank test and the one-sample Hodges-Lehmann estimate then analyse the ratios without
// assuming their distribution, only that it is symmetric about its centre.

// signedRankExactLimit bounds the number of differences for the exact null distribution
// (SciPy's limit too); beyond it the normal approximation is accurate.
const signedRankExactLimit = 50

// SignedRank is the two-sided Wilcoxon signed-rank test of whether the differences d are
// centred on zero. Like SciPy's defaults, against which it is tested: zero differences are
// dropped, P is exact when no difference is zero and no two have the same size (up to 50
// differences), and otherwise comes from the normal approximation with tie correction and no
// continuity correction. With 6 differences the smallest possible P is 0.03125; with 5 it is
// 0.0625, so fewer than 6 rounds never reach significance.
func SignedRank(d []float64) Test {
	if len(d) == 0 {
		return Test{P: math.NaN()}
	}
	var nz []float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	n := len(nz)
	if n == 0 {
		return Test{P: 1} // every pair equal: nothing to tell apart
	}
	ranks, ties := midranks(absolute(nz))
	wPlus := 0.0
	for i, v := range nz {
		if v > 0 {
			wPlus += ranks[i]
		}
	}
	total := float64(n*(n+1)) / 2
	if ties == 0 && n == len(d) && n <= signedRankExactLimit {
		low := math.Min(wPlus, total-wPlus)
		return Test{Statistic: wPlus, P: math.Min(1, 2*signedRankCDF(n)[int(math.Round(low))]), Exact: true}
	}
	sigma := signedRankSigma(n, ties)
	if sigma == 0 {
		return Test{Statistic: wPlus, P: 1}
	}
	z := (wPlus - total/2) / sigma
	return Test{Statistic: wPlus, P: math.Min(1, math.Erfc(math.Abs(z)/math.Sqrt2))}
}

// PairedShift is the one-sample Hodges-Lehmann estimate of the centre of the differences d,
// the median of the Walsh averages (d_i + d_j)/2 for i ≤ j, with the confidence interval that
// inverts the signed-rank test: trim from each end of the sorted Walsh averages as many as the
// test's null distribution allows at the level. At 95% it needs 6 differences.
func PairedShift(d []float64, level float64) Shift {
	n := len(d)
	if n == 0 {
		return Shift{Estimate: math.NaN()}
	}
	w := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	out := Shift{Estimate: Median(w)}

	var k int
	achieved := level
	_, ties := midranks(absolute(d))
	if ties == 0 && !slices.Contains(d, 0) && n <= signedRankExactLimit {
		k, achieved = trimExact(signedRankCDF(n), level)
	} else {
		k = trimNormal(len(w), signedRankSigma(n, ties), level)
	}
	if k < 1 {
		return out
	}
	out.CI, out.HasCI = Interval{Low: w[k-1], High: w[len(w)-k], Level: achieved}, true
	return out
}

// signedRankCDF returns P(W+ ≤ w) for w = 0..n(n+1)/2 under the null hypothesis without ties:
// every subset of the ranks 1..n is equally likely to be the positive one.
func signedRankCDF(n int) []float64 {
	counts := make([]float64, n*(n+1)/2+1)
	counts[0] = 1
	for r := 1; r <= n; r++ {
		for w := len(counts) - 1; w >= r; w-- {
			counts[w] += counts[w-r]
		}
	}
	scale := math.Pow(2, -float64(n))
	acc := 0.0
	for w, c := range counts {
		acc += c
		counts[w] = acc * scale
	}
	return counts
}

// signedRankSigma is the standard deviation of W+ under the null hypothesis, corrected for
// ties (Σ(t³ - t) over groups of equal |d|).
func signedRankSigma(n int, ties float64) float64 {
	fn := float64(n)
	return math.Sqrt(fn*(fn+1)*(2*fn+1)/24 - ties/48)
}

func absolute(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Abs(v)
	}
	return out
}
