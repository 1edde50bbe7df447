package study

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/verify"
)

// ObserveCell moves a live cell on from its datastore's status: Provisioning while the
// datastore is not Ready, Measuring once it is Ready and its wire verified, Failed when its
// profile does not resolve or the wire carries something else. A study never measures a
// profile the wire does not carry; an unreachable endpoint or an incomplete probe is not a
// verdict on the profile, nor is a mismatch no later probe has confirmed (verify.Confirmed):
// the cell waits for the next probe. It reports whether the cell failed or became measurable
// in this observation.
func ObserveCell(cell *v1alpha1.StudyCell, st *v1alpha1.SecuredDatastoreStatus) (failed, measurable bool) {
	conds := st.Conditions
	verified := condition(conds, v1alpha1.ConditionEncryptionVerified)
	var observed []v1alpha1.ObservedChannel
	if st.Encryption != nil {
		observed = st.Encryption.Observed
	}
	fail := func(reason string) (bool, bool) {
		cell.State, cell.Reason = v1alpha1.CellFailed, reason
		return true, false
	}
	switch {
	case meta.IsStatusConditionFalse(conds, v1alpha1.ConditionProfileResolved):
		return fail("its profile does not resolve for this datastore: " + condition(conds, v1alpha1.ConditionProfileResolved).Message)
	case !meta.IsStatusConditionTrue(conds, v1alpha1.ConditionReady):
		if cell.State == v1alpha1.CellPending {
			cell.State = v1alpha1.CellProvisioning
		}
	case verified.Status == metav1.ConditionFalse && !verify.Inconclusive(verified.Reason) && verify.Confirmed(&verified, observed):
		return fail(fmt.Sprintf("the wire does not match the profile (EncryptionVerified=False %s, confirmed by a second probe: %s)", verified.Reason, verified.Message))
	case verified.Status == metav1.ConditionTrue && cell.State != v1alpha1.CellMeasuring:
		cell.State = v1alpha1.CellMeasuring
		return false, true
	}
	return false, false
}

// NothingCompared says why a study whose schedule ran has no overhead to report, or "" when it
// has one: some compared cell and the baseline of its setting were measured.
func NothingCompared(cells []v1alpha1.StudyCell, baseline string) string {
	measured := map[setting]bool{} // baseline cells with runs
	for i := range cells {
		if c := &cells[i]; c.Profile == baseline && len(c.Runs) > 0 {
			measured[settingOf(c)] = true
		}
	}
	failed := 0
	for i := range cells {
		switch c := &cells[i]; {
		case c.State == v1alpha1.CellFailed:
			failed++
		case c.Profile != baseline && len(c.Runs) > 0 && measured[settingOf(c)]:
			return ""
		}
	}
	if failed > 0 && len(measured) == 0 {
		return fmt.Sprintf("no overhead to report: %d of %d cells failed, every baseline cell among them (status.cells[].reason says why)", failed, len(cells))
	}
	if failed > 0 {
		return fmt.Sprintf("no overhead to report: %d of %d cells failed, and no measured cell has a measured baseline beside it (status.cells[].reason says why)", failed, len(cells))
	}
	return ""
}

// condition returns the condition of type typ, Unknown when absent.
func condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: metav1.ConditionUnknown}
}

// ConditionMessage is the message of the condition of type typ; empty when absent.
func ConditionMessage(conds []metav1.Condition, typ string) string {
	return condition(conds, typ).Message
}
