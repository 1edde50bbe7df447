package ycsb

import (
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/samples"
)

// reference runs YCSB 0.17.0's own generators (site.ycsb:core from Maven Central) through
// testdata/YcsbReference.java and returns its output lines.
func reference(t *testing.T, args ...string) []string {
	t.Helper()
	jar, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "ycsb-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving YCSB's jar: %v", err)
	}
	cmd := exec.Command("java", append([]string{"-cp", strings.TrimSpace(string(jar)), filepath.Join("testdata", "YcsbReference.java")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("YCSB reference %v: %v\n%s", args, err, out)
	}
	return strings.Fields(string(out))
}

// The key hash is bit for bit YCSB's, negative inputs and overflow included: keys named by
// this package are the keys YCSB would read and write.
func TestFNVHashIsYCSBs(t *testing.T) {
	inputs := []int64{0, 1, 2, 999, 1000, 123456789, 1 << 40, math.MaxInt64, -1, math.MinInt64}
	args := []string{"hash"}
	for _, in := range inputs {
		args = append(args, strconv.FormatInt(in, 10))
	}
	want := reference(t, args...)
	for i, in := range inputs {
		if got := strconv.FormatInt(FNVHash64(in), 10); got != want[i] {
			t.Errorf("FNVHash64(%d) = %s; YCSB says %s", in, got, want[i])
		}
	}
}

// Each generator draws the same distribution as YCSB's: over 1000 items and 300,000 draws,
// the total variation distance between the two histograms stays small, and the most popular
// items are the same ones (which, for the scrambled zipfian, checks the hashing too).
func TestDistributionsMatchYCSB(t *testing.T) {
	const draws = 300_000
	r := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() int64{
		"uniform": func() func() int64 { g := NewUniform(0, 999); return func() int64 { return g.Next(r) } }(),
		"zipfian": func() func() int64 {
			g := NewZipfian(0, 999, ZipfianConstant)
			return func() int64 { return g.Next(r) }
		}(),
		"scrambled": func() func() int64 { g := NewScrambledZipfian(0, 999); return func() int64 { return g.Next(r) } }(),
		"hotspot":   func() func() int64 { g := NewHotspot(0, 999, 0.2, 0.8); return func() int64 { return g.Next(r) } }(),
		"latest": func() func() int64 {
			g := NewSkewedLatest(NewInsertSequence(1000))
			return func() int64 { return g.Next(r) }
		}(),
	}
	for name, next := range gens {
		t.Run(name, func(t *testing.T) {
			want := make([]float64, 1000)
			for i, f := range reference(t, "counts", name, strconv.Itoa(draws)) {
				c, _ := strconv.Atoi(f)
				want[i] = float64(c) / draws
			}
			got := make([]float64, 1000)
			for range draws {
				v := next()
				if v < 0 || v > 999 {
					t.Fatalf("drew %d, outside [0, 999]", v)
				}
				got[v] += 1.0 / draws
			}
			tvd := 0.0
			for i := range got {
				tvd += math.Abs(got[i]-want[i]) / 2
			}
			// Two samples of 300k draws over 1000 items differ by about 0.03 even from one
			// distribution; a wrong skew or range moves this far beyond.
			t.Logf("total variation distance to YCSB: %.4f", tvd)
			if tvd > 0.05 {
				t.Errorf("total variation distance to YCSB's histogram %.3f; want ≤ 0.05", tvd)
			}
			// YCSB draws from an unseeded generator, so its sample changes from run to run, and
			// the scrambled zipfian folds several ranks onto one item, so the tenth and eleventh
			// items can be nearly tied. Each side's ten most popular items must be among the
			// other's twelve: a wrong skew or hash moves them much further.
			if name != "uniform" && name != "hotspot" {
				if g, w := top(got, 10), top(want, 12); !holdsAll(w, g) {
					t.Errorf("our ten most popular items %v are not all among YCSB's twelve %v", g, w)
				}
				if g, w := top(got, 12), top(want, 10); !holdsAll(g, w) {
					t.Errorf("YCSB's ten most popular items %v are not all among our twelve %v", w, g)
				}
			}
		})
	}
}

func top(freq []float64, n int) []int {
	idx := make([]int, len(freq))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return freq[idx[a]] > freq[idx[b]] })
	return idx[:n]
}

// holdsAll: every item of b is in a.
func holdsAll(a, b []int) bool {
	seen := map[int]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

// An insert sequence only lets readers see keys below which every insert completed, as
// YCSB's AcknowledgedCounterGenerator.
func TestInsertSequenceLimitWaitsForGaps(t *testing.T) {
	s := NewInsertSequence(1000)
	a, b, c := s.Next(), s.Next(), s.Next()
	if a != 1000 || b != 1001 || c != 1002 || s.Limit() != 999 {
		t.Fatalf("keys %d %d %d, limit %d", a, b, c, s.Limit())
	}
	s.Acknowledge(b)
	if s.Limit() != 999 {
		t.Errorf("limit %d after acknowledging 1001 only; 1000 is still in flight", s.Limit())
	}
	s.Acknowledge(a)
	s.Acknowledge(c)
	if s.Limit() != 1002 {
		t.Errorf("limit %d after all three; want 1002", s.Limit())
	}
}

func BenchmarkScrambledZipfian(b *testing.B) {
	g := NewScrambledZipfian(0, 999_999)
	r := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		g.Next(r)
	}
}
