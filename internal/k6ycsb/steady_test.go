package k6ycsb

import (
	"testing"
	"time"
)

// A throughput still climbing, or swinging, is not steady; a flat one with a little noise is.
func TestSteady(t *testing.T) {
	flat := []int64{500, 800, 1000, 1010, 990, 1005, 995, 1000, 1010, 990, 1000, 1005}
	climbing := []int64{900, 920, 940, 960, 980, 1000, 1020, 1040, 1060, 1080}
	swinging := []int64{1000, 700, 1300, 800, 1200, 1000, 700, 1300, 800, 1200}
	for name, tc := range map[string]struct {
		counts []int64
		want   bool
	}{
		"flat after a ramp": {flat, true},
		"climbing smoothly": {climbing, false},
		"swinging":          {swinging, false},
		"too short":         {flat[2:10], false},
		"nothing done":      {make([]int64, 12), false},
	} {
		if got := steady(tc.counts); got != tc.want {
			t.Errorf("%s: steady %v, want %v", name, got, tc.want)
		}
	}
}

// The gate warms up until steady (never before the minimum), measures for the duration, and
// ends; without steadiness it measures after the maximum and says so.
func TestGateFindsTheEndOfTheWarmUp(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	g := &gate{min: 12 * time.Second, max: time.Minute, duration: 30 * time.Second, warmup: &phase{}}
	if name, _ := g.phaseAt(t0); name != "warmup" {
		t.Fatalf("the first operation warms up: %q", name)
	}
	for sec := range 20 {
		n := 1000
		if sec < 3 {
			n = 300 * (sec + 1) // the JIT and the caches warming
		}
		for range n {
			g.warmup.done.Add(time.Duration(sec)*time.Second + time.Millisecond)
		}
	}
	if name, _ := g.phaseAt(t0.Add(11500 * time.Millisecond)); name != "warmup" {
		t.Errorf("steady counts, but before the minimum: %q", name)
	}
	name, deadline := g.phaseAt(t0.Add(13 * time.Second))
	if name != "run" || !deadline.Equal(t0.Add(43*time.Second)) {
		t.Errorf("steady after 13 s: %q until %v", name, deadline)
	}
	if name, _ := g.phaseAt(t0.Add(43 * time.Second)); name != "" {
		t.Errorf("the window is over: %q", name)
	}
	if w := g.warmUp(); w == nil || w.Seconds != 13 || !w.Steady {
		t.Errorf("warm-up %+v; want 13 s, steady", w)
	}

	never := &gate{min: 0, max: 5 * time.Second, duration: time.Second, warmup: &phase{}}
	never.phaseAt(t0)
	if name, _ := never.phaseAt(t0.Add(5 * time.Second)); name != "run" {
		t.Errorf("at the maximum the window starts anyway: %q", name)
	}
	if w := never.warmUp(); w == nil || w.Steady || w.Seconds != 5 {
		t.Errorf("warm-up %+v; want 5 s, not steady", w)
	}
}
