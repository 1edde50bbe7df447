package controllers

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/cqlauth"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/status"
)

// profileRefIndex indexes SecuredDatastores by the EncryptionProfile they reference, so a
// profile change re-reconciles exactly its datastores.
const profileRefIndex = "spec.encryption.profileRef"

// SecuredDatastoreReconciler reconciles SecuredDatastores.
type SecuredDatastoreReconciler struct {
	Client client.Client
	// APIReader reads the StatefulSet around the cache: a template read from a stale cache
	// would take the step just applied for a new one and announce the same roll twice.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Options   Options
	// Prober scans endpoints; nil uses the real prober.
	Prober Prober
	// certManager: the cluster serves cert-manager's API (found when the reconciler is set up).
	// Without it plaintext datastores work and TLS ones say what is missing.
	certManager bool
	// probes scans endpoints off the reconcile path (SetupWithManager starts it).
	probes     *probePool
	probesOnce sync.Once
}

// Options are the operator-wide settings the reconcilers need (command-line flags).
type Options struct {
	// CassandraImage runs Cassandra nodes unless a datastore sets spec.image.
	CassandraImage string
	// ClusterDomain of the Kubernetes cluster; defaults to cluster.local.
	ClusterDomain string
	// Namespace the operator runs in; its pods may reach the datastores' internode ports.
	Namespace string
	// FeatureLabelPrefix of the nodes' CPU feature labels; empty means Node Feature Discovery's.
	FeatureLabelPrefix string
	// HBaseImage runs ZooKeeper, HDFS and HBase; KDCImage the managed KDC.
	HBaseImage, KDCImage string
	// VPNImage runs the tunnel sidecar of VPN profiles (images/vpn).
	VPNImage string
	// VolumeEncryptionImage runs the init container of encrypted volumes
	// (cmd/volume-encryption).
	VolumeEncryptionImage string
	// TunnelKeys is the operator's key server, where each sidecar fetches its own member's key
	// (internal/tunnelkeys); nil refuses VPN profiles with a condition that says so.
	TunnelKeys *vpn.KeyServer
	// K6Image runs the benchmark clients of Cassandra; YCSBHBaseImage those of HBase;
	// StorageBenchImage those of storage workloads (fio).
	K6Image, YCSBHBaseImage, StorageBenchImage string
	// ProbeWorkers scan endpoints in parallel, off the reconcile path; 0 means
	// DefaultProbeWorkers.
	ProbeWorkers int
	// PrometheusRemoteWriteURL receives the benchmark clients' samples unless a benchmark sets
	// spec.prometheus.remoteWriteURL; empty publishes nothing.
	PrometheusRemoteWriteURL string
	// CPUAccounting reads what the datastore and its nodes spent during each benchmark run;
	// nil leaves the runs' server CPU unavailable, with that reason.
	CPUAccounting CPUAccountant
	// CPUSettle: how long after a run's window its last kubelet samples take to reach
	// Prometheus (its scrape interval and a margin); the run is recorded only then.
	CPUSettle time.Duration
	// RenewalStall: how long cert-manager may work on a certificate before CertificatesReady
	// says it is stuck; 0 means DefaultRenewalStall.
	RenewalStall time.Duration

	// bootstrapLogins replaces cqlauth.Bootstrap in tests, which have no Cassandra to log in to.
	bootstrapLogins func(context.Context, cqlauth.Connect, cqlauth.Plan) (cqlauth.Outcome, error)
}

// DefaultRenewalStall: cert-manager issues a certificate in seconds; ten minutes of issuing
// means it is down, or its issuer refuses.
const DefaultRenewalStall = 10 * time.Minute

// keyServer is TunnelKeys, or none: a VPN datastore without one is refused before its pods
// are rendered.
func (o Options) keyServer() vpn.KeyServer {
	if o.TunnelKeys == nil {
		return vpn.KeyServer{}
	}
	return *o.TunnelKeys
}

func (o Options) renewalStall() time.Duration {
	if o.RenewalStall <= 0 {
		return DefaultRenewalStall
	}
	return o.RenewalStall
}

func (o Options) clusterDomain() string {
	if o.ClusterDomain == "" {
		return "cluster.local"
	}
	return o.ClusterDomain
}

// datastoreScope carries what one reconcile pass read and decided that both engines share;
// the engine keeps its own.
type datastoreScope struct {
	ds         *v1alpha1.SecuredDatastore
	profile    *v1alpha1.EncryptionProfile // nil when the datastore has no profileRef
	resolution *crypto.Resolution          // nil until the profile resolves
	engine     engine
	pods       []corev1.Pod // the datastore's pods, by name
	trust      []byte       // the trust bundle (PEM) once the certificates phase knows it
	wrote      []string     // objects written in this pass, for the log
}

// +kubebuilder:rbac:groups=datastore.secured.dev,resources=secureddatastores,verbs=get;list;watch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=secureddatastores/status,verbs=get;patch
// +kubebuilder:rbac:groups=datastore.secured.dev,resources=encryptionprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *SecuredDatastoreReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ds := &v1alpha1.SecuredDatastore{}
	if err := r.Client.Get(ctx, req.NamespacedName, ds); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Namespace, req.Name)
			r.pool().forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ds.DeletionTimestamp.IsZero() {
		// Children carry owner references; the garbage collector removes them.
		forgetMetrics(ds.Namespace, ds.Name)
		return ctrl.Result{}, nil
	}
	s := &datastoreScope{ds: ds, engine: r.engineFor(ds)}
	defer func() {
		if len(s.wrote) > 0 {
			ctrl.LoggerFrom(ctx).Info("Applied objects", "objects", s.wrote)
		}
	}()
	p := pass[*v1alpha1.SecuredDatastore]{
		conditions: func(o *v1alpha1.SecuredDatastore) *[]metav1.Condition { return &o.Status.Conditions },
		recorder:   r.Recorder,
		status:     func(d *v1alpha1.SecuredDatastore) any { return d.Status },
		observed:   func(d *v1alpha1.SecuredDatastore) { d.Status.ObservedGeneration = d.Generation },
		summarize: func(d *v1alpha1.SecuredDatastore) {
			d.Status.Nodes = s.engine.nodes()
			d.Status.Phase = status.Phase(d.Status.Conditions)
			publishDatastore(d)
		},
	}
	return p.reconcile(ctx, r.Client, ds, func(ctx context.Context) (ctrl.Result, error) {
		return runPhases(ctx, s, r.resolveProfile, r.ensureClientKeys, r.checkPlacement, r.observe, r.plan, r.prepare,
			r.reconcileCertificates, r.apply, r.secureLogins, r.verifyWire)
	})
}

// resolveProfile reads the referenced EncryptionProfile, merges the inline overrides and
// records the effective profile and its rank.
func (r *SecuredDatastoreReconciler) resolveProfile(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	enc := &ds.Spec.Encryption
	var base *v1alpha1.EncryptionSettings
	label := "inline"
	if enc.ProfileRef != "" {
		s.profile = &v1alpha1.EncryptionProfile{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: enc.ProfileRef}, s.profile); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("reading EncryptionProfile %s: %w", enc.ProfileRef, err)
			}
			s.profile = nil
			msg := fmt.Sprintf("EncryptionProfile %q does not exist: create it (the chart ships a set; kubectl get encryptionprofiles lists them) or fix spec.encryption.profileRef", enc.ProfileRef)
			r.profileProblem(ds, v1alpha1.ReasonProfileNotFound, msg)
			return ctrl.Result{}, errPhaseBlocked // the profile watch brings us back
		}
		base = &s.profile.Spec.EncryptionSettings
		label = enc.ProfileRef
		if hasOverrides(&enc.EncryptionSettings) {
			label += "+overrides"
		}
	}
	res, errs := crypto.Resolve(base, &enc.EncryptionSettings, ds.Spec.Engine, specEncryptionPath)
	if len(errs) > 0 {
		r.profileProblem(ds, v1alpha1.ReasonInvalidProfile, "the effective profile is invalid: "+errs.ToAggregate().Error())
		return ctrl.Result{}, errPhaseBlocked
	}
	s.resolution = &res
	st := ensureEncryptionStatus(ds)
	st.Profile = label
	st.Effective = &res.Effective
	st.Assessment = &res.Assessment
	msg := fmt.Sprintf("effective profile %s has security rank %d (client-to-node %d, node-to-node %d)", label, res.Assessment.Rank, res.Assessment.ClientToNodeRank, res.Assessment.NodeToNodeRank)
	if len(res.Warnings) > 0 {
		msg += "; " + joinSentences(res.Warnings)
	}
	if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProfileResolved, metav1.ConditionTrue, v1alpha1.ReasonResolved, msg) {
		// A nil *EncryptionProfile in the interface would not be nil: the recorder would
		// dereference it for a datastore with inline settings only.
		var related runtime.Object
		if s.profile != nil {
			related = s.profile
		}
		r.Recorder.Eventf(ds, related, "Normal", v1alpha1.ReasonResolved, "ResolveProfile", "%s", msg)
	}
	return ctrl.Result{}, nil
}

var specEncryptionPath = fieldPath("spec", "encryption")

func (r *SecuredDatastoreReconciler) profileProblem(ds *v1alpha1.SecuredDatastore, reason, msg string) {
	if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProfileResolved, metav1.ConditionFalse, reason, msg) {
		r.Recorder.Eventf(ds, nil, "Warning", reason, "ResolveProfile", "%s", msg)
	}
	setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, "the encryption profile does not resolve; see ProfileResolved")
}

func ensureEncryptionStatus(ds *v1alpha1.SecuredDatastore) *v1alpha1.EncryptionStatus {
	if ds.Status.Encryption == nil {
		ds.Status.Encryption = &v1alpha1.EncryptionStatus{}
	}
	return ds.Status.Encryption
}

func hasOverrides(s *v1alpha1.EncryptionSettings) bool {
	return s.ClientToNode != nil || s.NodeToNode != nil || s.HBase != nil || s.VPN != nil || s.AtRest != nil || s.ClientSide != nil || len(s.Compliance) > 0
}

// SetupWithManager registers the reconciler, its index and its watches.
func (r *SecuredDatastoreReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.SecuredDatastore{}, profileRefIndex, func(o client.Object) []string {
		if ref := o.(*v1alpha1.SecuredDatastore).Spec.Encryption.ProfileRef; ref != "" {
			return []string{ref}
		}
		return nil
	}); err != nil {
		return err
	}
	installed, err := servesCertManager(mgr)
	if err != nil {
		return err
	}
	r.certManager = installed
	r.probes = newProbePool(r.Prober, cmp.Or(r.Options.ProbeWorkers, DefaultProbeWorkers), DefaultProbeDeadline)
	if err := mgr.Add(r.probes); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		// Spec changes, and the rotate-keytabs annotation (metadata: no new generation).
		For(&v1alpha1.SecuredDatastore{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, rotationRequested))).
		Owns(&appsv1.StatefulSet{})
	if installed {
		b = b.Owns(&cmv1.Certificate{}).
			Watches(&cmv1.CertificateRequest{}, handler.EnqueueRequestsFromMapFunc(r.datastoreOfCertificateRequest))
	} else {
		mgr.GetLogger().Info("cert-manager's API (cert-manager.io/v1) is not served: TLS datastores wait for it; install cert-manager and restart the operator")
	}
	return b.
		WatchesRawSource(source.Channel(r.probes.wake, &handler.EnqueueRequestForObject{})).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(datastoreOfPod)).
		Watches(&v1alpha1.EncryptionProfile{}, handler.EnqueueRequestsFromMapFunc(r.datastoresUsingProfile),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.datastoresForNode),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Named("secureddatastore").
		Complete(r)
}

// pool is the probe pool; a reconciler built without a manager (in tests) starts its own.
func (r *SecuredDatastoreReconciler) pool() *probePool {
	r.probesOnce.Do(func() {
		if r.probes == nil {
			r.probes = newProbePool(r.Prober, DefaultProbeWorkers, DefaultProbeDeadline)
			go func() { _ = r.probes.Start(context.Background()) }()
		}
	})
	return r.probes
}

// servesCertManager asks the API server whether cert-manager's Certificate kind exists.
func servesCertManager(mgr ctrl.Manager) (bool, error) {
	_, err := mgr.GetRESTMapper().RESTMapping(cmv1.SchemeGroupVersion.WithKind(cmv1.CertificateKind).GroupKind(), cmv1.SchemeGroupVersion.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	}
	return false, fmt.Errorf("looking up cert-manager's API: %w", err)
}

func (r *SecuredDatastoreReconciler) datastoresUsingProfile(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.SecuredDatastoreList
	if err := r.Client.List(ctx, &list, client.MatchingFields{profileRefIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing datastores that use a profile failed", "profile", o.GetName())
		return nil
	}
	return requestsFor[v1alpha1.SecuredDatastore](list.Items, nil)
}

// datastoreOfPod maps a datastore pod to its datastore: readiness changes move the roll on and
// trigger a wire probe.
func datastoreOfPod(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()["app.kubernetes.io/instance"]
	if !ok || o.GetLabels()["app.kubernetes.io/managed-by"] != "secured-datastore-operator" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// datastoreOfCertificateRequest maps a CertificateRequest to the datastore owning its
// Certificate: a newly issued CA or node certificate may change the trust bundle.
func (r *SecuredDatastoreReconciler) datastoreOfCertificateRequest(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetAnnotations()[cmv1.CertificateNameKey]
	if name == "" {
		return nil
	}
	cert := &cmv1.Certificate{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: name}, cert); err != nil {
		return nil
	}
	owner := metav1.GetControllerOf(cert)
	if owner == nil || owner.Kind != "SecuredDatastore" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: owner.Name}}}
}

// rotationRequested passes updates that change a datastore's rotate-keytabs annotation.
var rotationRequested = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.GetAnnotations()[v1alpha1.RotateKeytabsAnnotation] != e.ObjectNew.GetAnnotations()[v1alpha1.RotateKeytabsAnnotation]
}}
