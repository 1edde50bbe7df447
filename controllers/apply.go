package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"secured.dev/operator/api/v1alpha1"
)

// appliedHashAnnotation records a digest of what the operator last applied to an object, so a
// reconcile that would apply the same again makes no API call at all.
const appliedHashAnnotation = "datastore.secured.dev/applied-hash"

// NotOwnedError: an object of the name the operator would apply exists and is not controlled
// by the object that would own it. The operator never takes over what it did not create:
// server-side apply with forced ownership would silently rewrite someone else's object.
type NotOwnedError struct {
	Kind, Name string
	// Owner is the kind of object that would own it ("datastore", "study", "benchmark").
	Owner string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s %s exists and is not owned by this %s: rename the %s or delete that %s", e.Kind, e.Name, e.Owner, e.Owner, e.Kind)
}

// applyOwned server-side applies obj as the operator's field owner, controlled by owner, unless
// the live object already carries the digest of exactly this desired state. It reports whether
// it wrote. An existing object that owner does not control is left alone: *NotOwnedError.
func applyOwned(ctx context.Context, c client.Client, owner, obj client.Object) (bool, error) {
	if err := controllerutil.SetControllerReference(owner, obj, c.Scheme()); err != nil {
		return false, err
	}
	desired, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false, err
	}
	// Status belongs to the object's controller; creationTimestamp: null would claim a field.
	delete(desired, "status")
	unstructured.RemoveNestedField(desired, "metadata", "creationTimestamp")
	digest, err := hashOf(desired)
	if err != nil {
		return false, err
	}

	live := obj.DeepCopyObject().(client.Object)
	switch err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); {
	case err == nil && !metav1.IsControlledBy(live, owner):
		return false, &NotOwnedError{Kind: obj.GetObjectKind().GroupVersionKind().Kind, Name: obj.GetName(), Owner: ownerWord(owner)}
	case err == nil && live.GetAnnotations()[appliedHashAnnotation] == digest:
		return false, nil
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Errorf("reading %T %s: %w", obj, obj.GetName(), err)
	}

	u := &unstructured.Unstructured{Object: desired}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[appliedHashAnnotation] = digest
	u.SetAnnotations(annotations)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), FieldOwner, client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return true, nil
}

func hashOf(v any) (string, error) {
	b, err := json.Marshal(v) // map keys are sorted: the digest is stable
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// ownerWord names the kind of an owner in messages.
func ownerWord(owner client.Object) string {
	switch owner.(type) {
	case *v1alpha1.SecuredDatastore:
		return "datastore"
	case *v1alpha1.TradeoffStudy:
		return "study"
	case *v1alpha1.DatastoreBenchmark:
		return "benchmark"
	}
	return "object"
}
