//go:build e2e

package e2e

import (
	"context"
	"testing"

	"secured.dev/operator/internal/test/badinput"
	"secured.dev/operator/internal/test/hostile"
)

// The bad-manifest corpus that make test applies to envtest's API server is refused by the
// Kind cluster's API server, with the CRDs the Helm chart installed, in the same words.
func TestBadManifestsAreRejectedByTheClusterWithTheSameMessages(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "badinput", "")
	corpus, err := badinput.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range corpus {
		t.Run(m.Name, func(t *testing.T) {
			if err := badinput.Check(ctx, c, m, ns.Name); err != nil {
				t.Error(err)
			}
		})
	}
	t.Logf("%d bad manifests refused", len(corpus))
}

// Hostile values on the real cluster: every string of every sample's spec, one at a time, is
// refused at admission, so none reaches the operator.
func TestHostileValuesAreRefusedByTheCluster(t *testing.T) {
	c := newClient(t)
	ns := testNamespace(t, c, "hostile", "")
	hostile.RefusedAtAdmission(context.Background(), t, c, ns.Name)
}
