package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/pkg/fieldcrypt"
)

// ensureClientKeys creates the keys of spec.encryption.clientSide once, in the Secret
// <name>-client-keys, and checks an existing one against the settings. The Secret has no owner
// reference: the data sealed with these keys outlives the datastore object wherever its volumes
// or backups do, and without the keys it is unreadable, so only a person deletes it. The
// operator never replaces keys: a Secret that no longer fits the settings stops the datastore
// with a message, because new keys would make every stored value unreadable.
func (r *SecuredDatastoreReconciler) ensureClientKeys(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	if ds.Status.Encryption == nil || ds.Status.Encryption.Effective == nil || ds.Status.Encryption.Effective.ClientSide == nil {
		return ctrl.Result{}, nil
	}
	cs := ds.Status.Encryption.Effective.ClientSide
	cipher, keyLen, sig := benchmark.ClientSideAlgorithms(*cs)
	name := datakeys.ClientKeysSecret(ds)
	sec, err := r.ownedSecret(ctx, ds, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if sec != nil {
		codec, err := fieldcrypt.FromFiles(sec.Data, cipher, sig)
		if err == nil && codec.SealKeyLen() != keyLen {
			err = fmt.Errorf("its encryption key has %d bytes; %s takes %d", codec.SealKeyLen(), cs.Cipher, keyLen)
		}
		if err != nil {
			// The error names files and lengths, never key material.
			return ctrl.Result{}, r.blockReady(ds, v1alpha1.ReasonClientKeysMismatch, fmt.Sprintf(
				"Secret %s does not fit spec.encryption.clientSide (cipher %s, signature %s): %v. Values sealed with its keys open only with them: "+
					"set clientSide back to what the keys were made for, or, for a new datastore without data, delete the Secret and the operator makes new keys",
				name, cs.Cipher, cs.Signature, err))
		}
		return ctrl.Result{}, nil
	}
	files, err := fieldcrypt.GenerateKeys(cipher, keyLen, sig)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("making client-side keys: %w", err)
	}
	sec = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: datastoreLabels(ds),
			Annotations: map[string]string{"datastore.secured.dev/client-side": fmt.Sprintf("cipher=%s signature=%s", cs.Cipher, cs.Signature)}},
		Type: corev1.SecretTypeOpaque,
		Data: files,
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		return ctrl.Result{}, fmt.Errorf("creating Secret %s: %w", name, err)
	}
	r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "ClientKeysCreated", "Reconcile",
		"created Secret %s with the client-side keys (%s, %s); it is not deleted with the datastore", name, cs.Cipher, cs.Signature)
	return ctrl.Result{}, nil
}

// datastoreLabels are the labels of the datastore's own objects that belong to no role.
func datastoreLabels(ds *v1alpha1.SecuredDatastore) map[string]string {
	if ds.Spec.Engine == v1alpha1.EngineHBase {
		return hbase.Labels(ds, "")
	}
	return cassandra.Labels(ds)
}
