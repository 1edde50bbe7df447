//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
)

// saslClientWindow: how long the application client runs across the level change; the three
// rolls of three RegionServers took 2m27s on Kind.
const saslClientWindow = 6 * time.Minute

// SASL levels raised on a live Kerberos HBase of three RegionServers, under an application at a
// fixed rate: the datastore starts at authentication on HBase and Hadoop RPC, then asks for
// privacy. The operator rolls the roles three times (both levels accepted with authentication
// asked for, both with privacy asked for, privacy alone), the ConfigMap records each step, the
// datastore is Ready again at privacy, and a benchmark logs in and measures it there. The
// client, started at authentication, offers every level with that one first, so it keeps
// working through the rolls: no operation fails and every acknowledged write reads back.
func TestHBaseSASLLevelsChangeLive(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "hbase-sasl", "restricted")
	applyProfile(t, c, "hbase-kerberos-authentication")
	ds := smallHBase("levels", ns.Name, v1alpha1.DatastoreEncryption{ProfileRef: "hbase-kerberos-authentication"})
	ds.Spec.HBase.RegionServers = ptr.To[int32](3)
	ready := createHBase(t, c, ds)
	waitVerified(t, c, ds)
	t.Logf("Kerberos HBase at SASL authentication (3 RegionServers) Ready in %s and verified", ready.Round(time.Second))
	app, _ := startSteadyHBaseBenchmark(t, c, ds, "levels-app", saslClientWindow, false)

	patch := client.MergeFrom(ds.DeepCopy())
	ds.Spec.Encryption.HBase = &v1alpha1.HBaseSecurity{HBaseRPCProtection: v1alpha1.ProtectionPrivacy, HadoopRPCProtection: v1alpha1.ProtectionPrivacy}
	if err := c.Patch(ctx, ds, patch); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	var steps []string
	eventually(t, 20*time.Minute, "the roll to privacy ends Ready", func() error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: hbase.NamesOf(ds).ConfigMap()}, cm); err != nil {
			return err
		}
		step, err := hbase.AppliedStep(cm.Annotations, cm.Name)
		if err != nil || step == nil || step.HBase == nil {
			return fmt.Errorf("no step on %s: %v", cm.Name, err)
		}
		level := fmt.Sprintf("hbase %s, hadoop %s", step.HBase.HBaseRPCProtection, step.HBase.HadoopRPCProtection)
		if len(steps) == 0 || steps[len(steps)-1] != level {
			t.Logf("%6s step: %s", time.Since(changed).Round(time.Second), level)
			steps = append(steps, level)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		if ds.Status.ObservedGeneration < ds.Generation || ds.Status.Phase != v1alpha1.PhaseReady || level != "hbase Privacy, hadoop Privacy" {
			return fmt.Errorf("phase %s at %s", ds.Status.Phase, level)
		}
		return nil
	})
	t.Logf("SASL privacy rolled out in %s", time.Since(changed).Round(time.Second))
	// The first poll may come before or after the operator wrote the first step.
	steps = slices.DeleteFunc(steps, func(s string) bool { return s == "hbase Authentication, hadoop Authentication" })
	want := []string{"hbase Authentication,Privacy, hadoop Authentication,Privacy", "hbase Privacy,Authentication, hadoop Privacy,Authentication", "hbase Privacy, hadoop Privacy"}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q", steps, want)
	}
	rolls := len(datastoreEvents(t, c, ds, "RollingRestart", changed))
	if rolls != 3 {
		t.Errorf("%d RollingRestart events after the change, want 3", rolls)
	}
	if rolled := time.Since(changed); rolled > saslClientWindow-time.Minute {
		t.Errorf("the change took %s, longer than the client's window of %s: lengthen saslClientWindow", rolled.Round(time.Second), saslClientWindow)
	}
	run := finishedRun(t, c, app, saslClientWindow+10*time.Minute)
	ops := int64(0)
	for _, l := range run.Latencies {
		ops += l.Count
	}
	w := run.Writes
	if w == nil {
		t.Fatalf("the application client checked no write (%s: %s)", run.Phase, run.InvalidReason)
	}
	t.Logf("application at 100 ops/s across the change: run %s (%s); %d operations, %d failed; %d acknowledged writes, %d key-fields read back: %d verified, %d lost",
		run.Phase, run.InvalidReason, ops+run.Errors, run.Errors, w.Acknowledged, w.Checked, w.Verified, w.Lost)
	for _, l := range run.Latencies {
		t.Logf("  %-6s %d operations, p99 %d µs", l.Operation, l.Count, l.P99Micros)
	}
	if run.Errors != 0 {
		t.Errorf("%d operations failed across the level change; want none", run.Errors)
	}
	if w.Checked == 0 || w.Verified != w.Checked {
		t.Errorf("acknowledged writes not intact (first: %s)", w.FirstProblem)
	}
	waitVerified(t, c, ds)
	benchmarkDatastore(t, c, ds, "kerberos/privacy", "")
}
