package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/datakeys"
)

// encryptsAtRest: the encryption runs the datastore's own encryption of its files, or encrypts
// its volumes; both take their keys from the at-rest Secret.
func encryptsAtRest(enc *v1alpha1.EffectiveEncryption) bool {
	return enc != nil && enc.AtRest != nil && (enc.AtRest.Engine != nil || enc.AtRest.Volume != nil)
}

// ensureAtRestKeys makes the at-rest keystore once, in the Secret <name>-at-rest-keys
// (internal/render/datakeys: a 128-bit and a 256-bit AES key, the keystore's password). Like the
// logins, the Secret has no owner reference, because what was encrypted with these keys lives
// on volumes that outlive the datastore object; and the operator never replaces a key, because
// what was written with it could not be read again. With volume, the Secret also holds the volume
// key: one made without it gains it, which is safe because nothing can have been encrypted
// under a key that did not exist.
func (r *SecuredDatastoreReconciler) ensureAtRestKeys(ctx context.Context, ds *v1alpha1.SecuredDatastore, volume bool) error {
	name := datakeys.AtRestSecret(ds)
	sec, err := r.ownedSecret(ctx, ds, name)
	if err != nil {
		return err
	}
	if sec != nil {
		if missing := datakeys.Missing(sec.Data); len(missing) > 0 {
			return r.blockReady(ds, v1alpha1.ReasonAtRestKeysMissing, fmt.Sprintf(
				"Secret %s lacks %s: restore it from a backup (what was written with its keys reads only with them), "+
					"or, for a datastore without data, delete the Secret and the operator makes new keys",
				name, strings.Join(missing, " and ")))
		}
		if !volume {
			return nil
		}
		patch := client.MergeFrom(sec.DeepCopy())
		if added, err := datakeys.AddVolumeKey(sec.Data, nil); err != nil || !added {
			return err
		}
		if err := r.Client.Patch(ctx, sec, patch); err != nil {
			return fmt.Errorf("adding the volume key to Secret %s: %w", name, err)
		}
		r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "VolumeKeyAdded", "Reconcile", "added the volume key to Secret %s", name)
		return nil
	}
	data, err := datakeys.AtRestData(nil)
	if err != nil {
		return fmt.Errorf("making the at-rest keystore: %w", err)
	}
	if volume {
		if _, err := datakeys.AddVolumeKey(data, nil); err != nil {
			return err
		}
	}
	sec = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: datastoreLabels(ds)},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		return fmt.Errorf("creating Secret %s: %w", name, err)
	}
	r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "AtRestKeysCreated", "Reconcile",
		"created Secret %s with the keys that encrypt the datastore's files; it is not deleted with the datastore", name)
	return nil
}
