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
// the cluster it caches only those it manages (datastore nodes, benchmark clients). With
// namespaces, it watches namespaced objects there only, so that namespaced Roles in them are
// all the rights it needs (the chart's default); without, every namespace.
func CacheOptions(namespaces ...string) cache.Options {
	own := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "secured-datastore-operator"})}
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: own, &batchv1.Job{}: own}}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// ClientOptions: Secrets are read around the cache, so the operator needs no right to list
// or watch the cluster's Secrets.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}

// Leader election: controller-runtime reads, creates and renews one Lease.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update

// The metrics endpoint asks the API server who a scraper is and whether it may get /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

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
