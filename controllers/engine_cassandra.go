package controllers

import (
	"context"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/status"
	"secured.dev/operator/internal/verify"
)

// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services;configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// cassandraEngine runs a Cassandra datastore: one StatefulSet whose pod template carries the
// step its nodes run; a change of encryption rolls through intermediate steps one restart at a
// time (cassandra.Next).
type cassandraEngine struct {
	r  *SecuredDatastoreReconciler
	ds *v1alpha1.SecuredDatastore

	sts     *appsv1.StatefulSet // nil until created
	applied *cassandra.Step     // the step the StatefulSet's template runs; nil for a new cluster
	target  cassandra.Step      // the effective profile as a step
	step    cassandra.Step      // the step to apply now
	tunnel  *vpn.Plan           // the step's VPN, whose sidecars run; nil without one
	// atRestKeys: the at-rest keystore's Secret exists and is mounted, also once the profile no
	// longer encrypts at rest (a segment written encrypted replays only with it).
	atRestKeys bool
	// started: this pass applied a new step; the StatefulSet status read earlier is stale.
	started bool
}

func (e *cassandraEngine) nodes() int32 { return cassandra.Nodes(e.ds) }

// bound is the tunnel the step's nodes listen in: none while they stand by outside it.
func (e *cassandraEngine) bound() *vpn.Plan { return cassandra.Bound(e.tunnel, e.step) }

func (e *cassandraEngine) observe(ctx context.Context, s *datastoreScope) error {
	ds := e.ds
	sts := &appsv1.StatefulSet{}
	switch err := e.r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: cassandra.NamesOf(ds).StatefulSet()}, sts); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading the StatefulSet: %w", err)
	}
	if !metav1.IsControlledBy(sts, ds) {
		return e.r.nameConflict(ds, "StatefulSet", sts.Name)
	}
	applied, err := cassandra.AppliedStep(sts)
	if err != nil {
		return err
	}
	e.sts, e.applied = sts, applied
	return e.r.listPods(ctx, s, cassandra.Selector(ds))
}

// plan: the target when nothing runs yet or the target already runs; the applied step while a
// roll is under way; otherwise the next step toward the target.
func (e *cassandraEngine) plan(s *datastoreScope) error {
	e.target = cassandra.Target(s.resolution.Effective)
	switch {
	case e.applied == nil || reflect.DeepEqual(*e.applied, e.target):
		e.step = e.target
	case !status.SetReady(e.sts):
		e.step = *e.applied
	default:
		e.step = cassandra.Next(e.applied, s.resolution.Effective)
	}
	tunnel, err := cassandra.Tunnel(e.ds, e.step, e.r.Options.clusterDomain())
	e.tunnel = tunnel
	return err
}

// volumeChangeRefused: why a running datastore keeps its volumes' encryption.
const volumeChangeRefused = "spec.encryption.atRest.volume cannot change on a running datastore: " +
	"the data on its volumes would stay as it was written (in clear, or readable only with the volume key). Restore the previous atRest settings (or profile), " +
	"or create a new datastore with the new profile and move the data to it"

// prepare readies the at-rest keys and a VPN profile's tunnel (prepareTunnel) before any pod
// needs them.
func (e *cassandraEngine) prepare(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds, r := e.ds, e.r
	if e.applied != nil && podtemplate.EncryptsVolume(e.applied.Encryption) != podtemplate.EncryptsVolume(s.resolution.Effective) {
		return ctrl.Result{}, r.blockReady(ds, v1alpha1.ReasonVolumeEncryptionChangeUnsupported, volumeChangeRefused)
	}
	if encryptsAtRest(&e.step.Encryption) || (e.applied != nil && encryptsAtRest(&e.applied.Encryption)) {
		if err := r.ensureAtRestKeys(ctx, ds, podtemplate.EncryptsVolume(e.step.Encryption)); err != nil {
			return ctrl.Result{}, err
		}
		e.atRestKeys = true
	} else if e.sts != nil && podtemplate.VolumeSecret(e.sts.Spec.Template.Spec, datakeys.AtRestVolume) != "" {
		// The nodes mount a keystore from before: they keep it while it is there. Only then is
		// the Secret read, so a datastore that never encrypted at rest costs no request.
		sec := &corev1.Secret{}
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: datakeys.AtRestSecret(ds)}, sec); {
		case err == nil:
			e.atRestKeys = madeFor(sec, ds) && len(datakeys.Missing(sec.Data)) == 0
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, fmt.Errorf("reading Secret %s: %w", datakeys.AtRestSecret(ds), err)
		}
	}
	return ctrl.Result{}, r.prepareTunnel(ctx, s, e.tunnel, cassandra.Labels(ds))
}

func (e *cassandraEngine) certificates(*datastoreScope) (need, running bool, req certs.Request) {
	others := []cassandra.Step{e.target}
	if e.applied != nil {
		others = append(others, *e.applied)
	}
	return e.step.TLSEnabled() || (e.applied != nil && e.applied.TLSEnabled()), e.applied != nil,
		cassandra.Certificates(e.ds, e.r.Options.clusterDomain(), e.step, others...)
}

func (e *cassandraEngine) apply(ctx context.Context, s *datastoreScope) (status.Rollout, error) {
	ds, r := e.ds, e.r
	c := cassandra.Cluster{
		Datastore: ds, Step: e.step, Image: ds.Spec.Image, ClusterDomain: r.Options.clusterDomain(), OperatorNamespace: r.Options.Namespace,
		FeatureLabelPrefix: r.Options.FeatureLabelPrefix, VPNImage: r.Options.VPNImage, KeyServer: r.Options.keyServer(), Tunnel: e.tunnel,
		VolumeEncryptionImage: r.Options.VolumeEncryptionImage,
	}
	if c.Image == "" {
		c.Image = r.Options.CassandraImage
	}
	if e.step.TLSEnabled() {
		c.CertSecret, c.TrustConfigMap = certs.NodeSecret(ds), certs.TrustConfigMap(ds)
	}
	if e.atRestKeys {
		c.AtRestSecret = datakeys.AtRestSecret(ds)
	}
	objs, err := cassandra.Build(c)
	if err != nil {
		return status.Rollout{}, fmt.Errorf("rendering the Cassandra objects: %w", err)
	}
	if err := r.applyAll(ctx, s, objs.All()); err != nil {
		return status.Rollout{}, err
	}
	if err := e.pruneConfigs(ctx, objs.ConfigMap.Name); err != nil {
		return status.Rollout{}, err
	}
	switch hash := cassandra.ConfigHashAnnotation; {
	case e.applied != nil && !reflect.DeepEqual(*e.applied, e.step):
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "RollingRestart", "ChangeEncryption",
			"rolling restart, one node at a time: %s", cassandra.Describe(e.applied, e.step))
		e.started = true
	case e.sts != nil && e.sts.Spec.Template.Annotations[hash] != objs.StatefulSet.Spec.Template.Annotations[hash]:
		// The same step with another configuration: how clients authenticate, for one.
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "RollingRestart", "ChangeConfiguration",
			"rolling restart, one node at a time: the nodes' configuration changed (they authenticate clients by %s)",
			cassandra.Authentication(ds, e.bound(), e.step, r.Options.clusterDomain()))
		e.started = true
	}
	return e.rollout(s), nil
}

// pruneConfigs deletes the datastore's configurations no pod can need any more. Once the
// StatefulSet observed at the start of this pass ran its template on every replica, a pod it
// recreates mounts that template's configuration, or the one just applied: every other one can
// go. During a roll the previous revision's configuration is still needed and nothing is
// deleted.
func (e *cassandraEngine) pruneConfigs(ctx context.Context, current string) error {
	if !status.SetUpdated(e.sts) {
		return nil
	}
	running := podtemplate.VolumeConfigMap(e.sts.Spec.Template.Spec, "config")
	var cms corev1.ConfigMapList
	if err := e.r.Client.List(ctx, &cms, client.InNamespace(e.ds.Namespace), client.MatchingLabels(cassandra.Labels(e.ds))); err != nil {
		return fmt.Errorf("listing ConfigMaps: %w", err)
	}
	n := cassandra.NamesOf(e.ds)
	for i := range cms.Items {
		cm := &cms.Items[i]
		if cm.Name == current || cm.Name == running || !n.IsConfigMap(cm.Name) || !metav1.IsControlledBy(cm, e.ds) {
			continue
		}
		if err := e.r.Client.Delete(ctx, cm, client.Preconditions{UID: &cm.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the earlier configuration %s: %w", cm.Name, err)
		}
	}
	return nil
}

// rollout sets readyNodes and endpoints and describes the roll.
func (e *cassandraEngine) rollout(s *datastoreScope) status.Rollout {
	ds := e.ds
	n := cassandra.NamesOf(ds)
	ds.Status.Endpoints = []v1alpha1.Endpoint{
		{Name: "client", Address: fmt.Sprintf("%s.%s.svc", n.ClientService(), ds.Namespace), Port: cassandra.NativePort},
		{Name: "internode", Address: fmt.Sprintf("%s.%s.svc", n.HeadlessService(), ds.Namespace), Port: cassandra.StoragePort},
	}
	r := status.Rollout{
		Unit: "nodes", Desired: e.nodes(), Step: "step " + e.step.String(), Exists: e.sts != nil, Started: e.started,
		RolledOut: status.SetUpdated(e.sts), AtTarget: reflect.DeepEqual(e.step, e.target),
	}
	for _, p := range s.pods {
		if status.PodReady(&p) {
			r.Ready++
		} else {
			r.Waiting = append(r.Waiting, p.Name)
		}
	}
	if e.sts != nil {
		r.Updated = e.sts.Status.UpdatedReplicas
	}
	r.Serving = fmt.Sprintf("%d of %d nodes are up and serve CQL with the effective profile", r.Ready, r.Desired)
	r.Problems = status.PodProblems(s.pods, cassandra.VolumeEncryptionContainer)
	ds.Status.ReadyNodes = r.Ready
	return r
}

func (e *cassandraEngine) converged() bool {
	return e.sts != nil && !e.started && status.SetReady(e.sts) && reflect.DeepEqual(e.step, e.target)
}

func (e *cassandraEngine) endpoints(s *datastoreScope) []verify.Endpoint {
	bound := e.bound()
	eps := verify.CassandraEndpoints(s.pods, s.resolution.Effective,
		bound != nil && bound.CarriesClients(), bound != nil && bound.CarriesNodes())
	names := cassandra.NamesOf(e.ds)
	return withIdentities(s.trust, eps, func(pod string) string { return names.Host(pod, e.r.Options.clusterDomain()) })
}
