package controllers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/cqlauth"
	"secured.dev/operator/internal/pintls"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
)

// The operator closes a real Cassandra node that runs the configuration it rendered (TLS 1.3
// for clients, PasswordAuthenticator): it logs in as the default superuser over the client
// channel's TLS, replaces it with the generated one, creates the clients' role, and only then
// calls the datastore Ready. The node then refuses cassandra/cassandra and admits the role
// whose login is in the client Secret.
func TestOperatorReplacesTheDefaultSuperuserOnARealNode(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-wire", "TLS_AES_128_GCM_SHA256"))
	ds := startWireTest(t, "logins", "127.0.0.24", 7224, v1alpha1.EncryptionSettings{})
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		logins := condition(got.Status.Conditions, v1alpha1.ConditionLoginsReady)
		g.Expect(logins.Status).To(Equal(metav1.ConditionTrue), "%s: %s", logins.Reason, logins.Message)
		g.Expect(logins.Message).To(ContainSubstring("the default superuser cassandra is gone"))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
	}, 120*time.Second).Should(Succeed())
	recordedEvents(g, ds, v1alpha1.ReasonLoginsBootstrapped)

	n := cassandra.NamesOf(ds)
	logins := map[string]cqlauth.Login{}
	for name, user := range map[string]string{n.SuperuserSecret(): cqlauth.SuperuserName, n.ClientSecret(): cqlauth.ClientName} {
		sec := &corev1.Secret{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: name}, sec)).To(Succeed())
		g.Expect(string(sec.Data["username"])).To(Equal(user))
		g.Expect(sec.Data["password"]).To(HaveLen(32))
		g.Expect(sec.OwnerReferences).To(BeEmpty(), "a login Secret lives as long as the volumes holding its role")
		g.Expect(sec.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", ds.Name))
		logins[user] = cqlauth.Login{Username: user, Password: string(sec.Data["password"])}
	}
	g.Expect(logins[cqlauth.SuperuserName].Password).NotTo(Equal(logins[cqlauth.ClientName].Password))

	trust := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.TrustConfigMap(ds)}, trust)).To(Succeed())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM([]byte(trust.Data["ca.crt"]))).To(BeTrue())
	pin, err := pintls.Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	g.Expect(err).NotTo(HaveOccurred())
	connect := cqlauth.Dial{Hosts: []string{"127.0.0.24:9042"}, Pin: pin, Timeout: 5 * time.Second,
		TLS: &tls.Config{RootCAs: roots, ServerName: cassandra.DNSNames(ds, "cluster.local")[0]}}.Connect()
	g.Eventually(func() error {
		s, err := connect(context.Background(), cqlauth.DefaultSuperuser)
		if err == nil {
			s.Close()
		}
		return err
	}, 20*time.Second).ShouldNot(Succeed(), "cassandra/cassandra still logs in")
	s, err := connect(context.Background(), logins[cqlauth.ClientName])
	g.Expect(err).NotTo(HaveOccurred(), "the clients' role cannot log in")
	s.Close()
}

// Without real nodes: None is said, not silently granted; a password datastore creates its
// logins and waits for every node before it is Ready; a Secret someone else made is not taken.
func TestLoginsAreClosedByDefaultAndNeverTakenOver(t *testing.T) {
	g := NewWithT(t)
	create(t, plaintextProfile("ds-test-logins"))

	open := datastore("logins-open", "ds-test-logins")
	open.Spec.Cassandra.Authentication = v1alpha1.CassandraAuthenticationNone
	closed := datastore("logins-closed", "ds-test-logins")
	foreign := datastore("logins-foreign", "ds-test-logins")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "logins-foreign-superuser", Namespace: "default"},
		Data: map[string][]byte{"username": []byte("someone"), "password": []byte("theirs")}})
	for _, ds := range []*v1alpha1.SecuredDatastore{open, closed, foreign} {
		create(t, ds)
	}
	g.Expect(get(g, closed).Spec.Cassandra.Authentication).To(Equal(v1alpha1.CassandraAuthenticationPassword), "the API's default")

	config := func(g Gomega, ds *v1alpha1.SecuredDatastore) string {
		return runningConfig(g, ds).Data["cassandra.yaml"]
	}
	g.Eventually(func(g Gomega) {
		c := condition(get(g, open).Status.Conditions, v1alpha1.ConditionLoginsReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonAuthenticationDisabled))
		g.Expect(config(g, open)).To(ContainSubstring("authenticator: AllowAllAuthenticator"))
	}).Should(Succeed())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "logins-open-superuser"}, &corev1.Secret{})).NotTo(Succeed())

	g.Eventually(func(g Gomega) {
		c := condition(get(g, closed).Status.Conditions, v1alpha1.ConditionLoginsReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonLoginsPending))
		g.Expect(c.Message).To(ContainSubstring("0 of 3 ready"))
		g.Expect(config(g, closed)).To(ContainSubstring("authenticator: PasswordAuthenticator"))
		g.Expect(config(g, closed)).To(ContainSubstring("authorizer: CassandraAuthorizer"))
		for _, name := range []string{"logins-closed-superuser", "logins-closed-client"} {
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &corev1.Secret{})).To(Succeed())
		}
	}).Should(Succeed())
	for _, name := range []string{"logins-closed-superuser", "logins-closed-client"} {
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
		})
	}

	g.Eventually(func(g Gomega) {
		c := condition(get(g, foreign).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonNameConflict))
		g.Expect(c.Message).To(ContainSubstring("logins-foreign-superuser"))
	}).Should(Succeed())
	sec := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "logins-foreign-superuser"}, sec)).To(Succeed())
	g.Expect(string(sec.Data["password"])).To(Equal("theirs"))
}
