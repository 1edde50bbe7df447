package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/samples"
)

// Every flag has a row in the README's table of operator flags (controller-runtime's zap flags
// share one row, --zap-*).
func TestEveryFlagIsDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	newFlags(&settings{}).VisitAll(func(f *flag.Flag) {
		n++
		row := "| `--" + f.Name + "` |"
		if strings.HasPrefix(f.Name, "zap-") {
			row = "| `--zap-*` |"
		}
		if !strings.Contains(string(readme), row) {
			t.Errorf("--%s is not in the README's table of operator flags (a row starting %q)", f.Name, row)
		}
	})
	if n < 20 {
		t.Errorf("only %d flags defined; the table check saw too few to mean anything", n)
	}
}
