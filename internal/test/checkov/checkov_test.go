// Package checkov runs Checkov, the Kubernetes manifest policy scanner (hack/build/checkov.sh
// installs it from PyPI, pinned), on the Helm chart as installed with several value sets and on
// the objects the operator renders for sample datastores and benchmarks (the builders' golden
// files). A failed check fails the test; a policy departed from on purpose is skipped in the
// manifest with its reason (podtemplate.Deviation, the chart's checkov.io/skipN annotations).
package checkov

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/chart"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/tier"
)

type check struct {
	ID       string `json:"check_id"`
	Name     string `json:"check_name"`
	Resource string `json:"resource"`
	File     string `json:"file_path"`
	Result   struct {
		Comment string `json:"suppress_comment"`
	} `json:"check_result"`
}

type report struct {
	Results struct {
		Passed  []check `json:"passed_checks"`
		Failed  []check `json:"failed_checks"`
		Skipped []check `json:"skipped_checks"`
	} `json:"results"`
	Summary struct {
		ParsingErrors int `json:"parsing_errors"`
		Resources     int `json:"resource_count"`
	} `json:"summary"`
}

// scan runs Checkov on every manifest in dir.
func scan(t *testing.T, dir string) report {
	t.Helper()
	bin, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "checkov.sh")).Output()
	if err != nil {
		t.Fatalf("hack/build/checkov.sh: %v", err)
	}
	// --skip-download: no policy or guideline download (only package registries are reachable).
	out, err := exec.Command(strings.TrimSpace(string(bin)), "-d", dir, "--framework", "kubernetes", "-o", "json", "--skip-download").Output()
	// Checkov exits 1 when a check failed; its JSON says which.
	var r report
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("checkov: %v (%v)\n%s", jerr, err, out)
	}
	return r
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestManifestsPassCheckov(t *testing.T) {
	tier.Full(t, "checkov and helm")
	dir := t.TempDir()
	for name, sets := range map[string][]string{
		"chart-default.yaml":        nil,
		"chart-all-namespaces.yaml": {"watch.allNamespaces=true"},
		"chart-two-namespaces.yaml": {"watch.namespaces={team-a,team-b}", "metrics.serviceMonitor.enabled=true"},
	} {
		args := []string{"template", chart.Release, chart.Dir, "-n", chart.Namespace, "--kube-version", "1.36.3"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		out, err := chart.Helm(t, args...)
		if err != nil {
			t.Fatalf("helm template %v: %v\n%s", sets, err, out)
		}
		write(t, dir, name, out)
	}
	root := samples.RepoRoot()
	var rendered []string
	for _, pattern := range []string{"internal/render/cassandra/testdata/*.objects.yaml", "internal/render/hbase/testdata/*.objects.yaml", "internal/render/benchmark/testdata/*.yaml"} {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v, %d files", pattern, err, len(files))
		}
		rendered = append(rendered, files...)
	}
	for _, f := range rendered {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, strings.ReplaceAll(strings.TrimPrefix(f, root+"/"), "/", "_"), string(b))
	}

	r := scan(t, dir)
	if r.Summary.ParsingErrors > 0 || r.Summary.Resources < 100 {
		t.Fatalf("Checkov parsed %d resources with %d parsing errors: the manifests did not reach it", r.Summary.Resources, r.Summary.ParsingErrors)
	}
	for _, c := range r.Results.Failed {
		t.Errorf("%s %s (%s): fix it, or skip it in the manifest with its reason (podtemplate.Deviation; checkov.io/skipN in the chart)", c.ID, c.Name, where(c))
	}
	for _, c := range r.Results.Skipped {
		if len(strings.Fields(c.Result.Comment)) < 6 {
			t.Errorf("%s skipped on %s without a reason that says why: %q", c.ID, where(c), c.Result.Comment)
		}
	}
	t.Logf("Checkov: %d resources, %d checks passed, %d skipped with a reason, %d failed",
		r.Summary.Resources, len(r.Results.Passed), len(r.Results.Skipped), len(r.Results.Failed))
}

func where(c check) string { return fmt.Sprintf("%s in %s", c.Resource, filepath.Base(c.File)) }

// The scan can fail: a privileged pod, or a skip without a reason, is caught.
func TestCheckovCatchesAnInsecurePod(t *testing.T) {
	tier.Full(t, "checkov")
	dir := t.TempDir()
	write(t, dir, "bad.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: bad
  namespace: x
  annotations:
    checkov.io/skip1: CKV_K8S_43=pinned
spec:
  hostNetwork: true
  containers:
    - name: c
      image: busybox:1
      securityContext: {privileged: true}
`)
	r := scan(t, dir)
	failed := map[string]bool{}
	for _, c := range r.Results.Failed {
		failed[c.ID] = true
	}
	// CKV_K8S_16: privileged; CKV_K8S_19: host network.
	if !failed["CKV_K8S_16"] || !failed["CKV_K8S_19"] {
		t.Errorf("Checkov passed a privileged pod on the host network: failed %v", failed)
	}
	if len(r.Results.Skipped) != 1 || len(strings.Fields(r.Results.Skipped[0].Result.Comment)) >= 6 {
		t.Errorf("the one-word skip reason is not what the reason rule rejects: %+v", r.Results.Skipped)
	}
}
