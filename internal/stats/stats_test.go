package stats

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// reference.json holds values computed offline with SciPy and brute-force enumeration by
// testdata/reference.py.
type reference struct {
	Level  float64 `json:"level"`
	Median []struct {
		Name   string    `json:"name"`
		X      []float64 `json:"x"`
		Median float64   `json:"median"`
		CI     *Interval `json:"ci"`
	} `json:"median"`
	MannWhitney []struct {
		Name  string    `json:"name"`
		X     []float64 `json:"x"`
		Y     []float64 `json:"y"`
		U     float64   `json:"u"`
		P     float64   `json:"p"`
		Exact bool      `json:"exact"`
	} `json:"mannWhitney"`
	HodgesLehmann []struct {
		Name     string    `json:"name"`
		X        []float64 `json:"x"`
		Y        []float64 `json:"y"`
		Estimate float64   `json:"estimate"`
		CI       *Interval `json:"ci"`
	} `json:"hodgesLehmann"`
	SignedRank []struct {
		Name  string    `json:"name"`
		D     []float64 `json:"d"`
		WPlus float64   `json:"wPlus"`
		P     float64   `json:"p"`
		Exact bool      `json:"exact"`
	} `json:"signedRank"`
	PairedShift []struct {
		Name     string    `json:"name"`
		D        []float64 `json:"d"`
		Estimate float64   `json:"estimate"`
		CI       *Interval `json:"ci"`
	} `json:"pairedShift"`
}

func load(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if ref.Level != Level {
		t.Fatalf("reference computed at level %v, the package reports %v", ref.Level, Level)
	}
	return ref
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func sameInterval(got Interval, ok bool, want *Interval) bool {
	if want == nil {
		return !ok
	}
	return ok && near(got.Low, want.Low) && near(got.High, want.High) && near(got.Level, want.Level)
}

func TestMedianAndItsIntervalMatchReference(t *testing.T) {
	for _, c := range load(t).Median {
		if got := Median(c.X); !near(got, c.Median) {
			t.Errorf("%s: median %v, reference %v", c.Name, got, c.Median)
		}
		if got, ok := MedianCI(c.X, Level); !sameInterval(got, ok, c.CI) {
			t.Errorf("%s: interval %+v (ok %v), reference %+v", c.Name, got, ok, c.CI)
		}
	}
}

func TestMannWhitneyMatchesSciPy(t *testing.T) {
	for _, c := range load(t).MannWhitney {
		got := MannWhitney(c.X, c.Y)
		if !near(got.Statistic, c.U) && !near(float64(len(c.X)*len(c.Y))-got.Statistic, c.U) {
			t.Errorf("%s: U %v, SciPy %v", c.Name, got.Statistic, c.U)
		}
		if math.Abs(got.P-c.P) > 1e-9 || got.Exact != c.Exact {
			t.Errorf("%s: p %v (exact %v), SciPy %v (exact %v)", c.Name, got.P, got.Exact, c.P, c.Exact)
		}
	}
}

func TestHodgesLehmannMatchesEnumeration(t *testing.T) {
	for _, c := range load(t).HodgesLehmann {
		got := HodgesLehmann(c.X, c.Y, Level)
		if !near(got.Estimate, c.Estimate) {
			t.Errorf("%s: estimate %v, reference %v", c.Name, got.Estimate, c.Estimate)
		}
		if !sameInterval(got.CI, got.HasCI, c.CI) {
			t.Errorf("%s: interval %+v (ok %v), reference %+v", c.Name, got.CI, got.HasCI, c.CI)
		}
	}
}

func TestSignedRankMatchesSciPy(t *testing.T) {
	ref := load(t).SignedRank
	if len(ref) == 0 {
		t.Fatal("no signed-rank reference values")
	}
	for _, c := range ref {
		got := SignedRank(c.D)
		if !near(got.Statistic, c.WPlus) {
			t.Errorf("%s: W+ %v, reference %v", c.Name, got.Statistic, c.WPlus)
		}
		if !near(got.P, c.P) || got.Exact != c.Exact {
			t.Errorf("%s: p %v (exact %v), SciPy %v (exact %v)", c.Name, got.P, got.Exact, c.P, c.Exact)
		}
	}
}

func TestPairedShiftMatchesEnumeration(t *testing.T) {
	ref := load(t).PairedShift
	if len(ref) == 0 {
		t.Fatal("no paired-shift reference values")
	}
	for _, c := range ref {
		got := PairedShift(c.D, Level)
		if !near(got.Estimate, c.Estimate) {
			t.Errorf("%s: estimate %v, reference %v", c.Name, got.Estimate, c.Estimate)
		}
		if !sameInterval(got.CI, got.HasCI, c.CI) {
			t.Errorf("%s: interval %+v (ok %v), reference %+v", c.Name, got.CI, got.HasCI, c.CI)
		}
	}
}

// Throughput that drifts fourfold over six rounds, each round's cell run 10% (±1%) below the
// baseline's: the unpaired comparison drowns in the drift, the paired one sees the 10% with an
// interval of about a point.
func TestPairingCancelsDrift(t *testing.T) {
	base := []float64{1500, 2400, 3100, 4000, 4800, 6000}
	noise := []float64{1.01, 0.99, 1.005, 0.995, 1.0, 1.008}
	cell := make([]float64, len(base))
	for i := range base {
		cell[i] = base[i] * 0.9 * noise[i]
	}
	unpaired := Compare(base, cell)
	if unpaired.Significant || unpaired.CI.High-unpaired.CI.Low < 0.5 {
		t.Errorf("unpaired under fourfold drift should be inconclusive and wide: %+v", unpaired)
	}
	paired := ComparePaired(base, cell)
	if !paired.Paired || paired.Pairs != 6 || !paired.Significant || !paired.Meaningful || !near(paired.Test.P, 0.03125) {
		t.Errorf("paired: %+v", paired)
	}
	if math.Abs(paired.Overhead-0.1) > 0.005 || !paired.HasCI || paired.CI.Low < 0.08 || paired.CI.High > 0.12 {
		t.Errorf("paired overhead %.4f, interval %+v: want about 10%% within 8..12%%", paired.Overhead, paired.CI)
	}
}

// Six pairs, one of them an outlier: the exact interval runs from the smallest to the largest
// pair ratio, far from centred on the estimate. The precision target bounds half its width, not
// its reach on the outlier's side.
func TestHalfWidthIsHalfTheInterval(t *testing.T) {
	base := []float64{1000, 1000, 1000, 1000, 1000, 1000}
	cell := []float64{800, 805, 795, 800, 802, 700}
	c := ComparePaired(base, cell)
	if !c.HasCI || c.CI.High-c.Overhead <= c.Overhead-c.CI.Low {
		t.Fatalf("want an interval reaching further on the outlier's side: %+v", c)
	}
	if want := (c.CI.High - c.CI.Low) / 2; !near(c.HalfWidth(), want) {
		t.Errorf("half-width %.4f, want %.4f for the interval %+v", c.HalfWidth(), want, c.CI)
	}
}

// Four repetitions 20% slower than the baseline: the overhead, its interval and the test
// agree, and the cost matches the papers' arithmetic.
func TestCompareReadsAsOverhead(t *testing.T) {
	base := []float64{1000, 1010, 990, 1005}
	cell := []float64{800, 808, 792, 804}
	c := Compare(base, cell)
	if math.Abs(c.Overhead-0.2) > 0.005 {
		t.Errorf("overhead %.4f, want about 0.20", c.Overhead)
	}
	if !c.HasCI || c.CI.Low > c.Overhead || c.CI.High < c.Overhead || c.CI.Low <= 0 {
		t.Errorf("interval %+v should hold the estimate and exclude zero", c.CI)
	}
	if !c.Significant || !c.Meaningful || !near(c.Test.P, 2.0/70) {
		t.Errorf("4 vs 4 fully separated: p %v significant %v meaningful %v", c.Test.P, c.Significant, c.Meaningful)
	}
	same := Compare(base, []float64{1003, 995, 1008, 999})
	if same.Significant || same.Meaningful {
		t.Errorf("interleaved samples reported as different: %+v", same)
	}
	small := Compare(base[:3], cell[:3])
	if small.HasCI || small.Significant {
		t.Errorf("3 vs 3 cannot reach 95%%: %+v", small)
	}
	if got := ExtraNodes(0.47); math.Abs(got-0.8868) > 0.001 {
		t.Errorf("extra nodes for a 47%% loss: %v, want +88.7%%", got)
	}
	if !math.IsInf(ExtraNodes(1), 1) {
		t.Error("a total loss needs infinitely many nodes")
	}
}

func TestParetoFrontier(t *testing.T) {
	got := ParetoFrontier([]Point{
		{Name: "plaintext", Rank: 0, Throughput: 1000},
		{Name: "tls12-cbc", Rank: 40, Throughput: 700},
		{Name: "tls13-gcm", Rank: 100, Throughput: 800},
		{Name: "tls13-chacha", Rank: 100, Throughput: 750},
		{Name: "openvpn", Rank: 60, Throughput: 300},
	})
	want := []string{"plaintext", "tls13-gcm"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("frontier %v, want %v", got, want)
	}
}

// A report says "no difference found" exactly when the interval holds zero, and gives no
// interval where the rounds are too few for one.
func TestSummarySaysWhenNoDifferenceWasFound(t *testing.T) {
	base := []float64{100, 102, 98, 101, 99, 100}
	for _, tc := range []struct {
		name string
		cell []float64
		want string
	}{
		{"slower every round", []float64{80, 81, 79, 80, 80, 79}, "20.1% [19.2, 21.0], p 0.031"},
		{"as fast", []float64{101, 101, 97, 100, 100, 101}, ": no difference found"},
	} {
		if got := ComparePaired(base, tc.cell).Summary(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want it to hold %q", tc.name, got, tc.want)
		}
	}
	if got := ComparePaired(base[:2], []float64{80, 81}).Summary(); got != "20.3% (too few rounds for an interval)" {
		t.Errorf("two rounds: %q", got)
	}
	if got := ComparePaired(base, []float64{80, 81, 79, 80, 80, 79}).Summary(); strings.Contains(got, "no difference") {
		t.Errorf("a clear overhead: %q", got)
	}
}
