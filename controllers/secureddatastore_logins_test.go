package controllers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
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
		g.Expect(logins.Message).To(HavePrefix("clients log in: the superuser sdo_admin"))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
	}, 120*time.Second).Should(Succeed())
	g.Expect(recordedEvents(g, ds, v1alpha1.ReasonLoginsBootstrapped)).To(ContainElement(HavePrefix("the default superuser cassandra is gone; clients log in")))

	n := cassandra.NamesOf(ds)
	logins := map[string]cqlauth.Login{}
	for name, user := range map[string]string{n.SuperuserSecret(): cassandra.SuperuserRole, n.ClientSecret(): cassandra.ClientRole} {
		sec := &corev1.Secret{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: name}, sec)).To(Succeed())
		g.Expect(string(sec.Data["username"])).To(Equal(user))
		g.Expect(sec.Data["password"]).To(HaveLen(32))
		g.Expect(sec.OwnerReferences).To(BeEmpty(), "a login Secret lives as long as the volumes holding its role")
		g.Expect(sec.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", ds.Name))
		logins[user] = cqlauth.Login{Username: user, Password: string(sec.Data["password"])}
	}
	g.Expect(logins[cassandra.SuperuserRole].Password).NotTo(Equal(logins[cassandra.ClientRole].Password))

	connect := dialAsAClient(g, ds, "127.0.0.24")
	g.Eventually(func() error {
		s, err := connect(context.Background(), cqlauth.DefaultSuperuser)
		if err == nil {
			s.Close()
		}
		return err
	}, 20*time.Second).ShouldNot(Succeed(), "cassandra/cassandra still logs in")
	s, err := connect(context.Background(), logins[cassandra.ClientRole])
	g.Expect(err).NotTo(HaveOccurred(), "the clients' role cannot log in")
	s.Close()
}

// Where the client channel demands certificates, the operator asks cert-manager for the
// superuser's and the clients' client certificates (SPIFFE IDs as their only names), maps
// those identities to the roles while the real node still authenticates by password, records
// them in status, and renders MutualTlsAuthenticator, which rolls the node. After the roll the
// certificate alone is the login, and the operator still reaches the node with its own.
func TestClientCertificatesBecomeTheLogins(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-wire", "TLS_AES_128_GCM_SHA256"))
	ds, node, ca := startWireNode(t, "cert-logins", "127.0.0.25", 7225, v1alpha1.EncryptionSettings{ClientToNode: &v1alpha1.ClientToNodeEncryption{
		ChannelEncryption: v1alpha1.ChannelEncryption{TLS: &v1alpha1.TLSSettings{ClientAuth: v1alpha1.ClientAuthRequired}}}}, nil)
	n := cassandra.NamesOf(ds)
	identities := cassandra.Identities(ds, "cluster.local")
	// cert-manager's part: a certificate for the identity each Certificate asks for.
	issued := map[string]tls.Certificate{}
	for _, id := range identities {
		secret := map[string]string{cassandra.SuperuserRole: n.SuperuserCertSecret(), cassandra.ClientRole: n.ClientCertSecret()}[id.Role]
		cert := &cmv1.Certificate{}
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.ClientCertificateName(secret)}, cert)).To(Succeed())
		}).Should(Succeed(), "no client certificate for %s", id.Role)
		g.Expect(cert.Spec.URIs).To(Equal([]string{id.Identity}))
		g.Expect(cert.Spec.SecretName).To(Equal(secret))
		g.Expect(cert.Spec.Usages).To(ContainElement(cmv1.UsageClientAuth))
		g.Expect(cert.Spec.Usages).NotTo(ContainElement(cmv1.UsageServerAuth))
		c := ca.IssueClient(t, id.Identity)
		create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: ds.Namespace}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: c.CertPEM, corev1.TLSPrivateKeyKey: c.KeyPEM, "ca.crt": ca.PEM}})
		issued[id.Role] = c.TLS
	}

	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		logins := condition(got.Status.Conditions, v1alpha1.ConditionLoginsReady)
		g.Expect(logins.Status).To(Equal(metav1.ConditionTrue), "%s: %s", logins.Reason, logins.Message)
		g.Expect(logins.Message).To(ContainSubstring("clients log in with their certificates"))
		g.Expect(logins.Message).To(ContainSubstring("the nodes restart one at a time to authenticate by certificate"))
		g.Expect(got.Status.Identities).To(Equal(identities))
		g.Expect(runningConfig(g, got).Data["cassandra.yaml"]).To(ContainSubstring("class_name: org.apache.cassandra.auth.MutualTlsAuthenticator"))
	}, 120*time.Second).Should(Succeed())

	g.Expect(recordedEvents(g, ds, "RollingRestart")).To(ContainElement("rolling restart, one node at a time: the nodes' configuration changed (they authenticate clients by client certificate)"))
	// The roll, as the StatefulSet controller and the kubelet would do it.
	rollOut(t, ds)
	node.CertificateAuthentication = true
	node.Restart(t, node.Step)
	g.Eventually(func(g Gomega) {
		logins := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionLoginsReady)
		g.Expect(logins.Message).To(HavePrefix("clients log in with their certificates"))
		g.Expect(logins.Message).NotTo(ContainSubstring("restart"), "the roll is over")
	}).Should(Succeed())

	as := func(role string) cqlauth.Connect { return dialAsAClient(g, ds, "127.0.0.25", issued[role]) }
	clients, err := as(cassandra.ClientRole)(context.Background(), cqlauth.Login{})
	g.Expect(err).NotTo(HaveOccurred(), "the clients' certificate is not a login")
	defer clients.Close()
	g.Expect(clients.Query("SELECT role FROM system_auth.roles").Exec()).To(MatchError(ContainSubstring("permission")), "the clients' certificate is the superuser")
	admin, err := as(cassandra.SuperuserRole)(context.Background(), cqlauth.Login{})
	g.Expect(err).NotTo(HaveOccurred(), "the superuser's certificate is not a login")
	defer admin.Close()
	var roles int
	g.Expect(admin.Query("SELECT count(*) FROM system_auth.roles").Scan(&roles)).To(Succeed())

	// A client login generated anew is bootstrapped over the superuser's certificate. The
	// Secret has no owner and the operator does not watch Secrets, so its deletion is noticed
	// at the next reconcile, which a change of the datastore's pod brings.
	bootstrapped := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionLoginsReady).LastTransitionTime
	g.Expect(env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n.ClientSecret(), Namespace: ds.Namespace}})).To(Succeed())
	g.Eventually(func() error {
		pod := get(NewWithT(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n.Pod(0), Namespace: ds.Namespace}})
		metav1.SetMetaDataAnnotation(&pod.ObjectMeta, "test/touch", "1")
		return env.Client.Update(context.Background(), pod)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: n.ClientSecret()}, sec)).To(Succeed())
		logins := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionLoginsReady)
		g.Expect(logins.Status).To(Equal(metav1.ConditionTrue), "%s: %s", logins.Reason, logins.Message)
		g.Expect(logins.LastTransitionTime.After(bootstrapped.Time)).To(BeTrue(), "the new login was not bootstrapped")
		g.Expect(logins.Message).NotTo(ContainSubstring("the nodes restart"))
	}, 60*time.Second).Should(Succeed())
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

// dialAsAClient reaches the wire-test node at address as the datastore's clients do: TLS 1.3
// pinned, verified against the datastore's trust bundle under its Service's name, presenting
// the certificates given.
func dialAsAClient(g Gomega, ds *v1alpha1.SecuredDatastore, address string, certificates ...tls.Certificate) cqlauth.Connect {
	trust := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.TrustConfigMap(ds)}, trust)).To(Succeed())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM([]byte(trust.Data["ca.crt"]))).To(BeTrue())
	pin, err := pintls.Parse("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	g.Expect(err).NotTo(HaveOccurred())
	return cqlauth.Dial{Hosts: []string{address + ":9042"}, Pin: pin, Timeout: 5 * time.Second,
		TLS: &tls.Config{RootCAs: roots, ServerName: cassandra.DNSNames(ds, "cluster.local")[0], Certificates: certificates}}.Connect()
}
