package controllers

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/status"
	"secured.dev/operator/internal/verify"
)

// Secrets are read around the cache (ClientOptions: the client never lists or watches them),
// so the operator needs no right to read every Secret of the cluster.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;patch

// hbaseEngine runs an HBase datastore: a StatefulSet per role (KDC, ZooKeeper, NameNode,
// DataNodes, Master, RegionServers), each mounting an immutable ConfigMap of the files it reads,
// and one ConfigMap with every file that records the step they configure (clients mount it); a
// change restarts only the roles whose files change, one RPC TLS stage and one step of each SASL
// level per roll (hbase.Next).
type hbaseEngine struct {
	r  *SecuredDatastoreReconciler
	ds *v1alpha1.SecuredDatastore

	sets       map[hbase.Role]*appsv1.StatefulSet // the roles' StatefulSets that exist
	applied    *v1alpha1.EffectiveEncryption      // the step the ConfigMap configures; nil for a new cluster
	step       v1alpha1.EffectiveEncryption       // the step to apply now
	principals *corev1.Secret                     // nil before there is one
	keys       hbase.Keys                         // what the principals Secret stores (when keysErr is nil)
	keysErr    error                              // why it does not parse
	keyVersion int                                // the newest Kerberos key version in the keytabs
	// rendered caches the objects of a step at a key version: planning, key promotion and apply
	// look at the same step within a pass.
	rendered map[string]renderedHBase
	started  bool
}

type renderedHBase struct {
	objs hbase.Objects
	err  error
}

func (e *hbaseEngine) nodes() int32 { return hbase.Replicas(e.ds, hbase.RegionServer) }

func (e *hbaseEngine) observe(ctx context.Context, s *datastoreScope) error {
	ds, r := e.ds, e.r
	n := hbase.NamesOf(ds)
	e.sets = map[hbase.Role]*appsv1.StatefulSet{}
	for _, role := range append([]hbase.Role{hbase.KDC}, hbase.Roles...) {
		sts := &appsv1.StatefulSet{}
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.StatefulSet(role)}, sts); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading StatefulSet %s: %w", n.StatefulSet(role), err)
		}
		if !metav1.IsControlledBy(sts, ds) {
			return r.nameConflict(ds, "StatefulSet", sts.Name)
		}
		e.sets[role] = sts
	}
	cm := &corev1.ConfigMap{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.ConfigMap()}, cm); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading ConfigMap %s: %w", n.ConfigMap(), err)
	case !metav1.IsControlledBy(cm, ds):
		return r.nameConflict(ds, "ConfigMap", cm.Name)
	default:
		applied, err := hbase.AppliedStep(cm.Annotations, cm.Name)
		if err != nil {
			return err
		}
		e.applied = applied
	}
	secret := &corev1.Secret{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.PrincipalsSecret()}, secret); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading Secret %s: %w", n.PrincipalsSecret(), err)
	default:
		// A Secret that does not parse is reported by prepare.
		e.principals = secret
		e.keys, e.keysErr = hbase.KeysOf(secret.Data)
		e.keyVersion = e.keys.HeldVersion()
	}
	return r.listPods(ctx, s, map[string]string{"app.kubernetes.io/instance": ds.Name, "app.kubernetes.io/name": "hbase"})
}

// plan: the target when nothing runs yet or the target already runs; the applied step while
// its roll is under way; otherwise the next step toward the target.
func (e *hbaseEngine) plan(s *datastoreScope) error {
	target := s.resolution.Effective
	switch {
	case e.applied == nil || hbase.SameStep(*e.applied, target):
		e.step = target
	case len(e.waiting(*e.applied)) > 0:
		e.step = *e.applied
	default:
		e.step = hbase.Next(e.applied, target)
	}
	return nil
}

// objects renders a step at the current key version, once per pass.
func (e *hbaseEngine) objects(step v1alpha1.EffectiveEncryption) (hbase.Objects, error) {
	key := fmt.Sprintf("%d/%s", e.keyVersion, hbase.StepKey(step))
	if got, ok := e.rendered[key]; ok {
		return got.objs, got.err
	}
	ds, o := e.ds, e.r.Options
	// The tunnel is the step's own: a step is also rendered to see whether its roll is done.
	tunnel, err := hbase.Tunnel(ds, step, o.clusterDomain())
	if err != nil {
		return hbase.Objects{}, err
	}
	objs, err := hbase.Build(hbase.Cluster{
		Datastore: ds, Encryption: step, Image: o.HBaseImage, KDCImage: o.KDCImage, KeyVersion: e.keyVersion,
		ClusterDomain: o.clusterDomain(), FeatureLabelPrefix: o.FeatureLabelPrefix, OperatorNamespace: o.Namespace,
		CertSecret: certs.NodeSecret(ds), KeystorePasswordSecret: certs.KeystorePasswordSecret(ds), TrustConfigMap: certs.TrustConfigMap(ds),
		AtRestSecret: datakeys.AtRestSecret(ds), CertRevision: certificateRevision(ds), VolumeEncryptionImage: o.VolumeEncryptionImage,
		Tunnel: tunnel, VPNImage: o.VPNImage, KeyServer: o.keyServer(),
	})
	if e.rendered == nil {
		e.rendered = map[string]renderedHBase{}
	}
	e.rendered[key] = renderedHBase{objs, err}
	return objs, err
}

// certificateRevision is cert-manager's revision of the node certificate last seen issued, 0
// before the first.
func certificateRevision(ds *v1alpha1.SecuredDatastore) int {
	if c := ds.Status.Certificates; c != nil && c.Revision != nil {
		return *c.Revision
	}
	return 0
}

// waiting names the roles whose pods do not all run step yet, or are not all ready (a step
// that no longer renders has nothing to wait for).
func (e *hbaseEngine) waiting(step v1alpha1.EffectiveEncryption) []string {
	objs, err := e.objects(step)
	if err != nil {
		return nil
	}
	var out []string
	for _, want := range objs.StatefulSets {
		if sts := e.set(want); !e.updated(sts, want) || !status.SetReady(sts) {
			out = append(out, want.Name)
		}
	}
	return out
}

func (e *hbaseEngine) set(want *appsv1.StatefulSet) *appsv1.StatefulSet {
	return e.sets[hbase.Role(strings.TrimPrefix(want.Name, e.ds.Name+"-"))]
}

// updated: the role's StatefulSet exists and every pod runs the desired template.
func (e *hbaseEngine) updated(sts, want *appsv1.StatefulSet) bool {
	return sts != nil && status.SetUpdated(sts) &&
		sts.Spec.Template.Annotations[podtemplate.ConfigHashAnnotation] == want.Spec.Template.Annotations[podtemplate.ConfigHashAnnotation]
}

// prepare gives every service of every pod, and the datastore's clients, a principal: the
// managed KDC serves them from one Secret, each role mounts its keytab Secret. A new value of
// the datastore's rotate-keytabs annotation rotates every key in two moves: keytabs gain the
// next key version (pods restart to load it) while the KDC still issues the current one; once
// every pod runs with it, the KDC issues the new version. With encryption at rest it first makes
// the at-rest keystore (ensureAtRestKeys), which the Master and RegionServers mount; with a VPN,
// the tunnel's keys (prepareTunnel).
func (e *hbaseEngine) prepare(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds, r := e.ds, e.r
	if e.applied != nil && podtemplate.EncryptsVolume(*e.applied) != podtemplate.EncryptsVolume(s.resolution.Effective) {
		return ctrl.Result{}, r.blockReady(ds, v1alpha1.ReasonVolumeEncryptionChangeUnsupported, volumeChangeRefused)
	}
	// A tunnel renames every server: it comes and goes in one step (hbase.Next), every role
	// restarting with its new name.
	tunnel, err := hbase.Tunnel(ds, e.step, r.Options.clusterDomain())
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.prepareTunnel(ctx, s, tunnel, hbase.Labels(ds, "")); err != nil {
		return ctrl.Result{}, err
	}
	if encryptsAtRest(&e.step) || encryptsAtRest(e.applied) {
		if err := r.ensureAtRestKeys(ctx, ds, podtemplate.EncryptsVolume(e.step)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if s.resolution.Effective.HBase.Authentication != v1alpha1.AuthenticationKerberos {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionTrue, v1alpha1.ReasonNotNeeded, "the profile uses no Kerberos")
		return ctrl.Result{}, nil
	}
	n := hbase.NamesOf(ds)
	current, fresh, keys := e.principals, e.principals == nil, e.keys
	if fresh {
		current = &corev1.Secret{}
	}
	if e.keysErr != nil {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidPrincipals,
			fmt.Sprintf("Secret %s %s: delete that Secret to issue new keys to every pod", n.PrincipalsSecret(), e.keysErr))
		return ctrl.Result{}, errPhaseBlocked
	}
	requested, answered := ds.Annotations[v1alpha1.RotateKeytabsAnnotation], current.Annotations[hbase.RotatedForAnnotation]
	op := hbase.KeepKeys
	switch {
	case fresh:
		answered = requested // new keys answer any request
	case keys.Pending() && len(e.waiting(e.step)) == 0:
		op = hbase.PromoteKeys
	case !keys.Pending() && requested != answered:
		op, answered = hbase.RotateKeys, requested
	}
	secrets, err := hbase.Identities(ds, r.Options.clusterDomain(), keys, op, kerberos.NewPassword)
	if err != nil {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidPrincipals, err.Error())
		return ctrl.Result{}, errPhaseBlocked
	}
	principalsSecret := secrets[len(secrets)-1]
	if answered != "" {
		principalsSecret.Annotations = map[string]string{hbase.RotatedForAnnotation: answered}
	}
	objs := make([]client.Object, len(secrets))
	names := make([]string, len(secrets))
	for i, sec := range secrets {
		objs[i], names[i] = sec, sec.Name
	}
	if err := r.applyAll(ctx, s, objs); err != nil {
		return ctrl.Result{}, err
	}
	after, err := hbase.KeysOf(principalsSecret.Data)
	if err != nil {
		return ctrl.Result{}, err
	}
	e.keyVersion = after.HeldVersion()
	switch op {
	case hbase.RotateKeys:
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "RotatingKeys", "RotateKeytabs",
			"key version %d added to every keytab; pods restart to load it, then the KDC issues it", after.HeldVersion())
	case hbase.PromoteKeys:
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "KeysRotated", "RotateKeytabs",
			"the KDC issues key version %d; version %d stays in the keytabs for tickets issued before", after.ServedVersion(), after.ServedVersion()-1)
	}
	principals := 0
	for _, ps := range hbase.Principals(ds, r.Options.clusterDomain()) {
		principals += len(ps)
	}
	version := fmt.Sprintf("key version %d", after.ServedVersion())
	if after.Pending() {
		version += fmt.Sprintf(", version %d pre-published: the KDC issues it once every pod has restarted with it", after.HeldVersion())
	}
	setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionTrue, v1alpha1.ReasonKeytabsIssued,
		fmt.Sprintf("%d service principals and %s in realm %s (%s); keytabs in Secrets %s", principals, hbase.ClientPrincipal(ds), hbase.Realm(ds), version, strings.Join(names[:len(names)-1], ", ")))
	return ctrl.Result{}, nil
}

// certificates: Kerberos needs certificates too, since secure HDFS serves HTTPS only.
func (e *hbaseEngine) certificates(*datastoreScope) (need, running bool, req certs.Request) {
	uses := func(enc v1alpha1.EffectiveEncryption) bool {
		return enc.ClientToNode.Mode != v1alpha1.ChannelDisabled || enc.HBase.Authentication == v1alpha1.AuthenticationKerberos
	}
	ds := e.ds
	need = uses(e.step) || (e.applied != nil && uses(*e.applied))
	return need, len(e.sets) > 0, certs.Request{
		Datastore: ds, Labels: hbase.Labels(ds, ""), DNSNames: hbase.DNSNames(ds, e.r.Options.clusterDomain()),
		Channels: []v1alpha1.EffectiveChannel{e.step.ClientToNode, e.step.NodeToNode}, KeystorePasswordSecret: certs.KeystorePasswordSecret(ds),
	}
}

func (e *hbaseEngine) apply(ctx context.Context, s *datastoreScope) (status.Rollout, error) {
	ds, r := e.ds, e.r
	objs, err := e.objects(e.step)
	if err != nil {
		if msg := err.Error(); setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidConfiguration, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, v1alpha1.ReasonInvalidConfiguration, "Render", "%s", msg)
		}
		return status.Rollout{}, errPhaseBlocked
	}
	if err := r.applyAll(ctx, s, objs.All()); err != nil {
		return status.Rollout{}, err
	}
	if err := e.pruneRoleConfigs(ctx, objs); err != nil {
		return status.Rollout{}, err
	}
	if e.applied != nil && !hbase.SameStep(*e.applied, e.step) {
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "RollingRestart", "ChangeEncryption",
			"rolling restart of the roles whose configuration changes: %s", hbase.Describe(e.applied, e.step))
		e.started = true
	}
	rollout := e.rollout(s.resolution.Effective, objs.StatefulSets)
	rollout.Problems = status.PodProblems(s.pods, podtemplate.VolumeEncryptionContainer)
	return rollout, nil
}

// pruneRoleConfigs deletes each role's configurations no pod can need any more. Once the
// role's StatefulSet observed at the start of this pass ran its template on every replica, a pod
// it recreates mounts that template's configuration, or the one just applied: every other one
// can go. During a role's roll nothing of that role is deleted.
func (e *hbaseEngine) pruneRoleConfigs(ctx context.Context, objs hbase.Objects) error {
	n := hbase.NamesOf(e.ds)
	for role, sts := range e.sets {
		if !status.SetUpdated(sts) {
			continue
		}
		keep := map[string]bool{podtemplate.VolumeConfigMap(sts.Spec.Template.Spec, "config"): true}
		if cm := objs.RoleConfigMaps[role]; cm != nil {
			keep[cm.Name] = true
		}
		var cms corev1.ConfigMapList
		if err := e.r.Client.List(ctx, &cms, client.InNamespace(e.ds.Namespace), client.MatchingLabels(hbase.Labels(e.ds, role))); err != nil {
			return fmt.Errorf("listing ConfigMaps: %w", err)
		}
		for i := range cms.Items {
			cm := &cms.Items[i]
			if keep[cm.Name] || !n.IsRoleConfigMap(role, cm.Name) || !metav1.IsControlledBy(cm, e.ds) {
				continue
			}
			if err := e.r.Client.Delete(ctx, cm, client.Preconditions{UID: &cm.UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting the earlier configuration %s: %w", cm.Name, err)
			}
		}
	}
	return nil
}

// rollout sets readyNodes and endpoints and describes the roll, a role being the unit.
func (e *hbaseEngine) rollout(target v1alpha1.EffectiveEncryption, desired []*appsv1.StatefulSet) status.Rollout {
	ds := e.ds
	n := hbase.NamesOf(ds)
	ds.Status.Endpoints = []v1alpha1.Endpoint{
		{Name: "zookeeper", Address: fmt.Sprintf("%s.%s.svc", n.StatefulSet(hbase.ZooKeeper), ds.Namespace), Port: hbase.ZooKeeperPort},
		{Name: "client", Address: fmt.Sprintf("%s.%s.svc", n.StatefulSet(hbase.RegionServer), ds.Namespace), Port: hbase.RegionServerPort},
	}
	ds.Status.ReadyNodes = 0
	if rs := e.sets[hbase.RegionServer]; rs != nil {
		ds.Status.ReadyNodes = rs.Status.ReadyReplicas
	}
	r := status.Rollout{
		Unit: "roles", Desired: int32(len(desired)), Step: "RPC TLS step " + hbase.StageName(e.step), Exists: len(e.sets) > 0,
		Started: e.started, RolledOut: true, AtTarget: hbase.SameStep(e.step, target),
		Serving: fmt.Sprintf("ZooKeeper, HDFS and HBase are up with the effective profile: %d RegionServers ready", ds.Status.ReadyNodes),
	}
	for _, want := range desired {
		sts := e.set(want)
		updated, ready := e.updated(sts, want), status.SetReady(sts)
		if updated {
			r.Updated++
		} else {
			r.RolledOut = false
		}
		if updated && ready {
			r.Ready++
		} else {
			r.Waiting = append(r.Waiting, want.Name)
		}
	}
	return r
}

// converged: every role runs the effective profile and is ready.
func (e *hbaseEngine) converged() bool {
	return len(e.sets) > 0 && !e.started && isTrue(e.ds.Status.Conditions, v1alpha1.ConditionReady)
}

func (e *hbaseEngine) endpoints(s *datastoreScope) []verify.Endpoint {
	names := hbase.NamesOf(s.ds)
	return withIdentities(s.trust, verify.HBaseEndpoints(s.pods, s.resolution.Effective),
		func(pod string) string { return names.Host(pod, e.r.Options.clusterDomain()) })
}
