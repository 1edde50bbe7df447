package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Leader election: controller-runtime reads, creates and renews one Lease.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

// SetupWithManager registers every reconciler of the operator with mgr.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	const name = "secured-datastore-operator"
	if err := (&EncryptionProfileReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(name)}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&SecuredDatastoreReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(name)}).SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := (&DatastoreBenchmarkReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(name)}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&TradeoffStudyReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(name)}).SetupWithManager(mgr)
}
