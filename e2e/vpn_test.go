//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/render/vpn"
)

// vpnDatastore creates a Cassandra datastore with a shipped VPN profile in a namespace that
// admits the tunnel sidecar, and waits until it is Ready and its wire verified (tunnelled
// ports closed on the pod addresses).
func vpnDatastore(t *testing.T, c client.Client, profile string, nodes int32) *v1alpha1.SecuredDatastore {
	t.Helper()
	ctx := context.Background()
	ns := testNamespace(t, c, profile, "privileged")
	applyProfile(t, c, profile)
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:       v1alpha1.EngineCassandra,
			Cassandra:    smallCassandra(nodes),
			Encryption:   v1alpha1.DatastoreEncryption{ProfileRef: profile},
			Verification: &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: 30 * time.Second}},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	t.Logf("%d-node %s datastore Ready in %s", nodes, profile, time.Since(start).Round(time.Second))
	waitVerified(t, c, ds)
	eachMemberHoldsOnlyItsOwnKey(t, c, ds)
	return ds
}

// eachMemberHoldsOnlyItsOwnKey: no pod mounts the tunnel's keys Secret, the public one holds
// no private key, and every node's sidecar fetched its own key from the operator's key server.
func eachMemberHoldsOnlyItsOwnKey(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore) {
	t.Helper()
	ctx := context.Background()
	public, keys := &corev1.Secret{}, &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: vpn.SecretName(ds.Name)}, public); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: vpn.KeysSecretName(ds.Name)}, keys); err != nil {
		t.Fatal(err)
	}
	for file, b := range public.Data {
		for member, key := range keys.Data {
			if strings.Contains(string(b), strings.TrimSpace(string(key))) {
				t.Errorf("the public tunnel Secret's %s holds %s", file, member)
			}
		}
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ds.Namespace)); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		for _, v := range p.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == keys.Name {
				t.Errorf("pod %s mounts the tunnel keys", p.Name)
			}
		}
		if strings.HasPrefix(p.Name, ds.Name+"-") && p.Status.Phase == corev1.PodRunning {
			if log := podLog(t, p, "vpn"); !strings.Contains(log, "fetched this member's key from the key server") {
				t.Errorf("the sidecar of %s did not fetch its key:\n%s", p.Name, log)
			}
		}
	}
}

// WireGuard between the nodes (the shipped profile, scope NodeToNode): the ring forms over
// the tunnel on Kind's nodes, whose kernels decide between the module and wireguard-go.
func TestWireGuardNodeToNodeDatastoreBecomesReady(t *testing.T) {
	vpnDatastore(t, newClient(t), "wireguard", 3)
}

// OpenVPN for all traffic (the shipped profile, scope All): the benchmark's client pods join
// the tunnel as client slots and measure the datastore through it.
func TestOpenVPNDatastoreIsBenchmarkedThroughTheTunnel(t *testing.T) {
	c := newClient(t)
	ds := vpnDatastore(t, c, "openvpn", 2)
	benchmarkDatastore(t, c, ds, "plaintext", "none")
	// The pod addresses refuse CQL (EncryptionVerified checked it): the clients used the tunnel.
	benchmarkedThroughTheTunnel(t, c, ds, "100.80.0.1:9042")
}

// benchmarkedThroughTheTunnel: the benchmark benchmarkDatastore ran targeted the datastore's
// OpenVPN tunnel, at target (a tunnel address).
func benchmarkedThroughTheTunnel(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, target string) {
	t.Helper()
	b := &v1alpha1.DatastoreBenchmark{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ds.Namespace, Name: ds.Name + "-a"}, b); err != nil {
		t.Fatal(err)
	}
	ready := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || !strings.Contains(ready.Message, target) || !strings.Contains(ready.Message, "OpenVPN tunnel") {
		t.Errorf("the benchmark did not target the tunnel at %s: %+v", target, ready)
	}
}

// HBase in the shipped OpenVPN profile's tunnel (seed 001's VPN strategy): every role's pod
// joins it, each role binds and registers its tunnel address, the wire probe finds the pod
// addresses closed, and the benchmark's client pod joins the tunnel and measures HBase through
// it.
func TestHBaseOpenVPNDatastoreIsBenchmarkedThroughTheTunnel(t *testing.T) {
	c := newClient(t)
	ns := testNamespace(t, c, "hbase-openvpn", "privileged")
	applyProfile(t, c, "openvpn")
	ds := createProbedHBase(t, c, "journal", ns.Name, v1alpha1.DatastoreEncryption{ProfileRef: "openvpn"}, "in an OpenVPN tunnel")
	hbaseBenchmarkedThroughTheTunnel(t, c, ds)
}

// createProbedHBase creates smallHBase(name, namespace, enc) probed every 30 s (the shortest
// interval the API takes) and waits until it is Ready and verified.
func createProbedHBase(t *testing.T, c client.Client, name, namespace string, enc v1alpha1.DatastoreEncryption, what string) *v1alpha1.SecuredDatastore {
	t.Helper()
	ds := smallHBase(name, namespace, enc)
	ds.Spec.Verification = &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: 30 * time.Second}}
	t.Logf("HBase %s Ready in %s", what, createHBase(t, c, ds).Round(time.Second))
	waitVerified(t, c, ds)
	return ds
}

// hbaseBenchmarkedThroughTheTunnel: every member of the HBase's tunnel holds its own key only,
// and a benchmark's client pod joins the tunnel and measures HBase through it.
func hbaseBenchmarkedThroughTheTunnel(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore) {
	t.Helper()
	eachMemberHoldsOnlyItsOwnKey(t, c, ds)
	benchmarkDatastore(t, c, ds, "", "")
	// ZooKeeper, the NameNode, the DataNode, the Master: the RegionServer is the fifth member.
	benchmarkedThroughTheTunnel(t, c, ds, "100.80.0.5:16020")
}

// A tunnel switched on under a running HBase: every server's name is its tunnel address, so
// the change renames every server in one step (every role restarts with its new name and its
// sidecar). The datastore is Ready again at the new step, the wire probe finds the pods' own
// addresses closed, and a benchmark's client pod measures it through the tunnel.
func TestHBaseTunnelSwitchedOnLive(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "hbase-vpn-live", "privileged")
	ds := createProbedHBase(t, c, "ledger", ns.Name, liveEncryption(v1alpha1.ChannelDisabled), "in plaintext")

	patch := client.MergeFrom(ds.DeepCopy())
	ds.Spec.Encryption.VPN = &v1alpha1.VPNSettings{Type: v1alpha1.VPNOpenVPN}
	if err := c.Patch(ctx, ds, patch); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	eventually(t, 15*time.Minute, "the tunnel is rolled out and verified", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: hbase.NamesOf(ds).ConfigMap()}, cm); err != nil {
			return err
		}
		step, err := hbase.AppliedStep(cm.Annotations, cm.Name)
		if err != nil || step == nil || step.VPN == nil {
			return fmt.Errorf("the applied step has no tunnel yet (%v)", err)
		}
		v := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
		if ds.Status.ObservedGeneration < ds.Generation || ds.Status.Phase != v1alpha1.PhaseReady || v == nil || v.Status != metav1.ConditionTrue || v.ObservedGeneration < ds.Generation {
			return fmt.Errorf("phase %s, EncryptionVerified %+v", ds.Status.Phase, v)
		}
		t.Logf("EncryptionVerified: %s", v.Message)
		return nil
	})
	t.Logf("OpenVPN tunnel rolled out, Ready and verified %s after the change", time.Since(changed).Round(time.Second))
	hbaseBenchmarkedThroughTheTunnel(t, c, ds)
}

// A live 3-node plaintext Cassandra goes into the shipped WireGuard tunnel (NodeToNode) and out
// of it again, in the operator's stages (sidecars up with the nodes on their pod addresses,
// then the nodes moved into the tunnel; back the same way), while the fixed-rate client runs
// YCSB A at QUORUM: no operation fails or starts late, and every acknowledged write reads
// back. In the tunnel the wire probe, which is outside it, finds the internode port refused on
// every pod address; out of it, plaintext there again.
func TestCassandraTunnelSwitchedOnAndOffLiveUnderLoad(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "cassandra-vpn-live", "privileged")
	applyProfile(t, c, "wireguard")
	ds := createPlaintextTrio(t, c, "ledger", ns.Name)
	run := startSteadyYCSB(t, c, ds, nil)

	internodeOnPodAddress := func(open bool) func(o v1alpha1.ObservedChannel) error {
		return func(o v1alpha1.ObservedChannel) error {
			if o.Channel != "NodeToNode" {
				return nil
			}
			refused := strings.Contains(o.Error, "connection refused") && o.PlaintextAccepted == nil && len(o.Protocols) == 0
			if open == refused || (open && !ptr.Deref(o.PlaintextAccepted, false)) {
				return fmt.Errorf("%s on the pod address: plaintext %v, TLS %v, error %q; want it %s", o.Endpoint,
					ptr.Deref(o.PlaintextAccepted, false), o.Protocols, o.Error, map[bool]string{true: "accepting plaintext", false: "refused"}[open])
			}
			return nil
		}
	}
	for _, change := range []struct {
		name       string
		encryption v1alpha1.DatastoreEncryption
		open       bool
		firstRoll  string
	}{
		{"into the WireGuard tunnel", v1alpha1.DatastoreEncryption{ProfileRef: "wireguard"}, false, "vpn none→WireGuard up, nodes on pod addresses"},
		{"out of the tunnel", liveEncryption(v1alpha1.ChannelDisabled), true, "vpn WireGuard NodeToNode→WireGuard up, nodes on pod addresses"},
	} {
		began := time.Now()
		patch := client.MergeFrom(ds.DeepCopy())
		ds.Spec.Encryption = change.encryption
		if err := c.Patch(ctx, ds, patch); err != nil {
			t.Fatal(err)
		}
		waitWire(t, c, ds, began, "internode "+change.name, internodeOnPodAddress(change.open))
		run.alive(t)
		t.Logf("%s: rolled out in stages, Ready and verified %s after the change: %s", change.name, time.Since(began).Round(time.Second),
			meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified).Message)
		if rolls := datastoreEvents(t, c, ds, "RollingRestart", began); len(rolls) != 2 || !strings.Contains(rolls[0]+rolls[1], change.firstRoll) {
			t.Errorf("%s: rolls %q; want two, one of them %q", change.name, rolls, change.firstRoll)
		}
		if !change.open {
			eachMemberHoldsOnlyItsOwnKey(t, c, ds)
		}
	}
	stopSteadyYCSB(t, run)
}

// datastoreEvents are the messages of the datastore's events of reason since a time, one per
// occurrence, logged.
func datastoreEvents(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, reason string, since time.Time) []string {
	t.Helper()
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(ds.Namespace)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events.Items {
		if e.Reason == reason && e.InvolvedObject.Name == ds.Name && !e.CreationTimestamp.Time.Before(since.Add(-time.Second)) {
			for range max(e.Count, 1) {
				out = append(out, e.Message)
			}
			t.Logf("event %s: %s", e.Reason, e.Message)
		}
	}
	return out
}
