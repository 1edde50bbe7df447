package benchresult

import (
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Operations count in the second they completed, from many goroutines at once; the partial
// last second is left out, and a long phase is summed into wider steps that fit a summary.
func TestSeriesCountsOperationsPerSecond(t *testing.T) {
	var s Series
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for sec := range 3 {
				for range 100 * (sec + 1) {
					s.Add(time.Duration(sec)*time.Second + time.Duration(g)*time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	s.Add(3*time.Second + 10*time.Millisecond) // the partial fourth second
	if p, step := s.Points(3500 * time.Millisecond); !slices.Equal(p, []int64{400, 800, 1200}) || step != 1 {
		t.Errorf("points %v step %d; want 400, 800, 1200 per second", p, step)
	}
	if p, _ := s.Points(500 * time.Millisecond); p != nil {
		t.Errorf("no whole second, no points: %v", p)
	}
	if p, _ := s.Points(-time.Second); p != nil {
		t.Errorf("no whole second, no points: %v", p)
	}

	var long Series
	for sec := range 300 {
		long.Add(time.Duration(sec) * time.Second)
	}
	long.Add(-time.Second)  // a clock step back counts in the first second
	long.Add(2 * time.Hour) // beyond MaxSeconds: the last second
	p, step := long.Points(300 * time.Second)
	if step != 3 || len(p) != 100 || p[0] != 4 || p[1] != 3 {
		t.Errorf("300 s in steps of %d: %d points starting %v", step, len(p), p[:2])
	}
	if p, _ := long.Points(10 * time.Hour); len(p) > MaxSeriesPoints {
		t.Errorf("%d points; at most %d fit a summary", len(p), MaxSeriesPoints)
	}
}

// The coefficient of variation reads a steady window as small and a warming one as large.
func TestCoefficientOfVariation(t *testing.T) {
	steady := Summary{Series: []int64{1000, 1010, 990, 1000}}
	if cv, ok := steady.CoefficientOfVariation(); !ok || math.Abs(cv-0.00816) > 1e-4 {
		t.Errorf("steady: %v %v", cv, ok)
	}
	warming := Summary{Series: []int64{200, 500, 900, 1000, 1000}}
	if cv, ok := warming.CoefficientOfVariation(); !ok || cv < 0.4 {
		t.Errorf("warming: %v %v", cv, ok)
	}
	for _, s := range []Summary{{Series: []int64{1, 2}}, {Series: []int64{0, 0, 0}}} {
		if _, ok := s.CoefficientOfVariation(); ok {
			t.Errorf("%v has no coefficient of variation", s.Series)
		}
	}
}

// Pods' series add up over the seconds they all ran; a full series still fits a termination
// message.
func TestMergeAlignsSeries(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a := Summary{Start: t0, End: t0.Add(5 * time.Second), Series: []int64{10, 11, 12, 13, 14}, SeriesStepSeconds: 1}
	b := Summary{Start: t0.Add(2 * time.Second), End: t0.Add(6 * time.Second), Series: []int64{100, 101, 102, 103}, SeriesStepSeconds: 1}
	m, _ := Merge([]Summary{a, b})
	if !slices.Equal(m.Series, []int64{112, 114, 116}) || m.SeriesStepSeconds != 1 {
		t.Errorf("merged %v (step %d); want the three seconds both ran: 112, 114, 116", m.Series, m.SeriesStepSeconds)
	}
	b.SeriesStepSeconds = 2
	if m, _ := Merge([]Summary{a, b}); m.Series != nil {
		t.Errorf("different steps cannot add up: %v", m.Series)
	}
	if m, _ := Merge([]Summary{a}); !slices.Equal(m.Series, a.Series) {
		t.Errorf("one pod: %v", m.Series)
	}

	full := Summary{Driver: "k6-ycsb", Phase: "run", Start: t0, End: t0.Add(time.Hour), Operations: 1 << 40, FirstError: strings.Repeat("x", 600),
		SeriesStepSeconds: 30, Series: slices.Repeat([]int64{99_999_999}, MaxSeriesPoints)}
	for _, op := range []string{"read", "update", "insert", "scan", "readmodifywrite"} {
		full.Latencies = append(full.Latencies, Latency{Operation: op, Count: 1 << 40, Errors: 1 << 40, P50: 1 << 40, P95: 1 << 40, P99: 1 << 40, Max: 1 << 40})
	}
	if _, err := full.Marshal(); err != nil {
		t.Errorf("the largest summary with a full series: %v", err)
	}
}

// Operations between two instants: whole and partial steps in proportion, the tail beyond the
// series from what Operations says it holds; nothing outside the run.
func TestOperationsBetween(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := Summary{Start: t0, End: t0.Add(3500 * time.Millisecond), Operations: 3300, Series: []int64{1000, 1000, 1000}, SeriesStepSeconds: 1}
	for _, tc := range []struct {
		from, to time.Duration
		want     float64
	}{
		{0, 3500 * time.Millisecond, 3300},
		{500 * time.Millisecond, 1500 * time.Millisecond, 1000},
		{2500 * time.Millisecond, 3250 * time.Millisecond, 500 + 150},
		{time.Second, time.Second, 0},
	} {
		if got, ok := s.OperationsBetween(t0.Add(tc.from), t0.Add(tc.to)); !ok || math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s..%s: %v %v; want %v", tc.from, tc.to, got, ok, tc.want)
		}
	}
	for _, r := range [][2]time.Duration{{-time.Second, time.Second}, {time.Second, 4 * time.Second}, {2 * time.Second, time.Second}} {
		if _, ok := s.OperationsBetween(t0.Add(r[0]), t0.Add(r[1])); ok {
			t.Errorf("%v: outside the run, or backwards", r)
		}
	}
	if _, ok := (Summary{Start: t0, End: t0.Add(time.Minute), Operations: 10}).OperationsBetween(t0, t0.Add(time.Second)); ok {
		t.Error("no series, no count between instants")
	}
}
