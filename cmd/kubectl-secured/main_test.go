package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/tier"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/study"
	"secured.dev/operator/internal/test/testenv"
)

// The plugin against a real API server: a running study is analysed from its status, a
// finished one printed from its report ConfigMap, and mistakes say what to do.
func TestStudyReport(t *testing.T) {
	tier.Full(t, "a kube-apiserver")
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := writeKubeconfig(t, env)
	ctx := context.Background()

	st := &v1alpha1.TradeoffStudy{
		ObjectMeta: metav1.ObjectMeta{Name: "cli", Namespace: "default"},
		Spec: v1alpha1.TradeoffStudySpec{
			Template: v1alpha1.DatastoreTemplate{Engine: v1alpha1.EngineCassandra},
			Matrix:   v1alpha1.StudyMatrix{Profiles: []string{"plain", "tls"}, Baseline: "plain"},
			Workload: v1alpha1.Workload{Preset: "B"},
			Load:     v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput},
			Decision: v1alpha1.StudyDecision{Objective: v1alpha1.ObjectiveHighestRankWithinBudget, OverheadBudgetPercent: ptr.To[int32](30)},
		},
	}
	if err := env.Client.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	cells := study.Cells("cli", &st.Spec, map[string]study.Profile{"plain": {}, "tls": {Rank: 120}})
	for i, ops := range []int64{1000, 780} {
		for k := range 4 {
			cells[i].Runs = append(cells[i].Runs, v1alpha1.StudyRun{Benchmark: study.BenchmarkName(&cells[i], k), ThroughputOpsPerSec: ops + int64(7*k)})
		}
	}
	st.Status = v1alpha1.TradeoffStudyStatus{Phase: v1alpha1.StudyRunning, Seed: ptr.To[int64](1), Cells: cells,
		Schedule: study.Schedule(cells, 5, 1, false, 1), NextRun: 8}
	if err := env.Client.Status().Update(ctx, st); err != nil {
		t.Fatal(err)
	}

	report := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"study", "report"}, append(args, "--kubeconfig", kubeconfig)...), &out)
		return out.String(), err
	}
	out, err := report("cli")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Phase: Running (8 of 10 repetitions)", "tls                      |", "21.8% (19.9..23.6) p=0.0286 meaningful  <== recommended"} {
		if !strings.Contains(out, want) {
			t.Errorf("running study's report lacks %q:\n%s", want, out)
		}
	}

	// Finished: the ConfigMap is the report, whatever the status says now.
	a := study.Analyze("cli", &st.Spec, 1, cells)
	a.Report.Phase = "Succeeded"
	cm, err := study.ReportConfigMap(st, a.Report)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	st.Status.ReportConfigMap = cm.Name
	if err := env.Client.Status().Update(ctx, st); err != nil {
		t.Fatal(err)
	}
	if out, err := report("cli", "-n", "default"); err != nil || !strings.Contains(out, "Phase: Succeeded\n") {
		t.Errorf("finished study's report is not the ConfigMap's: %q, %v", out, err)
	}
	if out, err := report("cli", "-o", "markdown"); err != nil || !strings.Contains(out, "**Recommended: tls.**") {
		t.Errorf("markdown: %q, %v", out, err)
	}
	out, err = report("cli", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := study.ParseReport([]byte(out)); err != nil || r.Phase != "Succeeded" || r.Recommendation.Profile != "tls" {
		t.Errorf("json: %+v, %v", r, err)
	}

	if _, err := report("nope"); err == nil || !strings.Contains(err.Error(), "TradeoffStudy nope not found in namespace default") {
		t.Errorf("missing study: %v", err)
	}
	if out, err := report("cli", "-o", "html"); err != nil || !strings.Contains(out, `<div id="overhead" class="chart">`) {
		t.Errorf("html: %v\n%.300s", err, out)
	}
	if _, err := report("cli", "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "-o yaml: use text, markdown, json or html") {
		t.Errorf("bad format: %v", err)
	}
	if err := run(ctx, []string{"study"}, &bytes.Buffer{}); err == nil || !strings.HasPrefix(err.Error(), "usage:") {
		t.Errorf("no arguments: %v", err)
	}
}

func writeKubeconfig(t *testing.T, env *testenv.Env) string {
	t.Helper()
	c := env.Config
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest", Namespace: "default"}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
