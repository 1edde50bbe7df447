package study

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/benchrun"
	"secured.dev/operator/internal/test/golden"
)

var profiles = map[string]Profile{
	"plaintext":       {Rank: 0},
	"tls12-aes128cbc": {Rank: 70, Presets: []v1alpha1.CompliancePreset{v1alpha1.PresetNIST}},
	"tls13-aes128gcm": {Rank: 110, Presets: []v1alpha1.CompliancePreset{v1alpha1.PresetNIST, v1alpha1.PresetBSI}},
	"tls13-aes256gcm": {Rank: 120, Presets: []v1alpha1.CompliancePreset{v1alpha1.PresetNIST, v1alpha1.PresetBSI}},
	"openvpn":         {Rank: 40},
}

func spec() *v1alpha1.TradeoffStudySpec {
	return &v1alpha1.TradeoffStudySpec{
		Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
		Matrix: v1alpha1.StudyMatrix{
			Profiles:     []string{"plaintext", "tls12-aes128cbc", "tls13-aes128gcm", "tls13-aes256gcm", "openvpn"},
			Baseline:     "plaintext",
			Acceleration: []v1alpha1.Acceleration{v1alpha1.AccelerationAvailable, v1alpha1.AccelerationEmulatedOff},
		},
		Constraints: &v1alpha1.StudyConstraints{Compliance: []v1alpha1.CompliancePreset{v1alpha1.PresetNIST}},
		Workload:    v1alpha1.Workload{Preset: "A"},
		Repetitions: ptr.To[int32](6),
		Decision:    v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](15)},
		Cost:        &v1alpha1.StudyCost{PricePerNodeHour: resource.MustParse("0.192")},
	}
}

func TestCellsPruneByConstraintsButKeepTheBaseline(t *testing.T) {
	cells := Cells("s", spec(), profiles)
	if len(cells) != 10 {
		t.Fatalf("%d cells, want 5 profiles × 2 accelerations × 1 size", len(cells))
	}
	byName := map[string]v1alpha1.StudyCell{}
	for _, c := range cells {
		byName[c.Name] = c
	}
	if c := byName["plaintext-on-3"]; c.State != v1alpha1.CellPending || c.Datastore != "s-c0" {
		t.Errorf("baseline pruned or misnamed: %+v", c)
	}
	if c := byName["openvpn-off-3"]; c.State != v1alpha1.CellPruned || c.Reason != "does not satisfy compliance preset NIST-SP-800-52r2" || c.Datastore != "" {
		t.Errorf("openvpn not pruned with its reason: %+v", c)
	}
	s := spec()
	s.Constraints.MinimumRank = ptr.To[int32](100)
	if c := Cells("s", s, profiles)[1]; c.State != v1alpha1.CellPruned || c.Reason != "rank 70 is below constraints.minimumRank 100" {
		t.Errorf("rank constraint: %+v", c)
	}
}

func TestScheduleInterleavesRandomlyAndRepeatably(t *testing.T) {
	cells := Cells("s", spec(), profiles)
	sched := Schedule(cells, 5, 1, false, 42)
	if len(sched) != 8*5 {
		t.Fatalf("%d entries, want 8 cells × 5", len(sched))
	}
	var active []string
	for _, c := range cells {
		if c.State != v1alpha1.CellPruned {
			active = append(active, c.Name)
		}
	}
	slices.Sort(active)
	orders := map[string]bool{}
	for r := range 5 {
		round := slices.Clone(sched[r*8 : (r+1)*8])
		orders[strings.Join(round, ",")] = true
		slices.Sort(round)
		if !slices.Equal(round, active) {
			t.Errorf("round %d is not a permutation of the cells: %v", r, sched[r*8:(r+1)*8])
		}
	}
	if len(orders) < 4 {
		t.Errorf("rounds repeat the same order: %v", sched)
	}
	if !slices.Equal(sched, Schedule(cells, 5, 1, false, 42)) {
		t.Error("the same seed gave another order")
	}
	if slices.Equal(sched, Schedule(cells, 5, 1, false, 43)) {
		t.Error("another seed gave the same order")
	}
	if got := Repetition(sched, len(sched)-1); got != 4 {
		t.Errorf("last entry is repetition %d of its cell, want 4", got)
	}
}

// measured fills every active cell with six rounds of repetitions around a throughput.
func measured(t *testing.T) []v1alpha1.StudyCell {
	t.Helper()
	centre := map[string]int64{
		"plaintext-on-3": 20000, "tls12-aes128cbc-on-3": 15000, "tls13-aes128gcm-on-3": 17600, "tls13-aes256gcm-on-3": 16400,
		"plaintext-off-3": 19800, "tls12-aes128cbc-off-3": 9000, "tls13-aes128gcm-off-3": 8000, "tls13-aes256gcm-off-3": 7000,
	}
	jitter := []int64{0, 150, -120, 60, -40, 90}
	cells := Cells("s", spec(), profiles)
	for i := range cells {
		c := &cells[i]
		if c.State == v1alpha1.CellPruned {
			continue
		}
		c.State = v1alpha1.CellDone
		for k, j := range jitter {
			c.Runs = append(c.Runs, v1alpha1.StudyRun{Benchmark: BenchmarkName(c, k), Round: int32(k + 1), ThroughputOpsPerSec: centre[c.Name] + j,
				P99Micros: 2000 + j, ClientCPUMicrosPerOp: strconv.Itoa(40 + k)})
		}
	}
	return cells
}

func TestAnalysisRecommendsWithinBudgetAndPricesIt(t *testing.T) {
	a := Analyze("s", spec(), 42, measured(t))
	rec := a.Recommendation
	if rec == nil || rec.Profile != "tls13-aes128gcm" {
		t.Fatalf("recommendation %+v, want tls13-aes128gcm (12%% overhead, within 15%%; aes256 costs 18%%)", rec)
	}
	if !strings.Contains(rec.Reason, "tls13-aes256gcm ranks higher but overhead 18.0% (95% CI 17.9..18.1%) exceeds the 15.0% budget") {
		t.Errorf("reason does not say why the stronger profile lost: %s", rec.Reason)
	}
	if rec.ExtraNodesPercent != "13.6" || rec.ExtraCostPerHour != "0.08" {
		t.Errorf("cost %s%% / %s per hour, want 13.6%% of 3 nodes at 0.192", rec.ExtraNodesPercent, rec.ExtraCostPerHour)
	}
	c := a.Cells[slices.IndexFunc(a.Cells, func(c v1alpha1.StudyCell) bool { return c.Name == "tls13-aes128gcm-on-3" })]
	// Six rounds, each 12% below the baseline's run of the same round: the paired test's
	// smallest p-value, 2/64.
	if c.MedianThroughputOpsPerSec != 17630 || c.OverheadPercent != "12.0" || c.OverheadCI95 != "11.9..12.1" || c.PValue != "0.0312" || !*c.Significant || !*c.Meaningful || c.RunsDone != 6 {
		t.Errorf("cell statistics: %+v", c)
	}
	if c.ThroughputCI95 != "17480..17750" {
		t.Errorf("6 runs give a 95%% median interval from the extremes, got %s", c.ThroughputCI95)
	}
	if cmp := comparisonOf(a.Report.Cells, c.Name); cmp == nil || !cmp.Paired || cmp.Pairs != 6 {
		t.Errorf("the comparison should pair the six rounds: %+v", cmp)
	}
	if !slices.Equal(a.ParetoFrontier, []string{"plaintext-on-3", "tls13-aes128gcm-on-3", "tls13-aes256gcm-on-3", "plaintext-off-3", "tls12-aes128cbc-off-3", "tls13-aes128gcm-off-3", "tls13-aes256gcm-off-3"}) {
		t.Errorf("frontier %v", a.ParetoFrontier)
	}

	s := spec()
	s.Decision = v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveBestThroughputAboveRank}
	s.Constraints.MinimumRank = ptr.To[int32](100)
	if got := Analyze("s", s, 42, measured(t)).Recommendation; got == nil || got.Profile != "tls13-aes128gcm" {
		t.Errorf("fastest at rank ≥ 100: %+v", got)
	}
	s.Decision.PreferenceOrder = []string{"tls12-aes128cbc", "tls13-aes256gcm"}
	s.Decision.Objective, s.Decision.OverheadBudgetPercent = v1alpha1.ObjectiveHighestRankWithinBudget, ptr.To[int32](30)
	if got := Analyze("s", s, 42, measured(t)).Recommendation; got == nil || got.Profile != "tls12-aes128cbc" {
		t.Errorf("preference order ignored: %+v", got)
	}
}

// A failed cell keeps its profile from the recommendation; nothing within budget leaves none.
func TestAnalysisWithoutAnEligibleProfile(t *testing.T) {
	cells := measured(t)
	for i := range cells {
		if cells[i].Name == "tls13-aes128gcm-on-3" {
			cells[i].State, cells[i].Reason, cells[i].Runs = v1alpha1.CellFailed, "EncryptionVerified=False CipherSuiteDrift: also accepts TLS_AES_256_GCM_SHA384", nil
		}
	}
	s := spec()
	s.Decision.OverheadBudgetPercent = ptr.To[int32](5)
	a := Analyze("s", s, 42, cells)
	if a.Recommendation == nil || a.Recommendation.Profile != "plaintext" || a.Recommendation.ExtraNodesPercent != "" {
		t.Errorf("with a 5%% budget only the baseline qualifies: %+v", a.Recommendation)
	}
	i := slices.IndexFunc(a.Report.Candidates, func(c Candidate) bool { return c.Profile == "tls13-aes128gcm" })
	if i < 0 || !strings.HasPrefix(a.Report.Candidates[i].Why, "cell tls13-aes128gcm-on-3 failed: EncryptionVerified=False") {
		t.Errorf("failed cell not explained: %+v", a.Report.Candidates)
	}
}

func TestReportGolden(t *testing.T) {
	a := Analyze("s", spec(), 42, measured(t))
	a.Report.WallTime = "14m30s" // what the controller sets when the study concludes
	js, err := a.Report.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.json", js)
	golden.Check(t, "report.md", []byte(a.Report.Markdown()))
	golden.Check(t, "report.txt", []byte(a.Report.Text()))
	back, err := ParseReport(js)
	if err != nil || back.Text() != a.Report.Text() {
		t.Errorf("report.json does not round-trip (%v)", err)
	}
}

// A recommended profile measured faster than the baseline, within noise: no extra node, and
// the reason says the difference is not significant.
func TestRecommendationFasterThanBaselineWithinNoise(t *testing.T) {
	cells := measured(t)
	setRuns(cells, "tls13-aes256gcm-on-3", 20100, 19900, 20200, 19950, 20050, 20150)
	rec := Analyze("s", spec(), 42, cells).Recommendation
	if rec == nil || rec.Profile != "tls13-aes256gcm" || rec.ExtraNodesPercent != "0.0" || rec.ExtraCostPerHour != "0.00" {
		t.Fatalf("recommendation %+v, want tls13-aes256gcm at no extra cost", rec)
	}
	if !strings.Contains(rec.Reason, "a difference from plaintext these repetitions cannot tell from noise (p = ") {
		t.Errorf("reason hides that the difference is noise: %s", rec.Reason)
	}
	if !strings.HasPrefix(rec.Reason, "tls13-aes256gcm (rank 120) was no slower than plaintext in any cell with hardware AES (highest overhead -") || strings.Contains(rec.Reason, "costs -") {
		t.Errorf("reason prices a faster profile as a cost: %s", rec.Reason)
	}
}

// A stronger profile whose overhead interval straddles the budget is neither recommended nor
// rejected on its point estimate: the sentence says the data cannot decide and what more
// rounds would cost; so it does when the rounds are too few for an interval at all.
func TestStraddlingIntervalIsInconclusive(t *testing.T) {
	cells := measured(t)
	// Against plaintext's 20000, 20150, 19880, 20060, 19960, 20090: 6..20% below, about 12%.
	setRuns(cells, "tls13-aes256gcm-on-3", 18800, 16100, 18300, 16500, 18600, 17000)
	a := Analyze("s", spec(), 42, cells)
	rec := a.Recommendation
	if rec == nil || rec.Profile != "tls13-aes128gcm" {
		t.Fatalf("recommendation %+v, want the conclusive tls13-aes128gcm", rec)
	}
	want := regexp.MustCompile(`; tls13-aes256gcm ranks higher but is inconclusive: the overhead's 95% interval ([0-9.]+)\.\.([0-9.]+)% \(cell tls13-aes256gcm-on-3\) straddles the 15\.0% budget, and about ([0-9]+) more rounds would settle it \(at least ([0-9hm]+)0s\)\.$`)
	m := want.FindStringSubmatch(rec.Reason)
	if m == nil {
		t.Fatalf("reason does not say the stronger profile is inconclusive and what would settle it: %s", rec.Reason)
	}
	if low, high := parse(t, m[1]), parse(t, m[2]); low >= 15 || high <= 15 {
		t.Errorf("interval %s..%s does not straddle the budget", m[1], m[2])
	}
	i := slices.IndexFunc(a.Report.Candidates, func(c Candidate) bool { return c.Profile == "tls13-aes256gcm" })
	if c := a.Report.Candidates[i]; !c.Inconclusive || c.Eligible {
		t.Errorf("candidate %+v should be inconclusive and not eligible", c)
	}

	// An estimate a few tenths of a point from the budget: the rounds that would settle it are
	// named as impractical rather than proposed.
	setRuns(cells, "tls13-aes256gcm-on-3", 17500, 16300, 17200, 16900, 17400, 16500)
	rec = Analyze("s", spec(), 42, cells).Recommendation
	if !strings.HasSuffix(rec.Reason, "straddles the 15.0% budget, and its estimate is 0.4 points from the budget: no practical number of rounds would settle it (about 436 more, at least 87h12m0s).") {
		t.Errorf("an estimate on the budget: %s", rec.Reason)
	}

	setRuns(cells, "tls13-aes256gcm-on-3", 16400, 16550, 16280)
	rec = Analyze("s", spec(), 42, cells).Recommendation
	if !strings.HasSuffix(rec.Reason, "; tls13-aes256gcm ranks higher but is inconclusive: cell tls13-aes256gcm-on-3 has 3 rounds, too few for a 95% interval, and about 3 more rounds would settle it (at least 36m0s).") {
		t.Errorf("three rounds: %s", rec.Reason)
	}
}

// setRuns replaces a cell's runs with one per round.
func setRuns(cells []v1alpha1.StudyCell, name string, throughputs ...int64) {
	i := slices.IndexFunc(cells, func(c v1alpha1.StudyCell) bool { return c.Name == name })
	cells[i].Runs = nil
	for k, v := range throughputs {
		cells[i].Runs = append(cells[i].Runs, v1alpha1.StudyRun{Benchmark: BenchmarkName(&cells[i], k), Round: int32(k + 1), ThroughputOpsPerSec: v, P99Micros: 2000})
	}
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The stopping rule: a cell less precise than the target asks for another round, of itself
// and its baseline only, until the study's runs reach maxRounds rounds' worth; the report says
// whether the target was reached, who missed it and who stopped early. Added rounds extend
// the seeded schedule without reordering what already ran.
func TestPrecisionAddsRoundsUntilTargetOrMaximum(t *testing.T) {
	s := spec()
	s.Precision = &v1alpha1.StudyPrecision{HalfWidthPercent: 3, MaxRounds: 8}
	cells := measured(t)
	schedule := Schedule(cells, 6, 1, false, 42)
	if block, why := Extend(Analyze("s", s, 42, cells), s, cells, schedule, 6, 42, 0); block != nil {
		t.Errorf("every interval has a half-width within a point, yet a round was added: %s %v", why, block)
	}
	if got := Analyze("s", s, 42, cells).Report.Markdown(); !strings.Contains(got, "Precision (every overhead's 95% interval with a half-width of at most 3.0 points, at most 8 rounds' runs): reached after 6 rounds.") {
		t.Errorf("report does not say the target was reached:\n%s", got)
	}
	// Without the baselines' runs (a study cancelled before they ran) nothing is compared, and
	// nothing reaches the target.
	none := measured(t)
	for i := range none {
		if none[i].Profile == "plaintext" {
			none[i].Runs = nil
		}
	}
	if got := Analyze("s", s, 42, none).Report.Text(); !strings.Contains(got, "): nothing compared with the baseline after 6 rounds, so no interval to judge.") {
		t.Errorf("report claims a precision with nothing compared:\n%s", got)
	}

	setRuns(cells, "tls13-aes256gcm-on-3", 18400, 16100, 17300, 16500, 17600, 17000) // 8.0..20.1%
	a := Analyze("s", s, 42, cells)
	if got := a.Report.Text(); !strings.Contains(got, "not reached after 6 rounds by tls13-aes256gcm-on-3 (8.0..20.1%).") {
		t.Errorf("text report does not name the imprecise cell:\n%s", got)
	}
	// A cell that failed short of the target is waited for no longer, and the sentence says
	// that its overhead is not precise all the same.
	failed := slices.Clone(cells)
	for i := range failed {
		if failed[i].Name == "tls13-aes256gcm-on-3" {
			failed[i].State = v1alpha1.CellFailed
		}
	}
	if got := Analyze("s", s, 42, failed).Report.Text(); !strings.Contains(got, "reached after 6 rounds by the cells still measured; not by tls13-aes256gcm-on-3 (8.0..20.1%), failed before it got there.") {
		t.Errorf("text report hides the failed imprecise cell:\n%s", got)
	}
	if !strings.Contains(a.Report.Method, "A round added by spec.precision measures only the cells whose interval is still wider") {
		t.Errorf("the method does not say which cells an added round measures:\n%s", a.Report.Method)
	}
	block, why := Extend(a, s, cells, schedule, 6, 42, 0)
	round7 := Schedule(cells, 7, 1, false, 42)
	if !slices.Equal(round7[:len(schedule)], schedule) || len(round7) != len(schedule)+8 {
		t.Errorf("an added round must leave the rounds that ran as they were:\n%v\n%v", schedule, round7)
	}
	want := slices.DeleteFunc(slices.Clone(round7[len(schedule):]), func(c string) bool { return c != "plaintext-on-3" && c != "tls13-aes256gcm-on-3" })
	if !slices.Equal(block, want) || why != "round 7 for plaintext-on-3 and tls13-aes256gcm-on-3 only, runs 50 of at most 64 (8 rounds of 8 cells): "+
		"the overhead intervals of tls13-aes256gcm-on-3 (8.0..20.1%) have a half-width above 3.0 points" {
		t.Errorf("round 7 measures %v (want %v, the imprecise cell and its baseline in round 7's order): %s", block, want, why)
	}
	// The budget: 64 runs hold seven more rounds of that pair, not eight.
	for round := 7; round <= 13; round++ {
		schedule = append(schedule, block...)
	}
	if block, why := Extend(a, s, cells, schedule, 13, 42, 0); len(block) != 2 || !strings.HasPrefix(why, "round 14 for plaintext-on-3 and tls13-aes256gcm-on-3 only, runs 64 of at most 64 ") {
		t.Errorf("round 14: %v %s", block, why)
	}
	if block, why := Extend(a, s, cells, append(slices.Clone(schedule), block...), 14, 42, 0); block != nil ||
		!strings.HasPrefix(why, "round 15 not added: its 2 runs would bring the study to 66, past spec.precision.maxRounds 8 (64 runs: 8 rounds of 8 cells), although the overhead intervals of ") {
		t.Errorf("a round beyond maxRounds rounds' runs: %v %s", block, why)
	}
	// A cell left out of a round is never measured again: its k-th run would not be round k+1.
	setRuns(cells, "tls12-aes128cbc-on-3", 15300, 14100, 15500, 14200, 15400, 14000)
	if block, _ := Extend(Analyze("s", s, 42, cells), s, cells, schedule, 13, 42, 0); slices.Contains(block, "tls12-aes128cbc-on-3") || len(block) != 2 {
		t.Errorf("a cell that missed rounds 7 to 13 came back: %v", block)
	}
	setRuns(cells, "tls12-aes128cbc-on-3", 15000, 15150, 14880, 15060, 14960, 15090)

	// The report names the cells that stopped before the study's last round.
	setRuns(cells, "tls13-aes256gcm-on-3", 16400, 16550, 16280, 16460, 16360, 16490, 16420, 16380)
	setRuns(cells, "plaintext-on-3", 20000, 20150, 19880, 20060, 19960, 20090, 20010, 19970)
	if got := Analyze("s", s, 42, cells).Report.Text(); !strings.Contains(got, "reached after 8 rounds (tls12-aes128cbc-on-3 after 6, ") ||
		!strings.Contains(got, "; later rounds measured only the cells still short of the target, with their baselines).") {
		t.Errorf("report does not say which cells stopped early:\n%s", got)
	}

	// A Switched study adds every cell, two rounds at a time, and none where they would pass
	// the maximum.
	sw := spec()
	sw.Datastores, sw.Precision = v1alpha1.DatastoresSwitched, s.Precision
	cells = measured(t)
	setRuns(cells, "tls13-aes256gcm-on-3", 18400, 16100, 17300, 16500, 17600, 17000)
	a = Analyze("s", sw, 42, cells)
	six := Schedule(cells, 6, 2, false, 42)
	if block, why := Extend(a, sw, cells, six, 6, 42, 0); len(block) != 16 || !strings.HasPrefix(why, "rounds 7 to 8 of at most 8: ") {
		t.Errorf("Switched: %d runs added: %s", len(block), why)
	}
	if strings.Contains(a.Report.Method, "A round added by spec.precision") {
		t.Errorf("a Switched study's method claims rounds of some cells only:\n%s", a.Report.Method)
	}
	if block, why := Extend(a, sw, cells, Schedule(cells, 7, 2, false, 42), 7, 42, 0); block != nil || !strings.HasPrefix(why, "rounds 8 to 9 not added: ") {
		t.Errorf("a pair of rounds beyond maxRounds: %v %s", block, why)
	}
	if block, _ := Extend(Analyze("s", spec(), 42, cells), spec(), cells, six, 6, 42, 0); block != nil {
		t.Error("a study without spec.precision added a round")
	}
}

// spec.precision.maxDuration: a round is added only if, at the pace of the study's last runs,
// it ends within the time budget; when it would not, Extend says why, with the time the round
// would take, and the report's precision sentence names the budget.
func TestPrecisionRoundsFitTheTimeBudget(t *testing.T) {
	s := spec()
	s.Precision = &v1alpha1.StudyPrecision{HalfWidthPercent: 3, MaxRounds: 8, MaxDuration: &metav1.Duration{Duration: 10 * time.Minute}}
	cells := measured(t)
	setRuns(cells, "tls13-aes256gcm-on-3", 18400, 16100, 17300, 16500, 17600, 17000) // 8.0..20.1%
	schedule := Schedule(cells, 6, 1, false, 42)
	if _, known := pace(cells, 2); known {
		t.Fatal("a pace from runs that recorded no window")
	}
	// Without a pace only the time already spent counts.
	if block, why := Extend(Analyze("s", s, 42, cells), s, cells, schedule, 6, 42, 9*time.Minute); len(block) != 2 {
		t.Errorf("a round refused with a minute left and no pace known: %s", why)
	}
	if block, why := Extend(Analyze("s", s, 42, cells), s, cells, schedule, 6, 42, 10*time.Minute+time.Second); block != nil ||
		why != "round 7 not added: its 2 runs would end 10m1s after the study's creation, past spec.precision.maxDuration 10m0s, although "+
			"the overhead intervals of tls13-aes256gcm-on-3 (8.0..20.1%) have a half-width above 3.0 points" {
		t.Errorf("past the budget: %v %q", block, why)
	}

	// A run every 15 s in the schedule's order: two more take 30 s.
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	seen := map[string]int{}
	for i, name := range schedule {
		c := &cells[slices.IndexFunc(cells, func(c v1alpha1.StudyCell) bool { return c.Name == name })]
		c.Runs[seen[name]].Start = &metav1.Time{Time: t0.Add(time.Duration(i) * 15 * time.Second)}
		seen[name]++
	}
	if got, known := pace(cells, 2); !known || got != 30*time.Second {
		t.Errorf("pace of 2 runs: %s %t, want 30s", got, known)
	}
	if got, _ := pace(cells, 96); got != 24*time.Minute {
		t.Errorf("pace of more runs than ran: %s, want 96 × 15s scaled from the 47 intervals that ran", got)
	}
	a := Analyze("s", s, 42, cells)
	if block, why := Extend(a, s, cells, schedule, 6, 42, 9*time.Minute+30*time.Second); len(block) != 2 {
		t.Errorf("a round that ends on the budget was refused: %s", why)
	}
	if block, why := Extend(a, s, cells, schedule, 6, 42, 9*time.Minute+31*time.Second); block != nil ||
		!strings.HasPrefix(why, "round 7 not added: its 2 runs would take about 30s (the study's last 2 runs took that long) and would end 10m1s after the study's creation, past spec.precision.maxDuration 10m0s, although the overhead intervals of tls13-aes256gcm-on-3") {
		t.Errorf("a round that ends after the budget: %v %q", block, why)
	}
	// A run set aside took its time as well: it comes a minute after the last counted one.
	c := &cells[slices.IndexFunc(cells, func(c v1alpha1.StudyCell) bool { return c.Name == "plaintext-off-3" })]
	c.SetAside = append(c.SetAside, v1alpha1.StudyRun{Round: 6, Start: &metav1.Time{Time: t0.Add(47*15*time.Second + time.Minute)}})
	if got, _ := pace(cells, 2); got != 75*time.Second {
		t.Errorf("pace with a run set aside: %s, want 75s", got)
	}
	if got := a.Report.Text(); !strings.Contains(got, "Precision (every overhead's 95% interval with a half-width of at most 3.0 points, at most 8 rounds' runs and 10m0s from the study's creation): not reached after 6 rounds by tls13-aes256gcm-on-3") {
		t.Errorf("the report does not name the time budget:\n%s", got)
	}
	if !strings.Contains(a.Report.Method, "No round is added that, at the pace of the study's last runs of its size, would end after spec.precision.maxDuration") {
		t.Errorf("the method does not say the time budget bounds the added rounds:\n%s", a.Report.Method)
	}
}

// withServerCPU gives every measured run a server CPU per operation around the cell's centre,
// and a background that the throughput follows: a neighbour's load moves operations per second
// by a fifth from round to round, and an operation's CPU by under 1%.
func withServerCPU(cells []v1alpha1.StudyCell, centre map[string]float64) {
	swing := []float64{1.0, 0.8, 1.15, 0.85, 1.1, 0.9}
	for i := range cells {
		c := &cells[i]
		for k := range c.Runs {
			r := &c.Runs[k]
			r.ThroughputOpsPerSec = int64(float64(r.ThroughputOpsPerSec) * swing[k])
			r.ServerCPUMicrosPerOp = decimal(centre[c.Profile] * (1 + 0.002*float64(k%3)))
			r.SidecarCPUMicrosPerOp = "0.40" // the TLS reloader's part of it
			r.BackgroundCores = decimal(0.2 + 0.6*(1.15-swing[k]))
			r.ThroughputCV = decimal(0.02 + 0.1*(1.15-swing[k]))
			r.CoveredSeconds = int32(7 + k%3)
			if k == 0 {
				r.WarmUpSeconds, r.WarmUpSteady = "34.0", ptr.To(c.Profile != "tls12-aes128cbc")
			}
		}
	}
}

// With server CPU in every run, the decision rests on it: the interval on operations per
// CPU-second is narrow where throughput's, swung by the background, says nothing; without CPU
// in one compared cell, or when the spec asks, throughput decides again.
func TestServerCPUPerOperationDecidesWhenEveryCellHasIt(t *testing.T) {
	cpu := map[string]float64{"plaintext": 50, "tls12-aes128cbc": 70, "tls13-aes128gcm": 55, "tls13-aes256gcm": 62}
	cells := measured(t)
	withServerCPU(cells, cpu)
	cells[0].SetAside = []v1alpha1.StudyRun{{Benchmark: "s-c0-r2", Round: 3, ThroughputOpsPerSec: 13100, ServerCPUMicrosPerOp: "51.0",
		BackgroundCores: "0.93", Busy: "background 0.93 cores exceeded the 0.50-core limit: set aside and measured again (repeat 1 of 2)"}}
	// The background swing hits each cell's run of a round differently, as it does on a
	// shared machine: throughput's pairs no longer cancel it.
	setRuns(cells, "tls13-aes256gcm-on-3", 16400, 17900, 13600, 17500, 14200, 16900)
	for i := range cells {
		if cells[i].Name == "tls13-aes256gcm-on-3" {
			for k := range cells[i].Runs {
				cells[i].Runs[k].ServerCPUMicrosPerOp = decimal(cpu["tls13-aes256gcm"] * (1 + 0.002*float64(k%3)))
			}
		}
	}
	a := Analyze("s", spec(), 42, cells)
	if a.Report.OverheadMetric != v1alpha1.OverheadMetricServerCPU {
		t.Fatalf("metric %s, want server CPU per operation", a.Report.OverheadMetric)
	}
	c := a.Cells[slices.IndexFunc(a.Cells, func(c v1alpha1.StudyCell) bool { return c.Name == "tls13-aes128gcm-on-3" })]
	// 50 against 55 µs: an operation costs 10% more, a core serves 1 - 50/55 = 9.1% fewer.
	if c.ServerCPUMicrosPerOp != "55.11" || c.ServerCPUOverheadPercent != "9.1" || c.ServerCPUOverheadCI95 != "9.1..9.1" {
		t.Errorf("CPU statistics: %s µs/op, overhead %s%% (%s)", c.ServerCPUMicrosPerOp, c.ServerCPUOverheadPercent, c.ServerCPUOverheadCI95)
	}
	rec := a.Recommendation
	// tls13-aes256gcm: 1 - 50/62 = 19.4% on CPU, over the 15% budget, although its throughput
	// interval straddles it.
	if rec == nil || rec.Profile != "tls13-aes128gcm" || !strings.Contains(rec.Reason, "tls13-aes256gcm ranks higher but overhead 19.") {
		t.Errorf("recommendation %+v", rec)
	}
	if rec != nil && rec.ExtraNodesPercent != "10.0" {
		t.Errorf("extra nodes %s%%, want 10.0 (an operation costs 1.1 times the CPU)", rec.ExtraNodesPercent)
	}
	md := a.Report.Markdown()
	for _, want := range []string{"the decision, p and extra nodes rest on server CPU per operation", "| tls13-aes128gcm-on-3 | 2 | – | 14200 | 0.050 | 55.1 | 0.4 | 41.0 | 0.41 | 8 |", "| tls12-aes128cbc-on-3 | 1 | 34 (max) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	golden.Check(t, "report-cpu.md", []byte(md))
	if !strings.Contains(md, "| plaintext-on-3 | 3 | – | 13100 | – | 51.0 | – | – | 0.93 | – | set aside |") ||
		!strings.Contains(md, "- plaintext-on-3, round 3: background 0.93 cores exceeded the 0.50-core limit: set aside") {
		t.Errorf("the report must list the set-aside run and why:\n%s", md)
	}

	s := spec()
	s.Decision.Metric = v1alpha1.OverheadMetricThroughput
	if m := Analyze("s", s, 42, cells).Report.OverheadMetric; m != v1alpha1.OverheadMetricThroughput {
		t.Errorf("spec.decision.metric Throughput gave %s", m)
	}
	for k := range cells[1].Runs {
		cells[1].Runs[k].ServerCPUMicrosPerOp, cells[1].Runs[k].CPUUnavailable = "", "the samples inside the window span 9s of its 30s"
	}
	a = Analyze("s", spec(), 42, cells)
	if a.Report.OverheadMetric != v1alpha1.OverheadMetricThroughput || !strings.Contains(a.Report.Markdown(), "Server CPU missing: the samples inside the window span 9s of its 30s.") {
		t.Errorf("a compared cell without CPU: metric %s, and the report must say why", a.Report.OverheadMetric)
	}
}

// The quiet-machine rule: a run over the background limit is set aside while repeats are
// left, then kept and marked; a run without a background figure, or a limit of 0, passes.
func TestJudgeSetsAsideBusyRunsUntilTheRepeatsRunOut(t *testing.T) {
	s := spec()
	cell := &v1alpha1.StudyCell{Name: "c", Datastore: "s-c1"}
	busy := v1alpha1.StudyRun{Round: 2, ThroughputOpsPerSec: 9000, BackgroundCores: "0.75"}
	for attempt := range DefaultBackgroundRepeats {
		if b := Benchmark(&v1alpha1.TradeoffStudy{Spec: *s}, cell, 1); attempt > 0 && (b.Name != fmt.Sprintf("s-c1-r1-a%d", attempt) || !b.Spec.SkipLoad || b.Spec.SteadyWarmUp != nil) {
			t.Fatalf("attempt %d of round 2: benchmark %s (skip load %v, steady warm-up %v)", attempt, b.Name, b.Spec.SkipLoad, b.Spec.SteadyWarmUp)
		}
		run, repeat := Judge(s, cell, busy, false)
		if !repeat || !strings.Contains(run.Busy, fmt.Sprintf("repeat %d of 2", attempt+1)) {
			t.Fatalf("attempt %d: repeat %v, %q", attempt, repeat, run.Busy)
		}
		cell.SetAside = append(cell.SetAside, run)
	}
	if run, repeat := Judge(s, cell, busy, false); repeat || !strings.Contains(run.Busy, "after 2 repeats: kept") {
		t.Errorf("after the last repeat the run is kept and marked: repeat %v, %q", repeat, run.Busy)
	}
	if run, repeat := Judge(s, cell, v1alpha1.StudyRun{Round: 3, BackgroundCores: "0.75"}, false); !repeat || Attempt(cell, 3) != 0 {
		t.Errorf("another round starts its own repeats: repeat %v, %q", repeat, run.Busy)
	}
	for _, r := range []v1alpha1.StudyRun{{Round: 4, BackgroundCores: "0.5"}, {Round: 4, CPUUnavailable: "no accounting"}} {
		if run, repeat := Judge(s, cell, r, false); repeat || run.Busy != "" {
			t.Errorf("%+v: at or under the limit, or without a figure, the run stands: %q", r, run.Busy)
		}
	}
	s.Background = &v1alpha1.StudyBackground{MaxCores: ptr.To(resource.MustParse("0"))}
	if _, repeat := Judge(s, &v1alpha1.StudyCell{}, busy, false); repeat {
		t.Error("maxCores 0 turns the rule off")
	}
	s.Background = &v1alpha1.StudyBackground{MaxCores: ptr.To(resource.MustParse("1")), Repeats: 1}
	if _, repeat := Judge(s, &v1alpha1.StudyCell{}, v1alpha1.StudyRun{Round: 1, BackgroundCores: "1.2"}, false); !repeat {
		t.Error("a limit of 1 core sets aside a run with 1.2")
	}
}

// A run that lost its server CPU figure is measured again while the study's other runs have
// theirs and it may decide on CPU; without accounting at all, or deciding on throughput, it
// stands, and once the repeats are spent it is kept.
func TestJudgeMeasuresAgainARunThatLostItsCPUFigure(t *testing.T) {
	s := spec()
	cell := &v1alpha1.StudyCell{Name: "c", Datastore: "s-c1"}
	sparse := v1alpha1.StudyRun{Round: 7, ThroughputOpsPerSec: 800, CPUUnavailable: "pod s-c1-0, container cassandra: the samples inside the window span 3s of its 10s (at least 30% needed)."}
	for attempt := range DefaultBackgroundRepeats {
		run, repeat := Judge(s, cell, sparse, true)
		if !repeat || run.Busy != fmt.Sprintf("no server CPU figure (%s): set aside and measured again (repeat %d of 2)", strings.TrimSuffix(sparse.CPUUnavailable, "."), attempt+1) {
			t.Fatalf("attempt %d: repeat %v, %q", attempt, repeat, run.Busy)
		}
		cell.SetAside = append(cell.SetAside, run)
	}
	if run, repeat := Judge(s, cell, sparse, true); repeat || run.Busy != "" {
		t.Errorf("after the last repeat the run is kept for its throughput: repeat %v, %q", repeat, run.Busy)
	}
	if _, repeat := Judge(s, &v1alpha1.StudyCell{}, sparse, false); repeat {
		t.Error("a study without any server CPU figure repeated a run for lacking one")
	}
	s.Decision.Metric = v1alpha1.OverheadMetricThroughput
	if _, repeat := Judge(s, &v1alpha1.StudyCell{}, sparse, true); repeat {
		t.Error("a study that decides on throughput repeated a run for its CPU figure")
	}
	s.Decision.Metric = v1alpha1.OverheadMetricServerCPU
	if _, repeat := Judge(s, &v1alpha1.StudyCell{}, sparse, true); !repeat {
		t.Error("a study that decides on server CPU kept a run without the figure")
	}

	cells := []v1alpha1.StudyCell{{Runs: []v1alpha1.StudyRun{sparse}}, {Runs: []v1alpha1.StudyRun{{ServerCPUMicrosPerOp: "640.25"}}}}
	if !Accounted(cells) || Accounted(cells[:1]) || Accounted(nil) {
		t.Errorf("Accounted: %v with a figure, %v without, %v without runs", Accounted(cells), Accounted(cells[:1]), Accounted(nil))
	}
}

// A benchmark that failed only because its clients could not keep the fixed rate is set aside
// and measured again, within the busy-run repeats; any other failure fails the cell.
func TestAFailedBenchmarkThatMissedTheRateIsSetAsideWhileRepeatsAreLeft(t *testing.T) {
	s := spec()
	fixed := v1alpha1.DatastoreBenchmarkSpec{Load: v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](1000), MaxDroppedPercent: ptr.To[int32](5)}}
	run := func(ops, dropped, errs int64) v1alpha1.BenchmarkRun {
		var r v1alpha1.BenchmarkRun
		sum := benchresult.Summary{Operations: ops, DroppedIterations: dropped, Errors: errs, FirstError: "timeout", Latencies: []benchresult.Latency{{Operation: "read", Count: ops}}}
		benchrun.Record(&r, benchrun.Outcome{Summary: sum, Throughput: float64(ops) / 10}, &fixed)
		return r
	}
	failed := func(runs ...v1alpha1.BenchmarkRun) *v1alpha1.DatastoreBenchmark {
		return &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "s-c1-r0"},
			Status: v1alpha1.DatastoreBenchmarkStatus{Phase: v1alpha1.BenchmarkFailed, Runs: runs}}
	}
	cell := &v1alpha1.StudyCell{Name: "c", Datastore: "s-c1"}
	slow := failed(run(8489, 1511, 0), run(8894, 1106, 0))
	for attempt := range DefaultBackgroundRepeats {
		aside, repeat := RateNotKept(s, cell, slow, 1)
		want := fmt.Sprintf("the clients could not keep the fixed rate (dropped 15.1%%, 11.1%% of the schedule): set aside and measured again (repeat %d of 2)", attempt+1)
		if !repeat || aside.Busy != want || aside.Round != 1 || aside.Benchmark != "s-c1-r0" || aside.ThroughputOpsPerSec != 889 {
			t.Fatalf("attempt %d: repeat %v, %+v; want %q", attempt, repeat, aside, want)
		}
		cell.SetAside = append(cell.SetAside, aside)
	}
	if _, repeat := RateNotKept(s, cell, slow, 1); repeat {
		t.Error("after the last repeat the cell fails")
	}
	if _, repeat := RateNotKept(s, cell, slow, 2); !repeat {
		t.Error("another round starts its own repeats")
	}
	for name, b := range map[string]*v1alpha1.DatastoreBenchmark{
		"client errors too":  failed(run(8489, 1511, 0), run(9990, 0, 3)),
		"no run":             failed(),
		"still running":      {Status: v1alpha1.DatastoreBenchmarkStatus{Phase: v1alpha1.BenchmarkRunning, Runs: []v1alpha1.BenchmarkRun{run(8489, 1511, 0)}}},
		"a failed run (pin)": failed(v1alpha1.BenchmarkRun{Phase: v1alpha1.RunFailed, InvalidReason: "pin refused"}),
	} {
		if _, repeat := RateNotKept(s, &v1alpha1.StudyCell{}, b, 1); repeat {
			t.Errorf("%s: the study repeats only a benchmark whose every run missed the rate", name)
		}
	}
}

// Every run waits for its nodes to be quiet before its clients start: below half the set-aside
// limit, for at most spec.background.settle; no wait when the rule or the settle is off.
func TestRunsWaitForQuietNodes(t *testing.T) {
	st := &v1alpha1.TradeoffStudy{Spec: *spec()}
	cell := &v1alpha1.StudyCell{Name: "c", Datastore: "s-c0"}
	for _, tc := range []struct {
		background *v1alpha1.StudyBackground
		want       string // maxCores/maxWait, or "" for no wait
	}{
		{nil, "250m/1m30s"},
		{&v1alpha1.StudyBackground{MaxCores: ptr.To(resource.MustParse("1")), Settle: &metav1.Duration{Duration: 30 * time.Second}}, "500m/30s"},
		{&v1alpha1.StudyBackground{Settle: &metav1.Duration{}}, ""},
		{&v1alpha1.StudyBackground{MaxCores: ptr.To(resource.MustParse("0"))}, ""},
	} {
		st.Spec.Background = tc.background
		for k := range 2 {
			got := ""
			if q := Benchmark(st, cell, k).Spec.QuietStart; q != nil {
				got = q.MaxCores.String() + "/" + q.MaxWait.Duration.String()
			}
			if got != tc.want {
				t.Errorf("background %+v, run %d: quiet start %q; want %q", tc.background, k, got, tc.want)
			}
		}
	}

	// The next run judges its nodes only on what followed the study's latest run: Ended picks
	// the latest succeeded window of a benchmark, and Benchmark passes it on as after.
	st.Spec.Background = nil
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	b := &v1alpha1.DatastoreBenchmark{Status: v1alpha1.DatastoreBenchmarkStatus{Runs: []v1alpha1.BenchmarkRun{
		{Phase: v1alpha1.RunSucceeded, CompletionTime: ptr.To(metav1.NewTime(t0))},
		{Phase: v1alpha1.RunFailed, CompletionTime: ptr.To(metav1.NewTime(t0.Add(time.Minute)))},
		{Phase: v1alpha1.RunSucceeded, CompletionTime: ptr.To(metav1.NewTime(t0.Add(20 * time.Second)))},
	}}}
	if q := Benchmark(st, cell, 1).Spec.QuietStart; q.After != nil {
		t.Errorf("before any run ended, quiet start after %v; want unset", q.After)
	}
	st.Status.LastRunEnd = Ended(b)
	if q := Benchmark(st, cell, 1).Spec.QuietStart; q.After == nil || !q.After.Time.Equal(t0.Add(20*time.Second)) {
		t.Errorf("quiet start after %v; want the latest succeeded run's end %v", q.After, t0.Add(20*time.Second))
	}
	// Right after a run on its own datastore a run starts at once; after another datastore's
	// run, or as a cell's first run (after its load), it waits.
	st.Status.LastRunDatastore = cell.Datastore
	if q := Benchmark(st, cell, 1).Spec.QuietStart; q != nil {
		t.Errorf("after a run on its own datastore, quiet start %+v; want none", *q)
	}
	if Benchmark(st, cell, 0).Spec.QuietStart == nil {
		t.Error("a cell's first run starts without a quiet start after a run on its datastore; want one")
	}
	st.Status.LastRunDatastore = "s-c1"
	if Benchmark(st, cell, 1).Spec.QuietStart == nil {
		t.Error("after another datastore's run, a run starts without a quiet start; want one")
	}
	if Ended(&v1alpha1.DatastoreBenchmark{}) != nil {
		t.Error("a benchmark without runs has no end")
	}
}

// A cell's first run warms the datastore up until steady, within the study's bounds or the
// default ones; later runs and repeats warm up for warmUp. Where a run cannot judge its own
// warm-up (a fixed rate), every cell has a warm-up benchmark of its own instead, which loads
// the data and lasts steadyWarmUp's minimum; round 1 then only warms up for warmUp.
func TestFirstRunsWarmUpUntilSteady(t *testing.T) {
	st := &v1alpha1.TradeoffStudy{Spec: *spec()}
	cell := &v1alpha1.StudyCell{Name: "c", Datastore: "s-c0"}
	if w := Benchmark(st, cell, 0).Spec.SteadyWarmUp; w == nil || *w != DefaultSteadyWarmUp {
		t.Errorf("first run: %v; want the default %v", w, DefaultSteadyWarmUp)
	}
	if Benchmark(st, cell, 0).Spec.SkipLoad || WarmsFirst(&st.Spec) {
		t.Error("a closed loop judges its own warm-up: the first run loads and warms up alone")
	}
	if w := Benchmark(st, cell, 1).Spec.SteadyWarmUp; w != nil {
		t.Errorf("second run: %v; the datastore is warm", w)
	}
	own := v1alpha1.SteadyWarmUp{Minimum: metav1.Duration{Duration: time.Minute}, Maximum: metav1.Duration{Duration: 5 * time.Minute}}
	st.Spec.SteadyWarmUp = &own
	if w := Benchmark(st, cell, 0).Spec.SteadyWarmUp; w == nil || *w != own {
		t.Errorf("the study's bounds: %v", w)
	}

	st.Spec.Load = v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](1000), MaxDroppedPercent: ptr.To[int32](5)}
	st.Spec.WarmUp = &metav1.Duration{Duration: 5 * time.Second}
	st.Spec.Workload.Duration = &metav1.Duration{Duration: 15 * time.Second}
	if !WarmsFirst(&st.Spec) {
		t.Fatal("a fixed rate has no throughput to settle: the cells warm up before round 1")
	}
	for k := range 2 {
		b := Benchmark(st, cell, k).Spec
		if b.SteadyWarmUp != nil || !b.SkipLoad || b.WarmUp == nil || b.WarmUp.Duration != 5*time.Second {
			t.Errorf("run %d warms up for warmUp on loaded data, got steady %v, skip load %t, warm-up %v", k, b.SteadyWarmUp, b.SkipLoad, b.WarmUp)
		}
	}
	if !WarmUpBenchmark(st, cell, true).Spec.SkipLoad {
		t.Error("a warm-up on data another cell's warm-up loaded must not load it again")
	}
	w := WarmUpBenchmark(st, cell, false)
	if w.Name != "s-c0-warm" || w.Spec.SkipLoad || w.Spec.QuietStart != nil || w.Spec.Target.DatastoreRef.Name != "s-c0" {
		t.Errorf("the warm-up benchmark %s loads (skip %t) the cell's datastore %v without waiting for quiet (%v)", w.Name, w.Spec.SkipLoad, w.Spec.Target.DatastoreRef, w.Spec.QuietStart)
	}
	if w.Spec.WarmUp == nil || w.Spec.WarmUp.Duration != time.Minute {
		t.Errorf("the warm-up lasts the minimum, got %v", w.Spec.WarmUp)
	}
	if *w.Spec.Load.MaxDroppedPercent != 50 || *w.Spec.Load.Rate != 1000/WarmUpsTogether || w.Spec.Workload.Duration.Duration != 5*time.Second {
		t.Errorf("the warm-up runs its share of the study's rate, tolerates what sharing the machine drops and measures briefly: %+v, %v", w.Spec.Load, w.Spec.Workload.Duration)
	}
	if *st.Spec.Load.MaxDroppedPercent != 5 || st.Spec.Workload.Duration.Duration != 15*time.Second {
		t.Error("building the warm-up changed the study's spec")
	}
	// The run-in is round 1's run under another name, whose dropped schedule fails nothing.
	first, in := Benchmark(st, cell, 0), RunInBenchmark(st, cell)
	if in.Name != "s-c0-runin" || in.Spec.QuietStart == nil || *in.Spec.Load.MaxDroppedPercent != 50 {
		t.Errorf("the run-in %s waits for quiet (%v) and tolerates drops up to 50%%, got %v", in.Name, in.Spec.QuietStart, *in.Spec.Load.MaxDroppedPercent)
	}
	in.Name, in.Spec.Load.MaxDroppedPercent = first.Name, first.Spec.Load.MaxDroppedPercent
	if !reflect.DeepEqual(in, first) {
		t.Errorf("the run-in differs from round 1's run:\n%+v\n%+v", in.Spec, first.Spec)
	}
	if *st.Spec.Load.MaxDroppedPercent != 5 || *st.Spec.Load.Rate != 1000 {
		t.Error("building the warm-up or the run-in changed the study's spec")
	}
	st.Spec.SteadyWarmUp = nil
	if w := WarmUpBenchmark(st, cell, false).Spec.WarmUp; w == nil || w.Duration != DefaultSteadyWarmUp.Minimum.Duration {
		t.Errorf("without bounds the warm-up lasts the default minimum, got %v", w)
	}
}

// Seed 000's question: does a TLS profile cost more without hardware AES? The effect pairs
// each round's overhead with AES emulated off against the same round's with hardware AES, so a
// drift that moves a whole round (here ±30%) cancels, and the data decide with six rounds.
func TestHardwareAESEffectIsPairedByRound(t *testing.T) {
	s := spec()
	s.Matrix.Profiles = []string{"plaintext", "tls13-aes128gcm", "tls13-aes256gcm"}
	s.Matrix.ClusterSizes = []int32{1}
	cells := Cells("s", s, profiles)
	// Server CPU-µs per operation. tls13-aes128gcm: 50 → 55 with AES, 52 → 65 emulated off, so
	// a core serves 50/55 = 0.909 and 52/65 = 0.8 of the baseline's operations: without
	// hardware AES it loses a further 1 - 0.8/0.909 = 12%. tls13-aes256gcm costs the same both
	// ways.
	cpu := map[string]float64{
		"plaintext-on-1": 50, "tls13-aes128gcm-on-1": 55, "tls13-aes256gcm-on-1": 60,
		"plaintext-off-1": 52, "tls13-aes128gcm-off-1": 65, "tls13-aes256gcm-off-1": 62.4,
	}
	drift := []float64{1.0, 1.3, 0.7, 1.1, 0.9, 1.2}
	noise := []float64{0, 0.004, -0.003, 0.002, -0.001, 0.003}
	for i := range cells {
		c := &cells[i]
		c.State = v1alpha1.CellDone
		for k := range drift {
			us := cpu[c.Name] * drift[k]
			if c.Profile != "plaintext" {
				us *= 1 + noise[(k+i)%len(noise)]
			}
			c.Runs = append(c.Runs, v1alpha1.StudyRun{Round: int32(k + 1), ThroughputOpsPerSec: 10000, ServerCPUMicrosPerOp: decimal(us)})
		}
	}
	a := Analyze("s", s, 42, cells)
	effects := a.Report.AccelerationEffects
	if len(effects) != 2 || effects[0].Profile != "tls13-aes128gcm" || effects[1].Profile != "tls13-aes256gcm" {
		t.Fatalf("effects %+v, want one per TLS profile", effects)
	}
	gcm := effects[0].Comparison
	if !gcm.Paired || gcm.Pairs != 6 || !gcm.Significant || gcm.CI.Low < 0.10 || gcm.CI.High > 0.14 || math.Abs(gcm.Overhead-0.12) > 0.005 {
		t.Errorf("tls13-aes128gcm: %+v, want a further 12%% with an interval inside 10..14%%", gcm)
	}
	if same := effects[1].Comparison; same.Significant || same.CI.Low > 0 || same.CI.High < 0 {
		t.Errorf("tls13-aes256gcm costs the same both ways: %+v", same)
	}
	text := a.Report.Text()
	for _, want := range []string{
		"tls13-aes128gcm costs more without hardware AES: it loses a further 12.",
		"tls13-aes256gcm: no difference found between hardware AES and AES emulated off",
	} {
		if !strings.Contains(text, want) || !strings.Contains(a.Report.Markdown(), want) {
			t.Errorf("the text and Markdown reports lack %q:\n%s", want, text)
		}
	}
	html, err := a.Report.HTML()
	if err != nil || !strings.Contains(string(html), "<h2>Hardware AES</h2>") {
		t.Errorf("the HTML report lacks the hardware AES section (%v)", err)
	}

	// Without the emulated-off baseline's run of a round, that round has no effect to pair.
	for i := range a.Cells {
		if a.Cells[i].Name == "plaintext-off-1" {
			a.Cells[i].Runs = a.Cells[i].Runs[1:]
		}
	}
	five := Analyze("s", s, 42, a.Cells).Report
	if got := five.AccelerationEffects[0].Comparison.Pairs; got != 5 {
		t.Errorf("%d pairs, want 5 once the baseline lacks round 1", got)
	}
	if want := "(5 paired rounds, too few for a 95% interval)"; !strings.Contains(five.Text(), "tls13-aes128gcm: with AES emulated off it loses 12.") || !strings.Contains(five.Text(), want) {
		t.Errorf("five rounds must give the estimate without an interval:\n%s", five.Text())
	}
}

// The baseline runs at both accelerations as two datastores of one configuration when it uses
// no AES: the report compares them, paired by round, so a reader sees how far apart two
// datastores are that no profile separates, a spread the cells' own intervals do not include.
func TestBaselineSpreadComparesTheBaselinesTwoDatastores(t *testing.T) {
	s := spec()
	s.Matrix.Profiles = []string{"plaintext", "tls13-aes128gcm"}
	s.Matrix.ClusterSizes = []int32{1}
	drift := []float64{1.0, 1.3, 0.7, 1.1, 0.9, 1.2}
	noise := []float64{0.01, -0.012, 0.008, -0.006, 0.011, -0.009}
	analyze := func(offCPU float64) Report {
		cells := Cells("s", s, profiles)
		cpu := map[string]float64{"plaintext-on-1": 50, "plaintext-off-1": offCPU, "tls13-aes128gcm-on-1": 55, "tls13-aes128gcm-off-1": 65}
		for i := range cells {
			c := &cells[i]
			c.State = v1alpha1.CellDone
			for k := range drift {
				us := cpu[c.Name] * drift[k]
				if c.Name == "plaintext-off-1" {
					us *= 1 + noise[k]
				}
				c.Runs = append(c.Runs, v1alpha1.StudyRun{Round: int32(k + 1), ThroughputOpsPerSec: 10000, ServerCPUMicrosPerOp: decimal(us)})
			}
		}
		return Analyze("s", s, 42, cells).Report
	}

	same := analyze(50)
	if len(same.BaselineSpreads) != 1 || same.BaselineSpreads[0].Profile != "plaintext" {
		t.Fatalf("baseline spreads %+v, want plaintext's", same.BaselineSpreads)
	}
	if c := same.BaselineSpreads[0].Comparison; !c.Paired || c.Pairs != 6 || c.Significant || c.CI.Low > 0 || c.CI.High < 0 {
		t.Errorf("two datastores that differ by noise only: %+v, want no difference found", c)
	}
	if want := "plaintext with AES emulated off against itself with hardware AES: no difference found"; !strings.Contains(same.Text(), want) || !strings.Contains(same.Markdown(), want) {
		t.Errorf("the text and Markdown reports lack %q:\n%s", want, same.Text())
	}

	// The datastore with AES emulated off needs 10% more CPU per operation: a core serves
	// 1/1.1 of the operations, 9.1% of capacity lost, whatever the drift.
	apart := analyze(55)
	c := apart.BaselineSpreads[0].Comparison
	if !c.Significant || math.Abs(c.Overhead-0.091) > 0.01 || c.CI.Low < 0.07 || c.CI.High > 0.11 {
		t.Errorf("two datastores 10%% apart: %+v, want 9.1%% of capacity with an interval inside 7..11%%", c)
	}
	if want := "plaintext with AES emulated off against itself with hardware AES: they differ, by 9."; !strings.Contains(apart.Text(), want) {
		t.Errorf("the report lacks %q:\n%s", want, apart.Text())
	}
	html, err := apart.HTML()
	if err != nil || !strings.Contains(string(html), "against itself with hardware AES") {
		t.Errorf("the HTML report lacks the baseline's spread (%v)", err)
	}
}

// Value sizes are a factor of their own (seed 004's question): the cells of one profile share
// a datastore, each value size loads a table of its own, and a cell's overhead is against the
// baseline of the same value size, not against whichever baseline ran fastest.
func TestValueSizesShareADatastoreAndCompareWithTheirOwnBaseline(t *testing.T) {
	s := spec()
	s.Matrix = v1alpha1.StudyMatrix{Profiles: []string{"plaintext", "tls13-aes128gcm", "openvpn"}, Baseline: "plaintext",
		ClusterSizes: []int32{1}, FieldLengths: []int32{10, 10000}}
	cells := Cells("s", s, profiles)
	type want struct{ name, datastore, prefix string }
	var got []want
	for _, c := range cells {
		got = append(got, want{c.Name, c.Datastore, c.BenchmarkPrefix})
	}
	if !slices.Equal(got, []want{
		{"plaintext-on-1-f10", "s-c0", ""}, {"plaintext-on-1-f10000", "s-c0", "s-c1"},
		{"tls13-aes128gcm-on-1-f10", "s-c2", ""}, {"tls13-aes128gcm-on-1-f10000", "s-c2", "s-c3"},
		{"openvpn-on-1-f10", "", ""}, {"openvpn-on-1-f10000", "", ""}, // pruned: no NIST preset
	}) {
		t.Fatalf("cells (name, datastore, benchmark prefix):\n%v", got)
	}
	st := &v1alpha1.TradeoffStudy{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: *s}
	names := map[string]bool{}
	for i := range cells[:4] {
		c := &cells[i]
		b := Benchmark(st, c, 0)
		if w := b.Spec.Workload; ptr.Deref(w.FieldLength, 0) != c.FieldLength || w.Table != fmt.Sprintf("usertable_f%d", c.FieldLength) || b.Spec.Target.DatastoreRef.Name != c.Datastore {
			t.Errorf("%s: benchmark %s measures fieldLength %v in table %q of %s", c.Name, b.Name, w.FieldLength, w.Table, b.Spec.Target.DatastoreRef.Name)
		}
		for _, other := range cells[:i] {
			if WarmUpData(st, c) == WarmUpData(st, &other) {
				t.Errorf("%s and %s share a datastore but not a table: each warm-up must load its own, got %q", c.Name, other.Name, WarmUpData(st, c))
			}
		}
		for _, name := range []string{b.Name, WarmUpBenchmark(st, c, false).Name} {
			if names[name] {
				t.Errorf("benchmark name %s used twice", name)
			}
			names[name] = true
		}
		if _, own := Datastore(st, c).Labels[CellLabel]; own {
			t.Errorf("datastore %s is shared by two cells but labelled with %s's name", c.Datastore, c.Name)
		}
	}
	if s.Workload.FieldLength != nil || s.Workload.Table != "" {
		t.Errorf("building a cell's benchmark changed the study's workload: %+v", s.Workload)
	}

	// Small values: TLS costs 30%; large values: 5%. The large-value baseline is 20 times
	// slower, so comparing across value sizes would call TLS on small values 14 times faster.
	ops := map[string]float64{
		"plaintext-on-1-f10": 20000, "tls13-aes128gcm-on-1-f10": 14000,
		"plaintext-on-1-f10000": 1000, "tls13-aes128gcm-on-1-f10000": 950,
	}
	drift := []float64{1.0, 1.2, 0.8, 1.1, 0.9, 1.05}
	for i := range cells[:4] {
		c := &cells[i]
		c.State = v1alpha1.CellDone
		for k, d := range drift {
			c.Runs = append(c.Runs, v1alpha1.StudyRun{Benchmark: BenchmarkName(c, k), Round: int32(k + 1), ThroughputOpsPerSec: int64(ops[c.Name] * d)})
		}
	}
	a := Analyze("s", s, 1, cells)
	for name, overhead := range map[string]string{"tls13-aes128gcm-on-1-f10": "30.0", "tls13-aes128gcm-on-1-f10000": "5.0"} {
		i := slices.IndexFunc(a.Cells, func(c v1alpha1.StudyCell) bool { return c.Name == name })
		if got := a.Cells[i].OverheadPercent; got != overhead {
			t.Errorf("%s: overhead %s%%, want %s%% against the baseline of its value size", name, got, overhead)
		}
	}
	text := a.Report.Text()
	for _, group := range []string{"Available, 1 node, 10-byte values", "Available, 1 node, 10000-byte values"} {
		if !strings.Contains(text, group) {
			t.Errorf("the text report does not group by value size (%q):\n%s", group, text)
		}
	}
	// The decision weighs a profile's worst value size.
	if c := a.Report.Candidates; len(c) < 2 || c[1].Cell != "tls13-aes128gcm-on-1-f10" {
		t.Errorf("candidates %+v: tls13-aes128gcm's worst cell is its small-value one", c)
	}
	if msg := NothingCompared(a.Cells, "plaintext"); msg != "" {
		t.Errorf("NothingCompared: %s", msg)
	}
}

// A storage workload lays out its own file on a new volume in every run: no cell warms up
// first, no run warms up until steady (the benchmark API refuses both with it), and the
// report names the fio pattern.
func TestStorageStudiesNeitherWarmUpNorWaitForSteadiness(t *testing.T) {
	st := &v1alpha1.TradeoffStudy{Spec: *spec()}
	st.Spec.Workload = v1alpha1.Workload{Storage: &v1alpha1.StorageWorkload{Pattern: v1alpha1.StorageRandomRead}}
	cell := &v1alpha1.StudyCell{Name: "c", Datastore: "s-c0"}
	if WarmsFirst(&st.Spec) {
		t.Error("a storage study warms its cells up first")
	}
	// A study without spec.load: its benchmarks still name the mode the API requires.
	st.Spec.Load = v1alpha1.Load{}
	for k := range 2 {
		if b := Benchmark(st, cell, k).Spec; b.SteadyWarmUp != nil || b.WarmUp != nil || b.Workload.Storage == nil || b.Load.Mode != v1alpha1.LoadMaxThroughput {
			t.Errorf("run %d: steadyWarmUp %v, warmUp %v, storage %v", k, b.SteadyWarmUp, b.WarmUp, b.Workload.Storage)
		}
	}
	if got := workloadName(st.Spec.Workload); got != "fio RandomRead of 8 KiB blocks (operations are I/Os)" {
		t.Errorf("workload named %q", got)
	}
	if m := methodOf(&st.Spec); !strings.Contains(m, "no run warms up") || strings.Contains(m, "steadyWarmUp") {
		t.Errorf("a storage study's method text: %s", m)
	}
}

// A run's cost per operation is what the datastore's pods spent, their sidecars included: a
// VPN profile encrypts in its tunnel sidecar, and a study that left it out would find the
// tunnel free.
func TestRunChargesTheSidecarsToTheDatastore(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(30 * time.Second))
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "s-c0-r1"}}
	b.Status.Runs = []v1alpha1.BenchmarkRun{{Phase: v1alpha1.RunSucceeded, ThroughputOpsPerSec: 300, StartTime: &start, CompletionTime: &end,
		Latencies: []v1alpha1.LatencySummary{{Operation: "read", Count: 4500, P99Micros: 150000}, {Operation: "update", Count: 4500, P99Micros: 160000}},
		CPU:       &v1alpha1.RunCPU{ServerMillis: 21700, ServerMicrosPerOp: "2411.1", SidecarMillis: 5100, BackgroundMillis: 6000, CoveredSeconds: 27}}}
	r, ok := Run(b, 2)
	// 5.1 CPU-s over 9000 operations: 566.7 µs each on top of the datastore's 2411.1.
	if !ok || r.ServerCPUMicrosPerOp != "2977.77" || r.SidecarCPUMicrosPerOp != "566.67" || r.BackgroundCores != "0.20" || r.Round != 2 || r.P99Micros != 160000 ||
		r.CoveredSeconds != 27 || !r.Start.Equal(&start) || !r.End.Equal(&end) {
		t.Errorf("run %+v", r)
	}
	b.Status.Runs[0].CPU.SidecarMillis = 0
	if r, _ := Run(b, 2); r.ServerCPUMicrosPerOp != "2411.1" || r.SidecarCPUMicrosPerOp != "" {
		t.Errorf("without sidecars the datastore's own figure stands: %+v", r)
	}

	// A node series that could not be read costs the run its background, not its server
	// figure; the background is then missing, not a quiet 0, and the run cannot be judged busy.
	why := "node secured-worker: the samples inside the window span 3s of its 10s (at least 30% needed)"
	b.Status.Runs[0].CPU.BackgroundMillis, b.Status.Runs[0].CPU.BackgroundUnavailable = 0, why
	r, _ = Run(b, 2)
	if r.ServerCPUMicrosPerOp != "2411.1" || r.BackgroundCores != "" || r.BackgroundUnavailable != why || r.CPUUnavailable != "" {
		t.Errorf("a run without its background: %+v", r)
	}
	if _, repeat := Judge(spec(), &v1alpha1.StudyCell{}, r, true); repeat {
		t.Error("a run without a background figure was set aside as busy")
	}
	md := Analyze("s", spec(), 42, []v1alpha1.StudyCell{{Name: "plaintext-on-1", Profile: "plaintext", Runs: []v1alpha1.StudyRun{r}}}).Report.Markdown()
	if !strings.Contains(md, "| plaintext-on-1 | 2 | – | 300 | – | 2411.1 | – | – | – |") ||
		!strings.Contains(md, "- plaintext-on-1, round 2: "+strings.TrimSuffix(why, ".")) {
		t.Errorf("the report must show the server figure and say why the background is missing:\n%s", md)
	}
}

// Two eligible profiles of one rank: the rule takes the lower point estimate, and where their
// intervals overlap the sentence says the data did not decide between them; intervals apart,
// it says the other measured costlier.
func TestEqualRanksSayWhetherTheDataDecided(t *testing.T) {
	for _, tc := range []struct {
		name      string
		aes256    []int64 // runs of tls13-aes256gcm-on-3, against plaintext's about 20,000
		want      string
		wantOther string
	}{
		{"overlapping", []int64{17500, 17750, 17350, 17600, 17450, 17700},
			"; tls13-aes256gcm ranks the same at 12.", "which these intervals do not decide"},
		{"apart", []int64{17100, 17200, 17000, 17150, 17050, 17250},
			"; tls13-aes256gcm ranks the same at 14.", "), measured costlier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells := measured(t)
			for i := range cells {
				if cells[i].Profile == "tls13-aes128gcm" {
					cells[i].Rank = 120
				}
			}
			setRuns(cells, "tls13-aes256gcm-on-3", tc.aes256...)
			rec := Analyze("s", spec(), 42, cells).Recommendation
			if rec == nil || rec.Profile != "tls13-aes128gcm" {
				t.Fatalf("recommendation %+v, want tls13-aes128gcm, the lower estimate of two at rank 120", rec)
			}
			if !strings.Contains(rec.Reason, tc.want) || !strings.Contains(rec.Reason, tc.wantOther) {
				t.Errorf("reason %q\nwant %q and %q", rec.Reason, tc.want, tc.wantOther)
			}
		})
	}
}
