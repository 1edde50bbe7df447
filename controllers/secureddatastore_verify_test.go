package controllers

import (
	"cmp"
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/internal/test/testpki"
	"secured.dev/operator/internal/verify"
)

// runningPod records in the API server a datastore pod whose address is a real Cassandra
// process on this machine: envtest has no kubelet, so the test writes the status a kubelet
// would, and the operator's prober then talks to the real node.
func runningPod(t *testing.T, ds *v1alpha1.SecuredDatastore, ordinal int, address string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cassandra.NamesOf(ds).Pod(ordinal), Namespace: ds.Namespace, Labels: cassandra.Labels(ds)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cassandra", Image: "secured.dev/cassandra:test"}},
			AutomountServiceAccountToken: ptr.To(false)},
	}
	create(t, pod)
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: address,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "cassandra", Ready: true, Image: "secured.dev/cassandra:test",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}},
	}
	if err := env.Client.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// effectiveOf waits for the datastore's effective profile.
func effectiveOf(g Gomega, ds *v1alpha1.SecuredDatastore) v1alpha1.EffectiveEncryption {
	var enc v1alpha1.EffectiveEncryption
	g.Eventually(func(g Gomega) {
		st := get(g, ds).Status.Encryption
		g.Expect(st).NotTo(BeNil())
		g.Expect(st.Effective).NotTo(BeNil())
		enc = *st.Effective
	}, 30*time.Second).Should(Succeed())
	return enc
}

// startWireTest creates a one-node datastore, waits for its effective profile, starts a real
// Cassandra node with exactly the files the builders render for it, and lets the operator
// find it as the datastore's rolled-out pod.
func startWireTest(t *testing.T, name, address string, jmx int, overrides v1alpha1.EncryptionSettings) *v1alpha1.SecuredDatastore {
	t.Helper()
	ds, _, _ := startWireNode(t, name, address, jmx, overrides, nil)
	return ds
}

// startWireNode is startWireTest that also returns the node and the datastore's CA, with the
// node's certificate signed by stranger instead of that CA when stranger is not nil.
func startWireNode(t *testing.T, name, address string, jmx int, overrides v1alpha1.EncryptionSettings, stranger *testpki.CA) (*v1alpha1.SecuredDatastore, *dataplane.CassandraNode, *testpki.CA) {
	t.Helper()
	g := NewWithT(t)
	ds := datastore(name, "ds-test-wire")
	ds.Spec.Cassandra.Nodes = ptr.To[int32](1)
	ds.Spec.Encryption.EncryptionSettings = overrides
	create(t, ds)
	enc := effectiveOf(g, ds)
	ca := testpki.New(t)
	signer := cmp.Or(stranger, ca)
	node := dataplane.StartCassandra(t, dataplane.Node{Address: address, JMXPort: jmx, Step: cassandra.Target(enc), CA: signer,
		DNSNames: cassandra.DNSNames(ds, "cluster.local"), PasswordAuthentication: cassandra.PasswordAuthentication(ds, nil)})
	issueCertificateBy(t, ds, ca)
	rollOut(t, ds)
	runningPod(t, ds, 0, address)
	return ds, node, ca
}

// Against real Cassandra nodes: a pinned TLS 1.3 suite with the OpenSSL engine is reported as
// CipherSuiteDrift naming the suites BoringSSL adds; the same profile on the JDK engine is
// verified. Both become status, an event and the gauge.
func TestEncryptionVerifiedFromTheWire(t *testing.T) {
	create(t, tls13Profile("ds-test-wire", "TLS_AES_128_GCM_SHA256"))
	openssl := &v1alpha1.TLSSettings{Engine: v1alpha1.TLSEngineOpenSSL}

	t.Run("OpenSSL engine drifts", func(t *testing.T) {
		g := NewWithT(t)
		ds := startWireTest(t, "wire-openssl", "127.0.0.21", 7221, v1alpha1.EncryptionSettings{
			ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{TLS: openssl}},
			NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{TLS: openssl}},
		})
		g.Eventually(func(g Gomega) {
			got := get(g, ds)
			c := condition(got.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(v1alpha1.ReasonCipherSuiteDrift))
			g.Expect(c.Message).To(ContainSubstring("wire-openssl-0 ClientToNode (127.0.0.21:9042): cipher suites also accepts TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256"))
			g.Expect(c.Message).To(ContainSubstring("wire-openssl-0 NodeToNode (127.0.0.21:7000)"))
			g.Expect(got.Status.Encryption.Observed).To(HaveLen(2))
			rr := got.Status.Encryption.Observed[1]
			g.Expect(rr.CipherSuites).To(ConsistOf("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"))
			g.Expect(*rr.PlaintextAccepted).To(BeFalse())
			g.Expect(*rr.ClientAuthRequired).To(BeTrue())
			g.Expect(eventNotes(g, ds, v1alpha1.ReasonCipherSuiteDrift)).NotTo(BeEmpty())
		}, 60*time.Second).Should(Succeed())
		g.Expect(testutil.ToFloat64(encryptionVerified.WithLabelValues("default", ds.Name, verify.ChannelNodeToNode))).To(BeEquivalentTo(0))
	})

	t.Run("JDK engine verified", func(t *testing.T) {
		g := NewWithT(t)
		ds := startWireTest(t, "wire-jdk", "127.0.0.22", 7222, v1alpha1.EncryptionSettings{})
		g.Eventually(func(g Gomega) {
			got := get(g, ds)
			c := condition(got.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
			g.Expect(c.Message).To(Equal("2 endpoints accept exactly the effective profile"))
			for _, o := range got.Status.Encryption.Observed {
				g.Expect(o.Protocols).To(Equal([]string{"TLSv1.3"}))
				g.Expect(o.CipherSuites).To(Equal([]string{"TLS_AES_128_GCM_SHA256"}))
				g.Expect(o.Certificate).NotTo(BeNil())
				g.Expect(o.Certificate.Serial).To(MatchRegexp(`^[0-9]+$`), "the serial, which tells a renewal on the wire")
				g.Expect(o.Certificate.Trusted).To(Equal(ptr.To(true)), "chains to the trust bundle and names the pod: %s", o.Certificate.Problem)
			}
			g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		}, 60*time.Second).Should(Succeed())
		g.Expect(testutil.ToFloat64(encryptionVerified.WithLabelValues("default", ds.Name, verify.ChannelClientToNode))).To(BeEquivalentTo(1))
		// What the probe saw, as series a dashboard plots per endpoint.
		ar := []string{"default", ds.Name, verify.ChannelClientToNode, "127.0.0.22:9042"}
		g.Expect(testutil.ToFloat64(acceptedSuite.WithLabelValues(append(ar, "TLS_AES_128_GCM_SHA256")...))).To(BeEquivalentTo(1))
		g.Expect(testutil.ToFloat64(acceptedProtocol.WithLabelValues(append(ar, "TLSv1.3")...))).To(BeEquivalentTo(1))
		g.Expect(testutil.ToFloat64(plaintextAccepted.WithLabelValues(ar...))).To(BeEquivalentTo(0))
		g.Expect(testutil.ToFloat64(certificateExpiry.WithLabelValues(ar...))).To(BeNumerically(">", float64(time.Now().Unix())))
		g.Expect(testutil.ToFloat64(datastoreInfo.WithLabelValues("default", ds.Name, "Cassandra", "ds-test-wire", "Ready"))).To(BeEquivalentTo(1))
		g.Expect(testutil.ToFloat64(datastoreNodes.WithLabelValues("default", ds.Name, "ready"))).To(BeEquivalentTo(1))
	})

	// The same profile, the node serving a certificate from another CA under the pod's name:
	// the wire is right, the identity is not.
	t.Run("a stranger's certificate", func(t *testing.T) {
		g := NewWithT(t)
		ds, _, _ := startWireNode(t, "wire-stranger", "127.0.0.23", 7223, v1alpha1.EncryptionSettings{}, testpki.New(t))
		g.Eventually(func(g Gomega) {
			got := get(g, ds)
			c := condition(got.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(v1alpha1.ReasonCertificateUntrusted))
			g.Expect(c.Message).To(ContainSubstring("certificate for wire-stranger-0.wire-stranger-nodes.default.svc.cluster.local: x509: certificate signed by unknown authority"))
			g.Expect(got.Status.Encryption.Observed[0].Certificate.Trusted).To(Equal(ptr.To(false)))
		}, 60*time.Second).Should(Succeed())
	})
}
