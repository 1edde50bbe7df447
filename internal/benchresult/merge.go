package benchresult

import "cmp"

// Merge combines the summaries of client pods that ran the same phase side by side.
// Counts, CPU and throughputs add up; a merged percentile cannot be recovered from per-pod
// percentiles, so p95, p99 and max are the worst pod's (conservative) and p50 is the
// count-weighted mean of the pods' medians. Per-second series add up over the seconds every
// pod ran. With one pod the result is exact.
func Merge(parts []Summary) (Summary, float64) {
	if len(parts) == 0 {
		return Summary{}, 0
	}
	out := parts[0]
	out.Latencies, out.Connections = nil, nil
	throughput := 0.0
	byOp := map[string]*Latency{}
	var order []string
	weighted := map[string]float64{}
	for i, p := range parts {
		throughput += p.Throughput()
		if i > 0 {
			out.Operations += p.Operations
			out.Errors += p.Errors
			out.DroppedIterations += p.DroppedIterations
			out.ClientCPUSeconds += p.ClientCPUSeconds
			out.Bytes += p.Bytes
			if p.Start.Before(out.Start) {
				out.Start = p.Start
			}
			if p.End.After(out.End) {
				out.End = p.End
			}
			if out.FirstError == "" {
				out.FirstError = p.FirstError
			}
			out.WarmUp = longerWarmUp(out.WarmUp, p.WarmUp)
		}
		for kind, n := range p.Connections {
			if out.Connections == nil {
				out.Connections = map[string]int64{}
			}
			out.Connections[kind] += n
		}
		for _, l := range p.Latencies {
			m, ok := byOp[l.Operation]
			if !ok {
				m = &Latency{Operation: l.Operation}
				byOp[l.Operation] = m
				order = append(order, l.Operation)
			}
			m.Count += l.Count
			m.Errors += l.Errors
			weighted[l.Operation] += float64(l.P50) * float64(l.Count)
			m.P95, m.P99, m.Max = max(m.P95, l.P95), max(m.P99, l.P99), max(m.Max, l.Max)
		}
	}
	out.Series, out.SeriesStepSeconds = mergeSeries(parts, out.Start)
	for _, op := range order {
		m := byOp[op]
		if m.Count > 0 {
			m.P50 = int64(weighted[op]/float64(m.Count) + 0.5)
		}
		out.Latencies = append(out.Latencies, *m)
	}
	return out, throughput
}

// longerWarmUp: each pod warms up until its own view of the throughput is steady; the run's
// warm-up is the longest, steady only when every pod's was.
func longerWarmUp(a, b *WarmUp) *WarmUp {
	if a == nil || b == nil {
		return cmp.Or(a, b)
	}
	return &WarmUp{Seconds: max(a.Seconds, b.Seconds), Steady: a.Steady && b.Steady}
}
