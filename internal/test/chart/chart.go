// Package chart renders the operator's Helm chart with the real Helm (hack/build/helm.sh builds
// it from the Go module proxy once), for tests of what an installation creates.
package chart

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/internal/test/samples"
)

// Dir is the chart's directory, relative to the repository root.
const Dir = "charts/secured-datastore-operator"

// Release and Namespace are the release name and namespace Render installs as.
const (
	Release   = "rel"
	Namespace = "secured-system"
)

// Helm runs helm in the repository root and returns its output (stdout, and stderr on failure).
func Helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	root := samples.RepoRoot()
	bin, err := exec.Command(filepath.Join(root, "hack", "build", "helm.sh")).Output()
	if err != nil {
		t.Fatalf("hack/build/helm.sh: %v", err)
	}
	cmd := exec.Command(strings.TrimSpace(string(bin)), args...)
	cmd.Dir = root
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String() + errOut.String(), err
	}
	return out.String(), nil
}

// Render templates the chart with --set values and returns its objects by kind.
func Render(t testing.TB, sets ...string) map[string][]unstructured.Unstructured {
	t.Helper()
	args := []string{"template", Release, Dir, "-n", Namespace, "--kube-version", "1.36.3"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := Helm(t, args...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", sets, err, out)
	}
	objs := map[string][]unstructured.Unstructured{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, doc)
		}
		if u.Object != nil {
			objs[u.GetKind()] = append(objs[u.GetKind()], u)
		}
	}
	return objs
}

// As converts a rendered object to its typed form, failing on a field the type does not have.
func As[T any](t testing.TB, u unstructured.Unstructured) T {
	t.Helper()
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return v
}
