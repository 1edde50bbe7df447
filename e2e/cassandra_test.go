//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/test/samples"
)

// applyProfile creates a shipped EncryptionProfile unless it exists.
func applyProfile(t *testing.T, c client.Client, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples.ProfilesDir(), name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.EncryptionProfile{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), p); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// smallCassandra is a topology that fits several datastores on the Kind cluster of a 2-core
// machine; nodes 0 leaves the count to a study's matrix.
func smallCassandra(nodes int32) *v1alpha1.CassandraTopology {
	memory := resource.MustParse("1Gi")
	t := &v1alpha1.CassandraTopology{
		Heap: ptr.To(resource.MustParse("384Mi")),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: memory},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: memory},
		},
		Storage: v1alpha1.StorageSpec{Size: ptr.To(resource.MustParse("1Gi"))},
	}
	if nodes > 0 {
		t.Nodes = ptr.To(nodes)
	}
	return t
}

// waitReady waits up to 15 minutes for the datastore's Ready phase, logging each new progress
// line; nodes names what its ready count counts.
func waitReady(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore, start time.Time, nodes string) {
	t.Helper()
	last := ""
	eventually(t, 15*time.Minute, "the datastore becomes Ready", func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		progress := ""
		if p := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionProgressing); p != nil {
			progress = p.Message
		}
		if line := fmt.Sprintf("%s, %d/%d %s: %s", ds.Status.Phase, ds.Status.ReadyNodes, ds.Status.Nodes, nodes, progress); line != last {
			t.Logf("%6s %s", time.Since(start).Round(time.Second), line)
			last = line
		}
		if ds.Status.Phase != v1alpha1.PhaseReady {
			return fmt.Errorf("phase %s", ds.Status.Phase)
		}
		return nil
	})
}

// waitVerified waits for the operator's wire probe to find exactly the effective profile.
func waitVerified(t *testing.T, c client.Client, ds *v1alpha1.SecuredDatastore) {
	t.Helper()
	eventually(t, 3*time.Minute, "the wire is verified", func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		v := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionEncryptionVerified)
		if v == nil || v.Status != metav1.ConditionTrue {
			return fmt.Errorf("EncryptionVerified %+v", v)
		}
		t.Logf("EncryptionVerified: %s", v.Message)
		return nil
	})
}

// A 3-node TLS 1.3 SecuredDatastore on the Kind cluster, in a namespace that enforces the
// restricted Pod Security Standard: it becomes Ready, the operator verifies the wire, an
// application pod writes and reads over TLS through the client Service, and a benchmark
// measures it over its TLS suite.
func TestCassandraTLS13DatastoreServesCQLOverTLS(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "cassandra", "restricted")
	applyProfile(t, c, "tls13-aes128-gcm")

	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:       v1alpha1.EngineCassandra,
			Cassandra:    smallCassandra(3),
			Encryption:   v1alpha1.DatastoreEncryption{ProfileRef: "tls13-aes128-gcm"},
			Placement:    &v1alpha1.PlacementSpec{CryptoAcceleration: v1alpha1.AccelerationRequired, Features: []v1alpha1.CPUFeature{"AESNI"}},
			Verification: &v1alpha1.VerificationSpec{Interval: &metav1.Duration{Duration: 30 * time.Second}},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	t.Logf("3-node TLS 1.3 datastore Ready in %s", time.Since(start).Round(time.Second))

	waitVerified(t, c, ds)

	// The client creates a keyspace of its own, so it logs in as the generated superuser.
	waitJob(t, c, cqlClientJob(t, c, ds, "cql-client", cassandra.NamesOf(ds).SuperuserSecret()))

	cassandraIsClosedToStrangers(t, c, ds)
	benchmarkDatastore(t, c, ds, "", "TLS_AES_128_GCM_SHA256")
}
