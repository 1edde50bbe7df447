package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/vpn"
)

// prepareTunnel readies a VPN profile's tunnel before any pod needs it (nothing without one):
// it refuses a namespace whose Pod Security level forbids the sidecar (the StatefulSet would
// otherwise sit with no pods and an event on the wrong object), keeps the members' keys in the
// tunnel Secrets, and adds keys when members are added. Keys are generated once and kept; the
// sidecars pick up a changed Secret without a restart.
func (r *SecuredDatastoreReconciler) prepareTunnel(ctx context.Context, s *datastoreScope, tunnel *vpn.Plan, labels map[string]string) error {
	ds := s.ds
	if tunnel == nil {
		return nil
	}
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: ds.Namespace}, ns); err != nil {
		return fmt.Errorf("reading namespace %s for its Pod Security level: %w", ds.Namespace, err)
	}
	if msg := vpn.PodSecurityProblem(ns.Name, ns.Labels); msg != "" {
		return r.blockReady(ds, v1alpha1.ReasonPodSecurityForbidsVPN, msg)
	}
	ks := r.Options.TunnelKeys
	if ks == nil {
		return r.blockReady(ds, v1alpha1.ReasonNoTunnelKeyServer, "the tunnel sidecars fetch their keys from the operator's key server, "+
			"which this operator runs without: start it with --tunnel-keys-cert-dir and --tunnel-keys-url (the Helm chart does), or choose a profile without vpn")
	}
	data := map[string]map[string][]byte{}
	for _, name := range vpn.SecretNames(ds.Name) {
		sec := &corev1.Secret{}
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: name}, sec); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading Secret %s: %w", name, err)
		case !metav1.IsControlledBy(sec, ds):
			return r.nameConflict(ds, "Secret", name)
		default:
			data[name] = sec.Data
		}
	}
	keys, _, err := vpn.Ensure(*tunnel, vpn.KeysFrom(*tunnel, data[vpn.SecretName(ds.Name)], data[vpn.KeysSecretName(ds.Name)]), time.Now())
	if err != nil {
		return fmt.Errorf("tunnel keys: %w", err)
	}
	public, private, err := vpn.SecretData(*tunnel, keys, ks.Cert)
	if err != nil {
		return err
	}
	var objs []client.Object
	for _, sec := range vpn.Secrets(ds.Namespace, ds.Name, labels, public, private) {
		objs = append(objs, sec)
	}
	return r.applyAll(ctx, s, objs)
}
