package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"secured.dev/operator/api/v1alpha1"
)

// DatastoreBenchmarkReconciler reconciles DatastoreBenchmarks. This version checks the target
// and reports that benchmark Jobs are not run yet; the k6 driver brings the Jobs.
type DatastoreBenchmarkReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=datastore.secured.dev,resources=datastorebenchmarks,verbs=get;list;watch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=datastorebenchmarks/status,verbs=get;patch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=secureddatastores,verbs=get;list;watch

func (r *DatastoreBenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileOnce(ctx, r.Client, req.NamespacedName, &v1alpha1.DatastoreBenchmark{},
		func(b *v1alpha1.DatastoreBenchmark) any { return b.Status },
		func(b *v1alpha1.DatastoreBenchmark) error { return r.checkTarget(ctx, b) })
}

// checkTarget reports whether the benchmark's target exists.
func (r *DatastoreBenchmarkReconciler) checkTarget(ctx context.Context, b *v1alpha1.DatastoreBenchmark) error {
	st := &b.Status
	st.ObservedGeneration = b.Generation
	if st.Phase == "" {
		st.Phase = v1alpha1.BenchmarkPending
	}

	reason, msg := "TargetFound", "the target exists; this operator version does not run benchmark Jobs yet"
	if ref := b.Spec.Target.DatastoreRef; ref != nil {
		var ds v1alpha1.SecuredDatastore
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: ref.Name}, &ds); err != nil {
			if !apierrors.IsNotFound(err) {
				return err
			}
			reason, msg = "TargetNotFound", fmt.Sprintf("SecuredDatastore %q does not exist in namespace %s: create it or fix spec.target.datastoreRef.name", ref.Name, b.Namespace)
		}
	}
	if setCondition(&st.Conditions, b.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg) && reason == "TargetNotFound" {
		r.Recorder.Eventf(b, nil, "Warning", reason, "CheckTarget", "%s", msg)
	}
	return nil
}

// SetupWithManager registers the reconciler.
func (r *DatastoreBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.DatastoreBenchmark{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("datastorebenchmark").
		Complete(r)
}
