//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/study"
)

// A real TradeoffStudy on the Kind cluster: three Cassandra profiles × hardware AES on and
// emulated off × three interleaved repetitions of 30 s, one single-node datastore per cell.
// Along the way the operator is restarted (the study must resume where it was, never going
// back) and a benchmark client pod is killed (its run must be marked invalid and repeated). It
// completes, every cell is measured exactly three times, and the report ConfigMap carries the
// analysis, with the server CPU per operation and the background of the runs from the
// kubelets' counters.
func TestStudyOfThreeCassandraProfilesThroughAnOperatorRestartAndALostClient(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "study", "restricted")
	profiles := []string{"plaintext", "tls12-aes128-gcm", "tls13-aes128-gcm"}
	for _, p := range profiles {
		applyProfile(t, c, p)
	}
	s := &v1alpha1.TradeoffStudy{
		ObjectMeta: metav1.ObjectMeta{Name: "tls-cost", Namespace: ns.Name},
		Spec: v1alpha1.TradeoffStudySpec{
			// The matrix sets the nodes.
			Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra, Cassandra: smallCassandra(0)},
			Matrix: v1alpha1.StudyMatrix{Profiles: profiles, Baseline: "plaintext",
				Acceleration: []v1alpha1.Acceleration{v1alpha1.AccelerationAvailable, v1alpha1.AccelerationEmulatedOff}, ClusterSizes: []int32{1}},
			Workload: v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](2000), Duration: &metav1.Duration{Duration: 30 * time.Second}},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, VirtualUsers: ptr.To[int32](16)},
			WarmUp:   &metav1.Duration{Duration: 5 * time.Second},
			// Each cell's first run warms up until steady, bounded so the test stays bounded.
			SteadyWarmUp: &v1alpha1.SteadyWarmUp{Minimum: metav1.Duration{Duration: 10 * time.Second}, Maximum: metav1.Duration{Duration: 40 * time.Second}},
			// One repeat at most of a run whose nodes were busier than a core with other things.
			Background:  &v1alpha1.StudyBackground{MaxCores: ptr.To(resource.MustParse("1")), Repeats: 1},
			Repetitions: ptr.To[int32](3),
			Seed:        ptr.To[int64](2026),
			Decision:    v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](15)},
			Cost:        &v1alpha1.StudyCost{PricePerNodeHour: resource.MustParse("0.192")},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	last := ""
	restartedAt, killed := int32(-1), ""
	invalid := map[string]string{} // benchmark and run → why it does not count
	quiet := map[string]v1alpha1.RunQuietStart{}
	eventually(t, 50*time.Minute, "the study completes", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		if restartedAt >= 0 && s.Status.NextRun < restartedAt {
			t.Fatalf("after the operator restart the study went back from run %d to %d", restartedAt, s.Status.NextRun)
		}
		if s.Status.Phase == v1alpha1.StudyRunning && restartedAt < 0 && s.Status.NextRun >= 2 {
			restartedAt = s.Status.NextRun
			restartOperator(t, c)
			t.Logf("%6s operator restarted at run %d/%d", time.Since(start).Round(time.Second), restartedAt, len(s.Status.Schedule))
		}
		if s.Status.Phase == v1alpha1.StudyRunning && killed == "" && s.Status.NextRun >= 5 {
			if killed = killRunningClient(t, c, ns.Name); killed != "" {
				t.Logf("%6s client pod %s killed during run %d", time.Since(start).Round(time.Second), killed, s.Status.NextRun)
			}
		}
		var benchmarks v1alpha1.DatastoreBenchmarkList
		if err := c.List(ctx, &benchmarks, client.InNamespace(ns.Name)); err != nil {
			return err
		}
		for _, b := range benchmarks.Items {
			for _, r := range b.Status.Runs {
				key := fmt.Sprintf("%s run %d", b.Name, r.Index)
				if r.Phase == v1alpha1.RunInvalid && invalid[key] == "" {
					invalid[key] = r.InvalidReason
					t.Logf("%6s %s invalid: %s", time.Since(start).Round(time.Second), key, r.InvalidReason)
				}
				if q := r.QuietStart; q != nil && q.Outcome != v1alpha1.QuietWaiting && quiet[key].Outcome == "" {
					quiet[key] = *q
					t.Logf("%6s %s started %s after %d s, background %s cores %s", time.Since(start).Round(time.Second), key, q.Outcome, q.WaitedSeconds, q.BackgroundCores, q.Message)
				}
			}
		}
		progress := ""
		if p := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionProgressing); p != nil {
			progress = p.Message
		}
		if line := fmt.Sprintf("%s %d/%d: %s", s.Status.Phase, s.Status.NextRun, len(s.Status.Schedule), progress); line != last {
			t.Logf("%6s %s", time.Since(start).Round(time.Second), line)
			last = line
		}
		switch s.Status.Phase {
		case v1alpha1.StudySucceeded:
			return nil
		case v1alpha1.StudyFailed, v1alpha1.StudyCancelled:
			t.Fatalf("study ended %s: %+v", s.Status.Phase, s.Status.Conditions)
		}
		return fmt.Errorf("phase %s", s.Status.Phase)
	})
	t.Logf("study completed in %s", time.Since(start).Round(time.Second))

	for _, cell := range s.Status.Cells {
		if cell.State != v1alpha1.CellDone || cell.RunsDone != 3 {
			t.Errorf("cell %s: %s with %d runs (%s)", cell.Name, cell.State, cell.RunsDone, cell.Reason)
		}
	}
	if restartedAt < 0 {
		t.Error("the operator was never restarted: the study ended before run 2")
	}
	if killed == "" {
		t.Error("no client pod was found running to kill")
	} else if len(invalid) == 0 {
		t.Errorf("client pod %s was killed, yet no run was marked invalid", killed)
	}
	if len(s.Status.Cells) != 6 {
		t.Errorf("%d cells, want 6", len(s.Status.Cells))
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: s.Status.ReportConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	r, err := study.ParseReport([]byte(cm.Data[study.ReportJSONKey]))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report (kubectl secured study report tls-cost -n %s):\n%s\n%s", ns.Name, r.Text(), r.Markdown())
	runs, accounted, warmed := 0, 0, 0
	for _, cell := range r.Cells {
		for _, rc := range cell.SetAside {
			t.Logf("cell %s round %d set aside: %s", cell.Name, rc.Round, rc.Busy)
		}
		for _, rc := range cell.RunCosts {
			runs++
			if rc.ThroughputCV == nil {
				t.Errorf("cell %s round %d: no coefficient of variation of its per-second throughput", cell.Name, rc.Round)
			}
			switch {
			case rc.Round == 1 && rc.WarmUpSeconds != nil:
				warmed++
				t.Logf("cell %s: warmed up for %.0f s (steady %v)", cell.Name, *rc.WarmUpSeconds, *rc.WarmUpSteady)
			case rc.Round > 1 && rc.WarmUpSeconds != nil:
				t.Errorf("cell %s round %d warmed up until steady; only first runs do", cell.Name, rc.Round)
			}
			if rc.ServerCPUMicrosPerOp != nil && *rc.ServerCPUMicrosPerOp > 0 && rc.BackgroundCores != nil {
				accounted++
			} else {
				t.Logf("cell %s round %d: no server CPU (%s)", cell.Name, rc.Round, rc.Unavailable)
			}
		}
	}
	// The killed client's run, and a first run set aside for its background, are measured
	// again after a fixed warm-up.
	if warmed < len(r.Cells)-2 {
		t.Errorf("%d of %d cells' first runs warmed up until steady; want all but two at most", warmed, len(r.Cells))
	}
	// make deploy points the operator at the Kind Prometheus, which scrapes the kubelets.
	if accounted < runs*3/4 {
		t.Errorf("%d of %d runs have server CPU per operation and background; want at least three quarters", accounted, runs)
	}
	// Every run waited for quiet nodes (half the 1-core limit, at most 90 s) and measured them.
	measured, waited := 0, 0
	for _, q := range quiet {
		if q.Outcome == v1alpha1.QuietReached || q.Outcome == v1alpha1.QuietTimedOut {
			measured++
		}
		if q.WaitedSeconds > 0 {
			waited++
		}
	}
	t.Logf("quiet start: %d runs seen, %d measured their nodes' background, %d waited for it", len(quiet), measured, waited)
	if measured < runs*3/4 {
		t.Errorf("%d of the %d runs seen measured their nodes' quiet before starting; want at least three quarters of %d", measured, len(quiet), runs)
	}
	if s.Status.Recommendation == nil {
		t.Error("no recommendation")
	}
	eventually(t, 3*time.Minute, "the study's datastores are deleted", func() error {
		var list v1alpha1.SecuredDatastoreList
		if err := c.List(ctx, &list, client.InNamespace(ns.Name)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d datastores left", len(list.Items))
		}
		return nil
	})
}

// restartOperator deletes the operator's pods; its Deployment starts new ones, which must take
// over from the status alone.
func restartOperator(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "secured-system", Name: "secured-datastore-operator"}, d); err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		t.Fatal(err)
	}
}

// killRunningClient deletes a benchmark client pod in the middle of its measured run, as a
// node drain or an eviction would; it returns the pod's name, or "" when none runs right now.
func killRunningClient(t *testing.T, c client.Client, namespace string) string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(namespace), client.MatchingLabels{benchmark.LabelPhase: benchmark.PhaseRun}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			if err := c.Delete(context.Background(), &p); err != nil {
				t.Fatal(err)
			}
			return p.Name
		}
	}
	return ""
}
