package v1alpha1_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/tier"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"secured.dev/operator/internal/test/samples"
)

// TestGeneratedFilesAreCurrent runs `make generate` in a copy of the repository and fails when
// any generated file (CEL rules from the catalogue, deepcopy, CRDs, RBAC, the chart's generated templates) differs from the
// checked-in one.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	tier.Full(t, "make generate")
	root := samples.RepoRoot()
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	tmp := t.TempDir()
	for _, f := range strings.Fields(string(out)) {
		src := filepath.Join(root, f)
		data, err := os.ReadFile(src)
		if err != nil {
			continue // deleted in the work tree
		}
		info, _ := os.Stat(src)
		dst := filepath.Join(tmp, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode()); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("make", "-s", "generate")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make generate: %v\n%s", err, out)
	}
	var stale []string
	for _, dir := range []string{"api/v1alpha1", "config/crd/bases", "config/rbac", "charts/secured-datastore-operator/templates/generated", "dashboards", "charts/secured-datastore-operator/files/dashboards"} {
		files, _ := filepath.Glob(filepath.Join(tmp, dir, "*"))
		for _, f := range files {
			rel, _ := filepath.Rel(tmp, f)
			want, _ := os.ReadFile(f)
			got, _ := os.ReadFile(filepath.Join(root, rel))
			if !bytes.Equal(got, want) {
				stale = append(stale, rel)
			}
		}
	}
	if len(stale) > 0 {
		t.Errorf("generated files are stale; run `make generate` and commit: %v", stale)
	}
}

// TestEveryFieldIsDocumented keeps `kubectl explain` useful: every property of every CRD has a
// description.
func TestEveryFieldIsDocumented(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(samples.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if len(files) != 4 {
		t.Fatalf("want 4 CRDs, found %d", len(files))
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			walk(t, crd.Spec.Names.Kind, v.Schema.OpenAPIV3Schema, func(path string, s *apiextensionsv1.JSONSchemaProps) {
				if strings.TrimSpace(s.Description) == "" && !strings.HasSuffix(path, ".metadata") && !strings.HasSuffix(path, ".apiVersion") && !strings.HasSuffix(path, ".kind") {
					t.Errorf("%s has no description", path)
				}
			})
		}
	}
}

func walk(t *testing.T, path string, s *apiextensionsv1.JSONSchemaProps, visit func(string, *apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	visit(path, s)
	for name, p := range s.Properties {
		walk(t, path+"."+name, &p, visit)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(t, path+"[]", s.Items.Schema, func(p string, x *apiextensionsv1.JSONSchemaProps) {
			if p != path+"[]" { // list items are described by their list
				visit(p, x)
			}
		})
	}
}
