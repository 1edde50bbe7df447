package v1alpha1_test

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/tier"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/internal/test/badinput"
	"secured.dev/operator/internal/test/hostile"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // the fast tier needs no API server
	}
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

// strict is how kubectl applies: unknown fields are errors, not silently dropped.
var strict = client.FieldValidation("Strict")

// The samples, the manifests make demo applies (config/demo) and the studies make study runs
// (config/studies) are accepted as they ship.
func TestShippedSamplesAreAccepted(t *testing.T) {
	tier.Full(t, "a kube-apiserver")
	ctx := context.Background()
	var files []string
	for _, dir := range []string{"samples", "demo", "studies"} {
		_ = filepath.WalkDir(filepath.Join(samples.RepoRoot(), "config", dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
				files = append(files, p)
			}
			return err
		})
	}
	if len(files) < 10 {
		t.Fatalf("found %d samples; expected the shipped profiles and one sample per kind", len(files))
	}
	kinds := map[string]int{}
	profiles := map[string]any{} // spec by name: studies may share a profile, never redefine it
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := badinput.ReadDocs(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, u := range docs {
			kinds[u.GetKind()]++
			if u.GetKind() == "EncryptionProfile" {
				if spec, seen := profiles[u.GetName()]; seen {
					if !reflect.DeepEqual(spec, u.Object["spec"]) {
						t.Errorf("%s: EncryptionProfile %s differs from another manifest's of that name", f, u.GetName())
					}
					continue
				}
				profiles[u.GetName()] = u.Object["spec"]
			}
			if u.GetNamespace() == "" && u.GetKind() != "EncryptionProfile" && u.GetKind() != "Namespace" {
				u.SetNamespace("default")
			}
			err := env.Client.Create(ctx, u, strict)
			if u.GetKind() == "Namespace" && apierrors.IsAlreadyExists(err) {
				continue // several studies share one namespace
			}
			if err != nil {
				t.Errorf("%s: shipped sample rejected: %v", f, err)
				continue
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, u) })
		}
	}
	for _, k := range []string{"EncryptionProfile", "SecuredDatastore", "DatastoreBenchmark", "TradeoffStudy"} {
		if kinds[k] == 0 {
			t.Errorf("no sample of kind %s", k)
		}
	}
}

// TestInvalidManifestsAreRejected applies every manifest of the bad-input corpus
// (testdata/invalid, see internal/test/badinput) to the real API server and checks that it is
// refused with a message naming the field and the fix. The e2e suite runs the same corpus on Kind.
func TestInvalidManifestsAreRejected(t *testing.T) {
	tier.Full(t, "a kube-apiserver")
	corpus, err := badinput.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 30 {
		t.Fatalf("the corpus has %d bad manifests; keep at least 30", len(corpus))
	}
	for _, m := range corpus {
		t.Run(m.Name, func(t *testing.T) {
			if err := badinput.Check(context.Background(), env.Client, m, "default"); err != nil {
				t.Error(err)
			}
		})
	}
}

// A study's design is fixed once it exists (the corpus has the refusal); its controls are not:
// pausing, resuming, cancelling and labelling must stay possible on a study that runs.
// Every string of every sample's spec, set to quotes, command substitution, a newline with a
// new key and closing markup, is refused by the API server.
func TestHostileValuesAreRefusedAtAdmission(t *testing.T) {
	tier.Full(t, "a kube-apiserver")
	hostile.RefusedAtAdmission(context.Background(), t, env.Client, "default")
}

func TestStudyControlsChangeAfterCreation(t *testing.T) {
	tier.Full(t, "a kube-apiserver")
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "config", "samples", "tradeoffstudy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := badinput.ReadDocs(data)
	if err != nil || len(docs) != 1 {
		t.Fatalf("config/samples/tradeoffstudy.yaml: %d documents, %v; want one study", len(docs), err)
	}
	st := docs[0]
	st.SetName("controls-change")
	st.SetNamespace("default")
	if err := env.Client.Create(ctx, st, strict); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, st) })
	for _, patch := range []string{
		`{"spec":{"paused":true}}`,
		`{"spec":{"paused":false}}`,
		`{"metadata":{"labels":{"team":"payments"}}}`,
		`{"spec":{"cancel":true}}`,
	} {
		if err := env.Client.Patch(ctx, st, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Errorf("%s refused on an existing study: %v", patch, err)
		}
	}
	if err := env.Client.Patch(ctx, st, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"seed":7}}`))); err == nil {
		t.Error(`{"spec":{"seed":7}} accepted on an existing study; want the design-change refusal`)
	}
}

// The rules about spec.verifyWrites bind only when it is set: a benchmark of small values
// from two client pods, without it, is a valid benchmark (a study's value-size cells make
// such benchmarks). A rule that reads the absent field fails to evaluate, and refuses it.
func TestBenchmarkRulesOnVerifyWritesBindOnlyWhenItIsSet(t *testing.T) {
	tier.Full(t, "a kube-apiserver")
	ctx := context.Background()
	docs, err := badinput.ReadDocs([]byte(`apiVersion: datastore.secured.dev/v1alpha1
kind: DatastoreBenchmark
metadata:
  name: small-values-two-clients
  namespace: default
spec:
  target:
    datastoreRef:
      name: orders
  workload:
    preset: A
    fieldLength: 10
    table: usertable_f10
  load:
    mode: MaxThroughput
    clientPods: 2
`))
	if err != nil || len(docs) != 1 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	if err := env.Client.Create(ctx, docs[0], strict); err != nil {
		t.Fatalf("a benchmark without verifyWrites is refused by a rule about it: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, docs[0]) })
}
