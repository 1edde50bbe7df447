package k6ycsb

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/test/gobuild"
	"secured.dev/operator/internal/test/samples"
)

// k6 builds the product's k6 binary (cmd/k6) once per test binary.
func k6(t testing.TB) string { return gobuild.Command(t, "secured.dev/operator/cmd/k6") }

// runK6 runs bench/k6/ycsb.js with the environment given and returns the summary the
// operator would read, and k6's output.
func runK6(t testing.TB, env map[string]string, extraArgs ...string) (benchresult.Summary, string, error) {
	t.Helper()
	return k6Command{env: env, args: extraArgs}.run(t)
}

// k6Command is one run of bench/k6/ycsb.js.
type k6Command struct {
	env  map[string]string
	args []string // k6's flags
	// cpus pins k6 to these CPUs (taskset's list); empty leaves it to the scheduler.
	cpus string
	// cpu, when set, follows k6's CPU from start to exit.
	cpu *cpuTrace
}

func (c k6Command) run(t testing.TB) (benchresult.Summary, string, error) {
	t.Helper()
	summaryFile := filepath.Join(t.TempDir(), "summary.json")
	args := append([]string{"run", "--quiet", "--no-usage-report", "--no-color"}, c.args...)
	args = append(args, filepath.Join(samples.RepoRoot(), "bench", "k6", "ycsb.js"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k6(t), args...)
	if c.cpus != "" {
		// taskset execs k6, so the process id stays k6's.
		cmd = exec.CommandContext(ctx, "taskset", append([]string{"-c", c.cpus, k6(t)}, args...)...)
	}
	cmd.Env = append(os.Environ(), "YCSB_SUMMARY_FILE="+summaryFile)
	keys := make([]string, 0, len(c.env))
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		if c.cpu != nil {
			c.cpu.follow(cmd.Process.Pid)
		}
		err = cmd.Wait()
		if c.cpu != nil {
			c.cpu.exited(cmd.ProcessState)
		}
	}
	t.Logf("k6 %s (%s)", strings.Join(keys, " "), time.Since(start).Round(time.Millisecond))
	// k6 writes the summary however the script ended: a failed run's says why it failed.
	var s benchresult.Summary
	b, readErr := os.ReadFile(summaryFile)
	if readErr == nil {
		s, readErr = benchresult.Parse(b)
	}
	return s, out.String(), cmp.Or(err, readErr)
}
