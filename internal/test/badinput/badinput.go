// Package badinput holds the bad-manifest corpus (api/v1alpha1/testdata/invalid) and checks
// that an API server refuses each manifest with the message the file expects. The envtest
// suite and the Kind e2e suite run the same corpus, so a message the real cluster words
// differently (another CEL cost limit, a webhook, an older server) shows up as a failure.
package badinput

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/internal/test/samples"
)

// Dir is where the corpus lives.
func Dir() string {
	return filepath.Join(samples.RepoRoot(), "api", "v1alpha1", "testdata", "invalid")
}

// Manifest is one file of the corpus: one document that must be refused on create, or two
// where the first is valid and the update to the second must be refused.
type Manifest struct {
	Name   string
	Docs   []*unstructured.Unstructured
	Expect []string // substrings the refusal must contain ("# expect: " lines)
}

// Load reads every manifest of the corpus, ordered by file name.
func Load() ([]Manifest, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "*.yaml"))
	if err != nil {
		return nil, err
	}
	out := make([]Manifest, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m := Manifest{Name: strings.TrimSuffix(filepath.Base(f), ".yaml")}
		for _, line := range strings.Split(string(data), "\n") {
			if e, ok := strings.CutPrefix(line, "# expect: "); ok {
				m.Expect = append(m.Expect, e)
			}
		}
		if len(m.Expect) == 0 {
			return nil, fmt.Errorf("%s: no '# expect:' line", f)
		}
		if m.Docs, err = ReadDocs(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(m.Docs) != 1 && len(m.Docs) != 2 {
			return nil, fmt.Errorf("%s: %d documents; want 1 or 2", f, len(m.Docs))
		}
		out = append(out, m)
	}
	return out, nil
}

// ReadDocs decodes a multi-document YAML or JSON stream.
func ReadDocs(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			docs = append(docs, u)
		}
	}
}

// strict is how kubectl applies: unknown fields are errors, not silently dropped.
var strict = client.FieldValidation("Strict")

// Check applies m to the API server and returns nil when it is refused as m expects. Namespaced
// documents go to namespace instead of the one in the file, so a run on a shared cluster
// touches only its own namespace; whatever a two-document manifest creates is deleted again.
func Check(ctx context.Context, c client.Client, m Manifest, namespace string) error {
	docs := make([]*unstructured.Unstructured, len(m.Docs))
	for i, d := range m.Docs {
		docs[i] = d.DeepCopy()
		if docs[i].GetNamespace() != "" {
			docs[i].SetNamespace(namespace)
		}
	}
	var err error
	if len(docs) == 1 {
		if err = c.Create(ctx, docs[0], strict); err == nil {
			_ = c.Delete(ctx, docs[0])
		}
	} else {
		if err := c.Create(ctx, docs[0], strict); err != nil {
			return fmt.Errorf("the first document must be valid: %w", err)
		}
		defer func() { _ = c.Delete(ctx, docs[0]) }()
		// An operator on the cluster may write the object's status in between; a conflict
		// would hide the refusal under test, so the update is made against the latest version.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current := docs[0].DeepCopy()
			if err := c.Get(ctx, client.ObjectKeyFromObject(current), current); err != nil {
				return err
			}
			docs[1].SetResourceVersion(current.GetResourceVersion())
			return c.Update(ctx, docs[1], strict)
		})
	}
	if err == nil {
		return errors.New("accepted; want rejected")
	}
	if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
		return fmt.Errorf("rejected with %w; want a validation error", err)
	}
	var missing []string
	for _, e := range m.Expect {
		if !strings.Contains(err.Error(), e) {
			missing = append(missing, fmt.Sprintf("%q", e))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the refusal does not contain %s:\n%v", strings.Join(missing, ", "), err)
	}
	return nil
}
