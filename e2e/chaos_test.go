//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
)

// Faults on a live 3-node Cassandra (replication factor 3, QUORUM), each under a fixed-rate
// client that records every write and reads all of them back at ALL once the datastore has
// recovered: operations may fail while a fault lasts, but nothing acknowledged may be lost.
// make e2e runs the core (a node SIGKILLed in the middle of a TLS roll, the operator's leader
// killed in the middle of the next one); make chaos (SDO_CHAOS=all) adds the faults that take
// longer or reach outside the cluster: cert-manager down during a renewal, the leader killed
// during a renewal and during a CA rotation, a node cut off from the others for 60 s, a Kind
// worker stopped for 60 s (SDO_CHAOS=faults runs only those, on a datastore created Required).
// Once the channels are Required, the probe must never find plaintext accepted, during a fault
// or after it. The table at the end is the note's evidence.
func TestChaosCassandraLosesNoAcknowledgedWrite(t *testing.T) {
	scope := os.Getenv("SDO_CHAOS") // "": the core; "all": every fault; "faults": the rest only
	start := v1alpha1.ChannelDisabled
	if scope == "faults" {
		start = v1alpha1.ChannelRequired // no rolls to watch: the datastore starts where they end
	}
	b := newChaosBench(t, start)
	defer func() { t.Logf("chaos table:\n%s", b.table()) }()

	if scope != "faults" {
		b.core()
	}
	if scope == "" {
		t.Log("core faults only; make chaos (SDO_CHAOS=all) runs the rest")
		return
	}
	b.faults(b.fault)
}

// core: a node SIGKILLed in the middle of a roll to Optional, the operator's leader killed in
// the middle of the roll to Required.
func (b *chaosBench) core() {
	b.fault("node SIGKILLed during a TLS roll", false, func() {
		b.patchEncryption(v1alpha1.ChannelOptional)
		restarting := b.rollUnderWay()
		victim := b.otherNode(restarting)
		b.killPod(victim)
		b.t.Logf("killed %s (SIGKILL) while %s restarted for the roll", victim, restarting)
		b.waitVerified("Optional rolled out after the kill", time.Now())
	})
	b.fault("operator leader killed during a TLS roll", false, func() {
		b.patchEncryption(v1alpha1.ChannelRequired)
		b.rollUnderWay()
		b.t.Logf("killed the operator's leader %s in the middle of the roll", b.killLeader())
		b.waitVerified("Required rolled out by the new leader", time.Now())
	})
}

// faultCase runs one fault under a client that records its writes and checks them afterwards.
type faultCase func(name string, required bool, inject func())

// faults are the rest, on channels that are Required: the same on both engines, each case run
// by the engine's own client.
func (b *chaosBench) faults(run faultCase) {
	run("node cut off from the others for 60 s", true, func() {
		victim := b.otherNode(b.clientNodePod())
		b.partition(victim, 60*time.Second)
		b.waitVerified("the partition healed", time.Now())
	})
	run("Kind worker stopped for 60 s", true, func() {
		victim := b.otherNode(b.clientNodePod())
		node := b.pod(victim).Spec.NodeName
		hosted := b.podsOn(node)
		b.docker("stop", node)
		b.t.Logf("stopped Kind worker %s, hosting %s", node, strings.Join(hosted, ", "))
		time.Sleep(60 * time.Second)
		b.docker("start", node)
		b.waitVerified("the worker is back", time.Now())
	})
	run("cert-manager at zero during a renewal", true, func() {
		b.scaleCertManager(0)
		before := b.serials()
		forceIssuing(b.t, b.c, b.ds.Namespace, certs.NodeCertificate(b.ds))
		time.Sleep(60 * time.Second)
		b.requireReady("with cert-manager down")
		b.scaleCertManager(1)
		b.waitNewSerials("the renewal completes once cert-manager is back", before)
	})
	run("operator leader killed during a renewal", true, func() {
		before := b.serials()
		forceIssuing(b.t, b.c, b.ds.Namespace, certs.NodeCertificate(b.ds))
		b.t.Logf("killed the operator's leader %s as the renewal began", b.killLeader())
		b.waitNewSerials("the renewal completes under the new leader", before)
	})
	run("operator leader killed during a CA rotation", true, func() {
		oldCA := secretCertificate(b.t, b.c, b.ds.Namespace, certs.CACertificate(b.ds), "tls.crt")
		forceIssuing(b.t, b.c, b.ds.Namespace, certs.CACertificate(b.ds))
		b.t.Logf("killed the operator's leader %s as the CA rotation began", b.killLeader())
		newCA := waitNewCA(b.t, b.c, b.ds, oldCA)
		// cert-manager does not re-issue a leaf when its CA changes: the node certificate is
		// renewed as an administrator would, once the nodes trust both CAs.
		before := b.serials()
		forceIssuing(b.t, b.c, b.ds.Namespace, certs.NodeCertificate(b.ds))
		b.waitNewSerials("every node serves a certificate of the new CA", before)
		if leaf := secretCertificate(b.t, b.c, b.ds.Namespace, certs.NodeSecret(b.ds), "tls.crt"); leaf.CheckSignatureFrom(newCA) != nil {
			b.t.Errorf("after the rotation the node certificate is not signed by the new CA (serial %s)", newCA.SerialNumber)
		}
	})
}

// chaosRow is one fault's line in the table.
type chaosRow struct {
	fault                          string
	attempted, failed, acked       int64
	checked, verified, notVerified int64
	recovered                      time.Duration
	plaintext                      string
}

// chaosBench is the datastore under test, its loaded records and the table so far.
type chaosBench struct {
	t  *testing.T
	c  client.Client
	ds *v1alpha1.SecuredDatastore
	// only, when set, names the cases to run (SDO_CHAOS_ONLY): to run again the one a fix is
	// for without the hour the others take.
	only *regexp.Regexp
	// members are the pods that hold data and serve clients (Cassandra nodes, RegionServers):
	// the faults' victims.
	members   []string
	clientPod string // the running case's client pod
	env       map[string]string
	k6        *k6Client // the running case's client, on Cassandra
	rows      []chaosRow
}

func newChaosBench(t *testing.T, mode v1alpha1.ChannelMode) *chaosBench {
	c := newClient(t)
	ns := testNamespace(t, c, "chaos", "restricted")
	ds := plaintextTrio("ledger", ns.Name)
	ds.Spec.Encryption = liveEncryption(mode)
	start := time.Now()
	if err := c.Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	waitVerified(t, c, ds)
	host := cassandra.NamesOf(ds).ClientService() + "." + ns.Name + ".svc"
	b := &chaosBench{t: t, c: c, ds: ds, only: onlyCases(t), members: podNames(ds.Name, 3), env: map[string]string{
		"CQL_HOSTS": host + ":9042", "CQL_CONSISTENCY": "QUORUM", "YCSB_RECORD_COUNT": "1000",
		"CQL_TLS_PROTOCOL": "TLSv1.3", "CQL_TLS_CIPHER_SUITE": "TLS_AES_128_GCM_SHA256", "CQL_TLS_FALLBACK": "plaintext",
		"CQL_TLS_CA_FILE": "/etc/secured/ca/ca.crt", "CQL_TLS_SERVER_NAME": host + ".cluster.local",
	}}
	load := startK6(t, c, ds, "ycsb-load", with(b.env, map[string]string{"YCSB_PHASE": "load", "CQL_REPLICATION_FACTOR": "3"}))
	if s := load.wait(t, 5*time.Minute); s.Errors != 0 || s.Operations != 1000 {
		t.Fatalf("load phase: %d records, %d errors (%s)", s.Operations, s.Errors, s.FirstError)
	}
	t.Logf("3-node datastore (%s) Ready, verified and loaded in %s", mode, time.Since(start).Round(time.Second))
	return b
}

// fault runs one case: a client at a fixed rate that records its writes, the fault and the
// recovery inject waits for, a few more seconds of operations, then the client's check. With
// required, the channels are Required before the fault, and any plaintext the probe finds
// accepted from then on is reported.
func (b *chaosBench) fault(name string, required bool, inject func()) {
	t := b.t
	if !b.runs(name) {
		return
	}
	b.k6 = startK6(t, b.c, b.ds, fmt.Sprintf("chaos-%d", len(b.rows)), with(b.env, map[string]string{
		"YCSB_PHASE": "run", "YCSB_RATE": fmt.Sprint(liveRate), "YCSB_VUS": "64", "YCSB_DURATION": "60m", "CQL_RETRIES": "5",
		"YCSB_HISTORY_FILE": historyDir + "/history", "YCSB_VERIFY_WRITES": "true",
	}))
	b.k6.waitFor(t, "YCSB run against", 3*time.Minute)
	b.clientPod = b.k6.pod.Name
	time.Sleep(15 * time.Second) // operations before the fault

	watch, began, recovered := b.inject(required, inject)
	time.Sleep(10 * time.Second) // operations after the recovery

	b.logEvents(began)
	s := b.k6.stop(t)
	if s.Errors > 0 {
		t.Logf("%s: the client said:\n%s", name, b.k6.complaints())
	}
	row := chaosRow{fault: name, attempted: s.Operations + s.Errors, failed: s.Errors, recovered: recovered, plaintext: "not required yet"}
	if required {
		row.plaintext = watch.verdict()
		if watch.first != "" {
			t.Errorf("%s: plaintext accepted on a Required channel: %s", name, watch.first)
		}
	}
	if w := s.Writes; w == nil {
		t.Errorf("%s: the client checked no write", name)
	} else {
		row.acked, row.checked, row.verified, row.notVerified = w.Acknowledged, w.Checked, w.Verified, w.Checked-w.Verified
		t.Logf("%s: %d operations, %d failed (first: %s); %d acknowledged writes, %d key-fields read back at %s: %d verified, %d lost, %d stale, %d corrupted, %d unreadable; recovered in %s",
			name, row.attempted, row.failed, s.FirstError, w.Acknowledged, w.Checked, w.Consistency, w.Verified, w.Lost, w.Stale, w.Corrupted, w.Unreadable, recovered.Round(time.Second))
		if !w.Intact() {
			t.Errorf("%s: acknowledged writes not intact (first: %s)", name, w.FirstProblem)
		}
	}
	b.rows = append(b.rows, row)
}

// runs says whether the case is to run, and announces it.
func (b *chaosBench) runs(name string) bool {
	if b.only != nil && !b.only.MatchString(name) {
		b.t.Logf("=== fault: %s: not run (SDO_CHAOS_ONLY=%s)", name, b.only)
		return false
	}
	b.t.Logf("=== fault: %s", name)
	return true
}

// onlyCases is SDO_CHAOS_ONLY as a regular expression, nil when unset.
func onlyCases(t *testing.T) *regexp.Regexp {
	v := os.Getenv("SDO_CHAOS_ONLY")
	if v == "" {
		return nil
	}
	re, err := regexp.Compile(v)
	if err != nil {
		t.Fatalf("SDO_CHAOS_ONLY=%q: %v", v, err)
	}
	return re
}

// inject runs the fault and the recovery it waits for, with the probe's observations watched
// meanwhile when the channels are Required; it returns the watch, when the fault began and how
// long until it had recovered.
func (b *chaosBench) inject(required bool, fault func()) (*plaintextWatch, time.Time, time.Duration) {
	watch := &plaintextWatch{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if required {
		wg.Add(1)
		go func() { defer wg.Done(); watch.run(b.c, b.ds, time.Now(), stop) }()
	}
	began := time.Now()
	fault()
	recovered := time.Since(began)
	close(stop)
	wg.Wait()
	return watch, began, recovered
}

// logEvents logs what the operator said about the datastore since the fault began: the
// runbook's "what you see".
func (b *chaosBench) logEvents(since time.Time) {
	var events corev1.EventList
	if err := b.c.List(context.Background(), &events, client.InNamespace(b.ds.Namespace)); err != nil {
		b.t.Logf("events: %v", err)
		return
	}
	for _, e := range events.Items {
		at := e.LastTimestamp.Time
		if at.IsZero() {
			at = e.EventTime.Time
		}
		if e.InvolvedObject.Name == b.ds.Name && !at.Before(since) {
			b.t.Logf("  event %s %s (x%d): %s", e.Type, e.Reason, max(e.Count, 1), e.Message)
		}
	}
}

func (b *chaosBench) table() string {
	var sb strings.Builder
	sb.WriteString("| fault | operations | failed | acknowledged writes | key-fields checked | lost, stale or corrupted | recovered in | plaintext on a Required channel |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range b.rows {
		fmt.Fprintf(&sb, "| %s | %d | %d | %d | %d | %d | %s | %s |\n", r.fault, r.attempted, r.failed, r.acked, r.checked, r.notVerified, r.recovered.Round(time.Second), r.plaintext)
	}
	return sb.String()
}

func (b *chaosBench) patchEncryption(mode v1alpha1.ChannelMode) {
	patch := client.MergeFrom(b.ds.DeepCopy())
	b.ds.Spec.Encryption = liveEncryption(mode)
	if err := b.c.Patch(context.Background(), b.ds, patch); err != nil {
		b.t.Fatal(err)
	}
}

var updatedNodes = regexp.MustCompile(`([0-9]+) of [0-9]+ nodes updated`)

// rollUnderWay waits until a roll has updated at least one node and another one is restarting,
// and returns the restarting pod.
func (b *chaosBench) rollUnderWay() string {
	var restarting string
	eventually(b.t, 10*time.Minute, "the roll is under way", func() error {
		if err := b.c.Get(context.Background(), client.ObjectKeyFromObject(b.ds), b.ds); err != nil {
			return err
		}
		p := meta.FindStatusCondition(b.ds.Status.Conditions, v1alpha1.ConditionProgressing)
		if p == nil {
			return fmt.Errorf("no Progressing condition")
		}
		m := updatedNodes.FindStringSubmatch(p.Message)
		if m == nil || m[1] == "0" {
			return fmt.Errorf("progress: %s", p.Message)
		}
		for _, name := range b.members {
			if pod := b.pod(name); !podReady(pod) {
				restarting = name
				return nil
			}
		}
		return fmt.Errorf("progress %q, but every node is ready", p.Message)
	})
	return restarting
}

// otherNode is a member other than the one given.
func (b *chaosBench) otherNode(not string) string {
	for _, name := range b.members {
		if name != not {
			return name
		}
	}
	b.t.Fatal("no other member")
	return ""
}

// clientNodePod is the member on the node the running client is on ("" if none), so a fault
// that takes a whole node away can spare the client.
func (b *chaosBench) clientNodePod() string {
	node := b.pod(b.clientPod).Spec.NodeName
	for _, name := range b.members {
		if b.pod(name).Spec.NodeName == node {
			return name
		}
	}
	return ""
}

// podsOn names the test namespace's pods on a node: what a stopped worker takes away.
func (b *chaosBench) podsOn(node string) []string {
	var pods corev1.PodList
	if err := b.c.List(context.Background(), &pods, client.InNamespace(b.ds.Namespace)); err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.Spec.NodeName == node {
			out = append(out, p.Name)
		}
	}
	return out
}

// podNames are a StatefulSet's first n pods.
func podNames(sts string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", sts, i)
	}
	return out
}

func (b *chaosBench) pod(name string) *corev1.Pod {
	p := &corev1.Pod{}
	if err := b.c.Get(context.Background(), client.ObjectKey{Namespace: b.ds.Namespace, Name: name}, p); err != nil {
		b.t.Fatal(err)
	}
	return p
}

// killPod deletes a pod without a grace period: the kubelet SIGKILLs its containers.
func (b *chaosBench) killPod(name string) {
	if err := b.c.Delete(context.Background(), b.pod(name), client.GracePeriodSeconds(0)); err != nil {
		b.t.Fatal(err)
	}
}

// killLeader SIGKILLs the operator replica that holds the leader lease and returns its name.
func (b *chaosBench) killLeader() string {
	lease := &coordinationv1.Lease{}
	if err := b.c.Get(context.Background(), client.ObjectKey{Namespace: "secured-system", Name: "secured-datastore-operator.datastore.secured.dev"}, lease); err != nil {
		b.t.Fatal(err)
	}
	holder, _, _ := strings.Cut(ptr.Deref(lease.Spec.HolderIdentity, ""), "_")
	p := &corev1.Pod{}
	if err := b.c.Get(context.Background(), client.ObjectKey{Namespace: "secured-system", Name: holder}, p); err != nil {
		b.t.Fatalf("the lease's holder %q: %v", holder, err)
	}
	if err := b.c.Delete(context.Background(), p, client.GracePeriodSeconds(0)); err != nil {
		b.t.Fatal(err)
	}
	return holder
}

func (b *chaosBench) scaleCertManager(replicas int32) {
	scaleDeployment(b.t, b.c, client.ObjectKey{Namespace: "cert-manager", Name: "cert-manager"}, replicas)
	b.t.Logf("cert-manager scaled to %d", replicas)
}

// requireReady fails when the datastore is not Ready with its wire verified right now.
func (b *chaosBench) requireReady(when string) {
	if err := b.c.Get(context.Background(), client.ObjectKeyFromObject(b.ds), b.ds); err != nil {
		b.t.Fatal(err)
	}
	v := meta.FindStatusCondition(b.ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
	if b.ds.Status.Phase != v1alpha1.PhaseReady || v == nil || v.Status != metav1.ConditionTrue {
		b.t.Errorf("%s: phase %s, EncryptionVerified %+v; want Ready and verified on the certificates it has", when, b.ds.Status.Phase, v)
	}
}

func (b *chaosBench) serials() map[string]string {
	if err := b.c.Get(context.Background(), client.ObjectKeyFromObject(b.ds), b.ds); err != nil {
		b.t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range b.ds.Status.Encryption.Observed {
		if o.Certificate != nil {
			out[o.Endpoint] = o.Certificate.Serial
		}
	}
	return out
}

// waitNewSerials waits until every endpoint serves the node certificate in the Secret, a new one.
func (b *chaosBench) waitNewSerials(what string, before map[string]string) {
	var issued string
	waitWire(b.t, b.c, b.ds, time.Now(), what, func(o v1alpha1.ObservedChannel) error {
		if issued == "" || issued == before[o.Endpoint] {
			issued = secretCertificate(b.t, b.c, b.ds.Namespace, certs.NodeSecret(b.ds), "tls.crt").SerialNumber.String()
		}
		if o.Certificate == nil || o.Certificate.Serial != issued || issued == before[o.Endpoint] {
			return fmt.Errorf("%s serves serial %v, the Secret holds %s (before: %s)", o.Endpoint, o.Certificate, issued, before[o.Endpoint])
		}
		return nil
	})
}

func (b *chaosBench) waitVerified(what string, since time.Time) {
	waitWire(b.t, b.c, b.ds, since, what, func(v1alpha1.ObservedChannel) error { return nil })
}

// partition drops every packet the node forwards to or from the pod for d, in the Kind node's
// network namespace (where its pods' routes are), then removes the rule.
func (b *chaosBench) partition(podName string, d time.Duration) {
	p := b.pod(podName)
	ip := net.ParseIP(p.Status.PodIP)
	if ip == nil || ip.To4() == nil {
		b.t.Fatalf("pod %s has no IPv4 address (%q)", podName, p.Status.PodIP)
	}
	rules := fmt.Sprintf("table inet sdo-chaos {\n chain forward {\n  type filter hook forward priority -10; policy accept;\n  ip saddr %s drop\n  ip daddr %s drop\n }\n}\n", ip, ip)
	cmd := exec.Command("docker", "exec", "-i", nodeName(b.t, p.Spec.NodeName), "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.t.Fatalf("cutting off %s: %v: %s", podName, err, out)
	}
	b.t.Logf("cut %s (%s) off on %s for %s", podName, ip, p.Spec.NodeName, d)
	time.Sleep(d)
	b.docker("exec", p.Spec.NodeName, "nft", "delete", "table", "inet", "sdo-chaos")
}

// docker runs a docker command on a Kind worker's container: stop, start or exec.
func (b *chaosBench) docker(verb, node string, rest ...string) {
	args := append([]string{verb, nodeName(b.t, node)}, rest...)
	if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
		b.t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

var kindNode = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// nodeName checks that a Kubernetes node name is a Kind node's container name before it
// reaches docker's command line.
func nodeName(t *testing.T, name string) string {
	if !kindNode.MatchString(name) || !strings.Contains(name, "worker") {
		t.Fatalf("node %q is not a Kind worker", name)
	}
	return name
}

// plaintextWatch polls the datastore's observations and keeps the first that shows plaintext
// accepted on a channel probed since the fault began.
type plaintextWatch struct {
	mu     sync.Mutex
	first  string
	probes int
}

func (w *plaintextWatch) run(c client.Client, ds *v1alpha1.SecuredDatastore, since time.Time, stop <-chan struct{}) {
	seen := map[string]time.Time{}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		cur := &v1alpha1.SecuredDatastore{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ds), cur); err != nil || cur.Status.Encryption == nil {
			continue
		}
		w.mu.Lock()
		for _, o := range cur.Status.Encryption.Observed {
			at := o.LastProbeTime.Time
			key := o.Channel + " " + o.Endpoint
			if at.Before(since) || !at.After(seen[key]) {
				continue
			}
			seen[key] = at
			w.probes++
			if ptr.Deref(o.PlaintextAccepted, false) && w.first == "" {
				w.first = fmt.Sprintf("%s %s at %s", o.Channel, o.Endpoint, at.Format(time.TimeOnly))
			}
		}
		w.mu.Unlock()
	}
}

func (w *plaintextWatch) verdict() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first != "" {
		return "ACCEPTED: " + w.first
	}
	return "never (" + strconv.Itoa(w.probes) + " probes)"
}
