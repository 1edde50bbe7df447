package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/podtemplate"
)

// Secrets are read around the cache (ClientOptions: the client never lists or watches them),
// so the operator needs no right to read every Secret of the cluster.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;patch

// observeHBase reads the roles' StatefulSets and the datastore's pods.
func (r *SecuredDatastoreReconciler) observeHBase(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	s.hbaseSets = map[hbase.Role]*appsv1.StatefulSet{}
	for _, role := range append([]hbase.Role{hbase.KDC}, hbase.Roles...) {
		sts := &appsv1.StatefulSet{}
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: hbase.NamesOf(ds).StatefulSet(role)}, sts); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("reading StatefulSet %s: %w", hbase.NamesOf(ds).StatefulSet(role), err)
		}
		if !metav1.IsControlledBy(sts, ds) {
			return ctrl.Result{}, r.nameConflict(ds, "StatefulSet", sts.Name)
		}
		s.hbaseSets[role] = sts
	}
	cm := &corev1.ConfigMap{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: hbase.NamesOf(ds).ConfigMap()}, cm); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading ConfigMap %s: %w", hbase.NamesOf(ds).ConfigMap(), err)
	case !metav1.IsControlledBy(cm, ds):
		return ctrl.Result{}, r.nameConflict(ds, "ConfigMap", cm.Name)
	default:
		applied, err := hbase.AppliedStep(cm.Annotations, cm.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		s.hbaseApplied = applied
	}
	secret := &corev1.Secret{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: hbase.NamesOf(ds).PrincipalsSecret()}, secret); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Secret %s: %w", hbase.NamesOf(ds).PrincipalsSecret(), err)
	default:
		// A Secret that does not parse is reported by reconcileKerberos.
		s.principals = secret
		s.keys, s.keysErr = hbase.KeysOf(secret.Data)
		s.keyVersion = s.keys.HeldVersion()
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(ds.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": ds.Name, "app.kubernetes.io/name": "hbase"}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	s.pods = pods.Items
	return ctrl.Result{}, nil
}

// planHBaseStep decides which step the roles run next: the target when nothing runs yet or
// the target already runs; the applied step while its roll is under way; otherwise the next
// step toward the target (hbase.Next: one RPC TLS stage per roll).
func (r *SecuredDatastoreReconciler) planHBaseStep(_ context.Context, s *datastoreScope) (ctrl.Result, error) {
	target := s.resolution.Effective
	switch {
	case s.hbaseApplied == nil || hbase.SameStep(*s.hbaseApplied, target):
		s.hbaseStep = target
	case len(r.hbaseWaiting(s, *s.hbaseApplied)) > 0:
		s.hbaseStep = *s.hbaseApplied
	default:
		s.hbaseStep = hbase.Next(s.hbaseApplied, target)
	}
	return ctrl.Result{}, nil
}

func (r *SecuredDatastoreReconciler) buildHBase(s *datastoreScope, enc v1alpha1.EffectiveEncryption) (hbase.Objects, error) {
	ds := s.ds
	return hbase.Build(hbase.Spec{
		Datastore: s.ds, Encryption: enc, Image: r.Options.HBaseImage, KDCImage: r.Options.KDCImage, KeyVersion: s.keyVersion,
		ClusterDomain: r.Options.clusterDomain(), FeatureLabelPrefix: r.Options.FeatureLabelPrefix,
		CertSecret: certs.NodeSecret(ds), KeystorePasswordSecret: certs.KeystorePasswordSecret(ds), TrustConfigMap: certs.TrustConfigMap(ds),
	})
}

// hbaseWaiting names the roles whose pods do not all run step yet (a step that no longer
// renders has nothing to wait for).
func (r *SecuredDatastoreReconciler) hbaseWaiting(s *datastoreScope, step v1alpha1.EffectiveEncryption) []string {
	objs, err := r.buildHBase(s, step)
	if err != nil {
		return nil
	}
	return waitingRoles(s, objs.StatefulSets)
}

// waitingRoles: the desired StatefulSets that do not exist, or whose pods do not all run
// their template, or whose template is not the desired one.
func waitingRoles(s *datastoreScope, desired []*appsv1.StatefulSet) []string {
	var waiting []string
	for _, want := range desired {
		role := hbase.Role(strings.TrimPrefix(want.Name, s.ds.Name+"-"))
		if sts := s.hbaseSets[role]; sts == nil || !rolledOut(sts) || sts.Spec.Template.Annotations[podtemplate.ConfigHashAnnotation] != want.Spec.Template.Annotations[podtemplate.ConfigHashAnnotation] {
			waiting = append(waiting, want.Name)
		}
	}
	return waiting
}

// reconcileKerberos gives every service of every pod, and the datastore's clients, a
// principal: the managed KDC serves them from one Secret, each role mounts its keytab Secret.
// A new value of the datastore's rotate-keytabs annotation rotates every key in two moves:
// keytabs gain the next key version (pods restart to load it) while the KDC still issues the
// current one; once every pod runs with it, the KDC issues the new version.
func (r *SecuredDatastoreReconciler) reconcileKerberos(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	if s.resolution.Effective.HBase.Authentication != v1alpha1.AuthenticationKerberos {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionTrue, "NotNeeded", "the profile uses no Kerberos")
		return ctrl.Result{}, nil
	}
	n := hbase.NamesOf(ds)
	current, fresh, keys := s.principals, s.principals == nil, s.keys
	if fresh {
		current = &corev1.Secret{}
	}
	if s.keysErr != nil {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionFalse, "InvalidPrincipals",
			fmt.Sprintf("Secret %s %s: delete that Secret to issue new keys to every pod", n.PrincipalsSecret(), s.keysErr))
		return ctrl.Result{}, errPhaseBlocked
	}
	requested, answered := ds.Annotations[v1alpha1.RotateKeytabsAnnotation], current.Annotations[hbase.RotatedForAnnotation]
	op := hbase.KeepKeys
	switch {
	case fresh:
		answered = requested // new keys answer any request
	case keys.Pending() && len(r.hbaseWaiting(s, s.hbaseStep)) == 0:
		op = hbase.PromoteKeys
	case !keys.Pending() && requested != answered:
		op, answered = hbase.RotateKeys, requested
	}
	secrets, err := hbase.Identities(ds, r.Options.clusterDomain(), keys, op, kerberos.NewPassword)
	if err != nil {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionFalse, "InvalidPrincipals", err.Error())
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
	s.keyVersion = after.HeldVersion()
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
	setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionKerberosReady, metav1.ConditionTrue, "KeytabsIssued",
		fmt.Sprintf("%d service principals and %s in realm %s (%s); keytabs in Secrets %s", principals, hbase.ClientPrincipal(ds), hbase.Realm(ds), version, strings.Join(names[:len(names)-1], ", ")))
	return ctrl.Result{}, nil
}

// reconcileHBase applies the roles' objects and reports their roll-out.
func (r *SecuredDatastoreReconciler) reconcileHBase(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	objs, err := r.buildHBase(s, s.hbaseStep)
	if err != nil {
		msg := err.Error()
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, "InvalidConfiguration", msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, "InvalidConfiguration", "Render", "%s", msg)
		}
		return ctrl.Result{}, errPhaseBlocked
	}
	if err := r.applyAll(ctx, s, objs.All()); err != nil {
		return ctrl.Result{}, err
	}
	if s.hbaseApplied != nil && !hbase.SameStep(*s.hbaseApplied, s.hbaseStep) {
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "RollingRestart", "ChangeEncryption",
			"rolling restart of the roles whose configuration changes: %s", hbase.Describe(s.hbaseApplied, s.hbaseStep))
	}
	r.reportHBase(s, objs.StatefulSets)
	return ctrl.Result{}, nil
}

// reportHBase sets readyNodes, endpoints, Progressing and Ready from the roles' StatefulSets.
func (r *SecuredDatastoreReconciler) reportHBase(s *datastoreScope, desired []*appsv1.StatefulSet) {
	ds := s.ds
	n := hbase.NamesOf(ds)
	ds.Status.Endpoints = []v1alpha1.Endpoint{
		{Name: "zookeeper", Address: fmt.Sprintf("%s.%s.svc", n.StatefulSet(hbase.ZooKeeper), ds.Namespace), Port: hbase.ZooKeeperPort},
		{Name: "client", Address: fmt.Sprintf("%s.%s.svc", n.StatefulSet(hbase.RegionServer), ds.Namespace), Port: hbase.RegionServerPort},
	}
	if rs := s.hbaseSets[hbase.RegionServer]; rs != nil {
		ds.Status.ReadyNodes = rs.Status.ReadyReplicas
	}
	waiting := waitingRoles(s, desired)
	prev := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionReady)
	provisioned := prev != nil && (prev.Status == metav1.ConditionTrue || prev.Reason == "Updating")
	atTarget := hbase.SameStep(s.hbaseStep, s.resolution.Effective)
	if len(waiting) == 0 && !atTarget {
		// Rolled out, but only an intermediate step; the next reconcile starts the next.
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "Rolling",
			"rolled out RPC TLS step "+hbase.StageName(s.hbaseStep)+"; the next step follows")
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, "Updating",
			"changing encryption one step at a time; see Progressing")
		return
	}
	if len(waiting) == 0 {
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "RolledOut",
			fmt.Sprintf("all %d roles run the effective profile", len(desired)))
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionTrue, "NodesReady",
			fmt.Sprintf("ZooKeeper, HDFS and HBase are up with the effective profile: %d RegionServers ready", ds.Status.ReadyNodes)) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "Ready", "Reconcile", "%d RegionServers ready", ds.Status.ReadyNodes)
		}
		return
	}
	reason, msg := "Provisioning", "waiting for "+strings.Join(waiting, ", ")+" to roll out"
	if provisioned {
		reason = "Updating"
	}
	progress := reason
	if provisioned || !atTarget {
		progress, msg = "Rolling", "rolling out RPC TLS step "+hbase.StageName(s.hbaseStep)+": "+msg
	}
	setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProgressing, metav1.ConditionTrue, progress, msg)
	setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason,
		fmt.Sprintf("%d of %d roles rolled out; see Progressing", len(desired)-len(waiting), len(desired)))
}

// hbaseConverged: every role runs the effective profile (what the wire probe waits for).
func hbaseConverged(s *datastoreScope) bool {
	return len(s.hbaseSets) > 0 && isTrue(s.ds.Status.Conditions, v1alpha1.ConditionReady)
}
