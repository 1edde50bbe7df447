package dataplane

import (
	"bufio"
	"bytes"
	"fmt"
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
	cmd *exec.Cmd
	mu  sync.Mutex
	log bytes.Buffer
}

// startProcess starts cmd and waits until it prints a line containing ready.
func startProcess(t testing.TB, what string, cmd *exec.Cmd, ready string, timeout time.Duration) *process {
	t.Helper()
	p := &process{cmd: cmd}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		seen := false
		for s.Scan() {
			line := s.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if !seen && strings.Contains(line, ready) {
				seen = true
				started <- nil
			}
		}
		if !seen {
			started <- fmt.Errorf("%s exited before it was ready", what)
		}
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("%v; last log lines:\n%s", err, tail(p.Log(), 30))
		}
	case <-time.After(timeout):
		p.stop()
		t.Fatalf("%s not ready in %s; last log lines:\n%s", what, timeout, tail(p.Log(), 30))
	}
	return p
}

// Log returns what the process printed so far.
func (p *process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// stop ends the process group: SIGTERM, then SIGKILL after 20 s.
func (p *process) stop() {
	if p.cmd.Process == nil || p.cmd.ProcessState != nil {
		return // never started, or already stopped
	}
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

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
