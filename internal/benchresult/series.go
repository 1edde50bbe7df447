package benchresult

import (
	"math"
	"sync/atomic"
	"time"
)

// MaxSeconds is how many seconds of a phase a Series can count; a longer phase's remaining
// operations count in its last second, so a bounded array serves the hot path.
const MaxSeconds = 3600

// MaxSeriesPoints bounds the series a summary carries, so a termination message holds it.
const MaxSeriesPoints = 120

// Series counts operations completed in each second of a phase, from many goroutines.
type Series struct {
	counts [MaxSeconds]atomic.Int64
}

// Add counts one operation that completed at offset since the phase's start.
func (s *Series) Add(offset time.Duration) {
	i := min(max(int(offset/time.Second), 0), MaxSeconds-1)
	s.counts[i].Add(1)
}

// Points reads the counts of the whole seconds in duration, in steps of as many seconds as
// keep them within MaxSeriesPoints. The last, partial second is left out: it would read as a
// drop that never happened.
func (s *Series) Points(duration time.Duration) (points []int64, stepSeconds int) {
	n := min(int(duration/time.Second), MaxSeconds)
	if n <= 0 {
		return nil, 0
	}
	step := (n + MaxSeriesPoints - 1) / MaxSeriesPoints
	for i := 0; i+step <= n; i += step {
		var sum int64
		for j := i; j < i+step; j++ {
			sum += s.counts[j].Load()
		}
		points = append(points, sum)
	}
	return points, step
}

// Counts are the raw counts of the first n seconds (at most MaxSeconds).
func (s *Series) Counts(n int) []int64 {
	out := make([]int64, min(max(n, 0), MaxSeconds))
	for i := range out {
		out[i] = s.counts[i].Load()
	}
	return out
}

// CoefficientOfVariation of the summary's series: the standard deviation of its points over
// their mean. A steady window reads a few percent; warm-up, a compaction or a neighbour
// shows as more. ok is false with fewer than 3 points.
func (s Summary) CoefficientOfVariation() (cv float64, ok bool) {
	if len(s.Series) < 3 {
		return 0, false
	}
	var sum float64
	for _, p := range s.Series {
		sum += float64(p)
	}
	mean := sum / float64(len(s.Series))
	if mean == 0 {
		return 0, false
	}
	var ss float64
	for _, p := range s.Series {
		ss += (float64(p) - mean) * (float64(p) - mean)
	}
	return math.Sqrt(ss/float64(len(s.Series)-1)) / mean, true
}

// mergeSeries adds the client pods' series second by second, aligned on their starts (the
// pods of one run start within a second or two of each other); the merged series keeps the
// seconds every pod counted, so a pod that started late does not read as a dip. Pods with
// different steps cannot be added and give no series.
func mergeSeries(parts []Summary, start time.Time) ([]int64, int) {
	step := parts[0].SeriesStepSeconds
	if step == 0 {
		return nil, 0
	}
	first, last := 0, math.MaxInt // the steps, counted from start, that every pod covers
	for _, p := range parts {
		if p.SeriesStepSeconds != step || len(p.Series) == 0 {
			return nil, 0
		}
		off := offsetSteps(p.Start, start, step)
		first, last = max(first, off), min(last, off+len(p.Series))
	}
	if last <= first {
		return nil, 0
	}
	out := make([]int64, last-first)
	for _, p := range parts {
		off := offsetSteps(p.Start, start, step)
		for i := range out {
			out[i] += p.Series[first+i-off]
		}
	}
	return out, step
}

func offsetSteps(t, start time.Time, step int) int {
	return int(math.Round(t.Sub(start).Seconds() / float64(step)))
}

// OperationsBetween counts the operations completed between two instants of a one-pod
// summary: the series' steps they overlap, in proportion, and the last partial second's
// remainder (Operations beyond the series) spread evenly over it. false when the summary has
// no series or the instants are not inside it.
func (s Summary) OperationsBetween(from, to time.Time) (float64, bool) {
	if s.SeriesStepSeconds <= 0 || len(s.Series) == 0 || to.Before(from) || from.Before(s.Start) || to.After(s.End) {
		return 0, false
	}
	var total, counted float64
	spread := func(a, b time.Time, n float64) { // n operations evenly over [a, b)
		lo, hi := maxTime(a, from), minTime(b, to)
		if hi.After(lo) && b.After(a) {
			total += n * float64(hi.Sub(lo)) / float64(b.Sub(a))
		}
	}
	step := time.Duration(s.SeriesStepSeconds) * time.Second
	for i, n := range s.Series {
		a := s.Start.Add(time.Duration(i) * step)
		spread(a, a.Add(step), float64(n))
		counted += float64(n)
	}
	spread(s.Start.Add(time.Duration(len(s.Series))*step), s.End, max(0, float64(s.Operations)-counted))
	return total, true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
