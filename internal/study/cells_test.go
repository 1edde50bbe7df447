package study

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
)

func TestObserveCell(t *testing.T) {
	c := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: "says " + reason}
	}
	ready := c(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonNodesReady)
	tests := map[string]struct {
		state              v1alpha1.CellState
		conds              []metav1.Condition
		want               v1alpha1.CellState
		failed, measurable bool
		reason             string
	}{
		"a new datastore provisions": {state: v1alpha1.CellPending, want: v1alpha1.CellProvisioning},
		"the profile does not resolve": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{c(v1alpha1.ConditionProfileResolved, metav1.ConditionFalse, v1alpha1.ReasonInvalidProfile)},
			want: v1alpha1.CellFailed, failed: true, reason: "its profile does not resolve for this datastore: says InvalidProfile"},
		"ready, not yet probed": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready}, want: v1alpha1.CellProvisioning},
		"ready and verified": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionTrue, v1alpha1.ReasonVerified)},
			want: v1alpha1.CellMeasuring, measurable: true},
		"already measuring": {state: v1alpha1.CellMeasuring, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionTrue, v1alpha1.ReasonVerified)},
			want: v1alpha1.CellMeasuring},
		"the wire drifts": {state: v1alpha1.CellMeasuring, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonCipherSuiteDrift)},
			want: v1alpha1.CellFailed, failed: true, reason: "the wire does not match the profile (EncryptionVerified=False CipherSuiteDrift: says CipherSuiteDrift)"},
		"an unreachable endpoint is no verdict": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonUnreachable)},
			want: v1alpha1.CellProvisioning},
		"an incomplete probe is no verdict": {state: v1alpha1.CellProvisioning, conds: []metav1.Condition{ready, c(v1alpha1.ConditionEncryptionVerified, metav1.ConditionFalse, v1alpha1.ReasonProbeIncomplete)},
			want: v1alpha1.CellProvisioning},
		"a measuring cell whose datastore restarts waits": {state: v1alpha1.CellMeasuring, conds: []metav1.Condition{c(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonDegraded)},
			want: v1alpha1.CellMeasuring},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cell := v1alpha1.StudyCell{Name: "cell", State: tc.state}
			failed, measurable := ObserveCell(&cell, tc.conds)
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
