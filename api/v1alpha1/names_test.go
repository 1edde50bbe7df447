package v1alpha1

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CRDs' metadata.name rules and the limits the builders are tested at are the same numbers.
func TestNameLimitsMatchTheCRDs(t *testing.T) {
	for file, rule := range map[string]string{
		"datastore.secured.dev_secureddatastores.yaml":   fmt.Sprintf("self.metadata.name.size() <= (self.spec.engine == 'HBase' ? %d : %d)", MaxHBaseDatastoreName, MaxCassandraDatastoreName),
		"datastore.secured.dev_datastorebenchmarks.yaml": fmt.Sprintf("self.metadata.name.size() <= %d", MaxBenchmarkName),
		"datastore.secured.dev_tradeoffstudies.yaml":     fmt.Sprintf("self.metadata.name.size() <= %d", MaxStudyName),
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.ReplaceAll(string(b), "''", "'"), rule) { // YAML doubles quotes in quoted scalars
			t.Errorf("%s lacks the rule %q", file, rule)
		}
	}
}
