package controllers

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
)

// Engine-level encryption at rest: the operator makes the keystore once (a Secret with no owner,
// as long-lived as the volumes whose commit logs need it), mounts it into every node, and renders
// Cassandra's transparent data encryption with a placeholder for the password, which stays out
// of the ConfigMap. The profile's assessment says that SSTables stay in clear.
func TestAtRestKeysAreMountedAndThePasswordStaysOutOfTheConfig(t *testing.T) {
	g := NewWithT(t)
	profile := plaintextProfile("ds-test-at-rest")
	profile.Spec.AtRest = &v1alpha1.AtRestEncryption{Engine: &v1alpha1.EngineAtRest{}}
	create(t, profile)
	ds := datastore("at-rest", profile.Name)
	create(t, ds)
	key := client.ObjectKey{Namespace: ds.Namespace, Name: "at-rest-at-rest-keys"}
	sec := keySecret(t, key)
	g.Expect(sec.Data).To(HaveKey("keystore.p12"))
	password := string(sec.Data["password"])
	g.Expect(password).To(MatchRegexp(`^[A-Za-z0-9_-]{32}$`))

	g.Eventually(func(g Gomega) {
		config := runningConfig(g, ds).Data["cassandra.yaml"]
		g.Expect(config).To(ContainSubstring("key_alias: sdo-aes128-1"))
		g.Expect(config).To(ContainSubstring("keystore_password: '@AT_REST_PASSWORD@'"))
		g.Expect(config).NotTo(ContainSubstring(password))
		pod := statefulSet(g, ds).Spec.Template.Spec
		g.Expect(pod.Volumes).To(ContainElement(HaveField("Secret.SecretName", key.Name)))
		g.Expect(pod.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "CASSANDRA_AT_REST_PASSWORD_FILE", Value: "/etc/cassandra/at-rest/password"}))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		a := get(g, &v1alpha1.EncryptionProfile{ObjectMeta: metav1.ObjectMeta{Name: profile.Name}}).Status.Assessment
		g.Expect(a).NotTo(BeNil())
		g.Expect(a.AtRestRank).To(BeNumerically(">", 0))
		g.Expect(a.Notes).To(ContainElement(ContainSubstring("SSTables (flushed and compacted data) stay in clear")))
	}).Should(Succeed())

	// The keystore emptied by hand: at its next pass (Secrets are read, never watched or cached:
	// a spec change brings the pass here) the datastore stops and says how to recover; nothing is
	// regenerated over it.
	sec.Data["keystore.p12"] = nil
	g.Expect(env.Client.Update(context.Background(), sec)).To(Succeed())
	g.Eventually(func() error {
		d := get(NewWithT(t), &v1alpha1.SecuredDatastore{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: ds.Name}})
		d.Spec.Verification = &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: 3 * time.Minute}}
		return env.Client.Update(context.Background(), d)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonAtRestKeysMissing))
		g.Expect(c.Message).To(ContainSubstring("lacks keystore.p12:"))
	}).Should(Succeed())
	g.Expect(env.Client.Get(context.Background(), key, sec)).To(Succeed())
	g.Expect(sec.Data["keystore.p12"]).To(BeEmpty())
}

// An HBase datastore encrypting at rest gets the same keystore Secret; its Master and
// RegionServers mount it (HBase reads each key's password from its properties file), the other
// roles do not, and hbase-site.xml names the keystore but holds no password. Its client-side
// keys are made as a Cassandra datastore's are.
func TestHBaseAtRestKeysAreMountedWhereRegionsLive(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ds := plaintextHBase("sealedlog")
	ds.Spec.Encryption.AtRest = &v1alpha1.AtRestEncryption{Engine: &v1alpha1.EngineAtRest{KeyBits: 256}}
	ds.Spec.Encryption.ClientSide = &v1alpha1.ClientSideEncryption{Cipher: v1alpha1.ClientChaCha20Poly1305}
	create(t, ds)
	key := client.ObjectKey{Namespace: ds.Namespace, Name: "sealedlog-at-rest-keys"}
	clientKeys := client.ObjectKey{Namespace: ds.Namespace, Name: "sealedlog-client-keys"}
	sec, cs := keySecret(t, key), keySecret(t, clientKeys)
	g.Expect(sec.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "hbase"))
	g.Expect(cs.Labels).To(HaveKeyWithValue("app.kubernetes.io/name", "hbase"))
	g.Expect(cs.Data["encryption-key-1"]).To(HaveLen(32), "ChaCha20-Poly1305 takes a 32-byte key")
	password := string(sec.Data["password"])
	n := hbase.NamesOf(ds)
	g.Eventually(func(g Gomega) {
		for role, want := range map[hbase.Role]bool{hbase.Master: true, hbase.RegionServer: true, hbase.DataNode: false, hbase.ZooKeeper: false} {
			sts := &appsv1.StatefulSet{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.StatefulSet(role)}, sts)).To(Succeed())
			mounted := false
			for _, v := range sts.Spec.Template.Spec.Volumes {
				mounted = mounted || (v.Secret != nil && v.Secret.SecretName == key.Name)
			}
			g.Expect(mounted).To(Equal(want), "%s mounts the at-rest keys: %v", role, mounted)
		}
		cm := &corev1.ConfigMap{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.ConfigMap()}, cm)).To(Succeed())
		site := cm.Data["hbase-site.xml"]
		g.Expect(site).To(ContainSubstring("pkcs12:///etc/secured/at-rest/keystore.p12?passwordFile=/etc/secured/at-rest/passwords.properties"))
		g.Expect(site).To(ContainSubstring("sdo-aes256-1"))
		g.Expect(site).NotTo(ContainSubstring(password))
	}).Should(Succeed())
}

// keySecret waits for a key Secret the operator makes, checks that it has no owner (it outlives
// the datastore, as the data does), and deletes it when the test ends, as a person would.
func keySecret(t *testing.T, key client.ObjectKey) *corev1.Secret {
	t.Helper()
	g := NewWithT(t)
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
	})
	sec := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), key, sec)).To(Succeed())
	}).Should(Succeed())
	g.Expect(sec.OwnerReferences).To(BeEmpty(), "Secret %s has an owner: the keys would go with the datastore object while the data stays", key.Name)
	return sec
}

// An encrypted volume: the at-rest Secret gains the volume key, every node's pod runs the init
// container that encrypts its data volume (with that key alone mounted) and Cassandra's data
// directories lie below the encrypted one; the profile's assessment says what it protects from.
// Turned off on the running datastore, the change is refused and the pods keep the encryption.
func TestEncryptedVolumeIsPreparedBeforeCassandraAndNeverDropped(t *testing.T) {
	g := NewWithT(t)
	profile := plaintextProfile("ds-test-volume")
	profile.Spec.AtRest = &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{}}
	create(t, profile)
	create(t, plaintextProfile("ds-test-volume-off"))
	ds := datastore("vault", profile.Name)
	create(t, ds)
	sec := keySecret(t, client.ObjectKey{Namespace: ds.Namespace, Name: "vault-at-rest-keys"})
	g.Expect(sec.Data["volume.key"]).To(HaveLen(64))
	g.Eventually(func(g Gomega) {
		pod := statefulSet(g, ds).Spec.Template.Spec
		g.Expect(pod.InitContainers).To(HaveLen(1))
		g.Expect(pod.InitContainers[0].Image).To(Equal("secured.dev/volume-encryption:test"))
		g.Expect(pod.InitContainers[0].Args).To(ContainElement("--dir=/var/lib/cassandra/encrypted"))
		g.Expect(pod.Volumes).To(ContainElement(And(HaveField("Name", "volume-key"), HaveField("Secret.Items", HaveLen(1)))))
		g.Expect(runningConfig(g, ds).Data["cassandra.yaml"]).To(ContainSubstring("commitlog_directory: /var/lib/cassandra/encrypted/commitlog"))
		a := get(g, &v1alpha1.EncryptionProfile{ObjectMeta: metav1.ObjectMeta{Name: profile.Name}}).Status.Assessment
		g.Expect(a).NotTo(BeNil())
		g.Expect(a.AtRestRank).To(BeNumerically(">", 0))
		g.Expect(a.Notes).To(ContainElement(ContainSubstring("encrypts every file of the data volume (fscrypt, AES-256-XTS)")))
	}).Should(Succeed())

	rollOut(t, ds)
	changeIsRefused(t, ds, func(d *v1alpha1.SecuredDatastore) { d.Spec.Encryption.ProfileRef = "ds-test-volume-off" },
		v1alpha1.ReasonVolumeEncryptionChangeUnsupported, "spec.encryption.atRest.volume cannot change on a running datastore")
	g.Expect(statefulSet(g, ds).Spec.Template.Spec.InitContainers).To(HaveLen(1), "the running pods lost their volume encryption")
}
