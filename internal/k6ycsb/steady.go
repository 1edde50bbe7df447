package k6ycsb

import (
	"math"
	"sync"
	"time"

	"secured.dev/operator/internal/benchresult"
)

// Steadiness is judged on the last steadyWindow whole seconds of the warm-up: their
// coefficient of variation at most steadyMaxCV, and the mean of their second half within
// steadyMaxTrend of the first half's (a throughput still climbing is not steady however
// smooth the climb).
const (
	steadyWindow   = 10
	steadyMaxCV    = 0.10
	steadyMaxTrend = 0.05
)

// steady reports whether per-second counts read as a steady throughput.
func steady(counts []int64) bool {
	if len(counts) < steadyWindow {
		return false
	}
	w := counts[len(counts)-steadyWindow:]
	s := benchresult.Summary{Series: w}
	cv, ok := s.CoefficientOfVariation()
	if !ok || cv > steadyMaxCV {
		return false
	}
	half := steadyWindow / 2
	first, second := mean(w[:half]), mean(w[half:])
	return math.Abs(second-first) <= steadyMaxTrend*first
}

func mean[T int64 | float64](v []T) float64 {
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}

// gate runs a warm-up until the throughput is steady, then the measured window: every
// virtual user asks it which phase an operation starting now belongs to. The warm-up lasts
// at least min and at most max; the measured window starts when the warm-up ends and lasts
// duration.
type gate struct {
	min, max, duration time.Duration
	warmup             *phase

	mu       sync.Mutex
	start    time.Time // the first operation's
	checked  int       // whole seconds of warm-up last judged
	measured time.Time // the warm-up's end, the measured window's start; zero while warming
	isSteady bool
}

// phaseAt names the phase of an operation starting at now: "warmup", "run", or "" once the
// measured window is over; deadline is the window's end while measuring.
func (g *gate) phaseAt(now time.Time) (name string, deadline time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.start.IsZero() {
		g.start = now
	}
	if g.measured.IsZero() {
		elapsed := now.Sub(g.start)
		switch secs := int(elapsed / time.Second); {
		case elapsed >= g.max:
			g.measured = now
		case elapsed >= g.min && secs > g.checked:
			g.checked = secs
			if steady(g.warmup.done.Counts(secs)) {
				g.measured, g.isSteady = now, true
			}
		}
		if g.measured.IsZero() {
			return "warmup", time.Time{}
		}
	}
	if end := g.measured.Add(g.duration); now.Before(end) {
		return "run", end
	}
	return "", time.Time{}
}

// warmUp says how long the warm-up took and whether it ended steady (or at its maximum).
func (g *gate) warmUp() *benchresult.WarmUp {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.measured.IsZero() {
		return nil
	}
	return &benchresult.WarmUp{Seconds: math.Round(g.measured.Sub(g.start).Seconds()*10) / 10, Steady: g.isSteady}
}
