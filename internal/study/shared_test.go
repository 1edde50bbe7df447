package study

import (
	"maps"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
)

// A Shared study runs one datastore per acceleration: the non-baseline profile with its client
// channel Optional, whichever cell it is built for; the baseline's benchmarks, warm-up included,
// connect in plaintext, the other profile's over TLS.
func TestSharedStudyMeasuresBothProfilesOnOneDatastore(t *testing.T) {
	s := &v1alpha1.TradeoffStudy{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: v1alpha1.TradeoffStudySpec{
		Datastores: v1alpha1.DatastoresShared,
		Template:   v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
		Matrix: v1alpha1.StudyMatrix{Profiles: []string{"tls", "plain"}, Baseline: "plain", ClusterSizes: []int32{1},
			Acceleration: []v1alpha1.Acceleration{v1alpha1.AccelerationAvailable, v1alpha1.AccelerationEmulatedOff}},
		Load: v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](1000)},
	}}
	cells := Cells("s", &s.Spec, map[string]Profile{"plain": {}, "tls": {Rank: 60, ClientTLS: true}})
	got := map[string]string{}
	for _, c := range cells {
		got[c.Name] = c.Datastore
	}
	want := map[string]string{"tls-on-1": "s-c0", "plain-on-1": "s-c0", "tls-off-1": "s-c2", "plain-off-1": "s-c2"}
	if !maps.Equal(got, want) {
		t.Fatalf("datastores: got %v, want %v", got, want)
	}
	if !WarmsFirst(&s.Spec) {
		t.Error("a Shared study's datastores are all up before round 1, so its cells warm up then, as a PerCell study's do")
	}
	data := map[string]string{}
	for _, c := range cells {
		data[c.Name] = WarmUpData(s, &c)
	}
	if data["tls-on-1"] != data["plain-on-1"] || data["tls-off-1"] != data["plain-off-1"] || data["tls-on-1"] == data["tls-off-1"] {
		t.Errorf("the two cells of a datastore read one table, which one warm-up loads for both; the datastores hold their own: %v", data)
	}
	for _, c := range cells {
		ds := Datastore(s, &c)
		enc := ds.Spec.Encryption
		if enc.ProfileRef != "tls" || enc.ClientToNode == nil || enc.ClientToNode.Mode != v1alpha1.ChannelOptional {
			t.Errorf("cell %s: datastore runs profile %q with clientToNode %+v; want tls with mode Optional", c.Name, enc.ProfileRef, enc.ClientToNode)
		}
		if _, labelled := ds.Labels[CellLabel]; labelled {
			t.Errorf("cell %s: the datastore is shared and must carry no cell label", c.Name)
		}
		if off := c.Acceleration == v1alpha1.AccelerationEmulatedOff; off != (ds.Spec.Placement != nil && ds.Spec.Placement.EmulateNoAcceleration) {
			t.Errorf("cell %s: placement %+v", c.Name, ds.Spec.Placement)
		}
		plaintext := c.Profile == "plain"
		for _, b := range []*v1alpha1.DatastoreBenchmark{Benchmark(s, &c, 0), WarmUpBenchmark(s, &c, false)} {
			ref := b.Spec.Target.DatastoreRef
			if ref.Name != c.Datastore || ref.Plaintext != plaintext {
				t.Errorf("cell %s: benchmark %s targets %+v; want %s with plaintext %v", c.Name, b.Name, *ref, c.Datastore, plaintext)
			}
		}
	}
	for i := range cells {
		c := &cells[i]
		for k, us := range []float64{600, 610, 590, 605, 595, 600} {
			c.Runs = append(c.Runs, v1alpha1.StudyRun{Round: int32(k + 1), ThroughputOpsPerSec: 1000, ServerCPUMicrosPerOp: decimal(us)})
		}
	}
	if spreads := Analyze("s", &s.Spec, 1, cells).Report.BaselineSpreads; len(spreads) != 1 || !strings.Contains(spreads[0].Sentence(), "every overhead here compares runs on one datastore (spec.datastores Shared), so none carries it") {
		t.Errorf("the baseline spread of a Shared study must say that no overhead carries it: %+v", spreads)
	}
	if m := methodOf(&s.Spec); !strings.Contains(m, "spec.datastores Shared") || !strings.Contains(m, "runs tls with its client-to-node channel Optional") {
		t.Errorf("the method does not say that both profiles ran on one datastore:\n%s", m)
	}

	// Without Shared, nothing connects in plaintext on its own.
	s.Spec.Datastores = v1alpha1.DatastoresPerCell
	for _, c := range Cells("s", &s.Spec, map[string]Profile{}) {
		if b := Benchmark(s, &c, 0); b.Spec.Target.DatastoreRef.Plaintext {
			t.Errorf("PerCell cell %s: benchmark asks for plaintext", c.Name)
		}
		if ds := Datastore(s, &c); ds.Spec.Encryption.ProfileRef != c.Profile || ds.Spec.Encryption.ClientToNode != nil {
			t.Errorf("PerCell cell %s: datastore encryption %+v; want the cell's profile alone", c.Name, ds.Spec.Encryption)
		}
	}
}

// Shared refuses profiles whose plaintext runs would pay for what the other profile does
// beyond the client channel, and says which profile and what.
// In a Shared study the two cells of a datastore run one after the other in every round, each
// first in half the rounds, and the datastores' order is random; a PerCell study's schedule is
// what it was before adjacency existed.
func TestASharedStudyRunsTheCellsOfADatastoreBackToBack(t *testing.T) {
	cells := []v1alpha1.StudyCell{{Name: "plain-on-1", Datastore: "s-c0"}, {Name: "tls-on-1", Datastore: "s-c0"},
		{Name: "plain-off-1", Datastore: "s-c2"}, {Name: "tls-off-1", Datastore: "s-c2"}}
	datastore := map[string]string{}
	for _, c := range cells {
		datastore[c.Name] = c.Datastore
	}
	const rounds = 8
	schedule := Schedule(cells, rounds, 1, true, 2026)
	if len(schedule) != 4*rounds {
		t.Fatalf("%d entries, want %d", len(schedule), 4*rounds)
	}
	first := map[string]int{}
	datastoreFirst := map[string]int{}
	for r := range rounds {
		round := schedule[4*r : 4*r+4]
		if datastore[round[0]] != datastore[round[1]] || datastore[round[2]] != datastore[round[3]] || datastore[round[1]] == datastore[round[2]] {
			t.Errorf("round %d: %v; the cells of a datastore run one after the other", r+1, round)
		}
		sorted := slices.Sorted(slices.Values(round))
		if !slices.Equal(sorted, []string{"plain-off-1", "plain-on-1", "tls-off-1", "tls-on-1"}) {
			t.Errorf("round %d holds %v, want every cell once", r+1, round)
		}
		first[round[0]]++
		first[round[2]]++
		datastoreFirst[datastore[round[0]]]++
	}
	for _, c := range cells {
		if first[c.Name] != rounds/2 {
			t.Errorf("%s ran first on its datastore in %d of %d rounds, want half: %v", c.Name, first[c.Name], rounds, schedule)
		}
	}
	if datastoreFirst["s-c0"] == 0 || datastoreFirst["s-c2"] == 0 {
		t.Errorf("the datastores' order never changed in %d rounds: %v", rounds, schedule)
	}
	if longer := Schedule(cells, rounds+1, 1, true, 2026); !slices.Equal(longer[:len(schedule)], schedule) {
		t.Errorf("an added round reordered what ran:\n%v\n%v", schedule, longer)
	}
	if perCell := Schedule(cells, rounds, 1, false, 2026); slices.Equal(perCell, schedule) {
		t.Error("without adjacency the cells are permuted one by one")
	}
}

func TestNotShareable(t *testing.T) {
	spec := &v1alpha1.TradeoffStudySpec{Datastores: v1alpha1.DatastoresShared, Matrix: v1alpha1.StudyMatrix{Profiles: []string{"base", "other"}, Baseline: "base"}}
	for _, tc := range []struct {
		name        string
		base, other Profile
		want        string
	}{
		{"fits", Profile{}, Profile{ClientTLS: true}, ""},
		{"baseline encrypts", Profile{ClientTLS: true}, Profile{ClientTLS: true},
			"baseline base protects clientToNode, which its runs on the shared nodes cannot leave out; use a baseline that protects nothing"},
		{"baseline tunnels", Profile{Beyond: []string{"vpn"}}, Profile{ClientTLS: true}, "baseline base protects vpn,"},
		{"no client TLS", Profile{}, Profile{Beyond: []string{"atRest"}}, "profile other leaves the client-to-node channel in plaintext"},
		{"internode too", Profile{}, Profile{ClientTLS: true, Beyond: []string{"nodeToNode", "clientSide"}},
			"profile other also protects nodeToNode, clientSide, which the baseline's plaintext runs on the same nodes would pay for too; choose a profile that protects only clientToNode"},
	} {
		got := NotShareable(spec, map[string]Profile{"base": tc.base, "other": tc.other})
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q; want it to contain %q", tc.name, got, tc.want)
		}
	}
	if got := NotShareable(&v1alpha1.TradeoffStudySpec{Matrix: spec.Matrix}, map[string]Profile{"base": {ClientTLS: true}}); got != "" {
		t.Errorf("a PerCell study is never refused for sharing: %q", got)
	}
}

// Protection reads what a profile protects from its spec.
func TestProtection(t *testing.T) {
	off := v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}
	on := v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}
	for _, tc := range []struct {
		name      string
		s         v1alpha1.EncryptionSettings
		clientTLS bool
		beyond    string
	}{
		{"plaintext", v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: off}, NodeToNode: &v1alpha1.NodeToNodeEncryption{ChannelEncryption: off}}, false, ""},
		{"empty", v1alpha1.EncryptionSettings{}, false, ""},
		{"client only", v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: on}, NodeToNode: &v1alpha1.NodeToNodeEncryption{ChannelEncryption: off}}, true, ""},
		{"both channels", v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: on}, NodeToNode: &v1alpha1.NodeToNodeEncryption{ChannelEncryption: on}}, true, "nodeToNode"},
		{"wireguard", v1alpha1.EncryptionSettings{VPN: &v1alpha1.VPNSettings{Type: v1alpha1.VPNWireGuard}}, false, "vpn"},
		{"no tunnel", v1alpha1.EncryptionSettings{VPN: &v1alpha1.VPNSettings{Type: v1alpha1.VPNNone}}, false, ""},
		{"at rest and client side", v1alpha1.EncryptionSettings{AtRest: &v1alpha1.AtRestEncryption{}, ClientSide: &v1alpha1.ClientSideEncryption{}}, false, "atRest,clientSide"},
		{"hbase", v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{}}, false, "hbase"},
	} {
		clientTLS, beyond := Protection(&tc.s)
		if clientTLS != tc.clientTLS || strings.Join(beyond, ",") != tc.beyond {
			t.Errorf("%s: clientTLS %v, beyond %v; want %v, %q", tc.name, clientTLS, beyond, tc.clientTLS, tc.beyond)
		}
	}
}

// A profile measured significantly cheaper than plaintext gets a caution that names what the
// design let differ between the runs, in the text and Markdown reports; one whose interval
// includes zero, or that costs more, gets none.
func TestCheaperThanTheBaselineIsACaution(t *testing.T) {
	s := &v1alpha1.TradeoffStudySpec{
		Datastores: v1alpha1.DatastoresSwitched, RunsPerSwitch: ptr.To[int32](6),
		Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
		Matrix:   v1alpha1.StudyMatrix{Profiles: []string{"plaintext", "tls", "tls-even"}, Baseline: "plaintext", ClusterSizes: []int32{3}},
		Workload: v1alpha1.Workload{Preset: "A"},
		Decision: v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](15)},
	}
	// Server CPU-µs per operation: tls at 87% of plaintext's every round, tls-even around it.
	cpu := map[string][]float64{
		"plaintext-on-3": {7644, 8440, 7807, 7274, 7144, 6359},
		"tls-on-3":       {6650, 7343, 6792, 6328, 6215, 5532},
		"tls-even-on-3":  {7900, 8100, 7900, 7100, 7300, 6200},
	}
	cells := Cells("s", s, map[string]Profile{"tls": {Rank: 100}, "tls-even": {Rank: 90}})
	for i := range cells {
		c := &cells[i]
		c.State = v1alpha1.CellDone
		for k, us := range cpu[c.Name] {
			c.Runs = append(c.Runs, v1alpha1.StudyRun{Round: int32(k + 1), ThroughputOpsPerSec: 150, ServerCPUMicrosPerOp: decimal(us)})
		}
	}
	r := Analyze("s", s, 1, cells).Report
	if len(r.CheaperThanBaseline) != 1 {
		t.Fatalf("cautions %q; want one, for tls-on-3 only", r.CheaperThanBaseline)
	}
	want := "tls-on-3 was measured cheaper than plaintext (-14.9%, 95% interval -14.9..-14.9%). Encryption adds work to every operation"
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	// The HTML page embeds the report's JSON, which holds the caution too: look for the paragraph.
	if !strings.Contains(string(page), "<strong>Caution:</strong> "+want) {
		t.Errorf("the HTML report shows no caution paragraph:\n%s", page)
	}
	for name, out := range map[string]string{"text": r.Text(), "Markdown": r.Markdown()} {
		if !strings.Contains(out, want) || !strings.Contains(out, "each profile ran 6 times in a row after its own switch") {
			t.Errorf("the %s report lacks the caution and its cause:\n%s", name, out)
		}
		if strings.Contains(out, "tls-even-on-3 was measured cheaper") {
			t.Errorf("the %s report cautions about a cell whose interval includes zero", name)
		}
	}
	if got := confounder(&v1alpha1.TradeoffStudySpec{}); !strings.Contains(got, "one per cell") {
		t.Errorf("a PerCell study's confounder: %q", got)
	}
}

// Warm-ups run side by side on different datastores, up to WarmUpsTogether, and in turn on one
// datastore; none while a cell still comes up.
func TestWarmUpsTakeTurnsOnADatastoreAndShareTheMachineUpToALimit(t *testing.T) {
	cell := &v1alpha1.StudyCell{Name: "tls-off-1", Datastore: "s-c2"}
	for _, c := range []struct {
		warming      map[string]string
		provisioning bool
		want         string
	}{
		{nil, false, ""},
		{map[string]string{"s-c0": "tls-on-1"}, false, ""},
		{map[string]string{"s-c2": "plain-off-1"}, false, "plain-off-1's warm-up on datastore s-c2"},
		{map[string]string{"s-c0": "tls-on-1", "s-c4": "plain-on-3"}, false, "2 warm-ups at once"},
		{nil, true, "every cell to be up"},
	} {
		if got := WarmUpWaits(cell, c.warming, c.provisioning); got != c.want {
			t.Errorf("warming %v, provisioning %t: waits for %q, want %q", c.warming, c.provisioning, got, c.want)
		}
	}
}
