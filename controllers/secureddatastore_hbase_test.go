package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/jcmturner/gokrb5/v8/keytab"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/podtemplate"
	"secured.dev/operator/internal/test/samples"
)

// A Kerberos HBase datastore waits for its certificate (secure HDFS serves HTTPS only), then
// gets a KDC, principals for every pod and keytab Secrets, and its six roles; it is Ready once
// every role has rolled out.
func TestHBaseWithKerberosGetsIdentitiesAndRoles(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	p, err := samples.Profile("hbase-kerberos-privacy")
	if err != nil {
		t.Fatal(err)
	}
	p.ResourceVersion = ""
	create(t, &p)
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "events", Namespace: "default"},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine: v1alpha1.EngineHBase, HBase: &v1alpha1.HBaseTopology{RegionServers: ptr.To[int32](2)},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: p.Name},
		},
	}
	create(t, ds)

	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionCertificatesReady).Reason).To(Equal("Issuing"))
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseProvisioning))
		cert := &cmv1.Certificate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: certs.NodeCertificate(ds)}, cert)).To(Succeed())
		g.Expect(cert.Spec.DNSNames).To(ContainElement("*.events-rs.default.svc.cluster.local"))
		g.Expect(cert.Spec.Keystores.PKCS12.PasswordSecretRef.Name).To(Equal(certs.KeystorePasswordSecret(ds)))
		password := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: certs.KeystorePasswordSecret(ds)}, password)).To(Succeed())
		g.Expect(password.Data["password"]).To(HaveLen(32))
	}).Should(Succeed())
	sets := &appsv1.StatefulSetList{}
	g.Expect(env.Client.List(ctx, sets, client.InNamespace(ds.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": ds.Name})).To(Succeed())
	g.Expect(sets.Items).To(BeEmpty(), "no pod may start without its certificate")

	issueCertificate(t, ds, 1)
	n := hbase.NamesOf(ds)
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		k := condition(got.Status.Conditions, v1alpha1.ConditionKerberosReady)
		g.Expect(k.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(k.Message).To(ContainSubstring("realm EVENTS.DEFAULT"))
		g.Expect(k.Message).NotTo(ContainSubstring("pw"), "no secret material in conditions")
		for _, role := range []hbase.Role{hbase.KDC, hbase.ZooKeeper, hbase.NameNode, hbase.DataNode, hbase.Master, hbase.RegionServer} {
			sts := &appsv1.StatefulSet{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.StatefulSet(role)}, sts)).To(Succeed())
			ownedBy(g, ds, sts)
		}
	}).Should(Succeed())

	principals := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.PrincipalsSecret()}, principals)).To(Succeed())
	file := string(principals.Data[hbase.PrincipalsKey])
	// ZooKeeper, nn+HTTP, 2 DataNodes × (dn+HTTP), the Master, 2 RegionServers, the client
	g.Expect(strings.Count(file, "\n")).To(Equal(1 + 2 + 2*2 + 1 + 2 + 1))
	zkKeytab := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.KeytabSecret(hbase.ZooKeeper)}, zkKeytab)).To(Succeed())
	ownedBy(g, ds, zkKeytab)
	rsKeytab := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.KeytabSecret(hbase.RegionServer)}, rsKeytab)).To(Succeed())
	kt := keytab.New()
	g.Expect(kt.Unmarshal(rsKeytab.Data[hbase.KeytabKey])).To(Succeed())
	g.Expect(kt.Entries).To(HaveLen(2 * 2))
	g.Expect(fmt.Sprint(kt.Entries[0].Principal.Components)).To(ContainSubstring("events-rs-"))

	// The passwords survive later reconciles: mounted keytabs stay valid.
	g.Eventually(func() error {
		cur := get(g, ds)
		cur.Labels = map[string]string{"touched": "yes"}
		cur.Spec.HBase.DataNodes = ptr.To[int32](2)
		return env.Client.Update(ctx, cur)
	}).Should(Succeed())
	g.Consistently(func(g Gomega) {
		again := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.PrincipalsSecret()}, again)).To(Succeed())
		g.Expect(string(again.Data[hbase.PrincipalsKey])).To(Equal(file))
	}, "1s").Should(Succeed())

	g.Expect(get(g, ds).Status.Phase).To(Equal(v1alpha1.PhaseProvisioning))
	for _, role := range []hbase.Role{hbase.KDC, hbase.ZooKeeper, hbase.NameNode, hbase.DataNode, hbase.Master, hbase.RegionServer} {
		rollOutRole(t, ds, role)
	}
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		g.Expect(got.Status.ReadyNodes).To(BeEquivalentTo(2))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Reason).To(Equal("RolledOut"))
	}).Should(Succeed())

	// Rotation: keytabs gain version 2 while the KDC serves version 1, the roles that mount
	// keytabs restart, and only then does the KDC issue version 2.
	keys := func(g Gomega) hbase.Keys {
		sec := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.PrincipalsSecret()}, sec)).To(Succeed())
		k, err := hbase.KeysOf(sec.Data)
		g.Expect(err).NotTo(HaveOccurred())
		return k
	}
	rsBefore, zkBefore := templateHash(g, ds, hbase.RegionServer), templateHash(g, ds, hbase.ZooKeeper)
	g.Eventually(func() error {
		cur := get(g, ds)
		cur.Annotations = map[string]string{v1alpha1.RotateKeytabsAnnotation: "2026-11-22"}
		return env.Client.Update(ctx, cur)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		k := keys(g)
		g.Expect([]int{k.ServedVersion(), k.HeldVersion()}).To(Equal([]int{1, 2}))
		g.Expect(templateHash(g, ds, hbase.RegionServer)).NotTo(Equal(rsBefore))
		g.Expect(condition(get(g, ds).Status.Conditions, v1alpha1.ConditionKerberosReady).Message).To(ContainSubstring("version 2 pre-published"))
	}).Should(Succeed())
	g.Expect(templateHash(g, ds, hbase.ZooKeeper)).To(Equal(zkBefore), "ZooKeeper holds no keytab")
	g.Consistently(func(g Gomega) { g.Expect(keys(g).ServedVersion()).To(Equal(1)) }, "1s").Should(Succeed())
	for _, role := range []hbase.Role{hbase.NameNode, hbase.DataNode, hbase.Master, hbase.RegionServer} {
		rollOutRole(t, ds, role)
	}
	g.Eventually(func(g Gomega) {
		k := keys(g)
		g.Expect([]int{k.ServedVersion(), k.HeldVersion()}).To(Equal([]int{2, 2}))
		g.Expect(eventNotes(g, ds, "KeysRotated")).To(HaveLen(1))
		g.Expect(get(g, ds).Status.Phase).To(Equal(v1alpha1.PhaseReady))
	}).Should(Succeed())
	// The annotation's value is answered: later reconciles do not rotate again.
	g.Consistently(func(g Gomega) { g.Expect(keys(g).HeldVersion()).To(Equal(2)) }, "1s").Should(Succeed())
}

// rollOutRole reports a role's StatefulSet rolled out to every pod.
func rollOutRole(t *testing.T, ds *v1alpha1.SecuredDatastore, role hbase.Role) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: hbase.NamesOf(ds).StatefulSet(role)}, sts)).To(Succeed())
		rev := "rev-" + sts.Spec.Template.Annotations[podtemplate.ConfigHashAnnotation]
		n := *sts.Spec.Replicas
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: n, ReadyReplicas: n, AvailableReplicas: n,
			UpdatedReplicas: n, CurrentReplicas: n, CurrentRevision: rev, UpdateRevision: rev}
		g.Expect(env.Client.Status().Update(context.Background(), sts)).To(Succeed())
	}).Should(Succeed())
}

// A plaintext HBase datastore needs no certificate, no KDC and no Secret: five roles start at once.
func TestPlaintextHBaseHasNoKDCAndNoSecrets(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ds := plaintextHBase("plainlog")
	create(t, ds)
	n := hbase.NamesOf(ds)
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionCertificatesReady).Reason).To(Equal("NotNeeded"))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionKerberosReady).Reason).To(Equal("NotNeeded"))
		sets := &appsv1.StatefulSetList{}
		g.Expect(env.Client.List(ctx, sets, client.InNamespace(ds.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": ds.Name})).To(Succeed())
		g.Expect(sets.Items).To(HaveLen(5))
	}).Should(Succeed())
	for _, name := range []string{n.PrincipalsSecret(), certs.KeystorePasswordSecret(ds), n.KeytabSecret(hbase.RegionServer)} {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: name}, &corev1.Secret{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "Secret %s exists for a plaintext datastore", name)
	}
	rs := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.StatefulSet(hbase.RegionServer)}, rs)).To(Succeed())
	for _, v := range rs.Spec.Template.Spec.Volumes {
		g.Expect(v.Name).NotTo(BeElementOf("tls", "keytab", "trust"))
	}
}

// Enabling HBase's native TLS on a running plaintext cluster rolls three steps, one RPC TLS
// stage each (servers accept TLS; peers send it; plaintext refused), restarts the Master,
// RegionServers and ZooKeeper (whose client port follows the RPC TLS) but never HDFS, and claims
// Ready only at the target; a renewed certificate then restarts ZooKeeper alone, which reads
// its certificate only when it starts. Each step's files are a new immutable
// ConfigMap per role; the one the previous revision's pods mount stays until the role has rolled,
// so a pod recreated from that revision mid-roll still finds the files it was built for.
func TestEnablingHBaseTLSRollsOneStageAtATime(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ds := plaintextHBase("rolllog")
	create(t, ds)
	n := hbase.NamesOf(ds)
	hashes := func(g Gomega) map[hbase.Role]string {
		out := map[hbase.Role]string{}
		for _, role := range hbase.Roles {
			out[role] = templateHash(g, ds, role)
		}
		return out
	}
	var before map[hbase.Role]string
	g.Eventually(func(g Gomega) { before = hashes(g) }).Should(Succeed())
	for _, role := range hbase.Roles {
		rollOutRole(t, ds, role)
	}
	g.Eventually(func(g Gomega) { g.Expect(get(g, ds).Status.Phase).To(Equal(v1alpha1.PhaseReady)) }).Should(Succeed())
	previous := roleConfig(g, ds, hbase.RegionServer)

	g.Eventually(func() error {
		cur := get(g, ds)
		cur.Spec.Encryption.ClientToNode = &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired,
			TLS: &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv13}}}}
		cur.Spec.Encryption.NodeToNode = &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}}
		return env.Client.Update(ctx, cur)
	}).Should(Succeed())
	issueCertificate(t, ds, 1)

	for _, step := range []struct{ stage, plaintext, peers string }{
		{"TLS accepted, peers plaintext", "true", "false"},
		{"TLS accepted, peers TLS", "true", "true"},
		{"TLS required", "false", "true"},
	} {
		g.Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: n.ConfigMap()}, cm)).To(Succeed())
			applied, err := hbase.AppliedStep(cm.Annotations, cm.Name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(hbase.StageName(*applied)).To(Equal(step.stage))
			site := cm.Data["hbase-site.xml"]
			g.Expect(site).To(ContainSubstring("<name>hbase.server.netty.tls.supportplaintext</name><value>" + step.plaintext + "</value>"))
			g.Expect(site).To(ContainSubstring("<name>hbase.client.netty.tls.enabled</name><value>" + step.peers + "</value>"))
			now := hashes(g)
			for _, role := range []hbase.Role{hbase.NameNode, hbase.DataNode} {
				g.Expect(now[role]).To(Equal(before[role]), "%s restarted for HBase's RPC TLS", role)
			}
			g.Expect(now[hbase.ZooKeeper]).NotTo(Equal(before[hbase.ZooKeeper]), "ZooKeeper's client port stayed plaintext")
			g.Expect(now[hbase.RegionServer]).NotTo(Equal(before[hbase.RegionServer]))
			mounted := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: roleConfig(g, ds, hbase.RegionServer)}, mounted)).To(Succeed())
			g.Expect(mounted.Name).NotTo(Equal(previous))
			g.Expect(ptr.Deref(mounted.Immutable, false)).To(BeTrue())
			g.Expect(mounted.Data["hbase-site.xml"]).To(Equal(site))
			g.Expect(mounted.Data).NotTo(HaveKey("zoo.cfg"), "a RegionServer's configuration holds the files it reads")
			// The status is written at the end of the pass that wrote the ConfigMap.
			g.Expect(condition(get(g, ds).Status.Conditions, v1alpha1.ConditionProgressing).Message).To(ContainSubstring(step.stage))
		}).Should(Succeed())
		// While the roll runs, the operator neither moves on nor claims Ready.
		g.Consistently(func(g Gomega) {
			got := get(g, ds)
			p := condition(got.Status.Conditions, v1alpha1.ConditionProgressing)
			g.Expect(p.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(p.Message).To(ContainSubstring(step.stage))
			g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseUpdating))
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: previous}, &corev1.ConfigMap{})).To(Succeed(),
				"the configuration the RegionServers' running revision mounts is gone in the middle of their roll")
		}, 500*time.Millisecond).Should(Succeed())
		previous = roleConfig(g, ds, hbase.RegionServer)
		rollOutRole(t, ds, hbase.ZooKeeper)
		rollOutRole(t, ds, hbase.Master)
		rollOutRole(t, ds, hbase.RegionServer)
	}
	g.Eventually(func(g Gomega) {
		got := get(g, ds)
		g.Expect(got.Status.Phase).To(Equal(v1alpha1.PhaseReady))
		g.Expect(condition(got.Status.Conditions, v1alpha1.ConditionProgressing).Reason).To(Equal("RolledOut"))
		rolls := eventNotes(g, ds, "RollingRestart")
		g.Expect(rolls).To(HaveLen(3))
		g.Expect(strings.Join(rolls, "\n")).To(ContainSubstring("RPC TLS TLS accepted, peers TLS → TLS required"))
		// Rolled out: the earlier configurations are gone.
		var cms corev1.ConfigMapList
		g.Expect(env.Client.List(ctx, &cms, client.InNamespace(ds.Namespace), client.MatchingLabels(hbase.Labels(ds, hbase.RegionServer)))).To(Succeed())
		g.Expect(cms.Items).To(HaveLen(1))
		g.Expect(cms.Items[0].Name).To(Equal(roleConfig(g, ds, hbase.RegionServer)))
	}).Should(Succeed())

	rolled := hashes(g)
	markCertificateReady(t, ds, 2)
	g.Eventually(func(g Gomega) {
		now := hashes(g)
		g.Expect(now[hbase.ZooKeeper]).NotTo(Equal(rolled[hbase.ZooKeeper]), "ZooKeeper kept the previous certificate")
		for _, role := range []hbase.Role{hbase.NameNode, hbase.DataNode, hbase.Master, hbase.RegionServer} {
			g.Expect(now[role]).To(Equal(rolled[role]), "%s restarted for a renewal it reloads", role)
		}
	}).Should(Succeed())
}

// roleConfig is the ConfigMap a role's pod template mounts.
func roleConfig(g Gomega, ds *v1alpha1.SecuredDatastore, role hbase.Role) string {
	sts := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: hbase.NamesOf(ds).StatefulSet(role)}, sts)).To(Succeed())
	return podtemplate.VolumeConfigMap(sts.Spec.Template.Spec, "config")
}

// plaintextHBase is a one-RegionServer HBase datastore without TLS or Kerberos.
func plaintextHBase(name string) *v1alpha1.SecuredDatastore {
	return &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine: v1alpha1.EngineHBase, HBase: &v1alpha1.HBaseTopology{RegionServers: ptr.To[int32](1)},
			Encryption: v1alpha1.DatastoreEncryption{EncryptionSettings: v1alpha1.EncryptionSettings{
				ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}},
			}},
		},
	}
}

// templateHash is the configuration hash of a role's pod template.
func templateHash(g Gomega, ds *v1alpha1.SecuredDatastore, role hbase.Role) string {
	sts := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: hbase.NamesOf(ds).StatefulSet(role)}, sts)).To(Succeed())
	return sts.Spec.Template.Annotations[podtemplate.ConfigHashAnnotation]
}

// An HBase datastore with encrypted volumes (atRest.volume): the at-rest Secret gains the
// volume key, each DataNode's init container encrypts the block directory with it before the
// DataNode starts, and the encryption cannot be dropped from the running datastore.
func TestHBaseDataNodesEncryptTheirVolumesForGood(t *testing.T) {
	g := NewWithT(t)
	ds := plaintextHBase("sealedhdfs") // not the at-rest test's sealedlog: its keys outlive it
	ds.Spec.Encryption.AtRest = &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{}}
	create(t, ds)
	sec := keySecret(t, client.ObjectKey{Namespace: ds.Namespace, Name: "sealedhdfs-at-rest-keys"})
	g.Expect(sec.Data["volume.key"]).To(HaveLen(64))
	dataNode := func(g Gomega) corev1.PodSpec {
		sts := &appsv1.StatefulSet{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: hbase.NamesOf(ds).StatefulSet(hbase.DataNode)}, sts)).To(Succeed())
		return sts.Spec.Template.Spec
	}
	g.Eventually(func(g Gomega) {
		pod := dataNode(g)
		g.Expect(pod.InitContainers).To(HaveLen(1))
		g.Expect(pod.InitContainers[0].Image).To(Equal("secured.dev/volume-encryption:test"))
		g.Expect(pod.InitContainers[0].Args).To(ContainElement("--dir=" + hbase.DataNodeDir))
		g.Expect(podtemplate.VolumeSecret(pod, "volume-key")).To(Equal("sealedhdfs-at-rest-keys"))
	}).Should(Succeed())

	changeIsRefused(t, ds, func(d *v1alpha1.SecuredDatastore) { d.Spec.Encryption.AtRest = nil },
		v1alpha1.ReasonVolumeEncryptionChangeUnsupported, "spec.encryption.atRest.volume cannot change on a running datastore")
	g.Expect(dataNode(g).InitContainers).To(HaveLen(1), "the running DataNodes lost their volume encryption")
}
