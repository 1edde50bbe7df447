package controllers

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/vpn"
)

// Reasons of a VPN profile the operator will not run.
const (
	ReasonPodSecurityForbidsVPN = "PodSecurityForbidsVPN"
	ReasonVPNChangeUnsupported  = "VPNChangeUnsupported"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// reconcileTunnel prepares a VPN profile's tunnel before any pod needs it: it refuses a
// namespace whose Pod Security level forbids the sidecar (the StatefulSet would otherwise sit
// with no pods and an event on the wrong object), keeps every member's keys in the tunnel
// Secret, and adds keys when nodes are added. Keys are generated once and kept; the sidecars
// pick up a changed Secret without a restart.
func (r *SecuredDatastoreReconciler) reconcileTunnel(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	if s.applied != nil && !reflect.DeepEqual(s.applied.Encryption.VPN, s.resolution.Effective.VPN) {
		return ctrl.Result{}, r.blockReady(ds, ReasonVPNChangeUnsupported, "spec.encryption.vpn cannot change on a running datastore yet: "+
			"every node would move to another address in one roll and split the ring. Restore the previous vpn settings (or profile), "+
			"or create a new datastore with the new profile and move the data to it")
	}
	tunnel, err := cassandra.Tunnel(ds, s.step, r.Options.clusterDomain())
	if err != nil || tunnel == nil {
		return ctrl.Result{}, err
	}
	s.tunnel = tunnel
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: ds.Namespace}, ns); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading namespace %s for its Pod Security level: %w", ds.Namespace, err)
	}
	if msg := vpn.PodSecurityProblem(ns.Name, ns.Labels); msg != "" {
		return ctrl.Result{}, r.blockReady(ds, ReasonPodSecurityForbidsVPN, msg)
	}

	stored := map[string]map[string][]byte{}
	for _, name := range []string{vpn.SecretName(ds.Name), vpn.CASecretName(ds.Name)} {
		sec := &corev1.Secret{}
		switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: name}, sec); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("reading Secret %s: %w", name, err)
		case !metav1.IsControlledBy(sec, ds):
			return ctrl.Result{}, r.nameConflict(ds, "Secret", name)
		default:
			stored[name] = sec.Data
		}
	}
	keys, _, err := vpn.Ensure(*tunnel, vpn.KeysFrom(*tunnel, stored[vpn.SecretName(ds.Name)], stored[vpn.CASecretName(ds.Name)]), time.Now())
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("tunnel keys: %w", err)
	}
	data, err := vpn.SecretData(*tunnel, keys)
	if err != nil {
		return ctrl.Result{}, err
	}
	var objs []client.Object
	for _, sec := range vpn.Secrets(ds.Namespace, ds.Name, cassandra.Labels(ds), data, vpn.CASecretData(keys)) {
		objs = append(objs, sec)
	}
	return ctrl.Result{}, r.applyAll(ctx, s, objs)
}
