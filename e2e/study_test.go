//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/study"
)

// A real TradeoffStudy on the Kind cluster: four Cassandra profiles × hardware AES on and
// emulated off × three interleaved repetitions, one single-node datastore per cell. It
// completes, every cell is measured, and the report ConfigMap carries the analysis.
func TestStudyOfFourCassandraProfiles(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "study", "restricted")
	profiles := []string{"plaintext", "tls12-aes128-gcm", "tls13-aes128-gcm", "tls13-chacha20"}
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
			Workload:    v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](2000), Duration: &metav1.Duration{Duration: 15 * time.Second}},
			Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, VirtualUsers: ptr.To[int32](16)},
			WarmUp:      &metav1.Duration{Duration: 5 * time.Second},
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
	eventually(t, 50*time.Minute, "the study completes", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return err
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
	if len(s.Status.Cells) != 8 {
		t.Errorf("%d cells, want 8", len(s.Status.Cells))
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: s.Status.ReportConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	r, err := study.ParseReport([]byte(cm.Data[study.ReportJSONKey]))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report (kubectl secured study report tls-cost -n %s):\n%s", ns.Name, r.Text())
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
