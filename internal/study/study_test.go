package study

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
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
		Repetitions: ptr.To[int32](5),
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
	sched := Schedule(cells, 5, 42)
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
	if !slices.Equal(sched, Schedule(cells, 5, 42)) {
		t.Error("the same seed gave another order")
	}
	if slices.Equal(sched, Schedule(cells, 5, 43)) {
		t.Error("another seed gave the same order")
	}
	if got := Repetition(sched, len(sched)-1); got != 4 {
		t.Errorf("last entry is repetition %d of its cell, want 4", got)
	}
}

// measured fills every active cell with five repetitions around a throughput.
func measured(t *testing.T) []v1alpha1.StudyCell {
	t.Helper()
	centre := map[string]int64{
		"plaintext-on-3": 20000, "tls12-aes128cbc-on-3": 15000, "tls13-aes128gcm-on-3": 17600, "tls13-aes256gcm-on-3": 16400,
		"plaintext-off-3": 19800, "tls12-aes128cbc-off-3": 9000, "tls13-aes128gcm-off-3": 8000, "tls13-aes256gcm-off-3": 7000,
	}
	jitter := []int64{0, 150, -120, 60, -40}
	cells := Cells("s", spec(), profiles)
	for i := range cells {
		c := &cells[i]
		if c.State == v1alpha1.CellPruned {
			continue
		}
		c.State = v1alpha1.CellDone
		for k, j := range jitter {
			c.Runs = append(c.Runs, v1alpha1.StudyRun{Benchmark: BenchmarkName(c.Datastore, k), ThroughputOpsPerSec: centre[c.Name] + j,
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
	if !strings.Contains(rec.Reason, "tls13-aes256gcm ranks higher but overhead 18.0% exceeds the 15.0% budget") {
		t.Errorf("reason does not say why the stronger profile lost: %s", rec.Reason)
	}
	if rec.ExtraNodesPercent != "13.6" || rec.ExtraCostPerHour != "0.08" {
		t.Errorf("cost %s%% / %s per hour, want 13.6%% of 3 nodes at 0.192", rec.ExtraNodesPercent, rec.ExtraCostPerHour)
	}
	c := a.Cells[slices.IndexFunc(a.Cells, func(c v1alpha1.StudyCell) bool { return c.Name == "tls13-aes128gcm-on-3" })]
	if c.MedianThroughputOpsPerSec != 17600 || c.OverheadPercent != "12.0" || c.PValue != "0.0079" || !*c.Significant || !*c.Meaningful || c.RunsDone != 5 {
		t.Errorf("cell statistics: %+v", c)
	}
	if c.ThroughputCI95 != "" {
		t.Errorf("5 runs cannot give a 95%% median interval, got %s", c.ThroughputCI95)
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
	for i := range cells {
		if cells[i].Name == "tls13-aes256gcm-on-3" {
			for k := range cells[i].Runs[:3] {
				cells[i].Runs[k].ThroughputOpsPerSec = []int64{20100, 19900, 20200}[k]
			}
			cells[i].Runs = cells[i].Runs[:3]
		}
	}
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
