package stats

import (
	"math"
	"slices"
)

// exactLimit bounds m·n for the exact null distribution (O(m·n·m·n) time); larger samples
// use the normal approximation, which is accurate well before that size.
const exactLimit = 2500

// Test is the outcome of a two-sided rank test.
type Test struct {
	// Statistic: for Mann-Whitney, U of the first sample (the number of (x, y) pairs with
	// x > y, ties counting one half); for the signed-rank test, W+ (the sum of the ranks of the
	// positive differences).
	Statistic float64 `json:"statistic"`
	// P is the two-sided p-value.
	P float64 `json:"p"`
	// Exact: P comes from the exact null distribution (no ties, small samples); otherwise
	// from the normal approximation with tie correction.
	Exact bool `json:"exact"`
}

// MannWhitney tests whether x and y come from distributions with the same location. Chosen
// over a t-test because repetitions are few and throughput on a shared machine is skewed by
// outliers; it needs at least 4 runs per side to ever reach p < 0.05 (3 vs 3 gives 0.1 at
// best), which the report says when it applies.
func MannWhitney(x, y []float64) Test {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return Test{P: math.NaN()}
	}
	ranks, ties := midranks(append(slices.Clone(x), y...))
	sum := 0.0
	for _, r := range ranks[:m] {
		sum += r
	}
	u := sum - float64(m*(m+1))/2
	low := math.Min(u, float64(m*n)-u)
	if ties == 0 && m*n <= exactLimit {
		return Test{Statistic: u, P: math.Min(1, 2*exactCDF(m, n)[int(math.Round(low))]), Exact: true}
	}
	sigma := uSigma(m, n, ties)
	if sigma == 0 {
		return Test{Statistic: u, P: 1} // every value equal: nothing to tell apart
	}
	z := (float64(m*n) - low - float64(m*n)/2 - 0.5) / sigma
	return Test{Statistic: u, P: math.Min(1, math.Erfc(z/math.Sqrt2))}
}

// Shift is the Hodges-Lehmann estimate of how far x lies above y (the median of all pairwise
// differences x_i - y_j) with the confidence interval obtained by inverting the U test: the
// interval and the test always agree on whether zero is plausible.
type Shift struct {
	Estimate float64
	CI       Interval
	// HasCI is false when the samples are too small for the level (3 vs 3 at 95%).
	HasCI bool
}

// HodgesLehmann estimates the shift of x against y at the given confidence level.
func HodgesLehmann(x, y []float64, level float64) Shift {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return Shift{Estimate: math.NaN()}
	}
	d := make([]float64, 0, m*n)
	for _, a := range x {
		for _, b := range y {
			d = append(d, a-b)
		}
	}
	slices.Sort(d)
	out := Shift{Estimate: Median(d)}

	var k int
	achieved := level
	_, ties := midranks(append(slices.Clone(x), y...))
	if ties == 0 && m*n <= exactLimit {
		k, achieved = trimExact(exactCDF(m, n), level)
	} else {
		k = trimNormal(m*n, uSigma(m, n, ties), level)
	}
	if k < 1 {
		return out
	}
	out.CI, out.HasCI = Interval{Low: d[k-1], High: d[m*n-k], Level: achieved}, true
	return out
}

// exactCDF returns P(U ≤ u) for u = 0..m·n under the null hypothesis without ties, from the
// recurrence p(m,n,u) = m/(m+n)·p(m-1,n,u-n) + n/(m+n)·p(m,n-1,u).
func exactCDF(m, n int) []float64 {
	size := m*n + 1
	// prev[j] holds the distribution for (i-1, j); cur[j] for (i, j).
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = make([]float64, size)
		prev[j][0] = 1 // no x values: U = 0
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = make([]float64, size)
		cur[0][0] = 1 // no y values: U = 0
		for j := 1; j <= n; j++ {
			p := make([]float64, size)
			wx, wy := float64(i)/float64(i+j), float64(j)/float64(i+j)
			for u := range size {
				// The largest value is an x (beats all j y values) or a y.
				if u >= j {
					p[u] += wx * prev[j][u-j]
				}
				p[u] += wy * cur[j-1][u]
			}
			cur[j] = p
		}
		prev = cur
	}
	cdf := prev[n]
	for u := 1; u < size; u++ {
		cdf[u] += cdf[u-1]
	}
	return cdf
}

// midranks ranks values 1..N, ties getting the mean of their ranks, and returns Σ(t³ - t) over
// groups of t tied values (zero when there is no tie).
func midranks(v []float64) ([]float64, float64) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	ranks := make([]float64, len(v))
	ties := 0.0
	for start := 0; start < len(idx); {
		end := start
		for end+1 < len(idx) && v[idx[end+1]] == v[idx[start]] {
			end++
		}
		r := float64(start+end)/2 + 1
		for _, i := range idx[start : end+1] {
			ranks[i] = r
		}
		t := float64(end - start + 1)
		ties += t*t*t - t
		start = end + 1
	}
	return ranks, ties
}

// uSigma is the standard deviation of U under the null hypothesis, corrected for ties.
func uSigma(m, n int, ties float64) float64 {
	total := float64(m + n)
	return math.Sqrt(float64(m*n) / 12 * ((total + 1) - ties/(total*(total-1))))
}

// trimExact is how many of the sorted differences (or Walsh averages) to trim from each end
// for an interval at level, from the statistic's exact null distribution cdf, with the level
// that trim really achieves (discrete distributions reach only some levels).
func trimExact(cdf []float64, level float64) (k int, achieved float64) {
	alpha := (1 - level) / 2
	for k < len(cdf) && cdf[k] <= alpha+1e-12 {
		k++
	}
	if k == 0 {
		return 0, level
	}
	return k, 1 - 2*cdf[k-1]
}

// trimNormal is trimExact from the normal approximation of a statistic over count values with
// standard deviation sigma.
func trimNormal(count int, sigma, level float64) int {
	z := math.Sqrt2 * math.Erfinv(level)
	return int(math.Floor(float64(count)/2 - z*sigma))
}
