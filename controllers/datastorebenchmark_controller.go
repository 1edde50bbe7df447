package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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

// benchmarkScope carries what one reconcile pass read and decided.
type benchmarkScope struct {
	b      *v1alpha1.DatastoreBenchmark
	target benchmark.Target
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
	s := &benchmarkScope{b: b}
	p := pass[*v1alpha1.DatastoreBenchmark]{
		conditions: func(o *v1alpha1.DatastoreBenchmark) *[]metav1.Condition { return &o.Status.Conditions },
		recorder:   r.Recorder,
		status:     func(b *v1alpha1.DatastoreBenchmark) any { return b.Status },
		observed:   func(b *v1alpha1.DatastoreBenchmark) { b.Status.ObservedGeneration = b.Generation },
		summarize:  publishBenchmark,
		afterWrite: func(ctx context.Context) error {
			var err error
			for _, job := range s.collected {
				err = errors.Join(err, r.deleteJob(ctx, job))
			}
			return err
		},
	}
	return p.reconcile(ctx, r.Client, b, func(ctx context.Context) (ctrl.Result, error) {
		res, err := runPhases(ctx, s, r.begin, r.resolveTarget, r.load, r.runs)
		if notOwned := (*NotOwnedError)(nil); errors.As(err, &notOwned) {
			// Results from someone else's Job would not be this benchmark's.
			r.fail(b, v1alpha1.ReasonNameConflict, notOwned.Error())
			return ctrl.Result{}, nil
		}
		return res, err
	})
}

// begin stops at a finished benchmark: its results are final; a new measurement is a new
// DatastoreBenchmark.
func (r *DatastoreBenchmarkReconciler) begin(_ context.Context, s *benchmarkScope) (ctrl.Result, error) {
	switch st := &s.b.Status; st.Phase {
	case v1alpha1.BenchmarkSucceeded, v1alpha1.BenchmarkFailed:
		return ctrl.Result{}, errPhaseBlocked
	case "":
		st.Phase = v1alpha1.BenchmarkPending
	}
	return ctrl.Result{}, nil
}

// resolveTarget finds the endpoints, TLS pin and trust of the target.
func (r *DatastoreBenchmarkReconciler) resolveTarget(ctx context.Context, s *benchmarkScope) (ctrl.Result, error) {
	b := s.b
	notReady := func(reason, msg string) (ctrl.Result, error) {
		if setCondition(&b.Status.Conditions, b.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg) {
			r.Recorder.Eventf(b, nil, "Warning", reason, "ResolveTarget", "%s", msg)
		}
		return ctrl.Result{RequeueAfter: 30 * time.Second}, errPhaseBlocked
	}
	if ext := b.Spec.Target.External; ext != nil {
		t, err := benchmark.ExternalTarget(ext)
		if err != nil {
			return notReady(v1alpha1.ReasonTargetNotMeasurable, err.Error())
		}
		s.target = t
	} else {
		ref := b.Spec.Target.DatastoreRef
		var ds v1alpha1.SecuredDatastore
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: ref.Name}, &ds); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			return notReady(v1alpha1.ReasonTargetNotFound, fmt.Sprintf("SecuredDatastore %q does not exist in namespace %s: create it or fix spec.target.datastoreRef.name", ref.Name, b.Namespace))
		}
		if !isTrue(ds.Status.Conditions, v1alpha1.ConditionReady) && !started(b) {
			return notReady(v1alpha1.ReasonTargetNotReady, fmt.Sprintf("SecuredDatastore %s is not Ready yet; the benchmark starts when it is", ds.Name))
		}
		t, err := benchmark.DatastoreTarget(&ds, r.Options.clusterDomain())
		if err == nil && ref.Plaintext {
			t, err = benchmark.InPlaintext(t, &ds)
		}
		if err != nil {
			return notReady(v1alpha1.ReasonTargetNotMeasurable, err.Error())
		}
		if err := benchmark.Measurable(b, t); err != nil {
			return notReady(v1alpha1.ReasonTargetNotMeasurable, err.Error())
		}
		s.target = t
	}
	if b.Status.Profile == "" {
		b.Status.Profile = s.target.Profile
	}
	msg := fmt.Sprintf("%s, plaintext", s.target.Hosts)
	switch h, t := s.target.HBase, s.target.TLS; {
	case h != nil:
		msg = fmt.Sprintf("HBase bootstrapped from %s with YCSB's JVM client", s.target.Hosts)
		if h.Properties["hbase.zookeeper.quorum"] != "" {
			msg = fmt.Sprintf("HBase found through ZooKeeper at %s with YCSB's JVM client", s.target.Hosts)
		}
		if h.Principal != "" {
			msg += ", logged in as " + h.Principal + " (SASL " + h.Properties["hbase.rpc.protection"] + ")"
		}
		if p := h.Properties; p["hbase.client.netty.tls.enabled"] == "true" {
			msg += fmt.Sprintf(", TLS (%s; %s) verified against ", p["hbase.rpc.tls.enabledProtocols"], p["hbase.rpc.tls.ciphersuites"])
			if h.Trust != nil {
				msg += "the CAs in " + h.Trust.String()
			} else {
				msg += "the JDK's default CAs"
			}
		}
	case t != nil:
		msg = fmt.Sprintf("%s, pinned to %s %s, verifying %s", s.target.Hosts, t.Protocol, t.CipherSuite, t.ServerName)
	}
	if p := s.target.Tunnel; p != nil {
		msg += fmt.Sprintf(", through the datastore's %s tunnel", p.Type)
	}
	setCondition(&b.Status.Conditions, b.Generation, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonTargetReady, msg)
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler: it follows its Jobs and the datastores its
// benchmarks wait for.
func (r *DatastoreBenchmarkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.DatastoreBenchmark{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(benchmarkOfClient)).
		Watches(&v1alpha1.SecuredDatastore{}, handler.EnqueueRequestsFromMapFunc(r.benchmarksOf)).
		Named("datastorebenchmark").
		Complete(r)
}

// benchmarkOfClient maps a client pod that has succeeded to its benchmark, which can then read
// the pod's result before the Job controller marks the Job complete.
func benchmarkOfClient(_ context.Context, o client.Object) []reconcile.Request {
	pod, ok := o.(*corev1.Pod)
	name := o.GetLabels()[benchmark.LabelBenchmark]
	if !ok || name == "" || pod.Status.Phase != corev1.PodSucceeded {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
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
