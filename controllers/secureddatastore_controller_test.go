package controllers

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"secured.dev/operator/api/v1alpha1"
)

func tls13Profile(name string, suites ...v1alpha1.CipherSuite) *v1alpha1.EncryptionProfile {
	ch := v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired, TLS: &v1alpha1.TLSSettings{
		Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv13}, CipherSuites: suites,
	}}
	return &v1alpha1.EncryptionProfile{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.EncryptionProfileSpec{EncryptionSettings: v1alpha1.EncryptionSettings{
			ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: ch},
			NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: ch},
		}},
	}
}

func datastore(name, profile string) *v1alpha1.SecuredDatastore {
	nodes := int32(3)
	return &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:     v1alpha1.EngineCassandra,
			Cassandra:  &v1alpha1.CassandraTopology{Nodes: &nodes},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: profile},
		},
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
}

func get[T client.Object](g Gomega, obj T) T {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	return obj
}

func condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func TestDatastoreRecordsEffectiveProfileAndRank(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-tls13-aes256", "TLS_AES_256_GCM_SHA384"))
	ds := datastore("rank", "ds-test-tls13-aes256")
	create(t, ds)

	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProfileResolved).Status).To(Equal(metav1.ConditionTrue))
		enc := got.Status.Encryption
		g.Expect(enc).NotTo(BeNil())
		g.Expect(enc.Profile).To(Equal("ds-test-tls13-aes256"))
		g.Expect(enc.Assessment.Rank).To(BeEquivalentTo(128))
		g.Expect(enc.Effective.ClientToNode.CipherSuites).To(Equal([]string{"TLS_AES_256_GCM_SHA384"}))
		g.Expect(enc.Effective.ClientToNode.Engine).To(Equal(v1alpha1.TLSEngineJDK), "BoringSSL cannot pin one TLS 1.3 suite")
		g.Expect(enc.Effective.NodeToNode.ClientAuth).To(Equal(v1alpha1.ClientAuthRequired))
		g.Expect(got.Status.Nodes).To(BeEquivalentTo(3))
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseProvisioning))
		ready := condition(got.Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal("Provisioning"))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionCertificatesReady).Reason).To(Equal("Issuing"))
	}).Should(Succeed())

	// An event tells the user what was resolved.
	g.Eventually(func(g Gomega) {
		var list eventsv1.EventList
		g.Expect(env.Client.List(context.Background(), &list, client.InNamespace("default"))).To(Succeed())
		var found bool
		for _, e := range list.Items {
			found = found || (e.Regarding.Name == "rank" && e.Reason == v1alpha1.ReasonResolved && strings.Contains(e.Note, "security rank 128"))
		}
		g.Expect(found).To(BeTrue(), "a Resolved event for the datastore")
	}).Should(Succeed())
}

func TestDatastoreOverridesAndProfileChanges(t *testing.T) {
	g := NewWithT(t)
	profile := tls13Profile("ds-test-override", "TLS_AES_128_GCM_SHA256")
	create(t, profile)
	ds := datastore("override", "ds-test-override")
	ds.Spec.Encryption.ClientToNode = &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{
		TLS: &v1alpha1.TLSSettings{CipherSuites: []v1alpha1.CipherSuite{"TLS_CHACHA20_POLY1305_SHA256"}},
	}}
	create(t, ds)
	g.Eventually(func(g Gomega) {
		enc := get(g, ds).Status.Encryption
		g.Expect(enc).NotTo(BeNil())
		g.Expect(enc.Profile).To(Equal("ds-test-override+overrides"))
		g.Expect(enc.Effective.ClientToNode.CipherSuites).To(Equal([]string{"TLS_CHACHA20_POLY1305_SHA256"}))
		g.Expect(enc.Effective.NodeToNode.CipherSuites).To(Equal([]string{"TLS_AES_128_GCM_SHA256"}))
		g.Expect(enc.Assessment.Rank).To(BeEquivalentTo(64 + 60))
	}).Should(Succeed())

	// Changing the profile re-resolves the datastores that use it.
	g.Eventually(func() error {
		p := &v1alpha1.EncryptionProfile{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(profile), p); err != nil {
			return err
		}
		p.Spec.NodeToNode.Mode = v1alpha1.ChannelOptional
		return env.Client.Update(context.Background(), p)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		enc := get(g, ds).Status.Encryption
		g.Expect(enc.Effective.NodeToNode.Mode).To(Equal(v1alpha1.ChannelOptional))
		g.Expect(enc.Assessment.NodeToNodeRank).To(BeEquivalentTo(0), "Optional accepts plaintext")
	}).Should(Succeed())
}

func TestDatastoreWaitsForMissingProfile(t *testing.T) {
	g := NewWithT(t)
	ds := datastore("waits", "ds-test-created-later")
	create(t, ds)
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		c := condition(got.Status.Conditions, v1alpha1.ConditionProfileResolved)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonProfileNotFound))
		g.Expect(c.Message).To(ContainSubstring(`"ds-test-created-later" does not exist`))
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseFailed))
	}).Should(Succeed())

	create(t, tls13Profile("ds-test-created-later"))
	g.Eventually(func(g Gomega) {
		g.Expect(condition(get(g, ds).Status.Conditions, v1alpha1.ConditionProfileResolved).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
}

func TestDatastoreRefusesProfileForOtherEngine(t *testing.T) {
	g := NewWithT(t)
	hbase := &v1alpha1.EncryptionProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "ds-test-hbase-only"},
		Spec: v1alpha1.EncryptionProfileSpec{EncryptionSettings: v1alpha1.EncryptionSettings{
			HBase: &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos, HBaseRPCProtection: v1alpha1.ProtectionPrivacy},
		}},
	}
	create(t, hbase)
	ds := datastore("wrong-engine", "ds-test-hbase-only")
	create(t, ds)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionProfileResolved)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonInvalidProfile))
		g.Expect(c.Message).To(ContainSubstring("spec.encryption.hbase"))
		g.Expect(c.Message).To(ContainSubstring("apply only to engine HBase"))
	}).Should(Succeed())
}

// countingRecorder counts events instead of writing them.
type countingRecorder struct{ n atomic.Int32 }

func (r *countingRecorder) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...interface{}) {
	r.n.Add(1)
}

var _ events.EventRecorder = &countingRecorder{}

// TestSteadyStateMakesNoWrites reconciles a converged datastore (certificates issued, every
// object applied, the StatefulSet rolled out) again and counts API writes.
func TestSteadyStateMakesNoWrites(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-steady"))
	ds := datastore("steady", "ds-test-steady")
	create(t, ds)
	issueCertificate(t, ds, 1)
	rollOut(t, ds)
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Reason).To(Equal("RolledOut"))
	}).Should(Succeed())

	var writes atomic.Int32
	count := func() { writes.Add(1) }
	c := interceptor.NewClient(env.Client, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			count()
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			count()
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, o, p, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, o runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			count()
			return c.Apply(ctx, o, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			count()
			return c.Delete(ctx, o, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			count()
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			count()
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
	rec := &countingRecorder{}
	r := &SecuredDatastoreReconciler{Client: c, APIReader: c, Recorder: rec, Options: testOptions, certManager: true}
	for range 3 {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ds)}); err != nil {
			t.Fatal(err)
		}
	}
	if writes.Load() != 0 || rec.n.Load() != 0 {
		t.Errorf("steady-state reconciles made %d API writes and %d events; want 0", writes.Load(), rec.n.Load())
	}
}

func TestPlacementFollowsNodeLabels(t *testing.T) {
	g := NewWithT(t)
	create(t, tls13Profile("ds-test-placement"))
	ds := datastore("placement", "ds-test-placement")
	ds.Spec.Placement = &v1alpha1.PlacementSpec{CryptoAcceleration: v1alpha1.AccelerationRequired, Features: []v1alpha1.CPUFeature{"VAES"}}
	create(t, ds)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionPlacementSatisfied)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal("NoNodeQualifies"))
		g.Expect(c.Message).To(ContainSubstring("feature.node.kubernetes.io/cpu-cpuid.VAES=true"))
	}).Should(Succeed())

	// A node with the feature appears: the node watch re-evaluates placement.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vaes-node", Labels: map[string]string{"feature.node.kubernetes.io/cpu-cpuid.VAES": "true"}}}
	create(t, node)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionPlacementSatisfied)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("1 of 1 nodes qualify"))
	}).Should(Succeed())
}
