// Package cpuacct measures the CPU time that containers and nodes spent during a benchmark's
// measured window, from the container runtime's own accounting: the kubelet's resource metrics
// (container_cpu_usage_seconds_total and node_cpu_usage_seconds_total, cumulative counters the
// kernel keeps per cgroup) as a Prometheus that scrapes the kubelets has stored them.
//
// The kubelet refreshes those counters every --housekeeping-interval (10 seconds by default, up
// to twice that with its jitter; 2 seconds on this project's Kind nodes) and stamps each value
// with the time it was read, so a window's usage is never read off exactly at its edges. It is
// estimated from the samples inside the window only: their rate times the window's length.
// Samples outside it would mix in the warm-up before and the idle time after, when the load is
// different; the samples inside must cover at least three tenths of the window, or the figure is refused
// with the reason rather than guessed.
package cpuacct

import (
	"fmt"
	"time"
)

// Point is one sample of a cumulative CPU counter, in CPU-seconds.
type Point struct {
	T time.Time
	V float64
}

// MinCoverage is the least fraction of the window that the samples inside it must span.
const MinCoverage = 0.3

// Window is a measured phase: CPU use is wanted between Start and End.
type Window struct {
	Start, End time.Time
}

// Duration of the window.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// Usage is the CPU-seconds a counter advanced during w, from the points inside it (sorted by
// time), and the time they span. It refuses a counter that went backwards (its container
// restarted in the window) and samples that span less than MinCoverage of the window.
func Usage(points []Point, w Window) (float64, time.Duration, error) {
	first, last, err := Bounds(points, w)
	span := last.T.Sub(first.T)
	if err != nil {
		return 0, span, err
	}
	rate := (last.V - first.V) / span.Seconds()
	return rate * w.Duration().Seconds(), span, nil
}

// Bounds are the first and last points inside w, refused as Usage refuses them: the CPU
// between them is exactly last.V - first.V.
func Bounds(points []Point, w Window) (first, last Point, err error) {
	var inside []Point
	for _, p := range points {
		if !p.T.Before(w.Start) && !p.T.After(w.End) {
			inside = append(inside, p)
		}
	}
	if len(inside) < 2 {
		return Point{}, Point{}, fmt.Errorf("%d samples inside the %s window; the kubelet refreshes its counters every --housekeeping-interval (10-20s by default), so run longer: 30s or more at the default", len(inside), w.Duration().Round(time.Second))
	}
	for i := 1; i < len(inside); i++ {
		if inside[i].V < inside[i-1].V {
			return Point{}, Point{}, fmt.Errorf("the counter went back at %s: the container restarted during the run", inside[i].T.UTC().Format(time.RFC3339))
		}
	}
	first, last = inside[0], inside[len(inside)-1]
	if span := last.T.Sub(first.T); float64(span) < MinCoverage*float64(w.Duration()) {
		return first, last, fmt.Errorf("the samples inside the window span %s of its %s (at least %.0f%% needed): run longer: the kubelet refreshes its counters only every --housekeeping-interval (10-20s by default)", span.Round(time.Second), w.Duration().Round(time.Second), 100*MinCoverage)
	}
	return first, last, nil
}
