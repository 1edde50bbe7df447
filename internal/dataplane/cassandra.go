// Package dataplane starts real datastore processes on this machine for tests: Cassandra from
// its Maven Central jars, configured with exactly the files the operator's builders render, and
// TLS material shaped like cert-manager's Secrets.
package dataplane

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/samples"
	"secured.dev/operator/internal/testpki"
)

// CassandraNode is a running Cassandra process.
type CassandraNode struct {
	Address string // listen address (loopback)
	Dir     string
	cmd     *exec.Cmd
	log     *bytes.Buffer
}

// NativeAddress is the node's CQL endpoint.
func (n *CassandraNode) NativeAddress() string {
	return fmt.Sprintf("%s:%d", n.Address, cassandra.NativePort)
}

// StorageAddress is the node's internode endpoint.
func (n *CassandraNode) StorageAddress() string {
	return fmt.Sprintf("%s:%d", n.Address, cassandra.StoragePort)
}

// StartCassandra renders the node's files from the effective profile with the operator's
// builders, starts Cassandra with the image's launcher, waits for "Startup complete" and stops
// the process (by its PID) when the test ends.
func StartCassandra(t testing.TB, address string, enc v1alpha1.EffectiveEncryption, ca *testpki.CA) *CassandraNode {
	t.Helper()
	root := samples.RepoRoot()
	lib, err := exec.Command(filepath.Join(root, "hack", "cassandra-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving Cassandra jars: %v", err)
	}
	dir := t.TempDir()
	home, conf, tlsDir := filepath.Join(dir, "home"), filepath.Join(dir, "conf"), filepath.Join(dir, "tls")
	for _, d := range []string{home, conf, filepath.Join(dir, "data"), filepath.Join(dir, "log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(strings.TrimSpace(string(lib)), filepath.Join(home, "lib")); err != nil {
		t.Fatal(err)
	}
	if ca != nil {
		ca.WriteSecret(t, tlsDir, address)
	}
	topo := cassandra.Topology{ClusterName: "dataplane", Datacenter: "dc1", Seeds: []string{address},
		ListenAddress: address, Layout: cassandra.Layout{DataDir: filepath.Join(dir, "data"), TLSDir: tlsDir}}
	yaml, err := cassandra.Config(topo, cassandra.Target(enc))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"cassandra.yaml":              yaml,
		"cassandra-rackdc.properties": cassandra.RackDC(topo),
		"jvm-server.options":          cassandra.JVMOptions(cassandra.JVM{HeapMiB: 512}, enc),
	}
	for _, f := range []string{"jvm17-server.options", "logback.xml", "logback-tools.xml"} {
		b, err := os.ReadFile(filepath.Join(root, "images", "cassandra", "conf", f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(conf, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	n := &CassandraNode{Address: address, Dir: dir, log: &bytes.Buffer{}}
	n.cmd = exec.Command(filepath.Join(root, "images", "cassandra", "bin", "cassandra"), "-f")
	n.cmd.Env = append(os.Environ(), "CASSANDRA_HOME="+home, "CASSANDRA_CONF="+conf,
		"CASSANDRA_DATA="+filepath.Join(dir, "data"), "CASSANDRA_LOG_DIR="+filepath.Join(dir, "log"))
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n.cmd.Stderr = n.cmd.Stdout
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.stop)

	ready := make(chan error, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			line := s.Text()
			n.log.WriteString(line + "\n")
			if strings.Contains(line, "Startup complete") {
				ready <- nil
			}
		}
		ready <- fmt.Errorf("Cassandra exited before it was ready")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("%v; last log lines:\n%s", err, tail(n.log.String(), 30))
		}
	case <-ctx.Done():
		t.Fatalf("Cassandra on %s not ready in 4 minutes; last log lines:\n%s", address, tail(n.log.String(), 30))
	}
	return n
}

// Log returns what the node logged so far.
func (n *CassandraNode) Log() string { return n.log.String() }

func (n *CassandraNode) stop() {
	if n.cmd.Process == nil {
		return
	}
	// The launcher execs java, so the PID is the JVM's; its process group holds nothing else.
	_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
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
