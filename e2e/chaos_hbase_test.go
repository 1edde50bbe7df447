//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/benchmark"
	"secured.dev/operator/internal/render/hbase"
)

// Faults on a live Kerberos HBase with native TLS 1.3 Required on HBase RPC (SASL on Hadoop RPC,
// encrypted block transfer; 3 RegionServers, 3 DataNodes, 2 Masters), each under a
// DatastoreBenchmark at a fixed rate whose YCSB driver records every write and reads all of them
// back when its run ends. make e2e runs a RegionServer SIGKILLed while writes are in flight (its
// WAL replayed by the Master). make chaos (SDO_CHAOS=all) starts with SASL privacy, no TLS, and
// adds the live change's faults (a RegionServer of the previous revision SIGKILLed in the
// middle of the staged roll to TLS Optional, the operator's leader killed in the middle of the
// roll to Required), the active Master SIGKILLed (the backup takes over) and the faults both
// engines share: a RegionServer cut off for 60 s, a Kind worker stopped for 60 s, cert-manager
// down during a renewal, the leader killed during a renewal and during a CA rotation
// (SDO_CHAOS=faults runs all but the live change's, on a datastore created Required). Once TLS
// is Required the probe must never find plaintext accepted.
func TestChaosHBaseLosesNoAcknowledgedWrite(t *testing.T) {
	scope := os.Getenv("SDO_CHAOS")
	rolls := scope == "all"
	c := newClient(t)
	ns := testNamespace(t, c, "chaos-hbase", "restricted")
	profile := "hbase-native-tls"
	if rolls {
		// Without TLS at first (the paper's native security, SASL privacy): the first faults
		// land in the staged roll to TLS, which the later faults run under.
		profile = "hbase-kerberos-privacy"
	}
	applyProfile(t, c, profile)
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "wal", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:     v1alpha1.EngineHBase,
			HBase:      &v1alpha1.HBaseTopology{RegionServers: ptr.To[int32](3), DataNodes: ptr.To[int32](3), Masters: ptr.To[int32](2)},
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: profile},
			// Probed every 30 s, as the Cassandra chaos datastore is: a recovery is timed to
			// the probe that sees it, and the plaintext watch needs probes during the fault.
			Verification: &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: 30 * time.Second}},
		},
	}
	ready := createHBase(t, c, ds)
	waitVerified(t, c, ds)
	t.Logf("Kerberos HBase (3 RegionServers, 3 DataNodes, 2 Masters) Ready in %s and verified", ready.Round(time.Second))
	b := &chaosBench{t: t, c: c, ds: ds, only: onlyCases(t), members: podNames(hbase.NamesOf(ds).StatefulSet(hbase.RegionServer), 3)}
	defer func() { t.Logf("chaos table:\n%s", b.table()) }()

	if rolls {
		// The plaintext client the run starts with keeps working: TLS Optional still accepts it.
		b.hbaseFault("RegionServer of the previous revision SIGKILLed during the roll to TLS Optional", 6*time.Minute, false, func() {
			b.patchHBaseTLS(v1alpha1.ChannelOptional)
			victim := b.previousRevisionRegionServer()
			b.killPod(victim)
			t.Logf("killed %s (SIGKILL), a RegionServer the roll had not reached yet", victim)
			b.waitVerified("Optional rolled out after the kill", time.Now())
		})
		b.ensureHBaseTLS(v1alpha1.ChannelOptional) // where SDO_CHAOS_ONLY left the case out
		// Started while TLS is Optional, the client speaks TLS and follows the roll.
		b.hbaseFault("operator leader killed during the roll to TLS Required", 6*time.Minute, false, func() {
			b.patchHBaseTLS(v1alpha1.ChannelRequired)
			b.previousRevisionRegionServer()
			t.Logf("killed the operator's leader %s while the RegionServers rolled", b.killLeader())
			b.waitVerified("Required rolled out by the new leader", time.Now())
		})
		b.ensureHBaseTLS(v1alpha1.ChannelRequired)
	}
	b.hbaseFault("RegionServer SIGKILLed with writes in flight", 4*time.Minute, true, func() {
		victim := b.members[1]
		b.killPod(victim)
		t.Logf("killed %s (SIGKILL)", victim)
		b.waitVerified("the RegionServer is back and verified", time.Now())
		// Killed the way a crash kills: the active Master recovers the server's WAL.
		active, _ := b.masters()
		eventually(t, 3*time.Minute, "the Master recovers "+victim, func() error {
			for _, line := range strings.Split(podLog(t, b.pod(active), string(hbase.Master)), "\n") {
				if strings.Contains(line, "ServerCrashProcedure") && strings.Contains(line, victim) {
					t.Logf("%s: %s", active, line[strings.Index(line, "ServerCrashProcedure"):])
					return nil
				}
			}
			return fmt.Errorf("no ServerCrashProcedure for %s in %s's log", victim, active)
		})
	})
	if scope == "" {
		t.Log("the RegionServer kill only; make chaos (SDO_CHAOS=all) adds the rest")
		return
	}
	b.hbaseFault("active HBase Master SIGKILLed", 4*time.Minute, true, func() {
		active, backup := b.masters()
		killed := time.Now()
		b.killPod(active)
		t.Logf("killed the active Master %s (SIGKILL); %s waits as the backup", active, backup)
		eventually(t, 5*time.Minute, backup+" becomes the active Master", func() error {
			if log := podLog(t, b.pod(backup), string(hbase.Master)); !strings.Contains(log, "Master has completed initialization") {
				return fmt.Errorf("%s has not taken over yet", backup)
			}
			return nil
		})
		t.Logf("%s took over", backup)
		// Probes since the kill count: the killed Master's pod may be back before the backup
		// has taken over, and its probe then is the last until the next interval.
		b.waitVerified("both Masters verified again", killed)
	})
	// Each run lasts long enough for the slowest recovery (a worker's pods restarting) to end
	// before the run does and its check reads everything back.
	b.faults(func(name string, required bool, inject func()) { b.hbaseFault(name, 6*time.Minute, required, inject) })
}

// patchHBaseTLS sets TLS 1.3 on HBase RPC: the client channel in mode, peers Required.
func (b *chaosBench) patchHBaseTLS(mode v1alpha1.ChannelMode) {
	patch := client.MergeFrom(b.ds.DeepCopy())
	b.ds.Spec.Encryption.ClientToNode = &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: mode,
		TLS: &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv13}}}}
	b.ds.Spec.Encryption.NodeToNode = &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}}
	if err := b.c.Patch(context.Background(), b.ds, patch); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("TLS on HBase RPC: %s", mode)
}

// ensureHBaseTLS rolls the client channel to mode unless it is there already.
func (b *chaosBench) ensureHBaseTLS(mode v1alpha1.ChannelMode) {
	if ch := b.ds.Spec.Encryption.ClientToNode; ch != nil && ch.Mode == mode {
		return
	}
	b.patchHBaseTLS(mode)
	b.waitVerified("TLS "+string(mode)+" rolled out", time.Now())
}

// previousRevisionRegionServer waits until the RegionServers' roll has updated a pod and returns
// a ready one it has not reached: killed, the StatefulSet recreates it from the previous revision.
func (b *chaosBench) previousRevisionRegionServer() string {
	name := hbase.NamesOf(b.ds).StatefulSet(hbase.RegionServer)
	var victim string
	eventually(b.t, 10*time.Minute, "the RegionServers' roll is under way", func() error {
		sts := &appsv1.StatefulSet{}
		if err := b.c.Get(context.Background(), client.ObjectKey{Namespace: b.ds.Namespace, Name: name}, sts); err != nil {
			return err
		}
		st := sts.Status
		if st.UpdateRevision == st.CurrentRevision || st.UpdatedReplicas == 0 {
			return fmt.Errorf("revision %s, update %s, %d updated", st.CurrentRevision, st.UpdateRevision, st.UpdatedReplicas)
		}
		for i := range 3 {
			p := b.pod(fmt.Sprintf("%s-%d", name, i))
			if p.Labels[appsv1.ControllerRevisionHashLabelKey] == st.CurrentRevision && podReady(p) {
				victim = p.Name
				return nil
			}
		}
		return fmt.Errorf("no ready RegionServer left at revision %s", st.CurrentRevision)
	})
	return victim
}

// masters returns the active Master's pod and the backup's: the active one has completed its
// initialisation, the backup waits for it.
func (b *chaosBench) masters() (active, backup string) {
	sts := hbase.NamesOf(b.ds).StatefulSet(hbase.Master)
	for i := range 2 {
		name := fmt.Sprintf("%s-%d", sts, i)
		if strings.Contains(podLog(b.t, b.pod(name), string(hbase.Master)), "Master has completed initialization") {
			active = name
		} else {
			backup = name
		}
	}
	if active == "" || backup == "" {
		b.t.Fatalf("no active and backup Master among %s-0 and %s-1 (active %q, backup %q)", sts, sts, active, backup)
	}
	return active, backup
}

// hbaseFault runs one case: a DatastoreBenchmark run at a fixed rate that records its writes,
// the fault 30 s into the run and the recovery inject waits for, then the run's own check of
// every acknowledged write. With required, the channels are Required throughout: any plaintext
// the probe finds accepted is reported.
func (b *chaosBench) hbaseFault(name string, duration time.Duration, required bool, inject func()) {
	t, ctx := b.t, context.Background()
	if !b.runs(name) {
		return
	}
	bench, pod := startSteadyHBaseBenchmark(t, b.c, b.ds, fmt.Sprintf("chaos-%d", len(b.rows)), duration, len(b.rows) > 0)
	defer func() { _ = b.c.Delete(ctx, bench, client.PropagationPolicy(metav1.DeletePropagationBackground)) }()
	b.clientPod = pod

	watch, began, recovered := b.inject(required, inject)
	b.logEvents(began)

	run := finishedRun(t, b.c, bench, duration+10*time.Minute)
	ops := int64(0)
	for _, l := range run.Latencies {
		ops += l.Count
	}
	row := chaosRow{fault: name, attempted: ops + run.Errors, failed: run.Errors, recovered: recovered, plaintext: "not required yet"}
	if required {
		row.plaintext = watch.verdict()
	}
	if watch.first != "" {
		t.Errorf("%s: plaintext accepted on a Required channel: %s", name, watch.first)
	}
	w := run.Writes
	if w == nil {
		t.Fatalf("%s: the run checked no write (%s: %s)", name, run.Phase, run.InvalidReason)
	}
	row.acked, row.checked, row.verified, row.notVerified = w.Acknowledged, w.Checked, w.Verified, w.Checked-w.Verified
	t.Logf("%s: run %s (%s); %d operations, %d failed; %d acknowledged writes, %d key-fields read back: %d verified, %d lost, %d stale, %d corrupted, %d unreadable; recovered in %s",
		name, run.Phase, run.InvalidReason, row.attempted, row.failed, w.Acknowledged, w.Checked, w.Verified, w.Lost, w.Stale, w.Corrupted, w.Unreadable, recovered.Round(time.Second))
	if w.Checked == 0 || w.Verified != w.Checked {
		t.Errorf("%s: acknowledged writes not intact (first: %s)", name, w.FirstProblem)
	}
	b.rows = append(b.rows, row)
}

// startSteadyHBaseBenchmark starts a DatastoreBenchmark of ds: YCSB A at 100 operations per
// second for duration, one run that records every write and reads all of them back when it
// ends. It returns once the run's client pod has logged in and written for a while, with the
// pod's name.
func startSteadyHBaseBenchmark(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, name string, duration time.Duration, skipLoad bool) (*v1alpha1.DatastoreBenchmark, string) {
	t.Helper()
	ctx := context.Background()
	bench := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ds.Namespace},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:   v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: ds.Name}},
			Workload: v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](2000), Duration: &metav1.Duration{Duration: duration}},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadFixedRate, Rate: ptr.To[int64](100), VirtualUsers: ptr.To[int32](16)},
			// One run: a lost write is a finding, and a run with failed operations would be
			// repeated.
			Repetitions:  ptr.To[int32](1),
			VerifyWrites: true,
			SkipLoad:     skipLoad,
		},
	}
	if err := c.Create(ctx, bench); err != nil {
		t.Fatal(err)
	}
	var pod string
	eventually(t, 10*time.Minute, "the measured run's client runs", func() error {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ds.Namespace), client.MatchingLabels{benchmark.LabelBenchmark: bench.Name, benchmark.LabelPhase: benchmark.PhaseRun}); err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				pod = p.Name
				return nil
			}
		}
		return fmt.Errorf("%d run pods, none running", len(pods.Items))
	})
	time.Sleep(30 * time.Second) // the JVM logs in and writes before anything changes
	return bench, pod
}

// finishedRun waits for the first run of bench to end, whatever its phase, and returns it.
func finishedRun(t *testing.T, c client.Client, bench *v1alpha1.DatastoreBenchmark, timeout time.Duration) v1alpha1.BenchmarkRun {
	t.Helper()
	var run v1alpha1.BenchmarkRun
	eventually(t, timeout, "the run's writes are checked", func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(bench), bench); err != nil {
			return err
		}
		for _, r := range bench.Status.Runs {
			if r.Index == 0 && (r.Phase == v1alpha1.RunSucceeded || r.Phase == v1alpha1.RunInvalid || r.Phase == v1alpha1.RunFailed) {
				run = r
				return nil
			}
		}
		return fmt.Errorf("benchmark %s, %d runs", bench.Status.Phase, len(bench.Status.Runs))
	})
	return run
}
