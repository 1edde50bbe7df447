package controllers

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheOptions keep the operator's memory bounded by its own objects: of all pods and Jobs in
// the cluster it caches only those it manages (datastore nodes, benchmark clients).
func CacheOptions() cache.Options {
	own := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "secured-datastore-operator"})}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: own, &batchv1.Job{}: own}}
}

// ClientOptions: Secrets are read around the cache, so the operator needs no right to list
// or watch the cluster's Secrets.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}

// Leader election: controller-runtime reads, creates and renews one Lease.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

// SetupWithManager registers every reconciler of the operator with mgr.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	const name = "secured-datastore-operator"
	if err := (&EncryptionProfileReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(name)}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&SecuredDatastoreReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(name), Options: opts}).SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := (&DatastoreBenchmarkReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(name), Options: opts}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&TradeoffStudyReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(name)}).SetupWithManager(mgr)
}
