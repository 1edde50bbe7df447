package dataplane

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testpki"
	"secured.dev/operator/internal/verify"
)

// Every shipped profile a Cassandra datastore can use, rendered by the builders onto a real
// node with the key the operator would request, is what the wire shows: the prober's verdict is
// Verified on both channels. The observed table is written to bin/wire-table.md.
func TestShippedCassandraProfilesOnTheWire(t *testing.T) {
	withCassandra(t)
	profiles, err := samples.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	table := []string{
		"| profile | engine | channel | protocols | cipher suites | plaintext | client auth | scan | verdict |",
		"|---|---|---|---|---|---|---|---|---|",
	}
	for _, p := range profiles {
		if p.Spec.HBase != nil {
			continue
		}
		enc := ShippedProfile(t, p.Name, nil)
		key, err := certs.NodeKey(v1alpha1.PrivateKeySpec{}, []v1alpha1.EffectiveChannel{enc.ClientToNode, enc.NodeToNode})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		t.Run(p.Name, func(t *testing.T) {
			var ca *testpki.CA
			if cassandra.Target(enc).TLSEnabled() {
				ca = testpki.New(t)
			}
			node := StartCassandra(t, Node{Address: "127.0.0.41", JMXPort: 7241, Step: cassandra.Target(enc), CA: ca, RSAKey: key.Algorithm == cmv1.RSAKeyAlgorithm})
			// The node must prove it is the node: a certificate from its CA, for its address.
			var id *verify.Identity
			if ca != nil {
				roots := x509.NewCertPool()
				roots.AppendCertsFromPEM(ca.PEM)
				id = &verify.Identity{Roots: roots, DNSName: "127.0.0.41"}
			}
			for _, c := range node.Endpoints(enc) {
				res, err := probe.Scan(context.Background(), c.Address, c.Probe)
				f := verify.WithIdentity(verify.Compare(c.Want, res, err), c.Want, id, res, err, time.Now())
				if !f.Verified {
					t.Errorf("%s: %s %v", c.Channel, f.Reason, f.Differences)
				}
				engine := string(c.Want.Engine)
				if c.Want.Mode == v1alpha1.ChannelDisabled {
					engine = "-"
				}
				table = append(table, fmt.Sprintf("| %s | %s | %s %s | %s | %s | %v | %v | %s | %s |", p.Name, engine, c.Channel, c.Want.Mode,
					orDash(res.VersionNames()), orDash(res.SuiteNames()), deref(res.PlaintextAccepted), deref(res.ClientAuthRequired),
					res.Duration.Round(1e7), f.Reason))
			}
		})
	}
	out := strings.Join(table, "\n") + "\n"
	t.Log("\n" + out)
	if err := os.WriteFile(filepath.Join(samples.RepoRoot(), "bin", "wire-table.md"), []byte(out), 0o644); err != nil {
		t.Log(err)
	}
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}
