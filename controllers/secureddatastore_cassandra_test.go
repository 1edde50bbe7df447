package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"software.sslmate.com/src/go-pkcs12"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/test/testpki"
)

// envtest runs no cert-manager and no StatefulSet controller: these helpers play their part by
// writing the status those controllers would write.

// issueCA records what cert-manager records when it issues the datastore's CA: a
// CertificateRequest whose status holds the CA certificate.
func issueCA(t *testing.T, ds *v1alpha1.SecuredDatastore, name string) []byte {
	t.Helper()
	return issueCAFrom(t, ds, name, testpki.New(t))
}

// issueCAFrom records ca as the datastore's CA, issued by cert-manager.
func issueCAFrom(t *testing.T, ds *v1alpha1.SecuredDatastore, name string, ca *testpki.CA) []byte {
	t.Helper()
	caPEM := ca.PEM
	cr := &cmv1.CertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace,
			Annotations: map[string]string{cmv1.CertificateNameKey: certs.CACertificate(ds)}},
		Spec: cmv1.CertificateRequestSpec{Request: []byte("csr"), IssuerRef: cmmeta.IssuerReference{Name: certs.SelfSignedIssuer(ds)}},
	}
	create(t, cr)
	cr.Status = cmv1.CertificateRequestStatus{Certificate: caPEM, CA: caPEM}
	if err := env.Client.Status().Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	return caPEM
}

// issueCertificate marks the datastore's CA and node Certificate issued, at a revision.
func issueCertificate(t *testing.T, ds *v1alpha1.SecuredDatastore, revision int) {
	t.Helper()
	if revision == 1 {
		issueCA(t, ds, ds.Name+"-ca-1")
	}
	markCertificateReady(t, ds, revision)
}

// issueCertificateBy marks the datastore's node Certificate issued by ca, the CA a real node
// in the test serves its certificate from.
func issueCertificateBy(t *testing.T, ds *v1alpha1.SecuredDatastore, ca *testpki.CA) {
	t.Helper()
	issueCAFrom(t, ds, ds.Name+"-ca-1", ca)
	markCertificateReady(t, ds, 1)
}

// markCertificateReady writes the Ready status cert-manager gives an issued node Certificate.
func markCertificateReady(t *testing.T, ds *v1alpha1.SecuredDatastore, revision int) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		cert := &cmv1.Certificate{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.NodeCertificate(ds)}, cert)).To(Succeed())
		notAfter := metav1.NewTime(time.Now().Add(time.Duration(revision) * 24 * time.Hour).Truncate(time.Second))
		cert.Status = cmv1.CertificateStatus{
			Conditions: []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: cmmeta.ConditionTrue, Reason: "Ready", Message: "issued"}},
			NotAfter:   &notAfter, Revision: &revision,
		}
		g.Expect(env.Client.Status().Update(context.Background(), cert)).To(Succeed())
	}).Should(Succeed())
}

// Secrets cert-manager wrote for an earlier datastore of the same name (the operator did not
// own them before) make cert-manager find the new Certificates up to date and issue nothing.
// The datastore must still start, trusting the CA in the node Secret, and own the Secrets so
// that deleting it deletes their keys.
func TestLeftoverCertificateSecretsAreTrustedAndOwned(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-leftover"))
	ds := datastore("leftover", "ds-test-leftover")
	ca := testpki.New(t).PEM
	secrets := []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: certs.CACertificate(ds)}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": ca, "tls.key": []byte("key"), "ca.crt": ca}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: certs.NodeSecret(ds)}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": []byte("node"), "tls.key": []byte("key"), "ca.crt": ca}},
	}
	for _, sec := range secrets {
		create(t, sec)
	}
	create(t, ds)
	ds = get(g, ds)
	markCertificateReady(t, ds, 1) // no CertificateRequest: nothing was issued

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ds), &appsv1.StatefulSet{})).To(Succeed())
	}).Should(Succeed(), "the datastore waits for a CertificateRequest that never comes")
	trust := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.TrustConfigMap(ds)}, trust)).To(Succeed())
	g.Expect(trust.Data[certs.BundleKey]).To(Equal(string(ca)))
	for _, sec := range secrets {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(sec), sec)).To(Succeed())
		g.Expect(sec.OwnerReferences).To(ContainElement(SatisfyAll(
			HaveField("UID", ds.UID), HaveField("Controller", BeNil()))), "Secret %s is not owned by the datastore", sec.Name)
	}
}

// A node Secret signed by an earlier datastore's CA, beside this datastore's own new CA: a
// datastore deleted and created again at once gets one when the old Certificate re-issues the
// Secret the garbage collector has just deleted. The bundle must hold both CAs, or a node
// started later refuses its peers.
func TestLeftoverNodeSecretOfAnEarlierCAIsTrusted(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-leftover-ca"))
	ds := datastore("leftover-ca", "ds-test-leftover-ca")
	earlier := testpki.New(t).PEM
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: certs.NodeSecret(ds)}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("node"), "tls.key": []byte("key"), "ca.crt": earlier}})
	create(t, ds)
	ds = get(g, ds)
	current := issueCA(t, ds, ds.Name+"-ca-1")
	markCertificateReady(t, ds, 1)

	g.Eventually(func(g Gomega) {
		trust := &corev1.ConfigMap{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.TrustConfigMap(ds)}, trust)).To(Succeed())
		bundle := []byte(trust.Data[certs.BundleKey])
		g.Expect(certs.Trusts(bundle, current)).To(BeTrue(), "the datastore's own CA")
		g.Expect(certs.Trusts(bundle, earlier)).To(BeTrue(), "the CA that signed the node Secret")
	}).Should(Succeed())
}

// rollOut waits for the StatefulSet and reports its current template rolled out to every pod.
// It returns the step the template runs.
func rollOut(t *testing.T, ds *v1alpha1.SecuredDatastore) cassandra.Step {
	t.Helper()
	g := NewWithT(t)
	var step cassandra.Step
	g.Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ds), sts)).To(Succeed())
		rev := "rev-" + sts.Spec.Template.Annotations[cassandra.ConfigHashAnnotation]
		n := *sts.Spec.Replicas
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: n, ReadyReplicas: n, AvailableReplicas: n,
			UpdatedReplicas: n, CurrentReplicas: n, CurrentRevision: rev, UpdateRevision: rev}
		g.Expect(env.Client.Status().Update(context.Background(), sts)).To(Succeed())
		applied, err := cassandra.AppliedStep(sts)
		g.Expect(err).NotTo(HaveOccurred())
		step = *applied
	}).Should(Succeed())
	return step
}

func statefulSet(g Gomega, ds *v1alpha1.SecuredDatastore) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: cassandra.NamesOf(ds).StatefulSet()}, sts)).To(Succeed())
	return sts
}

// runningConfig is the configuration the datastore's StatefulSet mounts now.
func runningConfig(g Gomega, ds *v1alpha1.SecuredDatastore) *corev1.ConfigMap {
	name := podtemplate.VolumeConfigMap(statefulSet(g, ds).Spec.Template.Spec, "config")
	g.Expect(name).NotTo(BeEmpty(), "the StatefulSet mounts no configuration")
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: name}, cm)).To(Succeed())
	return cm
}

// configs are the names of the datastore's configurations that exist, sorted.
func configs(g Gomega, ds *v1alpha1.SecuredDatastore) []string {
	var list corev1.ConfigMapList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(ds.Namespace))).To(Succeed())
	var out []string
	for _, cm := range list.Items {
		if cassandra.NamesOf(ds).IsConfigMap(cm.Name) && cm.DeletionTimestamp == nil {
			out = append(out, cm.Name)
		}
	}
	slices.Sort(out)
	return out
}

func ownedBy(g Gomega, ds *v1alpha1.SecuredDatastore, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	ref := metav1.GetControllerOf(obj)
	g.Expect(ref).NotTo(BeNil(), "%T %s has no controller", obj, obj.GetName())
	g.Expect(ref.UID).To(Equal(ds.UID))
	g.Expect(*ref.BlockOwnerDeletion).To(BeTrue())
}

func eventNotes(g Gomega, obj client.Object, reason string) []string {
	var list eventsv1.EventList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(obj.GetNamespace()))).To(Succeed())
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Name == obj.GetName() && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// recordedEvents waits for at least one event of the reason and returns the notes of all of
// them: the recorder sends events in the background, so one that was just emitted may not be
// stored yet when the condition that accompanies it already is.
func recordedEvents(g Gomega, obj client.Object, reason string) []string {
	var notes []string
	g.Eventually(func(g Gomega) {
		notes = eventNotes(g, obj, reason)
		g.Expect(notes).NotTo(BeEmpty(), "no %s event for %s", reason, obj.GetName())
	}).Should(Succeed())
	return notes
}

// A renewal cert-manager never finishes (it is down, or its issuer refuses) shows after the
// stall time as CertificatesReady False with a Warning event, while cert-manager itself keeps
// the Certificate Ready; the condition clears once the renewal is issued.
func TestAStalledRenewalIsReported(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-stall"))
	ds := datastore("stall", "ds-test-stall")
	create(t, ds)
	ds = get(g, ds)
	issueCertificate(t, ds, 1)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(get(g, ds).Status.Conditions, v1alpha1.ConditionCertificatesReady).Reason).To(Equal(v1alpha1.ReasonIssued))
	}).Should(Succeed())

	// cert-manager began renewing eleven minutes ago and has done nothing since.
	g.Eventually(func() error {
		cert := &cmv1.Certificate{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.NodeCertificate(ds)}, cert); err != nil {
			return err
		}
		began := metav1.NewTime(time.Now().Add(-11 * time.Minute))
		cert.Status.Conditions = append(cert.Status.Conditions, cmv1.CertificateCondition{Type: cmv1.CertificateConditionIssuing, Status: cmmeta.ConditionTrue,
			Reason: "Renewing", Message: "Renewing certificate as renewal was scheduled", LastTransitionTime: &began})
		return env.Client.Status().Update(context.Background(), cert)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionCertificatesReady)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonRenewalStalled))
		g.Expect(c.Message).To(HavePrefix("cert-manager has been renewing certificate stall-node for 11m0s without issuing it (Renewing certificate as renewal was scheduled); nodes keep the current one, valid until "))
		g.Expect(c.Message).To(HaveSuffix(": check that cert-manager runs (kubectl -n cert-manager get pods) and kubectl describe certificate stall-node"))
	}).Should(Succeed())
	g.Expect(recordedEvents(g, ds, v1alpha1.ReasonRenewalStalled)).To(HaveLen(1))

	issueCertificate(t, ds, 2)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionCertificatesReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonIssued), c.Message)
	}).Should(Succeed())

	// The next renewal was due eleven minutes ago and cert-manager never began it (it was down
	// at the renewal time): no Issuing condition at all, only a renewal time in the past.
	g.Eventually(func() error {
		cert := &cmv1.Certificate{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: certs.NodeCertificate(ds)}, cert); err != nil {
			return err
		}
		cert.Status.RenewalTime = ptr.To(metav1.NewTime(time.Now().Add(-11 * time.Minute)))
		return env.Client.Status().Update(context.Background(), cert)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionCertificatesReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonRenewalStalled))
		g.Expect(c.Message).To(MatchRegexp(`^cert-manager was due to renew certificate stall-node at .* and has not begun \(11m0s late\); nodes keep the current one`))
	}).Should(Succeed())
}

// A TLS datastore gets its CA chain and node certificate first, and its pods only once the
// certificate is issued; everything it creates is owned by it, so deleting it cleans up.
func TestCassandraWaitsForCertificatesAndOwnsItsObjects(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-objects"))
	ds := datastore("objects", "ds-test-objects")
	create(t, ds)
	ds = get(g, ds)

	ns := ds.Namespace
	for _, o := range []client.Object{
		&cmv1.Issuer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.SelfSignedIssuer(ds)}},
		&cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.CACertificate(ds)}},
		&cmv1.Issuer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.CAIssuer(ds)}},
		&cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.NodeCertificate(ds)}},
	} {
		g.Eventually(func(g Gomega) { ownedBy(g, ds, o) }).Should(Succeed())
	}
	g.Consistently(func() error {
		return env.Client.Get(context.Background(), client.ObjectKeyFromObject(ds), &appsv1.StatefulSet{})
	}, time.Second).ShouldNot(Succeed(), "no pods before the certificate exists")
	g.Expect(condition(get(g, ds).Status.Conditions, v1alpha1.ConditionCertificatesReady).Reason).To(Equal("Issuing"))

	issueCertificate(t, ds, 1)
	n := cassandra.NamesOf(ds)
	for _, o := range []client.Object{
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n.StatefulSet()}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n.HeadlessService()}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n.ClientService()}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ds.Name}},
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ds.Name}},
	} {
		g.Eventually(func(g Gomega) { ownedBy(g, ds, o) }).Should(Succeed())
	}
	g.Eventually(func(g Gomega) {
		cm := runningConfig(g, ds)
		ownedBy(g, ds, cm)
		g.Expect(ptr.Deref(cm.Immutable, false)).To(BeTrue(), "a configuration never changes under its name")
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionCertificatesReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(got.Status.Certificates.SecretName).To(Equal(certs.NodeSecret(ds)))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Reason).To(Equal("Provisioning"))
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseProvisioning))
	}).Should(Succeed())

	// A renewal (cert-manager bumps the revision) is reported; pods reload, nothing rolls.
	before := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ds), before)).To(Succeed())
	issueCertificate(t, ds, 2)
	g.Eventually(func(g Gomega) {
		g.Expect(*get(g, ds).Status.Certificates.Revision).To(Equal(2))
		g.Expect(eventNotes(g, ds, "CertificateRenewed")).To(ContainElement(ContainSubstring("revision 2")))
	}).Should(Succeed())
	after := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ds), after)).To(Succeed())
	g.Expect(after.Spec.Template.Annotations).To(Equal(before.Spec.Template.Annotations), "a renewal must not roll the pods")

	// The CA rotates: the trust bundle holds the new CA and the old one, and nothing rolls.
	issueCA(t, ds, ds.Name+"-ca-2")
	trust := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.TrustConfigMap(ds)}}
	g.Eventually(func(g Gomega) {
		ownedBy(g, ds, trust)
		g.Expect(strings.Count(trust.Data[certs.BundleKey], "BEGIN CERTIFICATE")).To(Equal(2))
		// The JVMs' trust store holds the same two CAs.
		store, err := pkcs12.DecodeTrustStore(trust.BinaryData[certs.TrustStoreKey], "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(store).To(HaveLen(2))
		g.Expect(eventNotes(g, ds, "TrustBundleUpdated")).To(ContainElement(ContainSubstring("2 CAs")))
	}).Should(Succeed())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ds), after)).To(Succeed())
	g.Expect(after.Spec.Template.Annotations).To(Equal(before.Spec.Template.Annotations), "a CA rotation must not roll the pods")
}

// Turning TLS on for both channels of a running plaintext cluster takes three rolls, each
// started only when the previous one finished, and ends at the profile.
func TestEnablingTLSRollsOneStepAtATime(t *testing.T) {
	g := NewWithT(t)
	plain := &v1alpha1.EncryptionProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "ds-test-plain"},
		Spec: v1alpha1.EncryptionProfileSpec{EncryptionSettings: v1alpha1.EncryptionSettings{
			ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}},
			NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}},
		}},
	}
	create(t, plain)
	create(t, tls13Profile("ds-test-roll-tls"))
	ds := datastore("roll", "ds-test-plain")
	// Nothing listens at these pods' addresses, so no login could be bootstrapped there; this
	// test is about the rolls.
	ds.Spec.Cassandra.Authentication = v1alpha1.CassandraAuthenticationNone
	create(t, ds)
	g.Expect(rollOut(t, ds).String()).To(Equal("clientToNode Disabled, nodeToNode plaintext"))
	for i := range 3 {
		runningPod(t, ds, i, fmt.Sprintf("127.0.0.%d", 31+i)) // nothing listens: probes find them unreachable
	}
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Reason).To(Equal("RolledOut"))
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		g.Expect(got.Status.ReadyNodes).To(BeEquivalentTo(3))
	}).Should(Succeed())
	previous := runningConfig(g, ds).Name

	g.Eventually(func() error {
		cur := get(g, ds)
		cur.Spec.Encryption.ProfileRef = "ds-test-roll-tls"
		return env.Client.Update(context.Background(), cur)
	}).Should(Succeed())
	issueCertificate(t, ds, 1)

	want := []string{
		"clientToNode Optional, nodeToNode accept TLS, send plaintext",
		"clientToNode Required, nodeToNode TLS optional",
		"clientToNode Required, nodeToNode TLS required",
	}
	for _, step := range want {
		g.Eventually(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ds), sts)).To(Succeed())
			applied, err := cassandra.AppliedStep(sts)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(applied.String()).To(Equal(step))
		}).Should(Succeed())
		// While the roll runs, the operator neither moves on nor claims Ready. The StatefulSet
		// is applied before the reconcile's one status write, so wait for that first.
		rolling := func(g Gomega) {
			got := get(g, ds)
			g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Message).To(ContainSubstring(step))
			g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseUpdating))
		}
		g.Eventually(rolling).Should(Succeed())
		g.Consistently(rolling, 500*time.Millisecond).Should(Succeed())
		// A node recreated mid-roll from the previous revision must find that revision's
		// configuration: it stays until the roll is over.
		current := runningConfig(g, ds).Name
		g.Expect(current).NotTo(Equal(previous))
		g.Expect(configs(g, ds)).To(ContainElements(previous, current))
		previous = current
		rollOut(t, ds)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(configs(g, ds)).To(Equal([]string{runningConfig(g, ds).Name}), "once the last roll is over, only its configuration is left")
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Reason).To(Equal("RolledOut"))
		rolls := eventNotes(g, ds, "RollingRestart")
		g.Expect(rolls).To(HaveLen(3))
		g.Expect(strings.Join(rolls, "\n")).To(ContainSubstring("nodeToNode TLS optional→TLS required"))
	}).Should(Succeed())
}

// When the datastore's namespace is being deleted, the operator does not fight the namespace
// controller by recreating what it removes: the forbidden writes end the reconcile quietly.
func TestTerminatingNamespaceIsNotAnError(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "terminating"}}
	create(t, ns)
	create(t, tls13Profile("ds-test-terminating"))
	ds := datastore("doomed", "ds-test-terminating")
	ds.Namespace = ns.Name
	create(t, ds)
	g.Eventually(func(g Gomega) {
		ownedBy(g, ds, &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: certs.NodeCertificate(ds)}})
	}).Should(Succeed())

	// envtest runs no namespace controller: the namespace stays Terminating, its objects stay,
	// and creating anything new in it is forbidden.
	g.Expect(env.Client.Delete(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: certs.NodeCertificate(ds)}})).To(Succeed())
	r := &SecuredDatastoreReconciler{Client: env.Client, APIReader: env.Client, Recorder: &countingRecorder{}, Options: testOptions, certManager: true}
	g.Eventually(func(g Gomega) {
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ds)})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: certs.NodeCertificate(ds)}, &cmv1.Certificate{})).NotTo(Succeed(),
			"the Certificate must not come back in a terminating namespace")
	}).Should(Succeed())
}
