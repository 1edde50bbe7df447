package controllers

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/pkg/fieldcrypt"
)

// A profile with client-side protection gets its keys once, in a Secret the datastore's
// clients mount and that outlives the datastore; settings the keys no longer fit stop the
// datastore with what to do, and never replace the keys (that would make the data unreadable).
func TestClientSideKeysAreMadeOnceAndNeverReplaced(t *testing.T) {
	g := NewWithT(t)
	profile := plaintextProfile("ds-test-client-side")
	profile.Spec.ClientSide = &v1alpha1.ClientSideEncryption{Signature: v1alpha1.ClientEd25519, Fields: ptr.To[int32](4)}
	create(t, profile)
	g.Eventually(func(g Gomega) {
		got := get(g, &v1alpha1.EncryptionProfile{ObjectMeta: metav1.ObjectMeta{Name: profile.Name}})
		g.Expect(got.Spec.ClientSide.Cipher).To(Equal(v1alpha1.ClientAES256GCM), "the API's default cipher")
	}).Should(Succeed())

	ds := datastore("sealed", profile.Name)
	create(t, ds)
	key := client.ObjectKey{Namespace: ds.Namespace, Name: "sealed-client-keys"}
	sec := keySecret(t, key)
	g.Expect(sec.Data).To(HaveKey("encryption-key-1"))
	g.Expect(sec.Data["encryption-key-1"]).To(HaveLen(32))
	codec, err := fieldcrypt.FromFiles(sec.Data, fieldcrypt.CipherAESGCM, fieldcrypt.SignatureEd25519)
	g.Expect(err).NotTo(HaveOccurred(), "the Secret must hold what the benchmark clients load")
	g.Expect(codec.SealKeyLen()).To(Equal(32))
	recordedEvents(g, ds, "ClientKeysCreated")
	g.Eventually(func(g Gomega) {
		enc := get(g, ds).Status.Encryption
		g.Expect(enc).NotTo(BeNil())
		g.Expect(enc.Effective.ClientSide).To(Equal(&v1alpha1.ClientSideEncryption{
			Cipher: v1alpha1.ClientAES256GCM, Signature: v1alpha1.ClientEd25519, Fields: ptr.To[int32](4)}))
	}).Should(Succeed())

	// The profile moves to RSA signatures: the Ed25519 key cannot make them.
	g.Eventually(func() error {
		p := get(NewWithT(t), &v1alpha1.EncryptionProfile{ObjectMeta: metav1.ObjectMeta{Name: profile.Name}})
		p.Spec.ClientSide.Signature = v1alpha1.ClientRSA2048
		return env.Client.Update(context.Background(), p)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonClientKeysMismatch))
		g.Expect(c.Message).To(ContainSubstring("Secret sealed-client-keys does not fit spec.encryption.clientSide (cipher AES-256-GCM, signature RSA-2048)"))
		g.Expect(c.Message).To(ContainSubstring("delete the Secret"))
	}).Should(Succeed())
	after := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), key, after)).To(Succeed())
	g.Expect(after.Data).To(Equal(sec.Data), "the keys were replaced")
	for _, note := range recordedEvents(g, ds, v1alpha1.ReasonClientKeysMismatch) {
		g.Expect(note).NotTo(ContainSubstring("PRIVATE KEY"))
	}
}
