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

	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/samples"
	"secured.dev/operator/internal/testpki"
)

// CassandraNode is a running Cassandra process.
type CassandraNode struct {
	Node
	Dir  string
	conf string
	home string
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

// Node describes one Cassandra process to start.
type Node struct {
	// Address: the listen address, a loopback address of its own (127.0.0.x).
	Address string
	// Seeds: addresses of the seed nodes; defaults to the node itself.
	Seeds []string
	// JMXPort for nodetool; defaults to 7199. Nodes on one machine need their own.
	JMXPort int
	// Step: the encryption the builders render.
	Step cassandra.Step
	// CA signs the node's certificate (for its address); nil when no channel uses TLS.
	CA *testpki.CA
	// RSAKey: the certificate has an RSA key (suites with _RSA_ authentication), else ECDSA.
	RSAKey bool
}

// NativeAddress is the node's CQL endpoint.
func (n *CassandraNode) NativeAddress() string {
	return fmt.Sprintf("%s:%d", n.Address, cassandra.NativePort)
}

// StorageAddress is the node's internode endpoint.
func (n *CassandraNode) StorageAddress() string {
	return fmt.Sprintf("%s:%d", n.Address, cassandra.StoragePort)
}

// StartCassandra renders the node's files with the operator's builders, starts Cassandra with
// the image's launcher, waits for "Startup complete" and stops the process (by its PID) when
// the test ends.
func StartCassandra(t testing.TB, node Node) *CassandraNode {
	t.Helper()
	if len(node.Seeds) == 0 {
		node.Seeds = []string{node.Address}
	}
	if node.JMXPort == 0 {
		node.JMXPort = cassandra.JMXPort
	}
	address, enc := node.Address, node.Step.Encryption
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
	if node.CA != nil {
		node.CA.WriteSecretWithKey(t, tlsDir, node.RSAKey, address)
	}
	topo := cassandra.Topology{ClusterName: "dataplane", Datacenter: "dc1", Seeds: node.Seeds,
		ListenAddress: address, Layout: cassandra.Layout{DataDir: filepath.Join(dir, "data"), TLSDir: tlsDir}}
	yaml, err := cassandra.Config(topo, node.Step)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"cassandra.yaml":              yaml,
		"cassandra-rackdc.properties": cassandra.RackDC(topo),
		"jvm-server.options":          cassandra.JVMOptions(cassandra.JVM{HeapMiB: 512, JMXPort: node.JMXPort}, enc),
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

	n := &CassandraNode{Node: node, Dir: dir, conf: conf, home: home, log: &bytes.Buffer{}}
	n.cmd = exec.Command(filepath.Join(root, "images", "cassandra", "bin", "cassandra"), "-f")
	// A short ring delay: joining nodes on loopback learn the ring in well under a second.
	n.cmd.Env = append(n.env(), "CASSANDRA_DATA="+filepath.Join(dir, "data"), "CASSANDRA_LOG_DIR="+filepath.Join(dir, "log"),
		"JVM_EXTRA_OPTS=-Dcassandra.ring_delay_ms=3000 -Dcassandra.skip_wait_for_gossip_to_settle=0")
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

func (n *CassandraNode) env() []string {
	return append(os.Environ(), "CASSANDRA_HOME="+n.home, "CASSANDRA_CONF="+n.conf, fmt.Sprintf("JMX_PORT=%d", n.JMXPort))
}

// Nodetool runs the image's nodetool against this node and returns its output.
func (n *CassandraNode) Nodetool(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(samples.RepoRoot(), "images", "cassandra", "bin", "nodetool"), args...)
	cmd.Env = n.env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TLSDir holds the node's certificate files, shaped like the mounted Secret.
func (n *CassandraNode) TLSDir() string { return filepath.Join(n.Dir, "tls") }

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
