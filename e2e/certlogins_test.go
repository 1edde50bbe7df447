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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/podtemplate"
)

// A 1-node TLS 1.3 Cassandra whose client channel demands certificates, on Kind with the real
// cert-manager: the operator has the superuser's and the clients' certificates issued with
// their SPIFFE IDs, maps them to the roles, and rolls the node to MutualTlsAuthenticator.
// Then the superuser's certificate alone writes, the node's own certificate is refused even
// with the superuser's password, and a benchmark runs with the clients' certificate.
func TestCassandraClientCertificatesAreTheLogins(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "certlogin", "restricted")
	applyProfile(t, c, "tls13-aes128-gcm")
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "certs", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine:    v1alpha1.EngineCassandra,
			Cassandra: smallCassandra(1),
			Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "tls13-aes128-gcm", EncryptionSettings: v1alpha1.EncryptionSettings{
				ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{
					TLS: &v1alpha1.TLSSettings{ClientAuth: v1alpha1.ClientAuthRequired}}},
			}},
		},
	}
	start := time.Now()
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	n := cassandra.NamesOf(ds)
	eventually(t, 10*time.Minute, "the node authenticates by certificate", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			return err
		}
		logins := meta.FindStatusCondition(ds.Status.Conditions, v1alpha1.ConditionLoginsReady)
		if logins == nil || logins.Status != metav1.ConditionTrue || strings.Contains(logins.Message, "restart") || len(ds.Status.Identities) != 2 {
			return fmt.Errorf("LoginsReady %+v, identities %v", logins, ds.Status.Identities)
		}
		sts := &appsv1.StatefulSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: n.StatefulSet()}, sts); err != nil {
			return err
		}
		if sts.Status.UpdateRevision != sts.Status.CurrentRevision || sts.Status.ReadyReplicas != 1 {
			return fmt.Errorf("rolling: revision %s → %s, %d ready", sts.Status.CurrentRevision, sts.Status.UpdateRevision, sts.Status.ReadyReplicas)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: podtemplate.VolumeConfigMap(sts.Spec.Template.Spec, "config")}, cm); err != nil {
			return err
		}
		if !strings.Contains(cm.Data["cassandra.yaml"], "org.apache.cassandra.auth.MutualTlsAuthenticator") {
			return fmt.Errorf("the running configuration has no MutualTlsAuthenticator")
		}
		if ds.Status.Phase != v1alpha1.PhaseReady {
			return fmt.Errorf("phase %s", ds.Status.Phase)
		}
		t.Logf("LoginsReady: %s", logins.Message)
		return nil
	})
	t.Logf("created to authenticating by certificate on every node: %s", time.Since(start).Round(time.Second))

	for role, secret := range map[string]string{cassandra.SuperuserRole: n.SuperuserCertSecret(), cassandra.ClientRole: n.ClientCertSecret()} {
		cert := secretCertificate(t, c, ns.Name, secret, corev1.TLSCertKey)
		want := cassandra.Identity(ds, "cluster.local", role)
		if len(cert.URIs) != 1 || cert.URIs[0].String() != want || len(cert.DNSNames) != 0 {
			t.Errorf("cert-manager's certificate in %s names %v %v; want exactly %s", secret, cert.URIs, cert.DNSNames, want)
		}
	}

	// The superuser's certificate, no password.
	waitJob(t, c, cqlClientJobWith(t, c, ds, "cql-superuser-cert", n.SuperuserCertSecret(), "", false, "--replication-factor=1", "--certificate-login"))
	t.Log("the superuser's certificate without a password: created a keyspace and wrote")
	// The node's certificate (the datastore's CA, no SPIFFE ID) with the superuser's password.
	log := refusedJob(t, c, cqlClientJobWith(t, c, ds, "cql-node-cert", certs.NodeSecret(ds), n.SuperuserSecret(), true, "--replication-factor=1"))
	if !strings.Contains(log, "Spiffe") && !strings.Contains(log, "not authorized") {
		t.Errorf("the node's certificate was refused, but not for its identity:\n%s", log)
	} else {
		t.Log("the node's certificate with the superuser's password: refused for its identity")
	}

	// The benchmark's clients present theirs.
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-a", Namespace: ns.Name},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:      v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: ds.Name}},
			Workload:    v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](2000), Duration: &metav1.Duration{Duration: 20 * time.Second}},
			Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, VirtualUsers: ptr.To[int32](4)},
			Repetitions: ptr.To[int32](1),
			WarmUp:      &metav1.Duration{Duration: 3 * time.Second},
		},
	}
	runBenchmark(t, c, b, 8*time.Minute)
	for _, r := range b.Status.Runs {
		t.Logf("run %d %s: %d ops/s, %s %s", r.Index, r.Phase, r.ThroughputOpsPerSec, r.NegotiatedProtocol, r.NegotiatedCipherSuite)
		if r.Phase != v1alpha1.RunSucceeded || r.ThroughputOpsPerSec <= 0 || r.NegotiatedProtocol != "TLSv1.3" {
			t.Errorf("run %d: %s at %d ops/s over %s; want a TLS 1.3 run that served operations", r.Index, r.Phase, r.ThroughputOpsPerSec, r.NegotiatedProtocol)
		}
	}
}
