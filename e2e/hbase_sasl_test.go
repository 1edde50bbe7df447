//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
)

// SASL levels raised on a live Kerberos HBase: the datastore starts at authentication on HBase
// and Hadoop RPC, then asks for privacy. The operator rolls the roles three times (both levels
// accepted with authentication asked for, both with privacy asked for, privacy alone), the
// ConfigMap records each step, the datastore is Ready again at privacy, and a benchmark logs in
// and measures it there.
func TestHBaseSASLLevelsChangeLive(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "hbase-sasl", "restricted")
	applyProfile(t, c, "hbase-kerberos-authentication")
	ds := smallHBase("levels", ns.Name, v1alpha1.DatastoreEncryption{ProfileRef: "hbase-kerberos-authentication"})
	ready := createHBase(t, c, ds)
	waitVerified(t, c, ds)
	t.Logf("Kerberos HBase at SASL authentication Ready in %s and verified", ready.Round(time.Second))

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
	waitVerified(t, c, ds)
	benchmarkDatastore(t, c, ds, "kerberos/privacy", "")
}
