package dataplane

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"secured.dev/operator/internal/test/samples"
)

// The TLS reloader is PID 1 of its container, where the kernel drops any signal the process
// has no handler for: it must still stop on the kubelet's SIGTERM, or every TLS pod takes its
// whole termination grace period to stop (it did: two minutes per pod). A new PID namespace
// makes it PID 1 here too.
func TestReloaderStopsOnSIGTERMAsPID1(t *testing.T) {
	script := filepath.Join(samples.RepoRoot(), "images", "cassandra", "bin", "reload-tls")
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child", script)
	cmd.Env = []string{"TLS_DIR=" + t.TempDir(), "RELOAD_INTERVAL=60", "PATH=/usr/bin:/bin"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done, waitErr := make(chan struct{}), error(nil)
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})

	// Its first line comes after the trap is set.
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.Contains(line, "reload-tls: watching") {
		t.Fatalf("the reloader did not start: %q, %v", line, err)
	}
	children, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/task/" + strconv.Itoa(cmd.Process.Pid) + "/children")
	if err != nil {
		t.Fatal(err)
	}
	pid1, err := strconv.Atoi(strings.TrimSpace(string(children)))
	if err != nil {
		t.Fatalf("unshare's child, the namespace's PID 1: %q: %v", children, err)
	}
	if err := syscall.Kill(pid1, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		if waitErr != nil {
			t.Errorf("the reloader stopped on SIGTERM, but not cleanly: %v", waitErr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the reloader, PID 1 of its namespace, ignored SIGTERM: its pod would stop only when the grace period ends")
	}
}
