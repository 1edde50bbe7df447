// Package dataplane starts real datastore processes on this machine for tests: Cassandra from
// its Maven Central jars, configured with exactly the files the operator's builders render, and
// TLS material shaped like cert-manager's Secrets.
package dataplane

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/datakeys"
	"secured.dev/operator/internal/render/vpn"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testpki"
)

// CassandraNode is a running Cassandra process.
type CassandraNode struct {
	Node
	Dir  string
	conf string
	home string
	proc *process
	// atRestKeys: the node has the at-rest keystore (it started encrypting at rest), which stays
	// configured when a later step does not encrypt.
	atRestKeys bool
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
	// PasswordAuthentication: CQL clients log in (a datastore's default); tests of other
	// concerns run without.
	PasswordAuthentication bool
	// CertificateAuthentication: with PasswordAuthentication, clients are authenticated by
	// the SPIFFE ID in their certificate (a datastore's setting once the identities are mapped).
	CertificateAuthentication bool
	// CA signs the node's certificate (for its address and DNSNames); nil when no channel uses
	// TLS.
	CA       *testpki.CA
	DNSNames []string
	// RSAKey: the certificate has an RSA key (suites with _RSA_ authentication), else ECDSA.
	RSAKey bool
	// Host: the network namespace the node runs in, Address being its underlay address; nil
	// runs it on this machine's loopback.
	Host *Host
	// Tunnel: the node is the member Name of this VPN, and the launcher binds its tunnel
	// address as it does in a pod; Seeds are then tunnel addresses.
	Tunnel *vpn.Plan
	Name   string
	// DataDir: the node's data directory, as a pod mounts its data volume there (an encrypted
	// volume's, say); defaults to a directory of the node's own.
	DataDir string
	// HeapMiB: the JVM's heap; 512 when zero, which suits the tests' small tables.
	HeapMiB int64
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
	lib, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "cassandra-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving Cassandra jars: %v", err)
	}
	dir := t.TempDir()
	if node.DataDir == "" {
		node.DataDir = filepath.Join(dir, "data")
	}
	n := &CassandraNode{Node: node, Dir: dir, conf: filepath.Join(dir, "conf"), home: filepath.Join(dir, "home")}
	for _, d := range []string{n.home, n.conf, node.DataDir, filepath.Join(dir, "log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(strings.TrimSpace(string(lib)), filepath.Join(n.home, "lib")); err != nil {
		t.Fatal(err)
	}
	if node.CA != nil {
		node.CA.WriteSecretWithKey(t, n.TLSDir(), node.RSAKey, append([]string{node.Address}, node.DNSNames...)...)
	}
	if encryptsAtRest(node.Step) {
		writeAtRestKeys(t, n.AtRestDir())
		n.atRestKeys = true
	}
	n.render(t)
	n.launch(t)
	return n
}

// AtRestDir holds the node's at-rest keystore and password, shaped like the mounted Secret.
func (n *CassandraNode) AtRestDir() string { return filepath.Join(n.Dir, "at-rest") }

func encryptsAtRest(s cassandra.Step) bool {
	return s.Encryption.AtRest != nil && s.Encryption.AtRest.Engine != nil
}

// writeAtRestKeys writes the files of the operator's at-rest Secret into dir.
func writeAtRestKeys(t testing.TB, dir string) {
	t.Helper()
	data, err := datakeys.AtRestData(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range data {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Kill ends the node with SIGKILL, as a crash does: what is only in the commit log stays there.
func (n *CassandraNode) Kill() {
	if n.proc != nil {
		n.proc.kill()
	}
}

// Start starts a node that was killed or stopped again, with the same files and data: its
// commit log is replayed.
func (n *CassandraNode) Start(t testing.TB) {
	t.Helper()
	n.launch(t)
}

// Restart stops the node and starts it again with the files rendered for another step, as a
// rolling restart of its pod would; data and certificates stay.
func (n *CassandraNode) Restart(t testing.TB, step cassandra.Step) {
	t.Helper()
	n.stop()
	n.Step = step
	n.render(t)
	n.launch(t)
}

// render writes the node's configuration for its step.
func (n *CassandraNode) render(t testing.TB) {
	t.Helper()
	topo := cassandra.Topology{ClusterName: "dataplane", Datacenter: "dc1", Seeds: n.Seeds,
		ListenAddress: n.Address, RPCAddress: n.Address, Layout: cassandra.Layout{DataDir: n.DataDir, TLSDir: n.TLSDir(), AtRestDir: n.AtRestDir()},
		PasswordAuthentication: n.PasswordAuthentication, CertificateAuthentication: n.CertificateAuthentication, AtRestKeys: n.atRestKeys}
	if n.Tunnel != nil {
		// The launcher sets both addresses, the tunnel's from the address table and the
		// pod's from POD_IP, as in a pod.
		topo.ListenAddress, topo.RPCAddress = "", ""
	}
	yaml, err := cassandra.Config(topo, n.Step)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"cassandra.yaml":              yaml,
		"cassandra-rackdc.properties": cassandra.RackDC(topo),
		"jvm-server.options":          cassandra.JVMOptions(cassandra.JVM{HeapMiB: cmp.Or(n.HeapMiB, 512), JMXPort: n.JMXPort}, n.Step.Encryption),
	}
	for _, f := range []string{"jvm17-server.options", "logback.xml", "logback-tools.xml"} {
		b, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "images", "cassandra", "conf", f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	if n.Tunnel != nil {
		files[cassandra.VPNAddressesFile] = n.Tunnel.Addresses()
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(n.conf, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// launch starts the process and waits until Cassandra reports "Startup complete".
func (n *CassandraNode) launch(t testing.TB) {
	t.Helper()
	cmd := n.command(filepath.Join(samples.RepoRoot(), "images", "cassandra", "bin", "cassandra"), "-f")
	// A short ring delay: joining nodes on loopback learn the ring in well under a second.
	extra := "-Dcassandra.ring_delay_ms=3000 -Dcassandra.skip_wait_for_gossip_to_settle=0"
	if quickJVM {
		extra += " " + quickJIT // not quickGC: Cassandra chooses G1
	}
	cmd.Env = append(n.env(), "CASSANDRA_DATA="+n.DataDir, "CASSANDRA_LOG_DIR="+filepath.Join(n.Dir, "log"),
		"JVM_EXTRA_OPTS="+extra,
		cassandra.AtRestPasswordFileVariable+"="+filepath.Join(n.AtRestDir(), datakeys.PasswordFile), "TMPDIR="+n.Dir)
	if n.Tunnel != nil {
		for _, e := range vpn.Env(*n.Tunnel, filepath.Join(n.conf, cassandra.VPNAddressesFile)) {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
				e.Value = n.Address // the downward API's part
			}
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		cmd.Env = append(cmd.Env, "HOSTNAME="+n.Name)
	}
	// The launcher execs java, so the process group holds the JVM and nothing else.
	n.proc = startProcess(t, "Cassandra on "+n.Address, cmd, "Startup complete", 4*time.Minute)
}

// command runs a program on the node's host.
func (n *CassandraNode) command(name string, args ...string) *exec.Cmd {
	if n.Host != nil {
		return n.Host.Command(name, args...)
	}
	return exec.Command(name, args...)
}

func (n *CassandraNode) env() []string {
	return append(os.Environ(), "CASSANDRA_HOME="+n.home, "CASSANDRA_CONF="+n.conf, fmt.Sprintf("JMX_PORT=%d", n.JMXPort))
}

// Nodetool runs the image's nodetool against this node and returns its output.
func (n *CassandraNode) Nodetool(args ...string) (string, error) {
	cmd := n.command(filepath.Join(samples.RepoRoot(), "images", "cassandra", "bin", "nodetool"), args...)
	cmd.Env = n.env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TLSDir holds the node's certificate files, shaped like the mounted Secret.
func (n *CassandraNode) TLSDir() string { return filepath.Join(n.Dir, "tls") }

// Endpoint is one port of a node: its channel, what the profile promises there and how to
// probe it.
type Endpoint struct {
	Channel string
	Want    v1alpha1.EffectiveChannel
	Address string
	Probe   probe.Options
}

// Endpoints are the node's CQL and internode ports under the profile.
func (n *CassandraNode) Endpoints(enc v1alpha1.EffectiveEncryption) []Endpoint {
	return []Endpoint{
		{"clientToNode", enc.ClientToNode, n.NativeAddress(), probe.CassandraClient},
		{"nodeToNode", enc.NodeToNode, n.StorageAddress(), probe.CassandraInternode},
	}
}

// Log returns what the node logged so far.
func (n *CassandraNode) Log() string { return n.proc.Log() }

func (n *CassandraNode) stop() {
	if n.proc != nil {
		n.proc.stop()
	}
}

// Pid is the Cassandra JVM's process id, for benchmarks that pin it to cores or account its
// CPU.
func (n *CassandraNode) Pid() int { return n.proc.cmd.Process.Pid }
