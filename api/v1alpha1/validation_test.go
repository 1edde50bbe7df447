package v1alpha1_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/internal/samples"
	"secured.dev/operator/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
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

func readDocs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) > 0 {
			docs = append(docs, u)
		}
	}
	return docs
}

func TestShippedSamplesAreAccepted(t *testing.T) {
	ctx := context.Background()
	var files []string
	_ = filepath.WalkDir(filepath.Join(samples.RepoRoot(), "config", "samples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if len(files) < 10 {
		t.Fatalf("found %d samples; expected the shipped profiles and one sample per kind", len(files))
	}
	kinds := map[string]int{}
	for _, f := range files {
		for _, u := range readDocs(t, f) {
			kinds[u.GetKind()]++
			if u.GetNamespace() == "" && u.GetKind() != "EncryptionProfile" {
				u.SetNamespace("default")
			}
			if err := env.Client.Create(ctx, u, strict); err != nil {
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

// TestInvalidManifestsAreRejected applies every manifest under testdata/invalid to the real API
// server and checks that it is refused with a message naming the field and the fix. Each file
// lists the substrings its error must contain in "# expect:" lines; a file with two documents
// creates the first and must fail updating it to the second.
func TestInvalidManifestsAreRejected(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("the corpus has %d bad manifests; keep at least 30", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			ctx := context.Background()
			data, _ := os.ReadFile(f)
			var expect []string
			for _, line := range strings.Split(string(data), "\n") {
				if e, ok := strings.CutPrefix(line, "# expect: "); ok {
					expect = append(expect, e)
				}
			}
			if len(expect) == 0 {
				t.Fatal("no '# expect:' line")
			}
			docs := readDocs(t, f)
			var err error
			switch len(docs) {
			case 1:
				err = env.Client.Create(ctx, docs[0], strict)
				if err == nil {
					_ = env.Client.Delete(ctx, docs[0])
				}
			case 2:
				if err := env.Client.Create(ctx, docs[0], strict); err != nil {
					t.Fatalf("the first document must be valid: %v", err)
				}
				defer func() { _ = env.Client.Delete(ctx, docs[0]) }()
				docs[1].SetResourceVersion(docs[0].GetResourceVersion())
				err = env.Client.Update(ctx, docs[1], strict)
			default:
				t.Fatalf("%d documents; want 1 or 2", len(docs))
			}
			if err == nil {
				t.Fatal("accepted; want rejected")
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("rejected with %v; want a validation error", err)
			}
			for _, e := range expect {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("error does not contain %q:\n%v", e, err)
				}
			}
		})
	}
}
