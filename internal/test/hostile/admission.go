package hostile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/samples"
)

// RefusedAtAdmission puts Value into every string of the spec of every sample datastore,
// benchmark and study in config/samples, one at a time, and creates each (a server-side dry
// run in namespace) through c: an API server with our CRDs must refuse every one as Invalid.
// So no hostile string gets past admission to the operator, whatever a builder would do with
// it; the builder tests show what they would do.
func RefusedAtAdmission(ctx context.Context, t *testing.T, c client.Client, namespace string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(samples.RepoRoot(), "config", "samples", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	var tried int
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sample := func() client.Object {
			var meta struct{ Kind string }
			var obj client.Object
			if err := yaml.Unmarshal(raw, &meta); err != nil {
				t.Fatal(err)
			}
			switch meta.Kind {
			case "SecuredDatastore":
				obj = &v1alpha1.SecuredDatastore{}
			case "DatastoreBenchmark":
				obj = &v1alpha1.DatastoreBenchmark{}
			case "TradeoffStudy":
				obj = &v1alpha1.TradeoffStudy{}
			default:
				t.Fatalf("%s: a sample of kind %q", path, meta.Kind)
			}
			if err := yaml.UnmarshalStrict(raw, obj); err != nil {
				t.Fatal(err)
			}
			obj.SetNamespace(namespace)
			return obj
		}
		for i, f := range Fields(sample()) {
			// Only the spec is the user's; a Quantity's Format is not in its JSON.
			if !strings.HasPrefix(f.Path, ".Spec.") || strings.HasSuffix(f.Path, ".Format") {
				continue
			}
			obj := sample()
			Fields(obj)[i].Set(Value)
			tried++
			err := c.Create(ctx, obj, client.DryRunAll)
			if !apierrors.IsInvalid(err) {
				t.Errorf("%s %s: the API server admitted a hostile value (%v)", filepath.Base(path), f.Path, err)
			}
		}
	}
	t.Logf("%d hostile spec values in %d samples, every one refused at admission", tried, len(paths))
}
