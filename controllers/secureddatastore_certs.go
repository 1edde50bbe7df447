package controllers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
)

// +kubebuilder:rbac:groups=cert-manager.io,resources=issuers;certificates,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificaterequests,verbs=get;list;watch

// reconcileCertificates applies the cert-manager objects when the running or the next
// configuration uses TLS, and waits for the node certificate: pods cannot start without its Secret.
func (r *SecuredDatastoreReconciler) reconcileCertificates(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	need, running, req := s.engine.certificates(s)
	if !need {
		ds.Status.Certificates = nil
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionCertificatesReady, metav1.ConditionTrue, v1alpha1.ReasonNotNeeded, "no channel uses TLS")
		return ctrl.Result{}, nil
	}
	if !r.certManager {
		msg := "the profile needs node certificates, which the operator requests from cert-manager, and this cluster does not serve cert-manager's API (cert-manager.io/v1): " +
			"install cert-manager (https://cert-manager.io/docs/installation/) and restart the operator, or choose a profile without TLS or Kerberos"
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, v1alpha1.ReasonCertManagerMissing, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, v1alpha1.ReasonCertManagerMissing, "IssueCertificates", "%s", msg)
		}
		return ctrl.Result{}, r.blockReady(ds, v1alpha1.ReasonCertManagerMissing, "cert-manager is not installed; see CertificatesReady")
	}
	if req.KeystorePasswordSecret != "" {
		if err := r.ensureKeystorePassword(ctx, s, req); err != nil {
			return ctrl.Result{}, err
		}
	}
	objs, err := certs.Build(req)
	if err != nil {
		msg := err.Error()
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidKey, msg) {
			r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, v1alpha1.ReasonInvalidKey, "IssueCertificates", "%s", msg)
		}
		return ctrl.Result{}, errPhaseBlocked
	}
	if err := r.applyAll(ctx, s, objs); err != nil {
		return ctrl.Result{}, err
	}

	trusted, err := r.reconcileTrust(ctx, s, req.Labels, nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	cert := &cmv1.Certificate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: certs.NodeCertificate(ds)}, cert); err != nil {
		if apierrors.IsNotFound(err) {
			// Just created and not in the cache yet: its watch event brings us back. The
			// phases after this one must not run without it.
			return ctrl.Result{}, errPhaseBlocked
		}
		return ctrl.Result{}, err
	}
	ready := certCondition(cert, cmv1.CertificateConditionReady)
	if ready != nil && ready.Status == cmmeta.ConditionTrue {
		ca, err := r.adoptSecrets(ctx, ds, req.Clients)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(ca) > 0 && (trusted == 0 || !certs.Trusts(s.trust, ca)) {
			// Issued without a CertificateRequest, or by a CA the bundle does not hold: the
			// node Secret outlived an earlier datastore of this name, and cert-manager found it
			// up to date. Operator versions before the owner references left such Secrets
			// behind; so does a datastore deleted and created again at once, whose old
			// Certificate re-issues the Secret the garbage collector has just deleted, from the
			// old CA, before the collector reaches the Certificate (seed 000's AR+RR study: a
			// node of the new datastore refused its peers, "Path does not chain with any of the
			// trust anchors"). The CA that signed it is in the node Secret, and every node
			// must trust it.
			if trusted, err = r.reconcileTrust(ctx, s, req.Labels, ca); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if ready == nil || ready.Status != cmmeta.ConditionTrue || trusted == 0 {
		msg := "cert-manager has not issued the node certificate yet"
		if ready != nil {
			msg += ": " + ready.Message
		}
		setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, v1alpha1.ReasonIssuing, msg)
		if !running {
			setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonIssuingCertificates,
				"waiting for cert-manager to issue the node certificate before the first node starts")
			setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonProvisioning,
				"waiting for the node certificate; see CertificatesReady")
			return ctrl.Result{}, errPhaseBlocked
		}
		return ctrl.Result{}, nil // running nodes keep their current certificate meanwhile
	}
	old := ds.Status.Certificates
	st := &v1alpha1.CertificateStatus{SecretName: certs.NodeSecret(ds), NotAfter: cert.Status.NotAfter, RenewalTime: cert.Status.RenewalTime, Revision: cert.Status.Revision}
	if old != nil && old.Revision != nil && st.Revision != nil && *st.Revision > *old.Revision {
		how := "nodes reload it without a restart"
		if ds.Spec.Engine == v1alpha1.EngineHBase {
			// ZooKeeper reads its client port's certificate only when it starts.
			how = "Masters and RegionServers reload it; ZooKeeper's servers restart one by one when they serve TLS"
		}
		r.Recorder.Eventf(ds, cert, corev1.EventTypeNormal, "CertificateRenewed", "ReloadCertificates",
			"node certificate revision %d issued, valid until %s; %s", *st.Revision, st.NotAfter.UTC().Format("2006-01-02 15:04 MST"), how)
	}
	ds.Status.Certificates = st
	if msg := r.renewalStalled(cert); msg != "" {
		if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, v1alpha1.ReasonRenewalStalled, msg) {
			r.Recorder.Eventf(ds, cert, corev1.EventTypeWarning, v1alpha1.ReasonRenewalStalled, "RenewCertificates", "%s", msg)
		}
		return ctrl.Result{}, nil
	}
	if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionCertificatesReady, metav1.ConditionTrue, v1alpha1.ReasonIssued,
		fmt.Sprintf("node certificate in Secret %s valid until %s", st.SecretName, st.NotAfter.UTC().Format("2006-01-02 15:04 MST"))) {
		r.Recorder.Eventf(ds, cert, corev1.EventTypeNormal, "CertificateIssued", "IssueCertificates", "node certificate issued into Secret %s", st.SecretName)
	}
	return ctrl.Result{}, nil
}

// reconcileTrust keeps the trust bundle ConfigMap: the CAs cert-manager issued the datastore's
// CA and node certificates with, merged with those already trusted, so that after a CA
// rotation every node trusts both the new CA and the old one until it expires. It returns how
// many CAs the bundle holds.
// A non-empty extra is trusted too.
func (r *SecuredDatastoreReconciler) reconcileTrust(ctx context.Context, s *datastoreScope, labels map[string]string, extra []byte) (int, error) {
	ds := s.ds
	var crs cmv1.CertificateRequestList
	if err := r.Client.List(ctx, &crs, client.InNamespace(ds.Namespace)); err != nil {
		return 0, fmt.Errorf("listing CertificateRequests: %w", err)
	}
	var sources [][]byte
	if len(extra) > 0 {
		sources = append(sources, extra)
	}
	for _, cr := range crs.Items {
		switch cr.Annotations[cmv1.CertificateNameKey] {
		case certs.CACertificate(ds):
			if ds.Spec.Certificates == nil || ds.Spec.Certificates.IssuerRef == nil {
				// Our own CA is trusted as soon as it exists, before it signs any node.
				sources = append(sources, cr.Status.Certificate)
			}
		case certs.NodeCertificate(ds):
			sources = append(sources, cr.Status.CA)
		}
	}
	name := certs.TrustConfigMap(ds)
	existing := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: name}, existing); client.IgnoreNotFound(err) != nil {
		return 0, fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	bundle, n, changed, err := certs.TrustBundle([]byte(existing.Data[certs.BundleKey]), sources, time.Now())
	if err != nil {
		return 0, fmt.Errorf("ConfigMap %s: %w", name, err)
	}
	if n == 0 {
		return 0, nil
	}
	store, err := certs.TrustStore(bundle)
	if err != nil {
		return 0, fmt.Errorf("ConfigMap %s: %w", name, err)
	}
	s.trust = bundle
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: labels},
		Data:       map[string]string{certs.BundleKey: string(bundle)},
		BinaryData: map[string][]byte{certs.TrustStoreKey: store},
	}
	if err := r.applyAll(ctx, s, []client.Object{cm}); err != nil {
		return 0, err
	}
	if changed && existing.Data[certs.BundleKey] != "" {
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "TrustBundleUpdated", "RotateCA",
			"the trust bundle now holds %d CAs; nodes reload it without a restart", n)
	}
	return n, nil
}

// adoptSecrets makes the datastore an owner of the Secrets cert-manager wrote for its own CA,
// its node certificate and its client certificates, so that deleting the datastore deletes their private keys too, and a
// datastore created later under the same name gets new ones. cert-manager stays their manager:
// the reference is not a controller reference. It returns the node Secret's ca.crt.
func (r *SecuredDatastoreReconciler) adoptSecrets(ctx context.Context, ds *v1alpha1.SecuredDatastore, clients []certs.ClientCertificate) ([]byte, error) {
	names := []string{certs.NodeSecret(ds)}
	for _, c := range clients {
		names = append(names, c.SecretName)
	}
	if ds.Spec.Certificates == nil || ds.Spec.Certificates.IssuerRef == nil {
		names = append(names, certs.CACertificate(ds))
	}
	var ca []byte
	for _, name := range names {
		secret := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				continue // a Certificate reads Ready only once its Secret exists; nothing to own
			}
			return nil, fmt.Errorf("reading Secret %s: %w", name, err)
		}
		if name == certs.NodeSecret(ds) {
			ca = secret.Data["ca.crt"]
		}
		owned, err := controllerutil.HasOwnerReference(secret.OwnerReferences, ds, r.Client.Scheme())
		if err != nil {
			return nil, err
		}
		if owned {
			continue
		}
		before := secret.DeepCopy()
		if err := controllerutil.SetOwnerReference(ds, secret, r.Client.Scheme(), controllerutil.WithBlockOwnerDeletion(true)); err != nil {
			return nil, err
		}
		if err := r.Client.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return nil, fmt.Errorf("adding the datastore as owner of Secret %s: %w", name, err)
		}
	}
	return ca, nil
}

func certCondition(c *cmv1.Certificate, t cmv1.CertificateConditionType) *cmv1.CertificateCondition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == t {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

// renewalStalled says why an issued certificate's renewal has lasted longer than it should,
// or has not begun although it was due, or "". cert-manager keeps the Certificate Ready while it
// renews (the current certificate is still valid), so a renewal that never ends, or never starts
// (cert-manager down at the renewal time, its issuer refusing), would otherwise show nowhere
// until the certificate expires.
func (r *SecuredDatastoreReconciler) renewalStalled(cert *cmv1.Certificate) string {
	var msg string
	switch issuing := certCondition(cert, cmv1.CertificateConditionIssuing); {
	case issuing != nil && issuing.Status == cmmeta.ConditionTrue && issuing.LastTransitionTime != nil:
		since := time.Since(issuing.LastTransitionTime.Time)
		if since < r.Options.renewalStall() {
			return ""
		}
		msg = fmt.Sprintf("cert-manager has been renewing certificate %s for %s without issuing it", cert.Name, since.Round(time.Minute))
		if issuing.Message != "" {
			msg += " (" + issuing.Message + ")"
		}
	case cert.Status.RenewalTime != nil:
		late := time.Since(cert.Status.RenewalTime.Time)
		if late < r.Options.renewalStall() {
			return ""
		}
		msg = fmt.Sprintf("cert-manager was due to renew certificate %s at %s and has not begun (%s late)", cert.Name,
			cert.Status.RenewalTime.UTC().Format("2006-01-02 15:04 MST"), late.Round(time.Minute))
	default:
		return ""
	}
	if cert.Status.NotAfter != nil {
		msg += fmt.Sprintf("; nodes keep the current one, valid until %s", cert.Status.NotAfter.UTC().Format("2006-01-02 15:04 MST"))
	}
	return msg + fmt.Sprintf(": check that cert-manager runs (kubectl -n cert-manager get pods) and kubectl describe certificate %s", cert.Name)
}

// ensureKeystorePassword creates the random password cert-manager protects keystore.p12 with,
// once: changing it would break every pod that has the keystore mounted.
func (r *SecuredDatastoreReconciler) ensureKeystorePassword(ctx context.Context, s *datastoreScope, req certs.Request) error {
	ds := s.ds
	key := client.ObjectKey{Namespace: ds.Namespace, Name: req.KeystorePasswordSecret}
	switch err := r.APIReader.Get(ctx, key, &corev1.Secret{}); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading Secret %s: %w", key.Name, err)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ds.Namespace, Labels: req.Labels},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"password": []byte(base64.RawURLEncoding.EncodeToString(b))},
	}
	if err := controllerutil.SetControllerReference(ds, secret, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret %s: %w", key.Name, err)
	}
	s.wrote = append(s.wrote, "Secret/"+key.Name)
	return nil
}
