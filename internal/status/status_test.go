package status

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
)

func TestCompute(t *testing.T) {
	ready := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonNodesReady}
	updating := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonUpdating}
	degraded := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonDegraded}
	provisioning := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonProvisioning}
	blocked := &metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonNameConflict}
	steady := Rollout{Unit: "nodes", Desired: 3, Updated: 3, Ready: 3, Step: "step X", Exists: true, RolledOut: true, AtTarget: true, Serving: "3 nodes serve"}
	with := func(f func(*Rollout)) Rollout { r := steady; f(&r); return r }

	tests := map[string]struct {
		prev    *metav1.Condition
		rollout Rollout
		// Wanted reasons; the message must contain wantMsg.
		ready, progressing metav1.ConditionStatus
		readyReason        string
		progressReason     string
		wantMsg            string
	}{
		"nothing created yet": {
			rollout: Rollout{Unit: "nodes", Desired: 3}, ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonProvisioning,
			progressing: metav1.ConditionTrue, progressReason: v1alpha1.ReasonProvisioning, wantMsg: "creating 3 nodes: 0 ready",
		},
		"first nodes coming up": {
			prev: provisioning, rollout: with(func(r *Rollout) { r.Ready, r.RolledOut, r.Waiting = 1, false, []string{"ds-1"} }),
			ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonProvisioning,
			progressing: metav1.ConditionTrue, progressReason: v1alpha1.ReasonProvisioning, wantMsg: "waiting for ds-1",
		},
		"rolled out but not every node ready before the first Ready is still provisioning": {
			prev: provisioning, rollout: with(func(r *Rollout) { r.Ready = 2 }),
			ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonProvisioning,
			progressing: metav1.ConditionFalse, progressReason: v1alpha1.ReasonRolledOut, wantMsg: "2 of 3 nodes ready",
		},
		"steady": {
			prev: provisioning, rollout: steady, ready: metav1.ConditionTrue, readyReason: v1alpha1.ReasonNodesReady,
			progressing: metav1.ConditionFalse, progressReason: v1alpha1.ReasonRolledOut, wantMsg: "3 nodes serve",
		},
		"a new step applied in this pass": {
			prev: ready, rollout: with(func(r *Rollout) { r.Started = true }), ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonUpdating,
			progressing: metav1.ConditionTrue, progressReason: v1alpha1.ReasonRolling, wantMsg: "rolling restart started: step X",
		},
		"roll under way": {
			prev: updating, rollout: with(func(r *Rollout) { r.RolledOut, r.Updated, r.Ready, r.Waiting = false, 1, 2, []string{"ds-1"} }),
			ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonUpdating,
			progressing: metav1.ConditionTrue, progressReason: v1alpha1.ReasonRolling, wantMsg: "step X: 1 of 3 nodes updated, 2 ready; waiting for ds-1",
		},
		"an intermediate step rolled out": {
			prev: updating, rollout: with(func(r *Rollout) { r.AtTarget = false }), ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonUpdating,
			progressing: metav1.ConditionTrue, progressReason: v1alpha1.ReasonRolling, wantMsg: "rolled out step X; the next step follows",
		},
		"a node lost after Ready is a degradation, not a roll": {
			prev: ready, rollout: with(func(r *Rollout) { r.Ready, r.Waiting = 2, []string{"ds-2"} }),
			ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonDegraded,
			progressing: metav1.ConditionFalse, progressReason: v1alpha1.ReasonRolledOut, wantMsg: "2 of 3 nodes ready; waiting for ds-2",
		},
		"degraded stays degraded until the node is back": {
			prev: degraded, rollout: with(func(r *Rollout) { r.Ready = 2 }), ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonDegraded,
			progressing: metav1.ConditionFalse, progressReason: v1alpha1.ReasonRolledOut,
		},
		"recovered": {
			prev: degraded, rollout: steady, ready: metav1.ConditionTrue, readyReason: v1alpha1.ReasonNodesReady,
			progressing: metav1.ConditionFalse, progressReason: v1alpha1.ReasonRolledOut,
		},
		"a datastore blocked before it was ever Ready provisions when unblocked": {
			prev: blocked, rollout: with(func(r *Rollout) { r.Ready, r.RolledOut = 0, false }), ready: metav1.ConditionFalse, readyReason: v1alpha1.ReasonProvisioning,
			progressing: metav1.ConditionTrue, progressReason: v1alpha1.ReasonProvisioning,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Compute(tc.prev, tc.rollout)
			if got.Ready.Type != v1alpha1.ConditionReady || got.Progressing.Type != v1alpha1.ConditionProgressing {
				t.Fatalf("condition types %q, %q", got.Ready.Type, got.Progressing.Type)
			}
			if got.Ready.Status != tc.ready || got.Ready.Reason != tc.readyReason {
				t.Errorf("Ready = %s %s (%s), want %s %s", got.Ready.Status, got.Ready.Reason, got.Ready.Message, tc.ready, tc.readyReason)
			}
			if got.Progressing.Status != tc.progressing || got.Progressing.Reason != tc.progressReason {
				t.Errorf("Progressing = %s %s (%s), want %s %s", got.Progressing.Status, got.Progressing.Reason, got.Progressing.Message, tc.progressing, tc.progressReason)
			}
			if msgs := got.Ready.Message + " | " + got.Progressing.Message; tc.wantMsg != "" && !contains(msgs, tc.wantMsg) {
				t.Errorf("messages %q lack %q", msgs, tc.wantMsg)
			}
		})
	}
}

func TestPhase(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason}
	}
	tests := map[string]struct {
		conds []metav1.Condition
		want  v1alpha1.DatastorePhase
	}{
		"no conditions":      {nil, v1alpha1.PhasePending},
		"profile unresolved": {[]metav1.Condition{cond(v1alpha1.ConditionProfileResolved, metav1.ConditionFalse, v1alpha1.ReasonProfileNotFound), cond(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonNodesReady)}, v1alpha1.PhaseFailed},
		"ready":              {[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonNodesReady)}, v1alpha1.PhaseReady},
		"updating":           {[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonUpdating)}, v1alpha1.PhaseUpdating},
		"degraded":           {[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonDegraded)}, v1alpha1.PhaseDegraded},
		"provisioning":       {[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonProvisioning)}, v1alpha1.PhaseProvisioning},
		"blocked":            {[]metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNameConflict)}, v1alpha1.PhasePending},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Phase(tc.conds); got != tc.want {
				t.Errorf("Phase = %s, want %s", got, tc.want)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestPodProblems(t *testing.T) {
	waiting := func(reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "cassandra", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	pod := func(name string, conds []corev1.PodCondition, containers ...corev1.ContainerStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Conditions: conds, ContainerStatuses: containers}}
	}
	lastWords := func(name, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: msg}}}
	}
	tests := map[string]struct {
		pod  corev1.Pod
		want []string
	}{
		"starting is no problem": {pod("ds-0", nil, waiting("ContainerCreating", "")), nil},
		"an image that cannot be pulled": {pod("ds-0", nil, waiting("ImagePullBackOff", `Back-off pulling image "x"`)),
			[]string{`pod ds-0 container cassandra: ImagePullBackOff: Back-off pulling image "x"`}},
		"a crash loop": {pod("ds-1", nil, waiting("CrashLoopBackOff", "")), []string{"pod ds-1 container cassandra: CrashLoopBackOff"}},
		"unschedulable": {pod("ds-2", []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity"}}),
			[]string{"pod ds-2 cannot be scheduled: 0/4 nodes are available: 4 node(s) didn't match Pod's node affinity"}},
		"the operator's own command says why it fails": {pod("ds-0", nil, lastWords("volume-encryption", "volume-encryption: /var/lib/cassandra/encrypted: the filesystem\ndoes not support encryption\n")),
			[]string{"pod ds-0 container volume-encryption: CrashLoopBackOff: back-off 10s; it said: volume-encryption: /var/lib/cassandra/encrypted: the filesystem does not support encryption"}},
		"a datastore's own output is never quoted": {pod("ds-0", nil, lastWords("cassandra", "keystore_password=hunter2")),
			[]string{"pod ds-0 container cassandra: CrashLoopBackOff: back-off 10s"}},
		"killed at its memory limit": {pod("ds-0", nil, corev1.ContainerStatus{Name: "cassandra",
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}),
			[]string{"pod ds-0 container cassandra was killed at its memory limit (OOMKilled); raise the limit or lower the heap"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PodProblems([]corev1.Pod{tc.pod}, "volume-encryption"); !slices.Equal(got, tc.want) {
				t.Errorf("PodProblems = %q, want %q", got, tc.want)
			}
		})
	}
	c := Compute(nil, Rollout{Unit: "nodes", Desired: 3, Problems: []string{"pod ds-0 container cassandra: ImagePullBackOff"}})
	if !strings.HasSuffix(c.Ready.Message, "; pod ds-0 container cassandra: ImagePullBackOff") || !strings.HasSuffix(c.Progressing.Message, "ImagePullBackOff") {
		t.Errorf("the problem is not in the conditions: %q, %q", c.Ready.Message, c.Progressing.Message)
	}
	if c.Ready.Reason != v1alpha1.ReasonProvisioning {
		t.Errorf("Ready reason %s; a problem keeps the phase", c.Ready.Reason)
	}
}

// The StatefulSet controller moves currentRevision once the last pod is ready; a roll's next
// step waits until that pod has also been ready for minReadySeconds.
func TestSetReadyWaitsForAvailability(t *testing.T) {
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), MinReadySeconds: 15},
		Status: appsv1.StatefulSetStatus{CurrentRevision: "r2", UpdateRevision: "r2", UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 2}}
	if !SetUpdated(sts) || SetReady(sts) {
		t.Errorf("3 ready, 2 available: updated %v, ready %v; want updated, not ready", SetUpdated(sts), SetReady(sts))
	}
	sts.Status.AvailableReplicas = 3
	if !SetReady(sts) {
		t.Error("3 available: not ready")
	}
}
