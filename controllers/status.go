package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner names this operator in managedFields.
const FieldOwner = client.FieldOwner("secured-datastore-operator")

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

// requeueOnConflict turns a status write's outcome into a result: a conflict means someone
// changed the object since we read it, so try again with fresh data; a vanished object needs
// nothing more.
func requeueOnConflict(err error) (ctrl.Result, error) {
	switch {
	case apierrors.IsConflict(err):
		return ctrl.Result{Requeue: true}, nil
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// reconcileOnce is the skeleton of the reconcilers whose work fits in one function: fetch obj,
// let body change it, write its status once if it changed.
func reconcileOnce[T client.Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T,
	status func(T) any, body func(T) error) (ctrl.Result, error) {
	if err := c.Get(ctx, key, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := obj.DeepCopyObject().(T)
	if err := body(obj); err != nil {
		return ctrl.Result{}, err
	}
	_, err := patchStatus(ctx, c, before, obj, status)
	return requeueOnConflict(err)
}
