package dataplane

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// process is a datastore process a test started: its output is kept for failure messages,
// and it runs in a process group of its own, so stopping it stops only what the test started.
type process struct {
	cmd    *exec.Cmd
	what   string
	exited chan struct{} // closed when its output ends
	mu     sync.Mutex
	log    bytes.Buffer
	// stopped is how much it had printed when the test stopped it (0: not stopped), so a
	// failure shows what led to it rather than the shutdown the test's end caused.
	stopped int
}

// startProcess starts cmd and waits until it prints a line containing ready.
func startProcess(t testing.TB, what string, cmd *exec.Cmd, ready string, timeout time.Duration) *process {
	t.Helper()
	p := launch(t, what, cmd)
	p.waitFor(t, ready, timeout)
	return p
}

// launch starts cmd without waiting; the test's end kills it: what it would do on a graceful
// stop (HBase's servers close their regions and WALs, up to 20 s each) matters to no check.
func launch(t testing.TB, what string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, what: what, exited: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.kill)
	go func() {
		defer close(p.exited)
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			p.mu.Lock()
			p.log.WriteString(s.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	return p
}

// waitFor waits until the process has printed a line containing ready.
func (p *process) waitFor(t testing.TB, ready string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(p.Log(), ready) {
			return
		}
		select {
		case <-p.exited:
			if strings.Contains(p.Log(), ready) {
				return
			}
			t.Fatalf("%s exited before it was ready; last log lines:\n%s", p.what, tail(withoutClasspath(p.Log()), 30))
		case <-deadline:
			t.Fatalf("%s not ready in %s; last log lines:\n%s", p.what, timeout, tail(withoutClasspath(p.Log()), 30))
		case <-tick.C:
		}
	}
}

// alive reports whether the process still runs: a child it left behind (wireguard-go) can
// keep its work going after it died, so its output ending proves nothing.
func (p *process) alive() bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')') // the state follows the parenthesised command name
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// Log returns what the process printed so far.
func (p *process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// LogBeforeStop returns what the process printed before the test stopped it.
func (p *process) LogBeforeStop() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped > 0 {
		return string(p.log.Bytes()[:p.stopped])
	}
	return p.log.String()
}

// markStopped records how much the process had printed, the first time it is stopped.
func (p *process) markStopped() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped == 0 {
		p.stopped = p.log.Len()
	}
}

// stoppedByTest reports whether the test stopped or killed the process.
func (p *process) stoppedByTest() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped > 0
}

// stop ends the process group: SIGTERM, then SIGKILL after 20 s.
func (p *process) stop() {
	if p.cmd.Process == nil || p.cmd.ProcessState != nil {
		return // never started, or already stopped
	}
	p.markStopped()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// kill ends the process group with SIGKILL at once, as a crash or an OOM kill does: nothing is
// flushed.
func (p *process) kill() {
	if p.cmd.Process == nil || p.cmd.ProcessState != nil {
		return
	}
	p.markStopped()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
