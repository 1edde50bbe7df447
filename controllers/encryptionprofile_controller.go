package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
)

// EncryptionProfileReconciler ranks EncryptionProfiles: it resolves each on its own (the engine
// inferred from its settings) and records the security rank and satisfied presets in status.
type EncryptionProfileReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=datastore.secured.dev,resources=encryptionprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=encryptionprofiles/status,verbs=get;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *EncryptionProfileReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	profile := &v1alpha1.EncryptionProfile{}
	if err := r.Client.Get(ctx, req.NamespacedName, profile); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p := pass[*v1alpha1.EncryptionProfile]{
		conditions: func(o *v1alpha1.EncryptionProfile) *[]metav1.Condition { return &o.Status.Conditions },
		recorder:   r.Recorder,
		status:     func(p *v1alpha1.EncryptionProfile) any { return p.Status },
		observed:   func(p *v1alpha1.EncryptionProfile) { p.Status.ObservedGeneration = p.Generation },
	}
	return p.reconcile(ctx, r.Client, profile, func(ctx context.Context) (ctrl.Result, error) {
		return runPhases(ctx, profile, r.rank)
	})
}

// rank resolves the profile on its own and records its assessment.
func (r *EncryptionProfileReconciler) rank(_ context.Context, profile *v1alpha1.EncryptionProfile) (ctrl.Result, error) {
	res, errs := crypto.Resolve(&profile.Spec.EncryptionSettings, nil, "", field.NewPath("spec"))
	st := &profile.Status
	if len(errs) > 0 {
		st.Assessment = nil
		if setCondition(&st.Conditions, profile.Generation, v1alpha1.ConditionValid, metav1.ConditionFalse, v1alpha1.ReasonInvalidProfile, errs.ToAggregate().Error()) {
			r.Recorder.Eventf(profile, nil, corev1.EventTypeWarning, v1alpha1.ReasonInvalidProfile, "Resolve", "%s", errs.ToAggregate().Error())
		}
	} else {
		st.Assessment = &res.Assessment
		msg := "profile resolves; security rank " + itoa(res.Assessment.Rank)
		if len(res.Warnings) > 0 {
			msg += "; " + joinSentences(res.Warnings)
		}
		if setCondition(&st.Conditions, profile.Generation, v1alpha1.ConditionValid, metav1.ConditionTrue, v1alpha1.ReasonResolved, msg) {
			r.Recorder.Eventf(profile, nil, corev1.EventTypeNormal, v1alpha1.ReasonResolved, "Resolve", "Security rank %d (client-to-node %d, node-to-node %d)", res.Assessment.Rank, res.Assessment.ClientToNodeRank, res.Assessment.NodeToNodeRank)
		}
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler.
func (r *EncryptionProfileReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.EncryptionProfile{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("encryptionprofile").
		Complete(r)
}
