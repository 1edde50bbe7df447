//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
)

// Drift the operator did not cause: someone "tunes" a verified TLS 1.3 datastore by switching
// Cassandra to the OpenSSL engine through JVM_EXTRA_OPTS on the StatefulSet. Server-side apply
// keeps the operator's own fields and leaves the stranger's env var alone, so the pod rolls with
// it, and BoringSSL accepts TLS 1.3 suites the profile never allowed. The probe must report
// CipherSuiteDrift naming them within one probe interval of the pod running again; when the
// edit is undone, the datastore is verified again.
func TestWireDriftFromAHandEditIsReportedWithinOneProbeInterval(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "drift", "restricted")
	applyProfile(t, c, "tls13-aes128-gcm")
	const interval = 30 * time.Second
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:       v1alpha1.EngineCassandra,
			Cassandra:    smallCassandra(1),
			Encryption:   v1alpha1.DatastoreEncryption{ProfileRef: "tls13-aes128-gcm"},
			Verification: &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: interval}},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	waitVerified(t, c, ds)

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: ds.Name, Namespace: ns.Name}}
	handEdit := func(env string) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"cassandra","env":[%s]}]}}}}`, env)
		if err := c.Patch(ctx, sts, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("e2e-hand-edit")); err != nil {
			t.Fatal(err)
		}
	}
	handEdit(`{"name":"JVM_EXTRA_OPTS","value":"-Dcassandra.disable_tcactive_openssl=false"}`)
	t.Log("hand edit: JVM_EXTRA_OPTS=-Dcassandra.disable_tcactive_openssl=false on the StatefulSet")

	// The rolled pod's start time is when the wire changed.
	var running time.Time
	eventually(t, 5*time.Minute, "the pod runs with the hand edit", func() error {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: ds.Name + "-0"}, pod); err != nil {
			return err
		}
		if pod.Labels["controller-revision-hash"] != currentRevision(t, c, sts) {
			return fmt.Errorf("pod on revision %s", pod.Labels["controller-revision-hash"])
		}
		for _, s := range pod.Status.ContainerStatuses {
			if s.Name == "cassandra" && s.Ready && s.State.Running != nil {
				running = s.State.Running.StartedAt.Time
				return nil
			}
		}
		return fmt.Errorf("cassandra not ready")
	})
	eventually(t, interval+2*time.Minute, "CipherSuiteDrift is reported", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		v := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
		if v == nil || v.Status != metav1.ConditionFalse {
			return fmt.Errorf("EncryptionVerified %+v", v)
		}
		if v.Reason != v1alpha1.ReasonCipherSuiteDrift || !strings.Contains(v.Message, "TLS_CHACHA20_POLY1305_SHA256") {
			t.Fatalf("EncryptionVerified %s: %s; want CipherSuiteDrift naming the suites BoringSSL adds", v.Reason, v.Message)
		}
		after := v.LastTransitionTime.Sub(running)
		t.Logf("drift reported %s after the hand-edited node started (its readiness included): %s", after.Round(time.Second), v.Message)
		// Cassandra takes up to a minute to open its ports after the container starts.
		if after > interval+90*time.Second {
			t.Errorf("reported %s after the node started; want within one probe interval (%s) of it serving", after, interval)
		}
		return nil
	})

	handEdit(`{"name":"JVM_EXTRA_OPTS","$patch":"delete"}`)
	eventually(t, 6*time.Minute, "the datastore is verified again after the edit is undone", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		v := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
		if v == nil || v.Status != metav1.ConditionTrue {
			return fmt.Errorf("EncryptionVerified %+v", v)
		}
		return nil
	})
}

// currentRevision is the StatefulSet's update revision once its controller has seen the edit.
func currentRevision(t *testing.T, c client.Client, sts *appsv1.StatefulSet) string {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(sts), sts); err != nil {
		t.Fatal(err)
	}
	if sts.Status.ObservedGeneration < sts.Generation {
		return "(not yet observed)"
	}
	return sts.Status.UpdateRevision
}
