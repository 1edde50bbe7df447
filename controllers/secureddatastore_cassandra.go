package controllers

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
)

// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services;configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch

// observeCassandra reads what runs: the StatefulSet, the step its pods were told to run, and
// its pods.
func (r *SecuredDatastoreReconciler) observeCassandra(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	sts := &appsv1.StatefulSet{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: cassandra.NamesOf(ds).StatefulSet()}, sts); {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading the StatefulSet: %w", err)
	}
	if !metav1.IsControlledBy(sts, ds) {
		return ctrl.Result{}, r.nameConflict(ds, "StatefulSet", sts.Name)
	}
	applied, err := cassandra.AppliedStep(sts)
	if err != nil {
		return ctrl.Result{}, err
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(ds.Namespace), client.MatchingLabels(cassandra.Selector(ds))); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	s.sts, s.applied, s.pods = sts, applied, pods.Items
	return ctrl.Result{}, nil
}

// planStep decides which step the pods run next: the target when nothing runs yet or the
// target already runs; the applied step while a roll is under way; otherwise the next step
// toward the target.
func (r *SecuredDatastoreReconciler) planStep(_ context.Context, s *datastoreScope) (ctrl.Result, error) {
	target := cassandra.Target(s.resolution.Effective)
	switch {
	case s.applied == nil || reflect.DeepEqual(*s.applied, target):
		s.step = target
	case !rolledOut(s.sts):
		s.step = *s.applied
	default:
		s.step = cassandra.Next(s.applied, s.resolution.Effective)
	}
	return ctrl.Result{}, nil
}

// reconcileCassandra applies the step's objects and reports the roll.
func (r *SecuredDatastoreReconciler) reconcileCassandra(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	image := ds.Spec.Image
	if image == "" {
		image = r.Options.CassandraImage
	}
	secret, trust := "", ""
	if s.step.TLSEnabled() {
		secret, trust = certs.NodeSecret(ds), certs.TrustConfigMap(ds)
	}
	objs, err := cassandra.Build(cassandra.Cluster{
		Datastore: ds, Step: s.step, Image: image, ClusterDomain: r.Options.clusterDomain(), OperatorNamespace: r.Options.Namespace,
		FeatureLabelPrefix: r.Options.FeatureLabelPrefix, VPNImage: r.Options.VPNImage,
	}, secret, trust)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("rendering the Cassandra objects: %w", err)
	}
	if err := r.applyAll(ctx, s, objs.All()); err != nil {
		return ctrl.Result{}, err
	}
	newStep := s.applied != nil && !reflect.DeepEqual(*s.applied, s.step)
	if newStep {
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "RollingRestart", "ChangeEncryption",
			"rolling restart, one node at a time: %s", cassandra.Describe(s.applied, s.step))
		s.rollStarted = true // the StatefulSet status we read describes the previous template
	}
	r.reportRoll(s)
	return ctrl.Result{}, nil
}

// nameConflict reports an object the datastore would own that someone else's object already
// names, and stops the reconcile: the operator never takes over what it did not create.
func (r *SecuredDatastoreReconciler) nameConflict(ds *v1alpha1.SecuredDatastore, kind, name string) error {
	return r.blockReady(ds, "NameConflict", fmt.Sprintf("%s %s exists and is not owned by this datastore: rename the datastore or delete that %s", kind, name, kind))
}

// blockReady stops the remaining phases with Ready False for a reason the user must act on,
// and a warning event that says what to do (once, when the condition changes).
func (r *SecuredDatastoreReconciler) blockReady(ds *v1alpha1.SecuredDatastore, reason, msg string) error {
	if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg) {
		r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", msg)
	}
	return errPhaseBlocked
}

// applyAll applies objects owned by the datastore and counts the writes.
func (r *SecuredDatastoreReconciler) applyAll(ctx context.Context, s *datastoreScope, objs []client.Object) error {
	for _, o := range objs {
		wrote, err := applyOwned(ctx, r.Client, s.ds, o)
		if err != nil {
			return err
		}
		if wrote {
			s.wrote = append(s.wrote, fmt.Sprintf("%s/%s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName()))
		}
	}
	return nil
}

// rolledOut: every pod runs the StatefulSet's current template and is ready.
func rolledOut(sts *appsv1.StatefulSet) bool {
	if sts == nil || sts.Spec.Replicas == nil {
		return false
	}
	st := sts.Status
	return st.ObservedGeneration >= sts.Generation && st.UpdateRevision != "" && st.CurrentRevision == st.UpdateRevision &&
		st.UpdatedReplicas == *sts.Spec.Replicas && st.ReadyReplicas == *sts.Spec.Replicas
}

// reportRoll sets readyNodes, endpoints, Progressing and Ready from the StatefulSet and pods.
func (r *SecuredDatastoreReconciler) reportRoll(s *datastoreScope) {
	ds := s.ds
	nodes := cassandra.Nodes(ds)
	n := cassandra.NamesOf(ds)
	ds.Status.Endpoints = []v1alpha1.Endpoint{
		{Name: "client", Address: fmt.Sprintf("%s.%s.svc", n.ClientService(), ds.Namespace), Port: cassandra.NativePort},
		{Name: "internode", Address: fmt.Sprintf("%s.%s.svc", n.HeadlessService(), ds.Namespace), Port: cassandra.StoragePort},
	}
	ready := int32(0)
	var waiting []string
	for _, p := range s.pods {
		if podReady(&p) {
			ready++
		} else {
			waiting = append(waiting, p.Name)
		}
	}
	ds.Status.ReadyNodes = ready
	atTarget := reflect.DeepEqual(s.step, cassandra.Target(s.resolution.Effective))
	progressing := func(reason, msg string) {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProgressing, metav1.ConditionTrue, reason, msg)
	}
	// A datastore that was never Ready is still being provisioned, whatever its StatefulSet
	// reports; after that, a roll is an update and missing nodes are a degradation.
	prev := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionReady)
	provisioned := prev != nil && (prev.Status == metav1.ConditionTrue || prev.Reason == "Updating" || prev.Reason == "Degraded")
	waitingFor := ""
	if len(waiting) > 0 {
		waitingFor = "; waiting for " + waiting[0]
	}
	converged := s.sts != nil && !s.rollStarted && rolledOut(s.sts) && atTarget
	switch {
	case !provisioned && !converged:
		progressing("Provisioning", fmt.Sprintf("creating %d nodes, one at a time: %d ready%s", nodes, ready, waitingFor))
	case s.rollStarted:
		progressing("Rolling", "rolling restart started: "+describeStep(s))
	case !rolledOut(s.sts):
		st := s.sts.Status
		progressing("Rolling", fmt.Sprintf("%s: %d of %d nodes updated, %d ready%s", describeStep(s), st.UpdatedReplicas, nodes, st.ReadyReplicas, waitingFor))
	case !atTarget:
		// Rolled out, but only to an intermediate step; the next reconcile starts the next.
		progressing("Rolling", "rolled out "+describeStep(s))
	default:
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "RolledOut",
			fmt.Sprintf("all %d nodes run the effective profile", nodes))
	}
	switch {
	case converged && ready == nodes:
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionTrue, "NodesReady",
			fmt.Sprintf("%d of %d nodes are up and serve CQL with the effective profile", ready, nodes)) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "Ready", "Reconcile", "%d nodes ready", nodes)
		}
	case !provisioned:
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, "Provisioning",
			fmt.Sprintf("%d of %d nodes ready; see Progressing", ready, nodes))
	case converged:
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, "Degraded",
			fmt.Sprintf("%d of %d nodes ready%s", ready, nodes, waitingFor)) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, "Degraded", "Reconcile", "%d of %d nodes ready%s", ready, nodes, waitingFor)
		}
	default:
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, "Updating",
			fmt.Sprintf("%d of %d nodes ready; see Progressing", ready, nodes))
	}
}

func describeStep(s *datastoreScope) string { return "step " + s.step.String() }

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
