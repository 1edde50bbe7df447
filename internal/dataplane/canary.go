package dataplane

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Marker returns a value no capture contains by chance, to write through a real client.
func Marker(t testing.TB) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "canary-" + hex.EncodeToString(b)
}

// Capture records the TCP traffic to and from the ports on the loopback interface with
// tcpdump while fn runs, and returns the raw pcap. It is the confidentiality canary's eye: a
// marker written through the real client must be absent from the capture of an encrypted
// channel and present in that of a plaintext one.
func Capture(t testing.TB, ports []int, fn func()) []byte {
	t.Helper()
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Fatalf("the confidentiality canary needs tcpdump (make prereqs installs it): %v", err)
	}
	filter := make([]string, len(ports))
	for i, p := range ports {
		filter[i] = fmt.Sprintf("tcp port %d", p)
	}
	file := filepath.Join(t.TempDir(), "capture.pcap")
	// --immediate-mode: packets reach tcpdump as they arrive, not when a kernel buffer block
	// fills or times out, so stopping it right after fn loses nothing. -Z root: tcpdump would
	// otherwise drop to its own user, who cannot write the test's private temporary directory.
	cmd := exec.Command(tcpdump, "-i", "lo", "--immediate-mode", "-U", "-n", "-s", "0", "-Z", "root", "-w", file, strings.Join(filter, " or "))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 2)
	go func() {
		s := bufio.NewScanner(stderr)
		var seen []string
		for s.Scan() {
			seen = append(seen, s.Text())
			if strings.Contains(s.Text(), "listening on") {
				listening <- ""
			}
		}
		listening <- strings.Join(seen, "\n")
	}()
	select {
	case msg := <-listening:
		if msg != "" {
			_ = cmd.Wait()
			t.Fatalf("tcpdump stopped before capturing (capturing needs CAP_NET_RAW): %s", msg)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("tcpdump did not start listening in 10s")
	}

	fn()
	time.Sleep(500 * time.Millisecond) // let the last segments reach the capture
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
