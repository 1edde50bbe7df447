// Package golden compares a builder's output with a checked-in file, for the builders' tests;
// `go test ./internal/render/... -update` rewrites the files.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Check compares got with testdata/name.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed; rerun with -update if intended and review the diff.\ngot:\n%s", name, got)
	}
}

// YAML is the objects as one YAML stream, in their order: what a builder's golden file holds.
func YAML(t testing.TB, objs []client.Object) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes()
}
