package benchresult

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Bucket boundaries are continuous and each value's bucket holds it within 0.4%.
func TestBucketsCoverEveryValue(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 255, 256, 257, 511, 512, 1000, 65_535, 1 << 20, 123_456_789, 1 << 39} {
		b := bucketOf(v)
		if b < prev {
			t.Errorf("bucketOf(%d) = %d, below the previous value's %d", v, b, prev)
		}
		prev = b
		if got := bucketValue(b); math.Abs(float64(got-v)) > 0.004*float64(v)+0.5 {
			t.Errorf("value %d reads back as %d", v, got)
		}
	}
	if b := bucketOf(math.MaxInt64); b != bucketCount-1 {
		t.Errorf("the largest value lands in bucket %d; want the last, %d", b, bucketCount-1)
	}
	if b := bucketOf(-5); b != 0 {
		t.Errorf("a negative latency (clock step) lands in bucket %d; want 0", b)
	}
}

// Quantiles agree with the exact nearest-rank quantiles of a skewed sample.
func TestQuantilesMatchExactOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var h Histogram
	vals := make([]int64, 100_000)
	for i := range vals {
		vals[i] = int64(200 + r.ExpFloat64()*800) // µs, a latency-like tail
		h.Record(time.Duration(vals[i]) * time.Microsecond)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.95, 0.99, 0.999} {
		exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
		if got := h.Quantile(q); math.Abs(float64(got-exact)) > 0.005*float64(exact) {
			t.Errorf("p%v = %d µs; exact %d", q*100, got, exact)
		}
	}
	if h.Max() != vals[len(vals)-1] || h.Count() != int64(len(vals)) {
		t.Errorf("max %d count %d; want %d and %d", h.Max(), h.Count(), vals[len(vals)-1], len(vals))
	}
	var empty Histogram
	if empty.Quantile(0.99) != 0 {
		t.Error("an empty histogram has a p99")
	}
}

func BenchmarkRecord(b *testing.B) {
	var h Histogram
	b.RunParallel(func(pb *testing.PB) {
		d := 1500 * time.Microsecond
		for pb.Next() {
			h.Record(d)
		}
	})
}
