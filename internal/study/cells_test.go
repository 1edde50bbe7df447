package study

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
)

func TestObserveCell(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 19, 21, 47, 0, time.UTC)
	c := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: "says " + reason, LastTransitionTime: metav1.NewTime(t0)}
	}
	probed := func(at time.Time) *v1alpha1.EncryptionStatus {
		return &v1alpha1.EncryptionStatus{Observed: []v1alpha1.ObservedChannel{{LastProbeTime: metav1.NewTime(at)}, {LastProbeTime: metav1.NewTime(at)}}}
	}
	once, again := probed(t0.Add(-3*time.Second)), probed(t0.Add(30*time.Second))
	ready := c(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonNodesReady)
	tests := map[string]struct {
		state              v1alpha1.CellState
		conds              []metav1.Condition
		probes             *v1alpha1.EncryptionStatus
		want               v1alpha1.CellState
		failed, measurable bool
		reason             string
	}{
		"a new datastore provisions": {state: v1alpha1.CellPending, want: v1alpha1.CellProvisioning},
		"the profile does not resolve": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{c(v1alpha1.ConditionProfileResolved, metav1.ConditionFalse, v1alpha1.ReasonInvalidProfile)},
			want: v1alpha1.CellFailed, failed: true, reason: "its profile does not resolve for this datastore: says InvalidProfile"},
		"ready, not yet probed": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready}, want: v1alpha1.CellProvisioning},
		"ready and verified": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionTrue, v1alpha1.ReasonVerified)},
			probes: once, want: v1alpha1.CellMeasuring, measurable: true},
		"already measuring": {state: v1alpha1.CellMeasuring, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionTrue, v1alpha1.ReasonVerified)},
			probes: again, want: v1alpha1.CellMeasuring},
		"the wire drifts, confirmed": {state: v1alpha1.CellMeasuring, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonCipherSuiteDrift)},
			probes: again, want: v1alpha1.CellFailed, failed: true,
			reason: "the wire does not match the profile (EncryptionVerified=False CipherSuiteDrift, confirmed by a second probe: says CipherSuiteDrift)"},
		"plaintext accepted in one probe waits for the next": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonPlaintextAccepted)},
			probes: once, want: v1alpha1.CellProvisioning},
		"plaintext accepted, confirmed": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonPlaintextAccepted)},
			probes: again, want: v1alpha1.CellFailed, failed: true,
			reason: "the wire does not match the profile (EncryptionVerified=False PlaintextAccepted, confirmed by a second probe: says PlaintextAccepted)"},
		"an unreachable endpoint is no verdict": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonUnreachable)},
			probes: again, want: v1alpha1.CellProvisioning},
		"an incomplete probe is no verdict": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonProbeIncomplete)},
			probes: again, want: v1alpha1.CellProvisioning},
		"a measuring cell whose datastore restarts waits": {state: v1alpha1.CellMeasuring, conds: []metav1.Condition{c(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonDegraded)},
			want: v1alpha1.CellMeasuring},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cell := v1alpha1.StudyCell{Name: "cell", State: tc.state}
			failed, measurable := ObserveCell(&cell, &v1alpha1.SecuredDatastoreStatus{Conditions: tc.conds, Encryption: tc.probes})
			if cell.State != tc.want || failed != tc.failed || measurable != tc.measurable {
				t.Errorf("state %s (failed %v, measurable %v), want %s (%v, %v)", cell.State, failed, measurable, tc.want, tc.failed, tc.measurable)
			}
			if !strings.Contains(cell.Reason, tc.reason) || (tc.reason == "") != (cell.Reason == "") {
				t.Errorf("reason %q, want %q", cell.Reason, tc.reason)
			}
		})
	}
}

// A cell's volumes hold the benchmark's rows only: they go with its datastore, so a study run
// again under the same name starts from empty disks and leaves no claims behind.
func TestCellDatastoresDeleteTheirVolumes(t *testing.T) {
	for _, engine := range []v1alpha1.Engine{v1alpha1.EngineCassandra, v1alpha1.EngineHBase} {
		study := &v1alpha1.TradeoffStudy{Spec: v1alpha1.TradeoffStudySpec{Template: v1alpha1.DatastoreTemplate{Engine: engine}}}
		ds := Datastore(study, &v1alpha1.StudyCell{Datastore: "s-c0", Profile: "plaintext", Nodes: 3})
		var got v1alpha1.VolumeRetention
		if engine == v1alpha1.EngineCassandra {
			got = ds.Spec.Cassandra.Storage.WhenDeleted
		} else {
			got = ds.Spec.HBase.Storage.WhenDeleted
		}
		if got != v1alpha1.VolumeDelete {
			t.Errorf("%s cell: storage.whenDeleted %q; want Delete", engine, got)
		}
	}
}

// A cell's datastore keeps the template's JVM settings, and the operator's wire probe runs
// when it starts or changes, never on a timer inside the study.
func TestCellDatastoresKeepTheTemplatesJVMAndNoProbeTimer(t *testing.T) {
	study := &v1alpha1.TradeoffStudy{Spec: v1alpha1.TradeoffStudySpec{Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra,
		Cassandra: &v1alpha1.CassandraTopology{SizeEstimates: v1alpha1.SizeEstimatesDisabled, JIT: &v1alpha1.JITSettings{CompileThresholdScaling: "0.1"}}}}}
	ds := Datastore(study, &v1alpha1.StudyCell{Datastore: "s-c0", Profile: "plaintext", Nodes: 1})
	if c := ds.Spec.Cassandra; c.SizeEstimates != v1alpha1.SizeEstimatesDisabled || c.JIT == nil || c.JIT.CompileThresholdScaling != "0.1" {
		t.Errorf("cell datastore's cassandra %+v; want the template's sizeEstimates and jit", c)
	}
	if v := ds.Spec.Verification; v == nil || v.Interval == nil || v.Interval.Duration < 12*time.Hour {
		t.Errorf("cell datastore's verification %+v; want a timer longer than any study", v)
	}
}

// A study whose schedule ran has something to report only when a compared cell and the baseline
// beside it (same acceleration and size) were both measured.
func TestNothingCompared(t *testing.T) {
	cell := func(profile string, acc v1alpha1.Acceleration, state v1alpha1.CellState, runs int) v1alpha1.StudyCell {
		return v1alpha1.StudyCell{Profile: profile, Acceleration: acc, Nodes: 3, State: state, Runs: make([]v1alpha1.StudyRun, runs)}
	}
	on, off := v1alpha1.AccelerationAvailable, v1alpha1.AccelerationEmulatedOff
	done, failed := v1alpha1.CellDone, v1alpha1.CellFailed
	for name, tc := range map[string]struct {
		cells []v1alpha1.StudyCell
		want  string
	}{
		"compared":       {[]v1alpha1.StudyCell{cell("plain", on, done, 6), cell("tls", on, done, 6)}, ""},
		"one pair left":  {[]v1alpha1.StudyCell{cell("plain", on, done, 6), cell("tls", on, done, 6), cell("plain", off, failed, 0), cell("tls", off, failed, 0)}, ""},
		"no failure":     {[]v1alpha1.StudyCell{cell("plain", on, done, 6)}, ""},
		"all failed":     {[]v1alpha1.StudyCell{cell("plain", on, failed, 0), cell("tls", on, failed, 0)}, "2 of 2 cells failed, every baseline cell among them"},
		"baseline lost":  {[]v1alpha1.StudyCell{cell("plain", on, failed, 0), cell("tls", on, done, 6)}, "1 of 2 cells failed, every baseline cell among them"},
		"partners apart": {[]v1alpha1.StudyCell{cell("plain", on, done, 6), cell("tls", on, failed, 0), cell("plain", off, failed, 0), cell("tls", off, done, 6)}, "no measured cell has a measured baseline beside it"},
	} {
		got := NothingCompared(tc.cells, "plain")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q; want %q", name, got, tc.want)
		}
	}
}

// A failed study's report says it recommends nothing because nothing was compared.
func TestFailedStudyReportRecommendsNothing(t *testing.T) {
	r := Report{Phase: string(v1alpha1.StudyFailed)}
	if got := r.recommendationText(); !strings.Contains(got, "the study failed before any profile could be compared") {
		t.Errorf("recommendation of a failed study: %q", got)
	}
}

// A price is reported as written, not as its nearest float: 0.175, not 0.17500000000000002.
func TestPriceIsReportedAsWritten(t *testing.T) {
	r := Report{Currency: "USD", PricePerNodeHour: price(resource.MustParse("0.175")),
		Recommendation: &v1alpha1.Recommendation{Profile: "tls", ExtraNodesPercent: "6.6", ExtraCostPerHour: "0.01"}}
	if got := r.recommendationText(); !strings.Contains(got, "at 0.175 USD per node-hour") {
		t.Errorf("recommendation: %q", got)
	}
}

// A study starts its next run once no benchmark may open a window: one that ended, or one whose
// last window closed and only waits for its CPU figures.
func TestRunsNeverOverlapButAccountingDoes(t *testing.T) {
	at := func(s int) *metav1.Time {
		return &metav1.Time{Time: metav1.Now().Truncate(time.Hour).Add(time.Duration(s) * time.Second)}
	}
	bench := func(name string, phase v1alpha1.BenchmarkPhase, runs ...v1alpha1.BenchmarkRun) v1alpha1.DatastoreBenchmark {
		return v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1alpha1.DatastoreBenchmarkStatus{Phase: phase, Runs: runs}}
	}
	run := func(phase v1alpha1.RunPhase, end int) v1alpha1.BenchmarkRun {
		return v1alpha1.BenchmarkRun{Phase: phase, StartTime: at(end - 16), CompletionTime: at(end)}
	}
	tests := map[string]struct {
		b      v1alpha1.DatastoreBenchmark
		closed bool
		end    *metav1.Time
	}{
		"just created":             {b: bench("new", "")},
		"loading":                  {b: bench("load", v1alpha1.BenchmarkLoading)},
		"waiting for quiet nodes":  {b: bench("quiet", v1alpha1.BenchmarkRunning, v1alpha1.BenchmarkRun{Phase: v1alpha1.RunPending})},
		"measuring":                {b: bench("measuring", v1alpha1.BenchmarkRunning, v1alpha1.BenchmarkRun{Phase: v1alpha1.RunRunning})},
		"an invalid run, repeated": {b: bench("again", v1alpha1.BenchmarkRunning, run(v1alpha1.RunInvalid, 20), v1alpha1.BenchmarkRun{Phase: v1alpha1.RunPending})},
		"accounting":               {b: bench("accounting", v1alpha1.BenchmarkRunning, run(v1alpha1.RunAccounting, 40)), closed: true, end: at(40)},
		"succeeded":                {b: bench("done", v1alpha1.BenchmarkSucceeded, run(v1alpha1.RunInvalid, 20), run(v1alpha1.RunSucceeded, 60)), closed: true, end: at(60)},
		"failed without a run":     {b: bench("failed", v1alpha1.BenchmarkFailed), closed: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			end, closed := WindowClosed(&tc.b)
			if closed != tc.closed || !end.Equal(tc.end) {
				t.Errorf("WindowClosed = %v, %v; want %v, %v", end, closed, tc.end, tc.closed)
			}
			others := []v1alpha1.DatastoreBenchmark{bench("done", v1alpha1.BenchmarkSucceeded), tc.b}
			want := ""
			if !tc.closed {
				want = tc.b.Name
			}
			if got := Measuring(others, "next"); got != want {
				t.Errorf("Measuring = %q, want %q", got, want)
			}
			if got := Measuring(others, tc.b.Name); got != "" {
				t.Errorf("Measuring without %s = %q, want none", tc.b.Name, got)
			}
		})
	}
}

// In a Switched study the profiles of one acceleration and size share a datastore, except that
// a profile encrypting volumes (which no running datastore can switch) gets its own, and a
// pruned profile none; each cell keeps benchmarks of its own name. Upcoming names the cell a
// datastore must run for the next run, skipping failed cells.
func TestSwitchedStudySharesADatastorePerSetting(t *testing.T) {
	spec := &v1alpha1.TradeoffStudySpec{
		Datastores: v1alpha1.DatastoresSwitched,
		Matrix: v1alpha1.StudyMatrix{Profiles: []string{"plain", "weak", "tls", "luks", "wg"}, Baseline: "plain",
			Acceleration: []v1alpha1.Acceleration{v1alpha1.AccelerationAvailable, v1alpha1.AccelerationEmulatedOff}},
		Constraints: &v1alpha1.StudyConstraints{MinimumRank: ptr.To[int32](10)},
	}
	profiles := map[string]Profile{"plain": {Rank: 0}, "weak": {Rank: 5}, "tls": {Rank: 60}, "luks": {Rank: 40, EncryptsVolume: true}, "wg": {Rank: 50}}
	got := map[string][2]string{}
	for _, c := range Cells("s", spec, profiles) {
		got[c.Name] = [2]string{c.Datastore, BenchmarkName(&c, 0)}
	}
	want := map[string][2]string{
		"plain-on-3": {"s-c0", "s-c0-r0"}, "weak-on-3": {"", "-r0"}, "tls-on-3": {"s-c0", "s-c2-r0"}, "luks-on-3": {"s-c3", "s-c3-r0"}, "wg-on-3": {"s-c0", "s-c4-r0"},
		"plain-off-3": {"s-c5", "s-c5-r0"}, "weak-off-3": {"", "-r0"}, "tls-off-3": {"s-c5", "s-c7-r0"}, "luks-off-3": {"s-c8", "s-c8-r0"}, "wg-off-3": {"s-c5", "s-c9-r0"},
	}
	if !maps.Equal(got, want) {
		t.Errorf("datastores and benchmark names:\n got %v\nwant %v", got, want)
	}

	cells := Cells("s", spec, profiles)
	schedule := []string{"tls-on-3", "plain-off-3", "plain-on-3", "wg-on-3", "tls-on-3"}
	name := func(c *v1alpha1.StudyCell) string {
		if c == nil {
			return "none"
		}
		return c.Name
	}
	for _, tc := range []struct {
		next      int
		datastore string
		failed    string
		want      string
	}{
		{0, "s-c0", "", "tls-on-3"},
		{1, "s-c0", "", "plain-on-3"},
		{1, "s-c5", "", "plain-off-3"},
		{2, "s-c5", "", "none"},
		{3, "s-c0", "wg-on-3", "tls-on-3"},
		{5, "s-c0", "", "none"},
	} {
		cs := slices.Clone(cells)
		for i := range cs {
			if cs[i].Name == tc.failed {
				cs[i].State = v1alpha1.CellFailed
			}
		}
		if got := name(Upcoming(cs, schedule, tc.next, tc.datastore)); got != tc.want {
			t.Errorf("Upcoming from %d on %s (failed %q) = %s, want %s", tc.next, tc.datastore, tc.failed, got, tc.want)
		}
	}

	ds := Datastore(&v1alpha1.TradeoffStudy{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: *spec}, &cells[2])
	if _, ok := ds.Labels[CellLabel]; ok || ds.Spec.Encryption.ProfileRef != "tls" {
		t.Errorf("a switched datastore carries no cell label and the cell's profile: labels %v, profile %s", ds.Labels, ds.Spec.Encryption.ProfileRef)
	}
	if WarmsFirst(spec) {
		t.Error("a Switched study warms no cell before round 1: only one profile of a datastore is up")
	}
}

// A Switched study's report says how long the switches into each profile took, in every
// rendering, and its method says that the switches were not measured.
func TestReportListsSwitches(t *testing.T) {
	spec := &v1alpha1.TradeoffStudySpec{Datastores: v1alpha1.DatastoresSwitched, Matrix: v1alpha1.StudyMatrix{Profiles: []string{"plain", "tls"}, Baseline: "plain"}}
	cells := Cells("s", spec, map[string]Profile{})
	cells[1].SwitchDurations = []metav1.Duration{{Duration: 95 * time.Second}, {Duration: 181 * time.Second}, {Duration: 120 * time.Second}}
	r := Analyze("s", spec, 1, cells).Report
	line := "- tls-on-3: 95, 181, 120 s (median 120 s)"
	html, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for format, out := range map[string]string{"markdown": r.Markdown(), "text": r.Text(), "html": string(html)} {
		if !strings.Contains(out, line) || strings.Contains(out, "plain-on-3: ") {
			t.Errorf("%s report lacks the switches of tls-on-3 alone:\n%s", format, out)
		}
	}
	if !strings.Contains(r.Method, "the switch is not measured") || !strings.Contains(r.Method, "Rounds come in blocks of 2 (spec.runsPerSwitch)") {
		t.Errorf("method does not explain the switches: %s", r.Method)
	}
	// What more rounds would cost counts the switches they take: two runs of 20 s after 30 s
	// of warm-up, and half the median switch into tls (one switch per two rounds).
	spec.Workload.Duration, spec.WarmUp = &metav1.Duration{Duration: 20 * time.Second}, &metav1.Duration{Duration: 30 * time.Second}
	if got, want := roundTime(spec, cells), 160*time.Second; got != want {
		t.Errorf("a round takes at least %s, want %s", got, want)
	}
}

// A Switched study runs each profile twice per switch: rounds pair up in one shared order, so
// a schedule has half the changes of profile, every round still holds every cell once, and the
// rounds a stopping rule adds leave those that ran as they were.
func TestSwitchedRoundsRunEachCellTwicePerSwitch(t *testing.T) {
	spec := &v1alpha1.TradeoffStudySpec{Datastores: v1alpha1.DatastoresSwitched,
		Matrix: v1alpha1.StudyMatrix{Profiles: []string{"a", "b", "c", "d", "e"}, Baseline: "a"}}
	cells := Cells("s", spec, map[string]Profile{})
	together := RoundsTogether(spec)
	if together != 2 || RoundsTogether(&v1alpha1.TradeoffStudySpec{}) != 1 {
		t.Fatalf("rounds together: %d switched, %d per cell; want 2 and 1", together, RoundsTogether(&v1alpha1.TradeoffStudySpec{}))
	}
	changes := func(schedule []string) int {
		n := 0
		for i := 1; i < len(schedule); i++ {
			if schedule[i] != schedule[i-1] {
				n++
			}
		}
		return n
	}
	for _, rounds := range []int{5, 6} {
		schedule := Schedule(cells, rounds, together, false, 7)
		if len(schedule) != 5*rounds {
			t.Fatalf("%d rounds: %d entries, want %d", rounds, len(schedule), 5*rounds)
		}
		// The k-th run of every cell belongs to round k: each round holds every cell once.
		byRound := map[int][]string{}
		for pos, name := range schedule {
			k := Repetition(schedule, pos)
			byRound[k] = append(byRound[k], name)
		}
		for k, names := range byRound {
			if slices.Sort(names); !slices.Equal(names, []string{"a-on-3", "b-on-3", "c-on-3", "d-on-3", "e-on-3"}) {
				t.Errorf("%d rounds: round %d holds %v", rounds, k+1, names)
			}
		}
		// Blocks of two rounds run each cell twice in a row; an odd count starts with one round.
		blocks := rounds / 2
		if rounds%2 == 1 {
			blocks++
		}
		if got, most := changes(schedule), 5*blocks-1; got > most || got < most-blocks+1 {
			t.Errorf("%d rounds: %d changes of cell, want about %d: %v", rounds, got, most, schedule)
		}
		first := 0
		if rounds%2 == 1 {
			first = 5
		}
		for pos := first; pos < len(schedule); pos += 2 {
			if schedule[pos] != schedule[pos+1] {
				t.Errorf("%d rounds: positions %d and %d are %s and %s; a paired block runs a cell twice in a row", rounds, pos, pos+1, schedule[pos], schedule[pos+1])
			}
		}
		if longer := Schedule(cells, rounds+together, together, false, 7); !slices.Equal(longer[:len(schedule)], schedule) {
			t.Errorf("adding a block to %d rounds reordered what ran:\n%v\n%v", rounds, schedule, longer)
		}
	}
	if slices.Equal(Schedule(cells, 6, 1, false, 7), Schedule(cells, 6, 2, false, 7)) {
		t.Error("a study of one datastore per cell runs its rounds apart, not in pairs")
	}
	// spec.runsPerSwitch: three rounds per switch, six rounds in two blocks of one order each.
	spec.RunsPerSwitch = ptr.To[int32](3)
	if RoundsTogether(spec) != 3 {
		t.Fatalf("runsPerSwitch 3: %d rounds together", RoundsTogether(spec))
	}
	schedule := Schedule(cells, 6, 3, false, 7)
	for pos := 0; pos < len(schedule); pos += 3 {
		if run := schedule[pos : pos+3]; run[0] != run[1] || run[1] != run[2] {
			t.Errorf("positions %d to %d: %v; a block of three rounds runs a cell three times in a row", pos, pos+2, run)
		}
	}
	if got := changes(schedule); got > 9 {
		t.Errorf("six rounds of five cells, three per switch: %d changes of cell, want at most 9", got)
	}
}

// The first run after each switch loads the data again and warms up until steady; runs of the
// same block, and a cell that stays across a block boundary, reuse what is loaded.
func TestFirstRunAfterEverySwitchLoads(t *testing.T) {
	spec := v1alpha1.TradeoffStudySpec{Datastores: v1alpha1.DatastoresSwitched, RunsPerSwitch: ptr.To[int32](2),
		Matrix:   v1alpha1.StudyMatrix{Profiles: []string{"a", "b"}, Baseline: "a"},
		Workload: v1alpha1.Workload{Duration: &metav1.Duration{Duration: 30 * time.Second}}}
	st := &v1alpha1.TradeoffStudy{Spec: spec}
	st.Name = "s"
	st.Status.Cells = Cells("s", &spec, map[string]Profile{})
	st.Status.Schedule = []string{"a-on-3", "a-on-3", "b-on-3", "b-on-3", "b-on-3", "b-on-3", "a-on-3", "a-on-3"}
	a, b := &st.Status.Cells[0], &st.Status.Cells[1]
	for _, c := range []struct {
		cell  *v1alpha1.StudyCell
		k     int
		fresh bool
	}{{a, 0, true}, {a, 1, false}, {b, 0, true}, {b, 1, false}, {b, 2, false}, {b, 3, false}, {a, 2, true}, {a, 3, false}, {a, 9, false}} {
		if got := AfterSwitch(st, c.cell, c.k); got != c.fresh && c.k > 0 {
			t.Errorf("%s run %d: after a switch %t, want %t", c.cell.Name, c.k, got, c.fresh)
		}
		spec := Benchmark(st, c.cell, c.k).Spec
		if spec.SkipLoad == c.fresh || (spec.SteadyWarmUp != nil) != c.fresh {
			t.Errorf("%s run %d: skip load %t, steady warm-up %v; a first run after a switch is %t", c.cell.Name, c.k, spec.SkipLoad, spec.SteadyWarmUp, c.fresh)
		}
	}
	st.Spec.Load = v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](300)}
	st.Spec.WarmUp = &metav1.Duration{Duration: 10 * time.Second}
	st.Spec.SteadyWarmUp = &v1alpha1.SteadyWarmUp{Minimum: metav1.Duration{Duration: time.Minute}}
	for k, want := range map[int]time.Duration{0: time.Minute, 1: 10 * time.Second, 2: time.Minute} {
		if got := Benchmark(st, a, k).Spec.WarmUp.Duration; got != want {
			t.Errorf("fixed rate, %s run %d: warm-up %s, want %s (a first run after a switch warms up for steadyWarmUp's minimum)", a.Name, k, got, want)
		}
	}
	st.Spec.Datastores = v1alpha1.DatastoresPerCell
	if AfterSwitch(st, a, 2) || !Benchmark(st, a, 2).Spec.SkipLoad {
		t.Error("a cell with a datastore of its own loads once")
	}
}

// Two datastores (one per acceleration) switched between two profiles: only the datastore of
// the next run may switch, and the first run waits until both are up.
func TestOnlyTheNextRunsDatastoreSwitches(t *testing.T) {
	spec := v1alpha1.TradeoffStudySpec{Datastores: v1alpha1.DatastoresSwitched,
		Matrix: v1alpha1.StudyMatrix{Profiles: []string{"a", "b"}, Baseline: "a",
			Acceleration: []v1alpha1.Acceleration{v1alpha1.AccelerationAvailable, v1alpha1.AccelerationEmulatedOff}}}
	cells := Cells("s", &spec, map[string]Profile{})
	byName := map[string]*v1alpha1.StudyCell{}
	for i := range cells {
		byName[cells[i].Name] = &cells[i]
	}
	on, off := byName["a-on-3"].Datastore, byName["a-off-3"].Datastore
	if on == off || byName["b-on-3"].Datastore != on || byName["b-off-3"].Datastore != off {
		t.Fatalf("datastores: %+v", cells)
	}
	schedule := []string{"b-off-3", "a-on-3", "b-on-3", "a-off-3"}
	for next, want := range []string{off, on, on, off, ""} {
		if got := Turn(cells, schedule, next); got != want {
			t.Errorf("Turn at %d = %q, want %q", next, got, want)
		}
	}
	byName["a-on-3"].State = v1alpha1.CellFailed
	if got := Turn(cells, schedule, 1); got != on {
		t.Errorf("Turn skips a failed cell to the next live one: got %q, want %q (b-on-3's)", got, on)
	}
	byName["a-on-3"].State = v1alpha1.CellPending

	if got := Coming(cells, schedule); got != "a-on-3" {
		t.Errorf("Coming = %q with no datastore up, want the first datastore's first cell a-on-3", got)
	}
	byName["a-on-3"].State = v1alpha1.CellMeasuring
	if got := Coming(cells, schedule); got != "b-off-3" {
		t.Errorf("Coming = %q with one datastore up, want the other's first cell b-off-3", got)
	}
	byName["b-off-3"].State = v1alpha1.CellMeasuring
	if got := Coming(cells, schedule); got != "" {
		t.Errorf("Coming = %q with both up, want none", got)
	}
}
