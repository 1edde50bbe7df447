// Package status computes a SecuredDatastore's Ready and Progressing conditions and its phase
// from what one reconcile pass observed of its workloads. Both engines report through it, so a
// datastore reads the same whichever engine runs it, and the state machine is tested once.
package status

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
)

// Rollout is what a pass observed of the datastore's workloads. A unit is what the engine
// rolls one at a time and counts: a node for Cassandra, a role for HBase.
type Rollout struct {
	// Unit names the units in messages ("nodes", "roles").
	Unit string
	// Desired, Updated and Ready count the units the spec asks for, those that run the applied
	// step's template, and those that are ready.
	Desired, Updated, Ready int32
	// Waiting names the units (pods, roles) not yet updated or not ready, in order.
	Waiting []string
	// Step names the applied step for messages ("step clientToNode Optional, …").
	Step string
	// Exists: the workloads have been created.
	Exists bool
	// Started: this pass applied a new step, so the workload status read earlier is stale.
	Started bool
	// RolledOut: every unit runs the applied step's template (ready or not).
	RolledOut bool
	// AtTarget: the applied step is the effective profile itself, not a transitional step.
	AtTarget bool
	// Serving is Ready's message when everything is up, in the engine's words.
	Serving string
	// Problems that waiting will not fix (PodProblems); they end Ready's and Progressing's
	// messages so that a stuck datastore says why.
	Problems []string
}

// Converged: the effective profile runs on every unit's template.
func (r Rollout) Converged() bool { return r.Exists && !r.Started && r.RolledOut && r.AtTarget }

// Conditions are a datastore's Ready and Progressing conditions (type, status, reason and
// message set; the caller stamps the generation).
type Conditions struct{ Ready, Progressing metav1.Condition }

// Compute is the state machine. prevReady is Ready as the previous pass left it (nil before
// the first): a datastore that was never Ready is still provisioning, whatever its workloads
// report; after that, a roll is an update and a unit that is not ready is a degradation.
// Progressing follows the templates, Ready the units: a datastore whose every template is
// rolled out is not progressing any more, even while its last units start.
func Compute(prevReady *metav1.Condition, r Rollout) Conditions {
	provisioned := prevReady != nil && (prevReady.Status == metav1.ConditionTrue ||
		prevReady.Reason == v1alpha1.ReasonUpdating || prevReady.Reason == v1alpha1.ReasonDegraded)
	waitingFor := ""
	if len(r.Waiting) > 0 {
		waitingFor = "; waiting for " + strings.Join(r.Waiting, ", ")
	}
	converged := r.Converged()
	var c Conditions
	switch {
	case !provisioned && !converged:
		c.Progressing = progressing(v1alpha1.ReasonProvisioning, "creating %d %s: %d ready%s", r.Desired, r.Unit, r.Ready, waitingFor)
	case r.Started:
		c.Progressing = progressing(v1alpha1.ReasonRolling, "rolling restart started: %s", r.Step)
	case !r.RolledOut:
		c.Progressing = progressing(v1alpha1.ReasonRolling, "%s: %d of %d %s updated, %d ready%s", r.Step, r.Updated, r.Desired, r.Unit, r.Ready, waitingFor)
	case !r.AtTarget:
		c.Progressing = progressing(v1alpha1.ReasonRolling, "rolled out %s; the next step follows", r.Step)
	default:
		c.Progressing = condition(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonRolledOut,
			fmt.Sprintf("all %d %s run the effective profile", r.Desired, r.Unit))
	}
	switch {
	case converged && r.Ready == r.Desired:
		c.Ready = condition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonNodesReady, r.Serving)
	case !provisioned:
		c.Ready = notReady(v1alpha1.ReasonProvisioning, "%d of %d %s ready; see Progressing", r.Ready, r.Desired, r.Unit)
	case converged:
		c.Ready = notReady(v1alpha1.ReasonDegraded, "%d of %d %s ready%s", r.Ready, r.Desired, r.Unit, waitingFor)
	default:
		c.Ready = notReady(v1alpha1.ReasonUpdating, "%d of %d %s ready; see Progressing", r.Ready, r.Desired, r.Unit)
	}
	if len(r.Problems) > 0 && c.Ready.Status != metav1.ConditionTrue {
		problems := "; " + strings.Join(r.Problems, "; ")
		c.Ready.Message += problems
		if c.Progressing.Status == metav1.ConditionTrue {
			c.Progressing.Message += problems
		}
	}
	return c
}

// Phase summarizes a datastore's conditions in one word for kubectl get.
func Phase(conds []metav1.Condition) v1alpha1.DatastorePhase {
	if meta.IsStatusConditionFalse(conds, v1alpha1.ConditionProfileResolved) {
		return v1alpha1.PhaseFailed
	}
	ready := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	switch {
	case ready == nil:
		return v1alpha1.PhasePending
	case ready.Status == metav1.ConditionTrue:
		return v1alpha1.PhaseReady
	}
	switch ready.Reason {
	case v1alpha1.ReasonUpdating:
		return v1alpha1.PhaseUpdating
	case v1alpha1.ReasonDegraded:
		return v1alpha1.PhaseDegraded
	case v1alpha1.ReasonProvisioning:
		return v1alpha1.PhaseProvisioning
	}
	// Blocked on something the user must fix (a name conflict, a forbidden VPN, …): Ready's
	// message says what.
	return v1alpha1.PhasePending
}

func progressing(reason, format string, args ...any) metav1.Condition {
	return condition(v1alpha1.ConditionProgressing, metav1.ConditionTrue, reason, fmt.Sprintf(format, args...))
}

func notReady(reason, format string, args ...any) metav1.Condition {
	return condition(v1alpha1.ConditionReady, metav1.ConditionFalse, reason, fmt.Sprintf(format, args...))
}

func condition(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

// PodReady: the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// SetUpdated: the StatefulSet controller has seen the current template and every replica runs
// it. The StatefulSet controller moves currentRevision to updateRevision only once the last
// updated pod is ready, so a roll under way never reads as updated.
func SetUpdated(sts *appsv1.StatefulSet) bool {
	if sts == nil || sts.Spec.Replicas == nil {
		return false
	}
	st := sts.Status
	return st.ObservedGeneration >= sts.Generation && st.UpdateRevision != "" && st.CurrentRevision == st.UpdateRevision &&
		st.UpdatedReplicas == *sts.Spec.Replicas
}

// SetReady: every replica runs the current template and is available (ready for the set's
// minReadySeconds, so ready too); a roll may move on. The StatefulSet controller moves
// currentRevision as soon as the last pod is ready, so only availability makes the next step
// wait as the roll waited between pods.
func SetReady(sts *appsv1.StatefulSet) bool {
	return SetUpdated(sts) && sts.Status.AvailableReplicas == *sts.Spec.Replicas
}

// waitingProblems are the container waiting reasons that do not go away by waiting.
var waitingProblems = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "CrashLoopBackOff": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// maxLastWords bounds the part of a container's termination message a problem quotes.
const maxLastWords = 400

// PodProblems says what keeps pods from running that waiting will not fix: a pod the scheduler
// cannot place, an image that cannot be pulled, a container that crashes again and again or
// was killed at its memory limit. One sentence each, for Ready's message and an event. The
// containers named in speaking are the operator's own commands, whose output holds no secret
// (cmd/volume-encryption): when one of them fails, its last words say why, such as a volume
// that cannot be encrypted. A datastore's own output is never quoted, since its logs may.
func PodProblems(pods []corev1.Pod, speaking ...string) []string {
	var out []string
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				out = append(out, fmt.Sprintf("pod %s cannot be scheduled: %s", p.Name, c.Message))
			}
		}
		for _, c := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			if w := c.State.Waiting; w != nil && waitingProblems[w.Reason] {
				msg := fmt.Sprintf("pod %s container %s: %s", p.Name, c.Name, w.Reason)
				if w.Message != "" {
					msg += ": " + w.Message
				}
				if t := c.LastTerminationState.Terminated; t != nil && t.Message != "" && slices.Contains(speaking, c.Name) {
					msg += "; it said: " + lastWords(t.Message)
				}
				out = append(out, msg)
			}
			if t := c.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
				out = append(out, fmt.Sprintf("pod %s container %s was killed at its memory limit (OOMKilled); raise the limit or lower the heap", p.Name, c.Name))
			}
		}
	}
	return out
}

// lastWords is a termination message on one line, cut to maxLastWords.
func lastWords(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxLastWords {
		msg = msg[:maxLastWords] + "…"
	}
	return msg
}
