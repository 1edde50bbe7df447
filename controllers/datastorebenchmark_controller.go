package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
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
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/render/vpn"
)

// DatastoreBenchmarkReconciler runs DatastoreBenchmarks: it finds the target, loads the data
// with one Job, runs the measured repetitions one Job at a time, collects each Job's result
// summaries from its pods' termination messages into status, repeats invalid runs, and
// deletes each Job once its results are in status.
type DatastoreBenchmarkReconciler struct {
	Client client.Client
	// APIReader reads around the cache, before creating a Job.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Options   Options
}

// Condition types of a benchmark besides Ready.
const (
	// ConditionLoaded: the load phase inserted the records.
	ConditionLoaded = "Loaded"
	// ConditionComplete: every repetition has a valid result, or the benchmark gave up.
	ConditionComplete = "Complete"
)

// benchmarkScope carries what one reconcile pass read and decided.
type benchmarkScope struct {
	b       *v1alpha1.DatastoreBenchmark
	target  benchmark.Target
	requeue time.Duration
	// collected: finished Jobs whose results this pass recorded. They are deleted only after
	// the status write: a Job deleted before its result is stored would be created again by
	// a pass that reads the status without it.
	collected []*batchv1.Job
}

// +kubebuilder:rbac:groups=datastore.secured.dev,resources=datastorebenchmarks,verbs=get;list;watch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=datastorebenchmarks/status,verbs=get;patch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=secureddatastores,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

func (r *DatastoreBenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &v1alpha1.DatastoreBenchmark{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			forgetBenchmark(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := b.DeepCopy()
	s := &benchmarkScope{b: b}
	err := r.phases(ctx, s)
	if errors.Is(err, errStale) {
		return ctrl.Result{RequeueAfter: s.requeue}, nil // nothing decided from stale data is written
	}
	b.Status.ObservedGeneration = b.Generation
	publishBenchmark(b)
	if _, werr := patchStatus(ctx, r.Client, before, b, func(b *v1alpha1.DatastoreBenchmark) any { return b.Status }); werr != nil {
		return requeueOnConflict(werr)
	}
	for _, job := range s.collected {
		err = errors.Join(err, r.deleteJob(ctx, job))
	}
	return ctrl.Result{RequeueAfter: s.requeue}, err
}

// phases runs the benchmark's phases in order; each returns done=false when the benchmark
// has to wait for it.
func (r *DatastoreBenchmarkReconciler) phases(ctx context.Context, s *benchmarkScope) error {
	st := &s.b.Status
	if st.Phase == v1alpha1.BenchmarkSucceeded || st.Phase == v1alpha1.BenchmarkFailed {
		return nil // results are final; a new measurement is a new DatastoreBenchmark
	}
	if st.Phase == "" {
		st.Phase = v1alpha1.BenchmarkPending
	}
	for _, phase := range []func(context.Context, *benchmarkScope) (bool, error){r.resolveTarget, r.load, r.runs} {
		if done, err := phase(ctx, s); err != nil || !done {
			return err
		}
	}
	return nil
}

// resolveTarget finds the endpoints, TLS pin and trust of the target.
func (r *DatastoreBenchmarkReconciler) resolveTarget(ctx context.Context, s *benchmarkScope) (bool, error) {
	b := s.b
	notReady := func(reason, msg string) (bool, error) {
		if setCondition(&b.Status.Conditions, b.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg) {
			r.Recorder.Eventf(b, nil, "Warning", reason, "ResolveTarget", "%s", msg)
		}
		s.requeue = 30 * time.Second
		return false, nil
	}
	if ext := b.Spec.Target.External; ext != nil {
		t, err := benchmark.ExternalTarget(ext)
		if err != nil {
			return notReady("TargetNotMeasurable", err.Error())
		}
		s.target = t
	} else {
		ref := b.Spec.Target.DatastoreRef
		var ds v1alpha1.SecuredDatastore
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: ref.Name}, &ds); err != nil {
			if !apierrors.IsNotFound(err) {
				return false, err
			}
			return notReady("TargetNotFound", fmt.Sprintf("SecuredDatastore %q does not exist in namespace %s: create it or fix spec.target.datastoreRef.name", ref.Name, b.Namespace))
		}
		if !isTrue(ds.Status.Conditions, v1alpha1.ConditionReady) && !started(b) {
			return notReady("TargetNotReady", fmt.Sprintf("SecuredDatastore %s is not Ready yet; the benchmark starts when it is", ds.Name))
		}
		t, err := benchmark.DatastoreTarget(&ds, r.Options.clusterDomain())
		if err != nil {
			return notReady("TargetNotMeasurable", err.Error())
		}
		if pods := benchmark.ClientPods(b); t.Tunnel != nil && pods > vpn.ClientSlots {
			return notReady("TargetNotMeasurable", benchmark.TooManyClients(t, pods).Error())
		}
		s.target = t
	}
	if b.Status.Profile == "" {
		b.Status.Profile = s.target.Profile
	}
	msg := fmt.Sprintf("%s, plaintext", s.target.Hosts)
	switch h, t := s.target.HBase, s.target.TLS; {
	case h != nil:
		msg = fmt.Sprintf("HBase through ZooKeeper %s with YCSB's JVM client", s.target.Hosts)
		if h.Principal != "" {
			msg += ", logged in as " + h.Principal + " (SASL " + h.Properties["hbase.rpc.protection"] + ")"
		}
		if h.TrustConfigMap != "" {
			msg += ", TLS verified against ConfigMap " + h.TrustConfigMap
		}
	case t != nil:
		msg = fmt.Sprintf("%s, pinned to %s %s, verifying %s", s.target.Hosts, t.Protocol, t.CipherSuite, t.ServerName)
	}
	if p := s.target.Tunnel; p != nil {
		msg += fmt.Sprintf(", through the datastore's %s tunnel", p.Type)
	}
	setCondition(&b.Status.Conditions, b.Generation, v1alpha1.ConditionReady, metav1.ConditionTrue, "TargetReady", msg)
	return true, nil
}

// SetupWithManager registers the reconciler: it follows its Jobs and the datastores its
// benchmarks wait for.
func (r *DatastoreBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.DatastoreBenchmark{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Watches(&v1alpha1.SecuredDatastore{}, handler.EnqueueRequestsFromMapFunc(r.benchmarksOf)).
		Named("datastorebenchmark").
		Complete(r)
}

// benchmarksOf maps a datastore to the unfinished benchmarks that target it.
func (r *DatastoreBenchmarkReconciler) benchmarksOf(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.DatastoreBenchmarkList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, b := range list.Items {
		done := slices.Contains([]v1alpha1.BenchmarkPhase{v1alpha1.BenchmarkSucceeded, v1alpha1.BenchmarkFailed}, b.Status.Phase)
		if ref := b.Spec.Target.DatastoreRef; ref != nil && ref.Name == o.GetName() && !done {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
		}
	}
	return out
}
