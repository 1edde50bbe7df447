package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"secured.dev/operator/api/v1alpha1"
)

// TradeoffStudyReconciler reconciles TradeoffStudies. This version checks that every profile
// of the matrix exists and reports that studies are not executed yet.
type TradeoffStudyReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=datastore.secured.dev,resources=tradeoffstudies,verbs=get;list;watch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=tradeoffstudies/status,verbs=get;patch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=encryptionprofiles,verbs=get;list;watch

func (r *TradeoffStudyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileOnce(ctx, r.Client, req.NamespacedName, &v1alpha1.TradeoffStudy{},
		func(s *v1alpha1.TradeoffStudy) any { return s.Status },
		func(s *v1alpha1.TradeoffStudy) error { return r.checkMatrix(ctx, s) })
}

// checkMatrix reports whether every profile of the matrix exists.
func (r *TradeoffStudyReconciler) checkMatrix(ctx context.Context, study *v1alpha1.TradeoffStudy) error {
	st := &study.Status
	st.ObservedGeneration = study.Generation
	if st.Phase == "" {
		st.Phase = v1alpha1.StudyPending
	}

	var missing []string
	for _, name := range study.Spec.Matrix.Profiles {
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, &v1alpha1.EncryptionProfile{}); err != nil {
			if !apierrors.IsNotFound(err) {
				return err
			}
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	reason, msg := "NotImplemented", "every profile of the matrix exists; this operator version does not execute studies yet"
	if len(missing) > 0 {
		reason = v1alpha1.ReasonProfileNotFound
		msg = fmt.Sprintf("EncryptionProfiles %s do not exist: create them or remove them from spec.matrix.profiles", strings.Join(missing, ", "))
	}
	if setCondition(&st.Conditions, study.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg) && len(missing) > 0 {
		r.Recorder.Eventf(study, nil, "Warning", reason, "CheckMatrix", "%s", msg)
	}
	return nil
}

// SetupWithManager registers the reconciler.
func (r *TradeoffStudyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.TradeoffStudy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.EncryptionProfile{}, handler.EnqueueRequestsFromMapFunc(r.studiesUsingProfile),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("tradeoffstudy").
		Complete(r)
}

func (r *TradeoffStudyReconciler) studiesUsingProfile(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.TradeoffStudyList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing studies that use a profile failed", "profile", o.GetName())
		return nil
	}
	return requestsFor(list.Items, func(s *v1alpha1.TradeoffStudy) bool {
		return slices.Contains(s.Spec.Matrix.Profiles, o.GetName())
	})
}
