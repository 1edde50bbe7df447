package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/status"
	"secured.dev/operator/internal/verify"
)

// engine is what a datastore's reconcile does differently for Cassandra and for HBase. The
// reconciler makes one per pass (engineFor); it keeps what it observed and planned, so every
// later phase of the pass reads the same state and nothing is computed twice. Adding an engine
// means implementing this, nothing else in the reconciler.
type engine interface {
	// nodes is the number of nodes the spec asks for (status.nodes).
	nodes() int32
	// observe reads what runs: the workloads, the step they were last told to run, the pods.
	observe(ctx context.Context, s *datastoreScope) error
	// plan decides the step to run now: the target, the step still rolling out, or the next
	// step toward the target.
	plan(s *datastoreScope) error
	// prepare provisions what the step's pods need besides certificates before they start:
	// tunnel keys, Kerberos identities.
	prepare(ctx context.Context, s *datastoreScope) (ctrl.Result, error)
	// certificates says whether the running or the next step needs node certificates, whether
	// nodes already run (they keep their certificate while a new one is issued), and what to
	// request.
	certificates(s *datastoreScope) (need, running bool, req certs.Request)
	// apply renders and applies the step's objects and returns what the roll looks like.
	apply(ctx context.Context, s *datastoreScope) (status.Rollout, error)
	// converged: every node runs the effective profile, so the wire can be probed.
	converged() bool
	// endpoints are the ports the wire prober checks.
	endpoints(s *datastoreScope) []verify.Endpoint
}

func (r *SecuredDatastoreReconciler) engineFor(ds *v1alpha1.SecuredDatastore) engine {
	if ds.Spec.Engine == v1alpha1.EngineHBase {
		return &hbaseEngine{r: r, ds: ds}
	}
	return &cassandraEngine{r: r, ds: ds}
}

func (r *SecuredDatastoreReconciler) observe(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	return ctrl.Result{}, s.engine.observe(ctx, s)
}

func (r *SecuredDatastoreReconciler) plan(_ context.Context, s *datastoreScope) (ctrl.Result, error) {
	return ctrl.Result{}, s.engine.plan(s)
}

func (r *SecuredDatastoreReconciler) prepare(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	return s.engine.prepare(ctx, s)
}

// apply applies the engine's objects and reports the roll in Ready and Progressing.
func (r *SecuredDatastoreReconciler) apply(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	rollout, err := s.engine.apply(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	ds := s.ds
	prev := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionReady)
	for _, p := range rollout.Problems {
		if prev == nil || !strings.Contains(prev.Message, p) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, "PodProblem", "Reconcile", "%s", p)
		}
	}
	c := status.Compute(prev, rollout)
	setCondition(&ds.Status.Conditions, ds.Generation, c.Progressing.Type, c.Progressing.Status, c.Progressing.Reason, c.Progressing.Message)
	if setCondition(&ds.Status.Conditions, ds.Generation, c.Ready.Type, c.Ready.Status, c.Ready.Reason, c.Ready.Message) {
		switch c.Ready.Reason {
		case v1alpha1.ReasonNodesReady:
			r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "Ready", "Reconcile", "%s", c.Ready.Message)
		case v1alpha1.ReasonDegraded:
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, v1alpha1.ReasonDegraded, "Reconcile", "%s", c.Ready.Message)
		}
	}
	return ctrl.Result{}, nil
}

// listPods reads the pods matching selector into the scope, by name.
func (r *SecuredDatastoreReconciler) listPods(ctx context.Context, s *datastoreScope, selector map[string]string) error {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(s.ds.Namespace), client.MatchingLabels(selector)); err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	s.pods = pods.Items
	return nil
}

// applyAll applies objects owned by the datastore and counts the writes.
func (r *SecuredDatastoreReconciler) applyAll(ctx context.Context, s *datastoreScope, objs []client.Object) error {
	for _, o := range objs {
		wrote, err := applyOwned(ctx, r.Client, s.ds, o)
		if notOwned := (*NotOwnedError)(nil); errors.As(err, &notOwned) {
			return r.nameConflict(s.ds, notOwned.Kind, notOwned.Name)
		}
		if err != nil {
			return err
		}
		if wrote {
			s.wrote = append(s.wrote, fmt.Sprintf("%s/%s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName()))
		}
	}
	return nil
}

// nameConflict reports an object the datastore would own that someone else's object already
// names, and stops the reconcile: the operator never takes over what it did not create.
func (r *SecuredDatastoreReconciler) nameConflict(ds *v1alpha1.SecuredDatastore, kind, name string) error {
	return r.blockReady(ds, v1alpha1.ReasonNameConflict, (&NotOwnedError{Kind: kind, Name: name, Owner: "datastore"}).Error())
}

// blockReady stops the remaining phases with Ready False for a reason the user must act on,
// and a warning event that says what to do (once, when the condition changes).
func (r *SecuredDatastoreReconciler) blockReady(ds *v1alpha1.SecuredDatastore, reason, msg string) error {
	if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg) {
		r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", msg)
	}
	return errPhaseBlocked
}
