package controllers

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/vpn"
)

func vpnDatastore(name, namespace string, typ v1alpha1.VPNType) *v1alpha1.SecuredDatastore {
	ds := datastore(name, "")
	ds.Namespace = namespace
	disabled := v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}
	ds.Spec.Encryption.EncryptionSettings = v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: disabled},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: disabled},
		VPN:          &v1alpha1.VPNSettings{Type: typ},
	}
	return ds
}

// A WireGuard datastore gets its tunnel Secrets before its pods: a key per node in the keys
// Secret and a configuration per node in the public one, kept across reconciles; a new node
// gets a key of its own and the others keep theirs. The StatefulSet runs the sidecar, which
// mounts the public Secret and a token for the key server, never the keys.
func TestWireGuardDatastoreKeepsTunnelKeys(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ds := vpnDatastore("tunnelled", "default", v1alpha1.VPNWireGuard)
	create(t, ds)
	public := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: vpn.SecretName(ds.Name)}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: vpn.KeysSecretName(ds.Name)}}
	g.Eventually(func(g Gomega) {
		ownedBy(g, ds, public)
		ownedBy(g, ds, sec)
		g.Expect(public.Data).To(HaveKey("tunnelled-2.conf"))
		g.Expect(string(public.Data["addresses"])).To(Equal("tunnelled-0 100.80.0.1\ntunnelled-1 100.80.0.2\ntunnelled-2 100.80.0.3\n"))
		g.Expect(public.Data["key-server.crt"]).To(Equal(testOptions.TunnelKeys.Cert))
		sts := get(g, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: ds.Name}})
		g.Expect(sts.Spec.Template.Spec.InitContainers).To(HaveLen(1))
		sidecar := sts.Spec.Template.Spec.InitContainers[0]
		g.Expect(sidecar.Image).To(Equal("secured.dev/vpn:test"))
		g.Expect(sidecar.Env).To(ContainElement(corev1.EnvVar{Name: "VPN_KEY_URL", Value: testOptions.TunnelKeys.URL}))
		for _, v := range sts.Spec.Template.Spec.Volumes {
			g.Expect(v.Secret == nil || v.Secret.SecretName != sec.Name).To(BeTrue(), "a pod mounts the tunnel keys")
			if v.Projected != nil {
				g.Expect(v.Projected.Sources[0].ServiceAccountToken.Audience).To(Equal(vpn.KeyServerAudience))
			}
		}
	}).Should(Succeed())
	g.Expect(sec.Data).To(HaveLen(3), "the keys Secret holds the nodes' keys and nothing else")
	for name, b := range public.Data {
		g.Expect(string(b)).NotTo(ContainSubstring(string(sec.Data["tunnelled-0.key"])), "the public Secret's %s holds a private key", name)
	}
	key0, version := string(sec.Data["tunnelled-0.key"]), sec.ResourceVersion

	// Another reconcile (a label change triggers none; a status update of the StatefulSet does).
	rollOut(t, ds)
	g.Consistently(func(g Gomega) {
		g.Expect(get(g, sec).ResourceVersion).To(Equal(version), "the tunnel Secret was rewritten with nothing new")
	}, "2s").Should(Succeed())

	g.Eventually(func(g Gomega) {
		get(g, ds).Spec.Cassandra.Nodes = ptr.To[int32](4)
		g.Expect(env.Client.Update(ctx, ds)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, sec).Data).To(HaveKey("tunnelled-3.key"))
	}).Should(Succeed())
	g.Expect(string(sec.Data["tunnelled-0.key"])).To(Equal(key0), "an existing node's key changed when a node was added")
	g.Eventually(func(g Gomega) {
		g.Expect(string(get(g, public).Data["tunnelled-0.conf"])).To(ContainSubstring("AllowedIPs = 100.80.0.4/32"), "node 0 does not peer with the new node")
	}).Should(Succeed())
}

// When clients join the tunnel, the client slots get keys and configurations like the nodes,
// in the same two Secrets.
func TestTunnelClientsGetSlots(t *testing.T) {
	g := NewWithT(t)
	ds := vpnDatastore("joined", "default", v1alpha1.VPNWireGuard)
	ds.Spec.Encryption.VPN.Scope = v1alpha1.VPNScopeAll
	create(t, ds)
	public := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: vpn.SecretName(ds.Name)}}
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: vpn.KeysSecretName(ds.Name)}}
	g.Eventually(func(g Gomega) {
		ownedBy(g, ds, public)
		ownedBy(g, ds, keys)
	}).Should(Succeed())
	g.Expect(keys.Data).To(And(HaveKey("joined-0.key"), HaveKey("client-3.key")))
	g.Expect(public.Data).To(And(HaveKey("client-3.conf"), HaveKey("joined-0.conf"), HaveKey("addresses"), Not(HaveKey("client-0.key"))))
}

// An operator without its key server cannot give sidecars their keys: a VPN datastore says
// so, and gets no StatefulSet whose pods would wait for keys that never come.
func TestVPNNeedsTheKeyServer(t *testing.T) {
	g := NewWithT(t)
	saved := testOptions.TunnelKeys
	testOptions.TunnelKeys = nil
	restartOperator(t)
	t.Cleanup(func() {
		testOptions.TunnelKeys = saved
		restartOperator(t)
	})
	ds := vpnDatastore("keyless", "default", v1alpha1.VPNWireGuard)
	create(t, ds)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonNoTunnelKeyServer))
		g.Expect(c.Message).To(ContainSubstring("--tunnel-keys-cert-dir"))
	}).Should(Succeed())
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: ds.Name}, &appsv1.StatefulSet{})
	g.Expect(err).To(HaveOccurred(), "a StatefulSet was created without a key server")
}

// In a namespace whose Pod Security level forbids NET_ADMIN, the datastore says so and why,
// and creates no StatefulSet whose pods admission would refuse one by one.
func TestVPNRefusedByPodSecurity(t *testing.T) {
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "baseline-only", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	create(t, ns)
	ds := vpnDatastore("refused", ns.Name, v1alpha1.VPNOpenVPN)
	create(t, ds)
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonPodSecurityForbidsVPN))
		g.Expect(c.Message).To(ContainSubstring("pod-security.kubernetes.io/enforce=privileged"))
		g.Expect(eventNotes(g, ds, v1alpha1.ReasonPodSecurityForbidsVPN)).NotTo(BeEmpty())
	}).Should(Succeed())
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns.Name, Name: ds.Name}, &appsv1.StatefulSet{})
	g.Expect(err).To(HaveOccurred(), "a StatefulSet was created in a namespace that refuses its pods")
}

// changeIsRefused updates the running datastore ds with change and waits until its Ready
// condition refuses it: reason, and a message that holds message.
func changeIsRefused(t *testing.T, ds *v1alpha1.SecuredDatastore, change func(*v1alpha1.SecuredDatastore), reason, message string) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		change(get(g, ds))
		g.Expect(env.Client.Update(context.Background(), ds)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := condition(get(g, ds).Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c.Reason).To(Equal(reason))
		g.Expect(c.Message).To(ContainSubstring(message))
	}).Should(Succeed())
}

// Changing a running Cassandra's tunnel moves every node to another address, so it goes in
// stages that keep any two nodes in reach of each other: the nodes leave the WireGuard tunnel
// with its sidecars still up, the sidecars become OpenVPN ones with the nodes on their pod
// addresses, and then the nodes move into the OpenVPN tunnel, one roll each.
func TestVPNChangeOnRunningCassandraRollsInStages(t *testing.T) {
	g := NewWithT(t)
	ds := vpnDatastore("moving", "default", v1alpha1.VPNWireGuard)
	ds.Spec.Cassandra.Authentication = v1alpha1.CassandraAuthenticationNone // no node answers: this test is about the rolls
	create(t, ds)
	g.Expect(rollOut(t, ds).String()).To(Equal("clientToNode Disabled, nodeToNode plaintext, vpn WireGuard NodeToNode"))
	for i := range 3 {
		runningPod(t, ds, i, fmt.Sprintf("127.0.0.%d", 41+i))
	}
	g.Eventually(func(g Gomega) { g.Expect(get(g, ds).Status.Phase).To(Equal(v1alpha1.PhaseReady)) }).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cur := get(g, ds)
		cur.Spec.Encryption.VPN = &v1alpha1.VPNSettings{Type: v1alpha1.VPNOpenVPN}
		g.Expect(env.Client.Update(context.Background(), cur)).To(Succeed())
	}).Should(Succeed())

	stages := []struct {
		step, sidecar string
		inTunnel      bool
	}{
		{"clientToNode Disabled, nodeToNode plaintext, vpn WireGuard up, nodes on pod addresses", "WireGuard", false},
		{"clientToNode Disabled, nodeToNode plaintext, vpn OpenVPN up, nodes on pod addresses", "OpenVPN", false},
		{"clientToNode Disabled, nodeToNode plaintext, vpn OpenVPN NodeToNode", "OpenVPN", true},
	}
	for _, stage := range stages {
		g.Eventually(func(g Gomega) {
			sts := statefulSet(g, ds)
			applied, err := cassandra.AppliedStep(sts)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(applied.String()).To(Equal(stage.step))
			pod := sts.Spec.Template.Spec
			g.Expect(pod.InitContainers).To(ContainElement(And(HaveField("Name", "vpn"),
				HaveField("Env", ContainElement(corev1.EnvVar{Name: "VPN_TYPE", Value: stage.sidecar})))), "every stage runs the sidecar")
			cassandraEnv := pod.Containers[0].Env
			cm := runningConfig(g, ds)
			if stage.inTunnel {
				g.Expect(cassandraEnv).To(ContainElement(HaveField("Name", "VPN_ADDRESSES")))
				g.Expect(cm.Data["cassandra.yaml"]).To(ContainSubstring("seeds: 100.80.0.1:7000,100.80.0.2:7000"))
			} else {
				g.Expect(cassandraEnv).NotTo(ContainElement(HaveField("Name", "VPN_ADDRESSES")), "a standing-by node binds its tunnel address")
				g.Expect(cm.Data).NotTo(HaveKey(cassandra.VPNAddressesFile))
				g.Expect(cm.Data["cassandra.yaml"]).To(ContainSubstring("seeds: moving-0.moving-nodes.default.svc.cluster.local:7000"))
			}
		}).Should(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(condition(get(g, ds).Status.Conditions, v1alpha1.ConditionProgressing).Message).To(ContainSubstring(stage.step))
		}).Should(Succeed())
		rollOut(t, ds)
	}
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Reason).To(Equal("RolledOut"))
		g.Expect(eventNotes(g, ds, "RollingRestart")).To(ConsistOf(
			ContainSubstring("vpn WireGuard NodeToNode→WireGuard up, nodes on pod addresses"),
			ContainSubstring("vpn WireGuard up, nodes on pod addresses→OpenVPN up, nodes on pod addresses"),
			ContainSubstring("vpn OpenVPN up, nodes on pod addresses→OpenVPN NodeToNode")))
	}).Should(Succeed())
}

// An HBase datastore in a WireGuard tunnel (scope All, HBase's only one): every pod of every
// role is a member with a key, every role's StatefulSet runs the sidecar, and the files name the
// servers by their tunnel addresses. Taking the tunnel away from the running datastore renames
// every server back in one step: every role rolls without the sidecar, and the event says so.
func TestHBaseDatastoreInATunnel(t *testing.T) {
	g := NewWithT(t)
	ds := plaintextHBase("hbtunnel")
	ds.Spec.Encryption.NodeToNode = &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}}
	ds.Spec.Encryption.VPN = &v1alpha1.VPNSettings{Type: v1alpha1.VPNWireGuard}
	create(t, ds)
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: vpn.KeysSecretName(ds.Name)}}
	public := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: vpn.SecretName(ds.Name)}}
	n := hbase.NamesOf(ds)
	g.Eventually(func(g Gomega) {
		ownedBy(g, ds, keys)
		ownedBy(g, ds, public)
		for _, r := range hbase.Roles {
			g.Expect(keys.Data).To(HaveKey(n.StatefulSet(r)+"-0.key"), "role %s has no member in the tunnel", r)
			sts := get(g, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: n.StatefulSet(r)}})
			g.Expect(sts.Spec.Template.Spec.InitContainers).To(ContainElement(HaveField("Name", "vpn")), "role %s runs no tunnel sidecar", r)
		}
		g.Expect(keys.Data).To(HaveKey("client-0.key"), "clients have no slot in the tunnel")
	}).Should(Succeed())
	g.Expect(string(public.Data["addresses"])).To(HavePrefix("hbtunnel-zk-0 100.80.0.1\nhbtunnel-nn-0 100.80.0.2\n"))
	cm := get(g, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: n.ConfigMap()}})
	g.Expect(cm.Data["hbase-site.xml"]).To(ContainSubstring("<name>hbase.zookeeper.quorum</name><value>100.80.0.1</value>"))
	g.Expect(cm.Data["hbase-site.xml"]).To(ContainSubstring("<value>hdfs://100.80.0.2:8020/hbase</value>"))

	for _, r := range hbase.Roles {
		rollOutRole(t, ds, r)
	}
	g.Eventually(func(g Gomega) {
		get(g, ds).Spec.Encryption.VPN = nil
		g.Expect(env.Client.Update(context.Background(), ds)).To(Succeed())
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		for _, r := range hbase.Roles {
			sts := get(g, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: n.StatefulSet(r)}})
			g.Expect(sts.Spec.Template.Spec.InitContainers).NotTo(ContainElement(HaveField("Name", "vpn")), "role %s keeps its sidecar", r)
		}
		cm := get(g, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: n.ConfigMap()}})
		g.Expect(cm.Data["hbase-site.xml"]).To(ContainSubstring("<name>hbase.zookeeper.quorum</name><value>" + n.PodHost(hbase.ZooKeeper, 0, "cluster.local") + "</value>"))
	}).Should(Succeed())
	g.Expect(recordedEvents(g, ds, "RollingRestart")).To(ContainElement(ContainSubstring("tunnel WireGuard → none, every server renamed")))
}
