package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// appliedHashAnnotation records a digest of what the operator last applied to an object, so a
// reconcile that would apply the same again makes no API call at all.
const appliedHashAnnotation = "datastore.secured.dev/applied-hash"

// applyOwned server-side applies obj as the operator's field owner, controlled by owner, unless
// the live object already carries the digest of exactly this desired state. It reports whether
// it wrote.
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
