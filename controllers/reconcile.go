package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
)

// FieldOwner names this operator in managedFields.
const FieldOwner = client.FieldOwner("secured-datastore-operator")

var (
	// errPhaseBlocked stops the remaining phases without an error: the status says why, and a
	// watch (or the phase's requeue) brings the object back.
	errPhaseBlocked = errors.New("blocked")
	// errStale stops a pass that read an object older than the API server's: nothing decided
	// from it is written, and the pass runs again shortly.
	errStale = errors.New("the cached object is older than the API server's")
)

// phase is one step of a reconcile pass over the kind's scope S. It returns a non-zero result
// or errPhaseBlocked to stop the pass there.
type phase[S any] func(context.Context, S) (ctrl.Result, error)

// waitOr stops the pass: with err when there is one, else as blocked (a watch brings the
// object back).
func waitOr(err error) error {
	if err != nil {
		return err
	}
	return errPhaseBlocked
}

// runPhases runs phases in order until one fails, blocks or asks to be requeued.
func runPhases[S any](ctx context.Context, s S, phases ...phase[S]) (ctrl.Result, error) {
	for _, p := range phases {
		res, err := p(ctx, s)
		if errors.Is(err, errPhaseBlocked) {
			return res, nil
		}
		if err != nil || !res.IsZero() {
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// pass describes the one status write that ends every reconcile of a kind T.
type pass[T client.Object] struct {
	// status extracts the status compared and written.
	status func(T) any
	// observed records that the object's generation was reconciled; called only after a pass
	// whose phases succeeded.
	observed func(T)
	// summarize runs after the phases whatever their outcome, before the write: it derives the
	// phase and publishes metrics from what the phases recorded.
	summarize func(T)
	// conditions of the object, where the pass records its outcome as Synced; recorder
	// publishes an error as a Warning event.
	conditions func(T) *[]metav1.Condition
	recorder   events.EventRecorder
	// afterWrite runs once the status is stored, whatever the phases returned: work that must
	// not happen before what it depends on is recorded (deleting a Job whose results are in
	// status, a finished study's clean-up).
	afterWrite func(context.Context) error
}

// reconcile runs the phases over obj, which the caller has fetched, then writes its status
// once if it changed. A phase error is returned even when the status write fails too; a
// conflict on an otherwise successful pass requeues.
func (p pass[T]) reconcile(ctx context.Context, c client.Client, obj T, run func(context.Context) (ctrl.Result, error)) (ctrl.Result, error) {
	before := obj.DeepCopyObject().(T)
	res, err := run(ctx)
	switch {
	case errors.Is(err, errStale):
		return ctrl.Result{RequeueAfter: max(res.RequeueAfter, staleRetry)}, nil
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace is going away with the object in it: nothing to recreate.
		return ctrl.Result{}, nil
	}
	if err == nil && p.observed != nil {
		p.observed(obj)
	}
	p.synced(obj, err)
	if p.summarize != nil {
		p.summarize(obj)
	}
	if _, werr := patchStatus(ctx, c, before, obj, p.status); werr != nil {
		switch {
		case apierrors.IsNotFound(werr):
			return ctrl.Result{}, nil // deleted while we reconciled
		case apierrors.IsConflict(werr) && err == nil:
			return ctrl.Result{Requeue: true}, nil // someone wrote since we read: again, with fresh data
		}
		return res, errors.Join(err, werr)
	}
	if p.afterWrite != nil {
		err = errors.Join(err, p.afterWrite(ctx))
	}
	return res, err
}

// maxErrorMessage bounds the error a condition and an event carry.
const maxErrorMessage = 1024

// synced records the pass's outcome as the Synced condition, and an error also as a Warning
// event when it is new.
func (p pass[T]) synced(obj T, err error) {
	if p.conditions == nil {
		return
	}
	conds := p.conditions(obj)
	if err == nil {
		setCondition(conds, obj.GetGeneration(), v1alpha1.ConditionSynced, metav1.ConditionTrue, v1alpha1.ReasonReconcileSuccess, "the last reconcile ran without error")
		return
	}
	msg := err.Error()
	if len(msg) > maxErrorMessage {
		msg = msg[:maxErrorMessage] + "…"
	}
	old := meta.FindStatusCondition(*conds, v1alpha1.ConditionSynced)
	setCondition(conds, obj.GetGeneration(), v1alpha1.ConditionSynced, metav1.ConditionFalse, v1alpha1.ReasonReconcileError, msg)
	if p.recorder != nil && (old == nil || old.Status != metav1.ConditionFalse || old.Message != msg) {
		p.recorder.Eventf(obj, nil, corev1.EventTypeWarning, v1alpha1.ReasonReconcileError, "Reconcile", "%s", msg)
	}
}

// staleRetry is how soon a pass that read a stale object runs again.
const staleRetry = time.Second

// patchStatus writes the status subresource of obj when it differs from before's, with a merge
// patch guarded by resourceVersion so a concurrent writer is never overwritten. It reports
// whether it wrote. status extracts the status field to compare.
func patchStatus[T client.Object](ctx context.Context, c client.Client, before, obj T, status func(T) any) (bool, error) {
	if equality.Semantic.DeepEqual(status(before), status(obj)) {
		return false, nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), FieldOwner); err != nil {
		return false, fmt.Errorf("writing status: %w", err)
	}
	return true, nil
}

// setCondition sets a condition and reports whether its status or reason changed (a message
// update alone is not a transition worth an event).
func setCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) bool {
	old := meta.FindStatusCondition(*conds, typ)
	changed := old == nil || old.Status != status || old.Reason != reason
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
	})
	return changed
}

func isTrue(conds []metav1.Condition, typ string) bool { return meta.IsStatusConditionTrue(conds, typ) }

func isFalse(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionFalse(conds, typ)
}
