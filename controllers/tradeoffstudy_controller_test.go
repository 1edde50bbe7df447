package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/study"
	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/internal/test/testpki"
)

func plaintextProfile(name string) *v1alpha1.EncryptionProfile {
	off := v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}
	return &v1alpha1.EncryptionProfile{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.EncryptionProfileSpec{EncryptionSettings: v1alpha1.EncryptionSettings{
			ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: off},
			NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: off},
		}},
	}
}

// serveCell gives a study cell's datastore a real Cassandra node: the study created the
// datastore, the test plays kubelet and cert-manager for it.
func serveCell(t *testing.T, name, address string, jmx int) {
	t.Helper()
	g := NewWithT(t)
	ds := &v1alpha1.SecuredDatastore{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	enc := effectiveOf(g, ds)
	ds = get(g, ds)
	tls := enc.ClientToNode.Mode != v1alpha1.ChannelDisabled || enc.NodeToNode.Mode != v1alpha1.ChannelDisabled
	node := dataplane.Node{Address: address, JMXPort: jmx, Step: cassandra.Target(enc), PasswordAuthentication: cassandra.PasswordAuthentication(ds, nil)}
	if tls {
		node.CA, node.DNSNames = testpki.New(t), cassandra.DNSNames(ds, "cluster.local")
	}
	dataplane.StartCassandra(t, node)
	if tls {
		issueCertificateBy(t, ds, node.CA)
	}
	rollOut(t, ds)
	runningPod(t, ds, 0, address)
}

// setPaused changes spec.paused with a merge patch: the controller writes status all along, so
// an update of a read copy would conflict.
func setPaused(g Gomega, name string, paused bool) {
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"paused":%t}}`, paused)))
	g.Expect(env.Client.Patch(context.Background(), &v1alpha1.TradeoffStudy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}, patch)).To(Succeed())
}

// closedLoopStudy is the smallest study of profiles against baseline (the first profile):
// YCSB A at full speed, the highest rank within a 10% budget.
func closedLoopStudy(name string, profiles ...string) *v1alpha1.TradeoffStudy {
	return &v1alpha1.TradeoffStudy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1alpha1.TradeoffStudySpec{
			Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
			Matrix:   v1alpha1.StudyMatrix{Profiles: profiles, Baseline: profiles[0]},
			Workload: v1alpha1.Workload{Preset: "A"},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
			Decision: v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](10)},
		},
	}
}

func getStudy(g Gomega, name string) *v1alpha1.TradeoffStudy {
	return get(g, &v1alpha1.TradeoffStudy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
}

func cellOf(g Gomega, st *v1alpha1.TradeoffStudy, name string) v1alpha1.StudyCell {
	i := slices.IndexFunc(st.Status.Cells, func(c v1alpha1.StudyCell) bool { return c.Name == name })
	g.Expect(i).NotTo(Equal(-1), "cell %s", name)
	return st.Status.Cells[i]
}

// finishRepetition plays the k6 clients of the study's current repetition: the benchmark
// controller creates the Jobs, the test writes what the pods would report.
func finishRepetition(t *testing.T, g Gomega, st *v1alpha1.TradeoffStudy, ops func(cell string, k int) int64) string {
	t.Helper()
	pos := int(st.Status.NextRun)
	name := st.Status.Schedule[pos]
	cell := cellOf(g, st, name)
	k := study.Repetition(st.Status.Schedule, pos)
	bench := study.BenchmarkName(&cell, k)
	if k == 0 || study.AfterSwitch(st, &cell, k) { // the first run after a switch loads again
		finishJob(t, g, bench+"-load", 0, summaryJSON(t, "load", 1000, 0))
	}
	finishJob(t, g, bench+"-run-0", 0, summaryJSON(t, "run", ops(name, k), 0))
	return name
}

// A Switched study with two datastores (one per acceleration): the first run waits until both
// are up, and a datastore switches only when its own run is next, so no switch (a rolling
// restart on a real cluster) runs under the other datastore's measured run.
func TestSwitchedStudySwitchesOneDatastoreAtATime(t *testing.T) {
	g := NewWithT(t)
	create(t, plaintextProfile("sw2-plain"))
	create(t, plaintextProfile("sw2-other"))
	s := closedLoopStudy("sw2", "sw2-plain", "sw2-other")
	s.Spec.Datastores, s.Spec.RunsPerSwitch = v1alpha1.DatastoresSwitched, ptr.To[int32](1)
	s.Spec.Matrix.ClusterSizes = []int32{1}
	s.Spec.Matrix.Acceleration = []v1alpha1.Acceleration{v1alpha1.AccelerationAvailable, v1alpha1.AccelerationEmulatedOff}
	s.Spec.Repetitions, s.Spec.Seed = ptr.To[int32](2), ptr.To[int64](3)
	create(t, s)

	var st *v1alpha1.TradeoffStudy
	g.Eventually(func(g Gomega) {
		st = getStudy(g, "sw2")
		g.Expect(st.Status.Schedule).To(HaveLen(8))
	}).Should(Succeed())
	schedule := st.Status.Schedule
	datastoreOf := func(cell string) string { return cellOf(g, st, cell).Datastore }
	profileOf := func(g Gomega, datastore string) string {
		return get(g, &v1alpha1.SecuredDatastore{ObjectMeta: metav1.ObjectMeta{Name: datastore, Namespace: "default"}}).Spec.Encryption.ProfileRef
	}
	first, second := datastoreOf(schedule[0]), ""
	for _, name := range schedule {
		if d := datastoreOf(name); d != first {
			second = d
			break
		}
	}
	g.Expect(second).NotTo(BeEmpty(), "two datastores: %v", schedule)
	serveCell(t, first, "127.0.0.101", 7301)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(getStudy(g, "sw2").Status.Conditions, v1alpha1.ConditionProgressing).Message).To(
			ContainSubstring("waits for every datastore to be up"))
	}, time.Minute).Should(Succeed(), "the first run waits for the other datastore")
	g.Consistently(func(g Gomega) {
		var list v1alpha1.DatastoreBenchmarkList
		g.Expect(env.Client.List(context.Background(), &list, client.InNamespace("default"), client.MatchingLabels{study.StudyLabel: "sw2"})).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}, 3*time.Second).Should(Succeed(), "no run while a datastore is still coming up")
	serveCell(t, second, "127.0.0.102", 7302)

	ran := map[string]string{} // datastore → profile of its last run
	for pos, name := range schedule {
		cell := cellOf(g, st, name)
		bench := study.BenchmarkName(&cell, study.Repetition(schedule, pos))
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: bench}, &v1alpha1.DatastoreBenchmark{})).To(Succeed())
		}, time.Minute).Should(Succeed(), "repetition %d (%s) starts", pos+1, name)
		for _, other := range []string{first, second} {
			if last, ok := ran[other]; ok && other != cell.Datastore {
				g.Expect(profileOf(g, other)).To(Equal(last), "repetition %d (%s): datastore %s switched ahead of its turn", pos+1, name, other)
			}
		}
		ran[cell.Datastore] = cell.Profile
		finishRepetition(t, g, getStudy(g, "sw2"), func(string, int) int64 { return 10000 })
		g.Eventually(func(g Gomega) { g.Expect(getStudy(g, "sw2").Status.NextRun).To(BeNumerically(">", pos)) }, time.Minute).Should(Succeed())
	}
	g.Eventually(func(g Gomega) { g.Expect(getStudy(g, "sw2").Status.Phase).To(Equal(v1alpha1.StudySucceeded)) }, time.Minute).Should(Succeed())
}

// A study of three profiles (and one pruned) on real Cassandra nodes: the cell whose wire
// drifts from its profile fails instead of being measured, the others run in the planned
// interleaved order through a pause and an operator restart, and the analysis recommends
// the TLS profile at its measured overhead.
func TestStudyRunsInterleavedRepetitionsAndRecommends(t *testing.T) {
	g := NewWithT(t)
	create(t, plaintextProfile("st-plain"))
	create(t, tls13Profile("st-tls", "TLS_AES_128_GCM_SHA256"))
	drift := tls13Profile("st-drift", "TLS_AES_128_GCM_SHA256")
	drift.Spec.ClientToNode.TLS.Engine, drift.Spec.NodeToNode.TLS.Engine = v1alpha1.TLSEngineOpenSSL, v1alpha1.TLSEngineOpenSSL
	create(t, drift)
	arOnly := tls13Profile("st-ar-only", "TLS_AES_128_GCM_SHA256")
	arOnly.Spec.NodeToNode = &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}}
	create(t, arOnly)

	s := &v1alpha1.TradeoffStudy{
		ObjectMeta: metav1.ObjectMeta{Name: "st", Namespace: "default"},
		Spec: v1alpha1.TradeoffStudySpec{
			Template:    v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
			Matrix:      v1alpha1.StudyMatrix{Profiles: []string{"st-plain", "st-tls", "st-drift", "st-ar-only"}, Baseline: "st-plain", ClusterSizes: []int32{1}},
			Constraints: &v1alpha1.StudyConstraints{MinimumRank: ptr.To[int32](100)},
			Workload:    v1alpha1.Workload{Preset: "A"},
			Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
			Repetitions: ptr.To[int32](6),
			Precision:   &v1alpha1.StudyPrecision{HalfWidthPercent: 2, MaxRounds: 7},
			Seed:        ptr.To[int64](7),
			Decision:    v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](25)},
			Cost:        &v1alpha1.StudyCost{PricePerNodeHour: resource.MustParse("0.5")},
		},
	}
	create(t, s)

	// Plan: the AR-only profile is pruned by rank, the baseline kept although below it.
	var schedule []string
	g.Eventually(func(g Gomega) {
		st := getStudy(g, "st")
		g.Expect(st.Status.Phase).To(Equal(v1alpha1.StudyRunning))
		ar := cellOf(g, st, "st-ar-only-on-1")
		g.Expect(ar.State).To(Equal(v1alpha1.CellPruned))
		g.Expect(ar.Reason).To(Equal("rank 60 is below constraints.minimumRank 100"))
		g.Expect(cellOf(g, st, "st-plain-on-1").Datastore).To(Equal("st-c0"))
		schedule = st.Status.Schedule
	}).Should(Succeed())
	g.Expect(schedule).To(Equal(study.Schedule(getStudy(g, "st").Status.Cells, 6, 1, false, 7)), "the schedule is the seeded RMIT order")
	g.Expect(schedule).To(HaveLen(18))
	g.Expect(recordedEvents(g, s, "Planned")).To(ContainElement(ContainSubstring("4 cells (1 pruned by the constraints), 18 repetitions")))

	serveCell(t, "st-c0", "127.0.0.91", 7291)
	serveCell(t, "st-c1", "127.0.0.92", 7292)
	serveCell(t, "st-c2", "127.0.0.93", 7293)
	g.Eventually(func(g Gomega) {
		st := getStudy(g, "st")
		for _, name := range []string{"st-plain-on-1", "st-tls-on-1"} {
			c := cellOf(g, st, name)
			g.Expect(c.State).To(Equal(v1alpha1.CellMeasuring), "cell %s: %s", name, c.Reason)
		}
		d := cellOf(g, st, "st-drift-on-1")
		g.Expect(d.State).To(Equal(v1alpha1.CellFailed))
		g.Expect(d.Reason).To(ContainSubstring("the wire does not match the profile (EncryptionVerified=False CipherSuiteDrift"))
	}, 90*time.Second).Should(Succeed())

	// Operations in a 10 s run: both cells drift up by 40 per round; the TLS cell also wobbles
	// by a few percent, so six rounds leave its overhead interval with a half-width above 2 points.
	wobble := []int64{0, 500, -400, 300, -300, 200, 100}
	ops := func(cell string, k int) int64 {
		if cell == "st-tls-on-1" {
			return 8000 + int64(40*k) + wobble[k]
		}
		return 10000 + int64(40*k)
	}
	var ran []string
	step := func() {
		t.Helper()
		st := getStudy(g, "st")
		before := st.Status.NextRun
		ran = append(ran, finishRepetition(t, g, st, ops))
		// Under a loaded CI machine a restarted manager takes a while to pick the work up; the
		// failure says what the study and its benchmark were waiting for.
		g.Eventually(func(g Gomega) {
			now := getStudy(g, "st")
			var b v1alpha1.DatastoreBenchmark
			_ = env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default",
				Name: study.BenchmarkName(ptr.To(cellOf(g, st, st.Status.Schedule[before])), study.Repetition(st.Status.Schedule, int(before)))}, &b)
			var jobs batchv1.JobList
			_ = env.Client.List(context.Background(), &jobs, client.InNamespace("default"))
			var seen []string
			for _, j := range jobs.Items {
				if strings.HasPrefix(j.Name, b.Name) {
					seen = append(seen, fmt.Sprintf("%s (succeeded %d, conditions %d, deleting %t)", j.Name, j.Status.Succeeded, len(j.Status.Conditions), j.DeletionTimestamp != nil))
				}
			}
			g.Expect(now.Status.NextRun).To(BeNumerically(">", before), "study %s: %+v; benchmark %s %s: %+v, runs %+v; jobs %v",
				now.Status.Phase, now.Status.Conditions, b.Name, b.Status.Phase, b.Status.Conditions, b.Status.Runs, seen)
		}, time.Minute).Should(Succeed())
	}
	step()
	step()
	restartOperator(t)
	step()

	// Paused: the running repetition finishes and counts, no further one starts.
	setPaused(g, "st", true)
	step()
	g.Eventually(func(g Gomega) { g.Expect(getStudy(g, "st").Status.Phase).To(Equal(v1alpha1.StudyPaused)) }).Should(Succeed())
	next := getStudy(g, "st")
	pending := study.BenchmarkName(ptr.To(cellOf(g, next, next.Status.Schedule[next.Status.NextRun])), study.Repetition(next.Status.Schedule, int(next.Status.NextRun)))
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: pending}, &v1alpha1.DatastoreBenchmark{}))
	}, 2*time.Second).Should(BeTrue(), "a paused study starts no repetition")
	setPaused(g, "st", false)

	for {
		st := getStudy(g, "st")
		if st.Status.Phase == v1alpha1.StudySucceeded {
			break
		}
		if int(st.Status.NextRun) >= len(st.Status.Schedule) || cellOf(g, st, st.Status.Schedule[st.Status.NextRun]).State == v1alpha1.CellFailed {
			time.Sleep(100 * time.Millisecond) // the controller skips it, adds a round or concludes
			continue
		}
		step()
	}
	// spec.precision: after six rounds the TLS cell's interval has a half-width above 2 points, so a
	// seventh round runs, the last that maxRounds allows.
	st := getStudy(g, "st")
	g.Expect(st.Status.Rounds).To(BeEquivalentTo(7))
	g.Expect(st.Status.Schedule).To(HaveLen(20), "round 7 measures the TLS cell and its baseline, not the failed cell")
	g.Expect(st.Status.Schedule[:18]).To(Equal(schedule), "the added round leaves the planned ones as they ran")
	g.Expect(recordedEvents(g, s, v1alpha1.ReasonRoundAdded)).To(ConsistOf(HavePrefix("round 7 of at most 7: the overhead intervals of st-tls-on-1 (14.9..23.8%) have a half-width above 2.0 points")))
	var measured []string
	for _, name := range st.Status.Schedule {
		if name != "st-drift-on-1" {
			measured = append(measured, name)
		}
	}
	g.Expect(ran).To(Equal(measured), "repetitions ran in the planned order")

	tls := cellOf(g, st, "st-tls-on-1")
	g.Expect(tls.State).To(Equal(v1alpha1.CellDone))
	g.Expect(tls.RunsDone).To(BeEquivalentTo(7))
	for k, run := range tls.Runs {
		g.Expect(run.Round).To(BeEquivalentTo(k+1), "runs record their round, which pairs them with the baseline's")
	}
	g.Expect(tls.MedianThroughputOpsPerSec).To(BeEquivalentTo(834))
	// Paired by round: seven rounds, each TLS run below its round's plaintext run.
	g.Expect(tls.OverheadPercent).To(Equal("19.1"))
	g.Expect(tls.OverheadCI95).To(Equal("16.3..22.6"))
	g.Expect(tls.PValue).To(Equal("0.0156"))
	g.Expect(*tls.Significant).To(BeTrue())
	rec := st.Status.Recommendation
	g.Expect(rec).NotTo(BeNil())
	g.Expect(rec.Profile).To(Equal("st-tls"))
	g.Expect(rec.ExtraNodesPercent).To(Equal("23.6"))
	g.Expect(rec.ExtraCostPerHour).To(Equal("0.12"))
	g.Expect(condition(st.Status.Conditions, v1alpha1.ConditionComplete).Reason).To(Equal("Succeeded"))

	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "st-report"}, cm)).To(Succeed())
	g.Expect(cm.Data[study.ReportMarkdownKey]).To(ContainSubstring("**Recommended: st-tls.**"))
	g.Expect(cm.Data[study.ReportMarkdownKey]).To(ContainSubstring("st-drift-on-1 failed: the wire does not match the profile"))
	report, err := study.ParseReport([]byte(cm.Data[study.ReportJSONKey]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(report.Phase).To(Equal("Succeeded"))
	wall, err := time.ParseDuration(report.WallTime)
	g.Expect(err).NotTo(HaveOccurred(), "the report says how long the study took: %q", report.WallTime)
	g.Expect(wall).To(BeNumerically("<=", time.Since(st.CreationTimestamp.Time)+time.Second))
	g.Expect(cm.Data[study.ReportMarkdownKey]).To(ContainSubstring("Wall time: " + report.WallTime))
	g.Expect(report.Precision.Imprecise).To(Equal([]string{"st-tls-on-1 (16.3..22.6%)"}), "maxRounds stopped the study short of its target")
	labels := []string{"default", "st", "Cassandra", "st-tls", "Available", "1", "A"}
	g.Expect(testutil.ToFloat64(studyOverhead.WithLabelValues(labels...))).To(BeNumerically("~", 0.191, 1e-9))
	g.Expect(testutil.ToFloat64(studyRecommendedCells.WithLabelValues(labels...))).To(Equal(1.0))

	// What the study created is deleted; the report stays.
	g.Eventually(func(g Gomega) {
		var dss v1alpha1.SecuredDatastoreList
		g.Expect(env.Client.List(context.Background(), &dss, client.MatchingLabels{study.StudyLabel: "st"})).To(Succeed())
		for _, ds := range dss.Items {
			g.Expect(ds.DeletionTimestamp).NotTo(BeNil(), "datastore %s", ds.Name)
		}
		var bs v1alpha1.DatastoreBenchmarkList
		g.Expect(env.Client.List(context.Background(), &bs, client.MatchingLabels{study.StudyLabel: "st"})).To(Succeed())
		g.Expect(bs.Items).To(BeEmpty())
	}).Should(Succeed())
}

// At a fixed rate a run cannot judge its own warm-up, so every cell warms up before round 1,
// once all of them are up, the two datastores side by side: each cell's warm-up benchmark loads
// its data, and no measured run starts until every live cell is warm; round 1's runs then skip
// the load.
func TestStudyAtFixedRateWarmsEveryCellBeforeRoundOne(t *testing.T) {
	g := NewWithT(t)
	create(t, plaintextProfile("wt-plain"))
	create(t, tls13Profile("wt-tls", "TLS_AES_128_GCM_SHA256"))
	s := &v1alpha1.TradeoffStudy{
		ObjectMeta: metav1.ObjectMeta{Name: "wt", Namespace: "default"},
		Spec: v1alpha1.TradeoffStudySpec{
			Template:     v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
			Matrix:       v1alpha1.StudyMatrix{Profiles: []string{"wt-plain", "wt-tls"}, Baseline: "wt-plain", ClusterSizes: []int32{1}},
			Workload:     v1alpha1.Workload{Preset: "B", Duration: &metav1.Duration{Duration: 15 * time.Second}},
			Load:         v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](1000), MaxDroppedPercent: ptr.To[int32](5)},
			WarmUp:       &metav1.Duration{Duration: 3 * time.Second},
			SteadyWarmUp: &v1alpha1.SteadyWarmUp{Minimum: metav1.Duration{Duration: 40 * time.Second}, Maximum: metav1.Duration{Duration: 2 * time.Minute}},
			Repetitions:  ptr.To[int32](6),
			Seed:         ptr.To[int64](3),
			Decision:     v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](25)},
		},
	}
	create(t, s)
	warmUps := func() (names []string) {
		for _, ds := range []string{"wt-c0", "wt-c1"} {
			if env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: ds + "-warm"}, &v1alpha1.DatastoreBenchmark{}) == nil {
				names = append(names, ds)
			}
		}
		return names
	}

	// A cell that is up waits while another still comes up: warm-ups on a machine busy
	// starting JVMs time out.
	serveCell(t, "wt-c0", "127.0.0.96", 7296)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(getStudy(g, "wt").Status.Conditions, v1alpha1.ConditionProgressing).Message).To(
			MatchRegexp(`^round 1 waits for the cells to warm up, each datastore's in turn: wt-(plain|tls)-on-1 \(provisioning\), wt-(plain|tls)-on-1 \(waits for every cell to be up\)$`))
	}, 90*time.Second).Should(Succeed())
	g.Consistently(warmUps, 2*time.Second).Should(BeEmpty(), "no warm-up while a cell provisions")

	// Then both cells warm up side by side, each on its own datastore.
	serveCell(t, "wt-c1", "127.0.0.97", 7297)
	g.Eventually(warmUps, 90*time.Second).Should(HaveLen(2), "the cells warm up once every datastore is verified")
	first, next := "wt-c0", "wt-c1"
	finishJob(t, g, first+"-warm-load", 0, summaryJSON(t, "load", 1000, 0))
	finishJob(t, g, first+"-warm-run-0", 0, summaryJSON(t, "run", 10000, 0))
	for _, ds := range []string{first, next} {
		b := &v1alpha1.DatastoreBenchmark{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: ds + "-warm"}, b)).To(Succeed())
		g.Expect(b.Spec.SkipLoad).To(BeFalse(), "the warm-up of %s loads the data", ds)
		g.Expect(b.Spec.WarmUp.Duration).To(Equal(40 * time.Second))
		g.Expect(b.Spec.QuietStart).To(BeNil(), "a warm-up's figures are discarded")
	}

	// One cell warm: round 1 still waits, and says for what.
	g.Eventually(func(g Gomega) {
		st := getStudy(g, "wt")
		g.Expect(condition(st.Status.Conditions, v1alpha1.ConditionProgressing).Message).To(
			MatchRegexp(`^round 1 waits for the cells to warm up, each datastore's in turn: wt-(plain|tls)-on-1 \(Loading\)$`))
	}).Should(Succeed())
	firstStudy := getStudy(g, "wt")
	firstBench := study.BenchmarkName(ptr.To(cellOf(g, firstStudy, firstStudy.Status.Schedule[0])), 0)
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: firstBench}, &v1alpha1.DatastoreBenchmark{}))
	}, 2*time.Second).Should(BeTrue(), "no measured run while a cell is still cold")

	finishJob(t, g, next+"-warm-load", 0, summaryJSON(t, "load", 1000, 0))
	finishJob(t, g, next+"-warm-run-0", 0, summaryJSON(t, "run", 10000, 0))

	// Then each cell runs in once, one at a time in the cells' order, as round 1 will run it;
	// what the run-ins measure is discarded, a missed schedule included.
	missed := func(dropped int64) func(*benchresult.Summary) {
		return func(s *benchresult.Summary) { s.DroppedIterations = dropped }
	}
	absent := func(name string) func() bool {
		return func() bool {
			return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &v1alpha1.DatastoreBenchmark{}))
		}
	}
	cells := firstStudy.Status.Cells
	for i := range cells {
		in := study.RunInName(&cells[i])
		g.Eventually(func(g Gomega) {
			b := get(g, &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: in, Namespace: "default"}})
			g.Expect(b.Spec.SkipLoad).To(BeTrue(), "the warm-up loaded the data")
			g.Expect(b.Spec.WarmUp.Duration).To(Equal(3*time.Second), "a run-in warms up as a run does")
			g.Expect(condition(getStudy(g, "wt").Status.Conditions, v1alpha1.ConditionProgressing).Message).To(HavePrefix(
				"round 1 waits for the run-in of cell " + cells[i].Name))
		}, 30*time.Second).Should(Succeed())
		if i+1 < len(cells) {
			g.Consistently(absent(study.RunInName(&cells[i+1])), 2*time.Second).Should(BeTrue(), "one run-in at a time")
		}
		g.Expect(absent(firstBench)()).To(BeTrue(), "round 1 waits for the run-ins")
		finishJob(t, g, in+"-run-0", 0, summaryJSON(t, "run", 10500, 0, missed(4500)))
	}
	var b v1alpha1.DatastoreBenchmark
	g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: firstBench}, &b)
	}).Should(Succeed(), "round 1 starts once every cell is warm and has run in")
	g.Expect(b.Spec.SkipLoad).To(BeTrue(), "the warm-up loaded the data")
	g.Expect(b.Spec.SteadyWarmUp).To(BeNil())
	g.Expect(b.Spec.WarmUp.Duration).To(Equal(3 * time.Second))

	// Both runs of the benchmark miss the rate (15% and 11% of the schedule dropped): the
	// benchmark fails, but the study sets it aside and measures round 1 again, as it would a
	// busy run, rather than failing the cell.
	finishJob(t, g, firstBench+"-run-0", 0, summaryJSON(t, "run", 12750, 0, missed(2250)))
	finishJob(t, g, firstBench+"-run-1", 0, summaryJSON(t, "run", 13350, 0, missed(1650)))
	again := &v1alpha1.DatastoreBenchmark{}
	g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: firstBench + "-a1"}, again)
	}).Should(Succeed(), "round 1 is measured again by a benchmark of its own")
	g.Expect(again.Spec.SkipLoad).To(BeTrue())
	g.Expect(again.Spec.QuietStart.After).NotTo(BeNil(), "the repeat waits for quiet after the failed benchmark's window")
	g.Expect(recordedEvents(g, s, v1alpha1.ReasonRunSetAside)).To(ConsistOf(HaveSuffix(
		"round 1: the clients could not keep the fixed rate (dropped 15.0%, 11.0% of the schedule): set aside and measured again (repeat 1 of 2)")))
	finishJob(t, g, firstBench+"-a1-run-0", 0, summaryJSON(t, "run", 15000, 0))
	g.Eventually(func(g Gomega) {
		st := getStudy(g, "wt")
		g.Expect(st.Status.NextRun).To(BeEquivalentTo(1))
		cell := cellOf(g, st, st.Status.Schedule[0])
		g.Expect(cell.State).NotTo(Equal(v1alpha1.CellFailed), cell.Reason)
		g.Expect(cell.Runs).To(HaveLen(1), "round 1's run counts; the warm-up and the run-ins do not")
		g.Expect(cell.Runs[0].Benchmark).To(Equal(firstBench + "-a1"))
		g.Expect(cell.SetAside).To(HaveLen(1))
		g.Expect(cell.SetAside[0].Benchmark).To(Equal(firstBench))
	}).Should(Succeed())

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cancel":true}}`))
	g.Expect(env.Client.Patch(context.Background(), &v1alpha1.TradeoffStudy{ObjectMeta: metav1.ObjectMeta{Name: "wt", Namespace: "default"}}, patch)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(getStudy(g, "wt").Status.Phase).To(Equal(v1alpha1.StudyCancelled)) }).Should(Succeed())
}

// Value sizes are the workload's, not the datastore's: a study of two profiles at two value
// sizes runs two datastores, not four, each shared by the cells of its profile.
func TestStudyCellsOfOneProfileShareADatastoreAcrossValueSizes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	create(t, plaintextProfile("sizes-plain"))
	create(t, tls13Profile("sizes-tls", "TLS_AES_128_GCM_SHA256"))
	s := closedLoopStudy("sizes", "sizes-plain", "sizes-tls")
	s.Spec.Matrix.ClusterSizes, s.Spec.Matrix.FieldLengths = []int32{1}, []int32{10, 1000}
	create(t, s)
	g.Eventually(func(g Gomega) {
		var list v1alpha1.SecuredDatastoreList
		g.Expect(env.Client.List(ctx, &list, client.InNamespace("default"), client.MatchingLabels{study.StudyLabel: "sizes"})).To(Succeed())
		var names []string
		for _, ds := range list.Items {
			names = append(names, ds.Name)
			g.Expect(ds.Labels).NotTo(HaveKey(study.CellLabel), "datastore %s is shared by two cells", ds.Name)
			g.Expect(ds.OwnerReferences).To(HaveLen(1))
		}
		g.Expect(names).To(ConsistOf("sizes-c0", "sizes-c2"))
		st := getStudy(g, "sizes")
		g.Expect(st.Status.Cells).To(HaveLen(4))
		g.Expect(cellOf(g, st, "sizes-tls-on-1-f1000").Datastore).To(Equal("sizes-c2"))
		g.Expect(cellOf(g, st, "sizes-tls-on-1-f1000").BenchmarkPrefix).To(Equal("sizes-c3"))
	}).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, s)).To(Succeed())
}

// A Switched study runs its profiles on one datastore, served here by one real Cassandra node:
// before each run the study switches the datastore to the run's profile and starts the run
// only once the datastore's status is of that spec, Ready and verified; the other profile's
// cell stands by meanwhile. Every switch is timed, announced in events and listed in the
// report. (The two profiles carry the same wire, so a switch needs no restart here; the rolls a
// real switch takes are the datastore controller's, tested on their own.)
func TestSwitchedStudyRunsEveryProfileOnOneDatastore(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	create(t, plaintextProfile("sw-plain"))
	create(t, plaintextProfile("sw-other"))
	s := closedLoopStudy("sw", "sw-plain", "sw-other")
	s.Spec.Datastores, s.Spec.Matrix.ClusterSizes = v1alpha1.DatastoresSwitched, []int32{1}
	s.Spec.Repetitions, s.Spec.Seed = ptr.To[int32](3), ptr.To[int64](5)
	create(t, s)

	var schedule []string
	g.Eventually(func(g Gomega) {
		st := getStudy(g, "sw")
		g.Expect(st.Status.Phase).To(Equal(v1alpha1.StudyRunning))
		g.Expect(cellOf(g, st, "sw-plain-on-1").Datastore).To(Equal("sw-c0"))
		g.Expect(cellOf(g, st, "sw-other-on-1").Datastore).To(Equal("sw-c0"))
		schedule = st.Status.Schedule
		g.Expect(schedule).To(Equal(study.Schedule(st.Status.Cells, 3, 2, false, 5)), "one round, then a pair that runs each profile twice per switch")
	}).Should(Succeed())
	switches := 0
	for i := 1; i < len(schedule); i++ {
		if schedule[i] != schedule[i-1] {
			switches++
		}
	}
	g.Expect(switches).To(BeNumerically(">=", 2), "seed 5 must make the study switch: %v", schedule)
	datastoreOf := func(g Gomega) *v1alpha1.SecuredDatastore {
		return get(g, &v1alpha1.SecuredDatastore{ObjectMeta: metav1.ObjectMeta{Name: "sw-c0", Namespace: "default"}})
	}
	first := cellOf(g, getStudy(g, "sw"), schedule[0]).Profile
	g.Eventually(func(g Gomega) { g.Expect(datastoreOf(g).Spec.Encryption.ProfileRef).To(Equal(first)) }).Should(Succeed(), "created with the first run's profile")
	serveCell(t, "sw-c0", "127.0.0.98", 7298)

	other := map[string]string{"sw-plain-on-1": "sw-other-on-1", "sw-other-on-1": "sw-plain-on-1"}
	for pos, name := range schedule {
		st := getStudy(g, "sw")
		cell := cellOf(g, st, name)
		bench := study.BenchmarkName(&cell, study.Repetition(schedule, pos))
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: bench}, &v1alpha1.DatastoreBenchmark{})).To(Succeed())
		}, time.Minute).Should(Succeed(), "repetition %d (%s) starts", pos+1, name)
		// The run started: the datastore runs its profile, and the other cell is not measurable.
		ds := datastoreOf(g)
		g.Expect(ds.Spec.Encryption.ProfileRef).To(Equal(cell.Profile), "repetition %d of %s", pos+1, name)
		g.Expect(ds.Status.ObservedGeneration).To(Equal(ds.Generation))
		// The study writes its status once, at the end of the pass that created the benchmark.
		g.Eventually(func(g Gomega) {
			now := getStudy(g, "sw")
			g.Expect(cellOf(g, now, name).State).To(Equal(v1alpha1.CellMeasuring))
			g.Expect(cellOf(g, now, other[name]).State).To(BeElementOf(v1alpha1.CellPending, v1alpha1.CellStandby, v1alpha1.CellDone))
		}, 10*time.Second).Should(Succeed(), "repetition %d of %s", pos+1, name)
		finishRepetition(t, g, getStudy(g, "sw"), func(string, int) int64 { return 10000 })
		g.Eventually(func(g Gomega) { g.Expect(getStudy(g, "sw").Status.NextRun).To(BeNumerically(">", pos)) }, time.Minute).Should(Succeed())
	}

	g.Eventually(func(g Gomega) { g.Expect(getStudy(g, "sw").Status.Phase).To(Equal(v1alpha1.StudySucceeded)) }, time.Minute).Should(Succeed())
	st := getStudy(g, "sw")
	timed := len(cellOf(g, st, "sw-plain-on-1").SwitchDurations) + len(cellOf(g, st, "sw-other-on-1").SwitchDurations)
	g.Expect(timed).To(Equal(switches), "every switch is timed")
	g.Expect(recordedEvents(g, s, v1alpha1.ReasonSwitching)).To(HaveLen(switches))
	g.Expect(recordedEvents(g, s, v1alpha1.ReasonSwitched)).To(HaveLen(switches))
	g.Expect(recordedEvents(g, s, v1alpha1.ReasonSwitched)).To(ContainElement(MatchRegexp(`^datastore sw-c0 runs profile sw-\w+ for cell sw-\w+-on-1, Ready and verified \d+s after the switch$`)))
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sw-report"}, cm)).To(Succeed())
	g.Expect(cm.Data[study.ReportMarkdownKey]).To(ContainSubstring("## Switches"))
	var list v1alpha1.SecuredDatastoreList
	g.Expect(env.Client.List(ctx, &list, client.InNamespace("default"), client.MatchingLabels{study.StudyLabel: "sw"})).To(Succeed())
	for _, ds := range list.Items {
		g.Expect(ds.Name).To(Equal("sw-c0"), "a Switched study of one setting creates one datastore")
	}
}

// A Shared study measures plaintext and TLS on one real Cassandra node: it creates one datastore
// per acceleration, running the TLS profile with its client channel Optional, waits until the
// probe verified that the node accepts both, and warms and measures the baseline's cell with
// plaintext clients and the other cell's with clients pinned to the profile's suite. A profile
// that protects internode traffic too is refused before anything is created.
func TestSharedStudyMeasuresPlaintextAndTLSOnOneNode(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	create(t, plaintextProfile("sh-plain"))
	clientOnly := tls13Profile("sh-tls", "TLS_AES_128_GCM_SHA256")
	clientOnly.Spec.NodeToNode = &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}}
	create(t, clientOnly)
	create(t, tls13Profile("sh-both", "TLS_AES_128_GCM_SHA256"))
	shared := func(name, other string) *v1alpha1.TradeoffStudy {
		s := closedLoopStudy(name, "sh-plain", other)
		s.Spec.Datastores, s.Spec.Matrix.ClusterSizes = v1alpha1.DatastoresShared, []int32{1}
		s.Spec.Load = v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](1000), MaxDroppedPercent: ptr.To[int32](5)}
		s.Spec.WarmUp, s.Spec.Seed = &metav1.Duration{Duration: 3 * time.Second}, ptr.To[int64](3)
		return s
	}
	datastores := func(g Gomega, name string) []v1alpha1.SecuredDatastore {
		var list v1alpha1.SecuredDatastoreList
		g.Expect(env.Client.List(ctx, &list, client.InNamespace("default"), client.MatchingLabels{study.StudyLabel: name})).To(Succeed())
		return list.Items
	}

	refused := shared("shx", "sh-both")
	create(t, refused)
	g.Eventually(func(g Gomega) {
		ready := condition(getStudy(g, "shx").Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(ready.Reason).To(Equal(v1alpha1.ReasonNotShareable))
		g.Expect(ready.Message).To(Equal("spec.datastores Shared: profile sh-both also protects nodeToNode, which the baseline's plaintext runs on the same nodes would pay for too; " +
			"choose a profile that protects only clientToNode (such as tls13-client-only), or set spec.datastores to PerCell or Switched"))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(datastores(g, "shx")).To(BeEmpty()) }, 2*time.Second).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, refused)).To(Succeed())

	s := shared("sh", "sh-tls")
	create(t, s)
	g.Eventually(func(g Gomega) {
		list := datastores(g, "sh")
		g.Expect(list).To(HaveLen(1), "both cells share one datastore")
		enc := list[0].Spec.Encryption
		g.Expect(list[0].Name).To(Equal("sh-c0"))
		g.Expect(enc.ProfileRef).To(Equal("sh-tls"))
		g.Expect(enc.ClientToNode).NotTo(BeNil())
		g.Expect(enc.ClientToNode.Mode).To(Equal(v1alpha1.ChannelOptional))
	}).Should(Succeed())
	serveCell(t, "sh-c0", "127.0.0.103", 7303)
	g.Eventually(func(g Gomega) {
		ds := get(g, &v1alpha1.SecuredDatastore{ObjectMeta: metav1.ObjectMeta{Name: "sh-c0", Namespace: "default"}})
		g.Expect(condition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified).Status).To(Equal(metav1.ConditionTrue), "the probe found plaintext and the pinned suite accepted")
		st := getStudy(g, "sh")
		g.Expect(cellOf(g, st, "sh-plain-on-1").State).To(Equal(v1alpha1.CellMeasuring))
		g.Expect(cellOf(g, st, "sh-tls-on-1").State).To(Equal(v1alpha1.CellMeasuring))
	}, 2*time.Minute).Should(Succeed())

	// The cells' warm-ups take turns on their one datastore, and each connects the way its runs
	// will: its first Job shows it. The first loads the data the second then finds.
	for _, warm := range []string{"sh-c0-warm", "sh-c1-warm"} {
		plaintext := warm == "sh-c0-warm"
		if !plaintext {
			g.Consistently(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: warm}, &v1alpha1.DatastoreBenchmark{}))
			}, 2*time.Second).Should(BeTrue(), "%s waits until the warm-up before it on the same datastore is done", warm)
			finishJob(t, g, "sh-c0-warm-run-0", 0, summaryJSON(t, "run", 10000, 0))
		}
		firstJob := warm + "-load"
		if !plaintext {
			firstJob = warm + "-run-0"
		}
		g.Eventually(func(g Gomega) {
			b := get(g, &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: warm, Namespace: "default"}})
			g.Expect(b.Spec.Target.DatastoreRef.Plaintext).To(Equal(plaintext), warm)
			g.Expect(b.Spec.SkipLoad).To(Equal(!plaintext), "only the first warm-up on the datastore loads the table")
			job := get(g, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: firstJob, Namespace: "default"}})
			var names []string
			for _, e := range job.Spec.Template.Spec.Containers[0].Env {
				names = append(names, e.Name)
			}
			if plaintext {
				g.Expect(names).NotTo(ContainElement("CQL_TLS_CIPHER_SUITE"), "%s connects in plaintext", warm)
				g.Expect(b.Status.Profile).To(Equal("sh-tls+overrides/plaintext"))
			} else {
				g.Expect(names).To(ContainElement("CQL_TLS_CIPHER_SUITE"), "%s connects over TLS", warm)
				g.Expect(b.Status.Profile).To(Equal("sh-tls+overrides"))
			}
		}, time.Minute).Should(Succeed())
		if plaintext {
			finishJob(t, g, warm+"-load", 0, summaryJSON(t, "load", 1000, 0))
		}
	}
	finishJob(t, g, "sh-c1-warm-run-0", 0, summaryJSON(t, "run", 10000, 0))
	// Each cell runs in once, connecting as its runs will.
	for _, in := range []string{"sh-c0-runin", "sh-c1-runin"} {
		g.Eventually(func(g Gomega) {
			b := get(g, &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: in, Namespace: "default"}})
			g.Expect(b.Spec.Target.DatastoreRef.Name).To(Equal("sh-c0"))
			g.Expect(b.Spec.Target.DatastoreRef.Plaintext).To(Equal(in == "sh-c0-runin"), in)
		}, time.Minute).Should(Succeed())
		finishJob(t, g, in+"-run-0", 0, summaryJSON(t, "run", 10000, 0))
	}
	first := getStudy(g, "sh")
	firstCell := cellOf(g, first, first.Status.Schedule[0])
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: study.BenchmarkName(&firstCell, 0), Namespace: "default"}}
	g.Eventually(func(g Gomega) { get(g, b) }, time.Minute).Should(Succeed(), "round 1 starts once both cells are warm")
	g.Expect(b.Spec.Target.DatastoreRef.Name).To(Equal("sh-c0"))
	g.Expect(b.Spec.Target.DatastoreRef.Plaintext).To(Equal(firstCell.Profile == "sh-plain"))

	// Round 1's runs are each cell's first: they wait for quiet nodes. Round 2's first follows a
	// run on the same datastore and starts at once.
	for pos := range 3 {
		st := getStudy(g, "sh")
		cell := cellOf(g, st, st.Status.Schedule[pos])
		b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: study.BenchmarkName(&cell, study.Repetition(st.Status.Schedule, pos)), Namespace: "default"}}
		g.Eventually(func(g Gomega) { get(g, b) }, time.Minute).Should(Succeed())
		g.Expect(b.Spec.QuietStart == nil).To(Equal(pos == 2), "repetition %d (%s): quiet start %+v", pos+1, b.Name, b.Spec.QuietStart)
		if pos < 2 {
			finishJob(t, g, b.Name+"-run-0", 0, summaryJSON(t, "run", 10000, 0))
			g.Eventually(func(g Gomega) {
				st := getStudy(g, "sh")
				g.Expect(st.Status.NextRun).To(BeEquivalentTo(pos + 1))
				g.Expect(st.Status.LastRunDatastore).To(Equal("sh-c0"))
			}, time.Minute).Should(Succeed())
		}
	}
	g.Expect(env.Client.Delete(ctx, s)).To(Succeed())
}
