package controllers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/javakeystore"
	"secured.dev/operator/internal/render/cassandra"
)

// encryptsAtRest: the step runs Cassandra's transparent data encryption.
func encryptsAtRest(step *cassandra.Step) bool {
	return step != nil && step.Encryption.AtRest != nil && step.Encryption.AtRest.Engine != nil
}

// ensureAtRestKeys makes the at-rest keystore once, in the Secret <name>-at-rest-keys: an AES
// key of 128 and one of 256 bits under their aliases, and the keystore's password. Like the
// logins, the Secret has no owner reference, because the commit logs encrypted with these keys
// live on volumes that outlive the datastore object; and the operator never replaces a key,
// because a segment written with it could not be replayed.
func (e *cassandraEngine) ensureAtRestKeys(ctx context.Context) error {
	if !encryptsAtRest(&e.step) && !encryptsAtRest(e.applied) {
		return nil
	}
	ds, r := e.ds, e.r
	name := cassandra.NamesOf(ds).AtRestSecret()
	sec, err := r.ownedSecret(ctx, ds, name)
	if err != nil {
		return err
	}
	if sec != nil {
		if len(sec.Data[cassandra.AtRestKeystoreFile]) == 0 || len(sec.Data[cassandra.AtRestPasswordFile]) == 0 {
			return r.blockReady(ds, v1alpha1.ReasonAtRestKeysMissing, fmt.Sprintf(
				"Secret %s lacks %s or %s: restore them from a backup (commit logs written with the key replay only with it), "+
					"or, for a datastore without data, delete the Secret and the operator makes new keys",
				name, cassandra.AtRestKeystoreFile, cassandra.AtRestPasswordFile))
		}
		return nil
	}
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return err
	}
	password := base64.RawURLEncoding.EncodeToString(pw)
	var entries []javakeystore.Entry
	for _, bits := range []int32{128, 256} {
		key := make([]byte, bits/8)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		entries = append(entries, javakeystore.Entry{Alias: cassandra.AtRestKeyAlias(bits), Key: key})
	}
	keystore, err := javakeystore.SecretKeys(entries, password)
	if err != nil {
		return fmt.Errorf("making the at-rest keystore: %w", err)
	}
	sec = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: cassandra.Labels(ds)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{cassandra.AtRestKeystoreFile: keystore, cassandra.AtRestPasswordFile: []byte(password)},
	}
	if err := r.Client.Create(ctx, sec); err != nil {
		return fmt.Errorf("creating Secret %s: %w", name, err)
	}
	r.Recorder.Eventf(ds, nil, corev1.EventTypeNormal, "AtRestKeysCreated", "Reconcile",
		"created Secret %s with the keys that encrypt the commit log and hints; it is not deleted with the datastore", name)
	return nil
}
