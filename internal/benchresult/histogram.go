package benchresult

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram counts latencies in log-linear buckets (256 linear microseconds, then 128
// sub-buckets per power of two): quantiles are within 0.4% of the recorded value, memory is
// fixed, and recording is one atomic add, so every virtual user can share one.
type Histogram struct {
	counts [bucketCount]atomic.Int64
	max    atomic.Int64
}

const (
	subBits     = 7
	linear      = 2 << subBits // values below are their own bucket
	maxExponent = 40 - subBits // beyond 2^40 µs (12 days) values share the last bucket
	bucketCount = (maxExponent + 2) << subBits
)

func bucketOf(micros int64) int {
	if micros < linear {
		return int(max(micros, 0))
	}
	e := bits.Len64(uint64(micros)) - subBits - 1
	if e > maxExponent {
		return bucketCount - 1
	}
	return e<<subBits + int(micros>>e)
}

// bucketValue is the middle of a bucket's range.
func bucketValue(b int) int64 {
	if b < linear {
		return int64(b)
	}
	e := b>>subBits - 1
	m := int64(b - e<<subBits)
	return m<<e + (int64(1)<<e)/2
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	us := d.Microseconds()
	h.counts[bucketOf(us)].Add(1)
	for {
		m := h.max.Load()
		if us <= m || h.max.CompareAndSwap(m, us) {
			return
		}
	}
}

// Count is the number of latencies recorded.
func (h *Histogram) Count() int64 {
	var n int64
	for b := range h.counts {
		n += h.counts[b].Load()
	}
	return n
}

// Max is the largest latency recorded, exactly, in microseconds.
func (h *Histogram) Max() int64 { return h.max.Load() }

// Quantile is the latency, in microseconds, at or below which a fraction q of the recorded
// ones lie (the nearest-rank definition); 0 when nothing was recorded.
func (h *Histogram) Quantile(q float64) int64 {
	n := h.Count()
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n) + 0.999999999)
	rank = min(max(rank, 1), n)
	var seen int64
	for b := range h.counts {
		if seen += h.counts[b].Load(); seen >= rank {
			return min(bucketValue(b), h.max.Load())
		}
	}
	return h.max.Load()
}
