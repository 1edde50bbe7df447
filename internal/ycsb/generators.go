// Package ycsb reproduces the YCSB core workload's generators and key scheme (YCSB 0.17.0,
// site.ycsb:core): the same key names, insert order, request distributions with YCSB's
// scrambled-zipfian constants, and operation mix, so that numbers measured with the k6
// extension compare with numbers measured by YCSB itself. Generators take the caller's
// *rand.Rand: every virtual user draws from its own source, with no lock on the hot path.
// Where YCSB's arithmetic has quirks (Math.abs of a long, int truncation of key numbers, the
// zipfian eta computed from the initial item count), this package keeps them on purpose.
package ycsb

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// FNV-1a, 64 bit, over the 8 little-endian bytes of a long, as YCSB's Utils.fnvhash64; the
// result is Math.abs'ed like Java's (which leaves math.MinInt64 negative).
const (
	fnvOffsetBasis64 = int64(-3750763034362895579) // 0xCBF29CE484222325
	fnvPrime64       = int64(1099511628211)
)

// FNVHash64 is YCSB's Utils.fnvhash64 (and Utils.hash).
func FNVHash64(val int64) int64 {
	h := fnvOffsetBasis64
	for range 8 {
		octet := val & 0xff
		val >>= 8 // arithmetic, like Java's >>
		h ^= octet
		h *= fnvPrime64
	}
	return javaAbs(h)
}

func javaAbs(v int64) int64 {
	if v < 0 {
		return -v // -math.MinInt64 overflows back to itself, as Math.abs does
	}
	return v
}

// nextLong is Java's Random.nextLong: any int64.
func nextLong(r *rand.Rand) int64 { return int64(r.Uint64()) }

// Uniform draws from [lb, ub] like YCSB's UniformLongGenerator.
type Uniform struct{ lb, interval int64 }

// NewUniform returns a generator of [lb, ub].
func NewUniform(lb, ub int64) *Uniform { return &Uniform{lb: lb, interval: ub - lb + 1} }

// Next draws a value.
func (u *Uniform) Next(r *rand.Rand) int64 { return javaAbs(nextLong(r))%u.interval + u.lb }

// ZipfianConstant is YCSB's default skew.
const ZipfianConstant = 0.99

// Zipfian is YCSB's ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic
// databases"): item 0 most popular. It grows its zeta incrementally when asked for more items.
type Zipfian struct {
	items, base              int64
	theta, alpha, zeta2theta float64
	mu                       sync.Mutex // guards the fields below when the item count grows
	zetan, eta               float64
	countForZeta             int64
}

// NewZipfian returns a generator of [min, max] with the given skew.
func NewZipfian(min, max int64, constant float64) *Zipfian {
	return newZipfian(min, max, constant, zeta(0, max-min+1, constant, 0))
}

func newZipfian(min, max int64, constant, zetan float64) *Zipfian {
	z := &Zipfian{items: max - min + 1, base: min, theta: constant}
	z.zeta2theta = zeta(0, 2, constant, 0)
	z.alpha = 1 / (1 - constant)
	z.zetan = zetan
	z.countForZeta = z.items
	z.eta = z.etaFor(zetan)
	return z
}

// etaFor keeps YCSB's formula, which uses the initial item count even after growth.
func (z *Zipfian) etaFor(zetan float64) float64 {
	return (1 - math.Pow(2.0/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/zetan)
}

func zeta(start, n int64, theta, initial float64) float64 {
	sum := initial
	for i := start; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// Next draws from the generator's own range.
func (z *Zipfian) Next(r *rand.Rand) int64 { return z.NextFor(r, z.items) }

// NextFor draws from the first itemCount items (YCSB's nextLong(itemcount)); a larger count
// than before extends zeta, a smaller one is used as is (YCSB does not shrink it either).
func (z *Zipfian) NextFor(r *rand.Rand, itemCount int64) int64 {
	z.mu.Lock()
	if itemCount > z.countForZeta {
		z.zetan = zeta(z.countForZeta, itemCount, z.theta, z.zetan)
		z.countForZeta = itemCount
		z.eta = z.etaFor(z.zetan)
	}
	zetan, eta := z.zetan, z.eta
	z.mu.Unlock()

	u := r.Float64()
	uz := u * zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return z.base + 1
	}
	return z.base + int64(float64(itemCount)*math.Pow(eta*u-eta+1, z.alpha))
}

// YCSB's ScrambledZipfianGenerator draws from a zipfian over ten billion items, whose zeta it
// knows in advance, and hashes the result into the key space: popular items are spread over
// the keys instead of clustering at the start.
const (
	scrambledItemCount = 10_000_000_000
	scrambledZetan     = 26.46902820178302
)

// ScrambledZipfian is YCSB's ScrambledZipfianGenerator over [min, max].
type ScrambledZipfian struct {
	min, itemCount int64
	gen            *Zipfian
}

// NewScrambledZipfian returns the generator with YCSB's constant skew.
func NewScrambledZipfian(min, max int64) *ScrambledZipfian {
	return &ScrambledZipfian{min: min, itemCount: max - min + 1,
		gen: newZipfian(0, scrambledItemCount, ZipfianConstant, scrambledZetan)}
}

// Next draws a value.
func (s *ScrambledZipfian) Next(r *rand.Rand) int64 {
	return s.min + FNVHash64(s.gen.Next(r))%s.itemCount
}

// Hotspot is YCSB's HotspotIntegerGenerator: a fraction of operations goes to a fraction of
// the keys at the start of the range.
type Hotspot struct {
	lb, hot, cold int64
	hotOps        float64
}

// NewHotspot returns a generator of [lb, ub] where hotOpnFraction of draws fall into the first
// hotsetFraction of the range. Fractions outside [0, 1] become 0, as in YCSB.
func NewHotspot(lb, ub int64, hotsetFraction, hotOpnFraction float64) *Hotspot {
	if hotsetFraction < 0 || hotsetFraction > 1 {
		hotsetFraction = 0
	}
	if hotOpnFraction < 0 || hotOpnFraction > 1 {
		hotOpnFraction = 0
	}
	if lb > ub {
		lb, ub = ub, lb
	}
	interval := ub - lb + 1
	hot := int64(int32(float64(interval) * hotsetFraction)) // YCSB casts to int
	return &Hotspot{lb: lb, hot: hot, cold: interval - hot, hotOps: hotOpnFraction}
}

// Next draws a value.
func (h *Hotspot) Next(r *rand.Rand) int64 {
	if r.Float64() < h.hotOps {
		return h.lb + javaAbs(nextLong(r))%h.hot
	}
	return h.lb + h.hot + javaAbs(nextLong(r))%h.cold
}

// InsertSequence is YCSB's AcknowledgedCounterGenerator: inserts take the next key number, and
// reads may only choose keys up to the highest number below which every insert completed.
type InsertSequence struct {
	mu      sync.Mutex
	next    int64
	limit   atomic.Int64 // read by every key draw: no lock
	pending map[int64]bool
}

// NewInsertSequence starts at start (the record count: keys below it were loaded).
func NewInsertSequence(start int64) *InsertSequence {
	s := &InsertSequence{next: start, pending: map[int64]bool{}}
	s.limit.Store(start - 1)
	return s
}

// Next returns the key number of the next insert.
func (s *InsertSequence) Next() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.next
	s.next++
	return n
}

// Acknowledge marks an insert complete.
func (s *InsertSequence) Acknowledge(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[n] = true
	limit := s.limit.Load()
	for s.pending[limit+1] {
		delete(s.pending, limit+1)
		limit++
	}
	s.limit.Store(limit)
}

// Limit is the highest key number below which every insert is acknowledged.
func (s *InsertSequence) Limit() int64 { return s.limit.Load() }

// SkewedLatest is YCSB's SkewedLatestGenerator: recently inserted keys are the most popular.
type SkewedLatest struct {
	basis *InsertSequence
	z     *Zipfian
}

// NewSkewedLatest follows the insert sequence.
func NewSkewedLatest(basis *InsertSequence) *SkewedLatest {
	return &SkewedLatest{basis: basis, z: NewZipfian(0, basis.Limit()-1, ZipfianConstant)}
}

// Next draws a value.
func (s *SkewedLatest) Next(r *rand.Rand) int64 {
	max := s.basis.Limit()
	return max - s.z.NextFor(r, max)
}
