package benchmark

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
)

// hostile are values a user or a compromised datastore status could put in any string that
// reaches a benchmark Job. NUL is left out: no argv or environment can carry it.
func hostile(marker string) []string {
	return []string{
		`'; touch ` + marker + `; '`,
		`"$(touch ` + marker + `)"`,
		"`touch " + marker + "`",
		"$(touch " + marker + ")",
		"a;touch " + marker,
		"line\ntouch " + marker,
		`\'$HOME\\`,
		"$(JOB_COMPLETION_INDEX)",
		"$$(JOB_COMPLETION_INDEX)",
		strings.Repeat("x'$", 4000),
	}
}

// kubelet applies the kubelet's expansion of $(VAR) references in commands, arguments and
// environment values, for the variables the pod defines: $$ is a literal $.
func kubelet(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "$("):
			if end := strings.IndexByte(s[i:], ')'); end > 0 {
				if v, ok := vars[s[i+2:i+end]]; ok {
					b.WriteString(v)
					i += end
					continue
				}
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// The HBase driver's command runs in a real shell with a java that records its arguments:
// every hostile property arrives as one argument, unchanged, and none runs.
func TestHostileValuesStayInertInTheHBaseDriverCommand(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "PWNED")
	values := hostile(marker)
	props := map[string]string{}
	for i, v := range values {
		props["hostile."+string(rune('a'+i))] = v
	}
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "db"},
		Spec: v1alpha1.DatastoreBenchmarkSpec{Workload: v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](10)},
			Load: v1alpha1.Load{ClientPods: ptr.To[int32](2)}},
	}
	for _, phase := range []string{PhaseLoad, PhaseRun} {
		job, err := Build(Job{Benchmark: b, Phase: phase, Image: "ycsb", RemoteWriteURL: values[0],
			Target: Target{Datastore: "events", Profile: values[1], HBase: &HBaseTarget{Properties: props, Principal: values[2]}}})
		if err != nil {
			t.Fatal(err)
		}
		cmd := job.Spec.Template.Spec.Containers[0].Command
		if cmd[0] != "sh" || cmd[1] != "-c" {
			t.Fatalf("command %q", cmd[:2])
		}
		for _, v := range values {
			if strings.Contains(cmd[2], v) {
				t.Fatalf("a hostile value is in the script text: %q", cmd[2])
			}
		}
		fakeJava := filepath.Join(dir, "java")
		// The fake java writes each argument followed by a NUL.
		if err := os.WriteFile(fakeJava, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"JOB_COMPLETION_INDEX": "1"}
		argv := make([]string, len(cmd))
		for i, a := range cmd {
			argv[i] = kubelet(a, env)
		}
		run := exec.Command(argv[0], argv[1:]...)
		run.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "JOB_COMPLETION_INDEX=1"}
		out, err := run.Output()
		if err != nil {
			t.Fatalf("%s phase: %v", phase, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		for k, v := range props {
			if !slices.Contains(got, k+"="+v) {
				t.Errorf("%s phase: java did not receive %q as one argument", phase, k+"="+v)
			}
		}
		if !slices.Contains(got, "profile="+values[1]) || !slices.Contains(got, "prometheus.remotewrite.url="+values[0]) || !slices.Contains(got, "principal="+values[2]) {
			t.Errorf("%s phase: the profile, the remote-write URL or the principal did not arrive unchanged", phase)
		}
		if phase == PhaseLoad && !slices.Contains(got, "insertstart=5") {
			t.Errorf("load phase: the pod's share is not computed: %q", got)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s phase: a hostile value ran a command", phase)
		}
	}
}

// The k6 driver takes no shell: its hostile values must survive the kubelet's expansion.
func TestHostileValuesStayInertInTheK6Environment(t *testing.T) {
	// YCSB_PHASE comes first in the Job's environment: a later value naming it would take its value.
	values := append(hostile("/tmp/never"), "$(YCSB_PHASE)")
	b := &v1alpha1.DatastoreBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "db"}}
	job, err := Build(Job{Benchmark: b, Phase: PhaseRun, Image: "k6", RemoteWriteURL: values[2],
		Target: Target{Datastore: "events", Profile: values[len(values)-1], Hosts: []string{values[4]}, TLS: &TLS{Protocol: "TLSv1.3", CipherSuite: values[5], ServerName: values[6]}}})
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	vars := map[string]string{}
	for _, e := range c.Env {
		vars[e.Name] = kubelet(e.Value, vars) // the kubelet expands references to earlier variables
	}
	for name, want := range map[string]string{"K6_PROMETHEUS_RW_SERVER_URL": values[2], "YCSB_PROFILE": values[len(values)-1], "CQL_HOSTS": values[4],
		"CQL_TLS_CIPHER_SUITE": values[5], "CQL_TLS_SERVER_NAME": values[6]} {
		if vars[name] != want {
			t.Errorf("%s = %q after the kubelet's expansion, want %q", name, vars[name], want)
		}
	}
	if c.Command != nil {
		t.Errorf("the k6 container runs a command %q; its image's entrypoint is k6 itself", c.Command)
	}
}
