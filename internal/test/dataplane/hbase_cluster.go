package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testpki"
)

// HBaseHosts are the loopback addresses of an HBase cluster's processes, one each.
type HBaseHosts struct {
	KDC, ZooKeeper, NameNode, DataNode, Master, RegionServer string
	// BackupMaster, when set, runs a second Master, which waits in ZooKeeper as the
	// operator's backup Master pods do.
	BackupMaster string
}

// DefaultHBaseHosts: 127.0.0.80–85.
var DefaultHBaseHosts = HBaseHosts{KDC: "127.0.0.80", ZooKeeper: "127.0.0.81", NameNode: "127.0.0.82", DataNode: "127.0.0.83", Master: "127.0.0.84", RegionServer: "127.0.0.85"}

const (
	hbaseRealm   = "SECURED.TEST"
	kdcPort      = 18800
	clientPrinc  = "smoke@" + hbaseRealm
	hbaseVersion = "2.6.4"
)

// HBaseCluster is the smallest distributed HBase: ZooKeeper, a NameNode, a DataNode, a Master
// and a RegionServer, each a JVM of its own on its own address, plus a KDC when the profile
// uses Kerberos, all configured by exactly the files internal/render/hbase renders.
type HBaseCluster struct {
	Enc      v1alpha1.EffectiveEncryption
	Hosts    HBaseHosts
	Topology hbase.Topology
	KDC      *KDC
	CA       *testpki.CA
	// StartUp: from the first process started to the Master's initialisation.
	StartUp time.Duration
	dir     string
	lib     string
	procs   map[hbase.Role]*process
	backup  *process
	// on places processes in network namespaces, by their address; client is where Smoke
	// runs. Both empty: every process on this machine's loopback.
	on     map[string]*Host
	client *Host
}

// StartHBaseCluster renders the configuration for enc and starts every process.
func StartHBaseCluster(t *testing.T, enc v1alpha1.EffectiveEncryption) *HBaseCluster {
	t.Helper()
	return StartHBaseClusterOn(t, enc, DefaultHBaseHosts)
}

// StartHBaseClusterOn starts the cluster on the given addresses.
func StartHBaseClusterOn(t *testing.T, enc v1alpha1.EffectiveEncryption, h HBaseHosts) *HBaseCluster {
	t.Helper()
	return startHBaseCluster(t, enc, h, "")
}

// StartHBaseClusterInTunnel starts every role on its host of a private underlay (on, by the
// role's address in h), bound to its tunnel address as its pod is, and runs the smoke client
// on client, a member of the tunnel too.
func StartHBaseClusterInTunnel(t *testing.T, enc v1alpha1.EffectiveEncryption, h HBaseHosts, on map[string]*Host, client *Host) *HBaseCluster {
	t.Helper()
	return startHBaseCluster(t, enc, h, "", func(c *HBaseCluster) { c.on, c.client = on, client })
}

// StartHBaseClusterIn starts the cluster with ZooKeeper's, the NameNode's and the DataNode's
// data in dataDir, as their pods keep it on their volumes.
func StartHBaseClusterIn(t *testing.T, enc v1alpha1.EffectiveEncryption, dataDir string) *HBaseCluster {
	t.Helper()
	return startHBaseCluster(t, enc, DefaultHBaseHosts, dataDir)
}

func startHBaseCluster(t *testing.T, enc v1alpha1.EffectiveEncryption, h HBaseHosts, dataDir string, options ...func(*HBaseCluster)) *HBaseCluster {
	t.Helper()
	lib, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "hbase-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving HBase jars: %v", err)
	}
	dir := t.TempDir()
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	c := &HBaseCluster{Enc: enc, Hosts: h, dir: dir, lib: strings.TrimSpace(string(lib)), procs: map[hbase.Role]*process{}, CA: testpki.New(t)}
	for _, o := range options {
		o(c)
	}
	c.Topology = hbase.Topology{
		Replication: 1, DataNodes: 1,
		Layout: hbase.Layout{DataDir: dataDir, KeytabDir: filepath.Join(dir, "keytab"), TLSDir: filepath.Join(dir, "tls"), TrustDir: filepath.Join(dir, "trust"),
			AtRestDir: filepath.Join(dir, "at-rest")},
	}
	c.Move(h)
	if enc.AtRest != nil && enc.AtRest.Engine != nil {
		writeAtRestKeys(t, c.Topology.Layout.AtRestDir)
	}
	kerberized := enc.HBase.Authentication == v1alpha1.AuthenticationKerberos
	if kerberized {
		c.setRealm()
	}
	c.Reconfigure(t, enc)
	c.ConfigureClient(t, enc)
	c.Trust(t, c.CA)
	c.IssueNodeCertificates(t)

	t.Cleanup(func() {
		if t.Failed() {
			for role, p := range c.procs {
				t.Logf("last lines of the %s before the test stopped it:\n%s", role, tail(withoutClasspath(p.LogBeforeStop()), 40))
			}
			if c.backup != nil {
				t.Logf("last lines of the backup Master before the test stopped it:\n%s", tail(withoutClasspath(c.backup.LogBeforeStop()), 40))
			}
		}
	})
	began := time.Now()
	if kerberized {
		c.startKDC(t)
	}
	zk := c.start(t, hbase.ZooKeeper, h.ZooKeeper, 256)
	format := c.in(h.NameNode, java(context.Background(), c.jvm(256, hbase.NameNode, h.NameNode, "-format", "-nonInteractive")...))
	format.Env = c.env(h.NameNode)
	if out, err := format.CombinedOutput(); err != nil {
		t.Fatalf("formatting HDFS: %v\n%s", err, tail(string(out), 30))
	}
	nn := c.start(t, hbase.NameNode, h.NameNode, 256)
	dn := c.start(t, hbase.DataNode, h.DataNode, 256)
	zk.waitFor(t, "binding to port", time.Minute)
	nn.waitFor(t, "NameNode RPC up", 2*time.Minute)
	dn.waitFor(t, "Successfully sent block report", 2*time.Minute)
	master := c.start(t, hbase.Master, h.Master, 512)
	rs := c.start(t, hbase.RegionServer, h.RegionServer, 512)
	master.waitFor(t, "Master has completed initialization", 4*time.Minute)
	rs.waitFor(t, "Serving as", time.Minute)
	if h.BackupMaster != "" {
		c.backup = c.launch(t, hbase.Master, h.BackupMaster, 512)
		c.backup.waitFor(t, "Another master is the active master", 2*time.Minute)
	}
	c.StartUp = time.Since(began)
	t.Logf("HBase cluster up in %s", c.StartUp.Round(time.Second))
	return c
}

// Move names every process by its address in h from now on, in the files Reconfigure writes
// and when a process (re)starts, as a change of every server's name does to the pods.
func (c *HBaseCluster) Move(h HBaseHosts) {
	c.Hosts = h
	c.Topology.ZooKeeper, c.Topology.NameNode = []string{h.ZooKeeper}, h.NameNode
	c.Topology.Bootstrap = []string{fmt.Sprintf("%s:%d", h.Master, hbase.MasterPort), fmt.Sprintf("%s:%d", h.RegionServer, hbase.RegionServerPort)}
	if h.BackupMaster != "" {
		c.Topology.Bootstrap = append(c.Topology.Bootstrap, fmt.Sprintf("%s:%d", h.BackupMaster, hbase.MasterPort))
	}
}

// setRealm puts the cluster in the test realm, served by a KDC on the hosts' KDC address.
func (c *HBaseCluster) setRealm() {
	c.Topology.Realm, c.Topology.KDC = hbaseRealm, fmt.Sprintf("%s:%d", c.Hosts.KDC, kdcPort)
}

// startKDC starts the realm's KDC with the service principals and the smoke client's, and
// writes the services' keytab, as the operator does before a Kerberos profile's pods start.
func (c *HBaseCluster) startKDC(t *testing.T) {
	t.Helper()
	service := c.principals()
	c.KDC = StartKDC(t, hbaseRealm, c.Hosts.KDC, kdcPort, append(slices.Clone(service), clientPrinc)...)
	c.KDC.WriteKeytab(t, c.Topology.Layout.Keytab(), service...)
}

// Reconfigure renders the files for enc over the running cluster's; a process reads them
// when it (re)starts. Each role gets a directory with only the files it reads, as its pods
// mount only their role's ConfigMap; conf/ keeps all of them for clients (krb5.conf).
func (c *HBaseCluster) Reconfigure(t *testing.T, enc v1alpha1.EffectiveEncryption) {
	t.Helper()
	files, err := hbase.Files(c.Topology, enc)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		mkfile(t, filepath.Join(c.dir, "conf", name), body)
	}
	for _, role := range hbase.Roles {
		dir := filepath.Join(c.dir, "conf", string(role))
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for name, body := range hbase.RoleFiles(files, role) {
			if name == "zoo.cfg" {
				// What a tunnelled ZooKeeper pod's start adds to the shared file. Every cluster
				// here binds it so: in a pod ZooKeeper listens on every address of its own
				// network, here on this machine's, where a second cluster beside it must not
				// find it.
				body += hbase.ZooKeeperBind(enc, c.Hosts.ZooKeeper) + "\n"
			}
			mkfile(t, filepath.Join(dir, name), body)
		}
	}
	c.Enc = enc
}

// ConfigureClient writes the client configuration Smoke uses for enc.
func (c *HBaseCluster) ConfigureClient(t *testing.T, enc v1alpha1.EffectiveEncryption) {
	t.Helper()
	mkfile(t, filepath.Join(c.dir, "client", "hbase-site.xml"), hbase.SiteXML(hbase.ClientProperties(c.Topology, enc)))
	// HBase's client says each retry and whom it waited for at WARN; without a configuration
	// reload4j says nothing at all.
	mkfile(t, filepath.Join(c.dir, "client", "log4j.properties"), clientLog4j)
}

// Restart stops a role's process (SIGTERM: HBase's servers leave
// ZooKeeper cleanly) and starts it again with the current files, keytab and certificate, as a
// rolling restart does to a pod.
func (c *HBaseCluster) Restart(t *testing.T, role hbase.Role) {
	t.Helper()
	c.procs[role].stop()
	c.restart(t, role)
}

func (c *HBaseCluster) restart(t *testing.T, role hbase.Role) {
	t.Helper()
	switch role {
	case hbase.ZooKeeper:
		// With TLS, ZooKeeper's Netty server logs "binding to port" before it loads its data
		// and binds: wait until the port accepts connections.
		zk := c.start(t, role, c.Hosts.ZooKeeper, 256)
		zk.waitFor(t, "binding to port", time.Minute)
		addr := net.JoinHostPort(c.Hosts.ZooKeeper, strconv.Itoa(hbase.ZooKeeperPort))
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = conn.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("ZooKeeper restarted but %s accepts no connection: %v", addr, err)
			}
		}
	case hbase.NameNode:
		// Back up, it stays in safe mode until the DataNode has reported its blocks again.
		nn := c.start(t, role, c.Hosts.NameNode, 256)
		nn.waitFor(t, "NameNode RPC up", 2*time.Minute)
		nn.waitFor(t, "Leaving safe mode", 2*time.Minute)
	case hbase.DataNode:
		c.start(t, role, c.Hosts.DataNode, 256).waitFor(t, "Successfully sent block report", 2*time.Minute)
	case hbase.Master:
		c.start(t, role, c.Hosts.Master, 512).waitFor(t, "Master has completed initialization", 4*time.Minute)
	case hbase.RegionServer:
		c.start(t, role, c.Hosts.RegionServer, 512).waitFor(t, "Serving as", 2*time.Minute)
	default:
		t.Fatalf("Restart supports ZooKeeper, HDFS, the Master and the RegionServer, not %s", role)
	}
}

// Trust writes the trust bundle ConfigMap's files for the CAs, newest first, as the operator
// makes them from cert-manager's.
func (c *HBaseCluster) Trust(t *testing.T, cas ...*testpki.CA) {
	t.Helper()
	writeTrust(t, c.Topology.Layout.TrustDir, cas...)
}

// writeTrust writes the trust bundle ConfigMap's files for the CAs into dir.
func writeTrust(t *testing.T, dir string, cas ...*testpki.CA) {
	t.Helper()
	var pems [][]byte
	for _, ca := range cas {
		pems = append(pems, ca.PEM)
	}
	bundle, _, _, err := certs.TrustBundle(nil, pems, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	store, err := certs.TrustStore(bundle)
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(dir, certs.BundleKey), string(bundle))
	mkfile(t, filepath.Join(dir, certs.TrustStoreKey), string(store))
}

// IssueNodeCertificates writes a certificate from c.CA for every server's address into the
// directory the processes read theirs from, as cert-manager fills the node Secret.
func (c *HBaseCluster) IssueNodeCertificates(t *testing.T) {
	t.Helper()
	h := c.Hosts
	c.CA.WriteSecretWithKey(t, c.Topology.Layout.TLSDir, false, slices.DeleteFunc([]string{h.ZooKeeper, h.NameNode, h.DataNode, h.Master, h.RegionServer, h.BackupMaster}, func(a string) bool { return a == "" })...)
}

// RotateKeys pre-publishes the next version of every key in the keytabs, the cluster's and
// the client's (the operator's RotateKeys); PromoteKeys then makes the KDC issue it.
func (c *HBaseCluster) RotateKeys(t *testing.T) {
	t.Helper()
	c.KDC.Rotate(t, append(c.principals(), clientPrinc)...)
	c.KDC.WriteKeytab(t, c.Topology.Layout.Keytab(), c.principals()...)
}

// principals are the service principals of the cluster's processes, as the operator creates
// them for the pods: zookeeper on ZooKeeper, nn and HTTP on the NameNode, dn and HTTP on the
// DataNode, hbase on the Master and the RegionServer.
func (c *HBaseCluster) principals() []string {
	h := c.Hosts
	p := []string{
		kerberos.Service(hbase.ZooKeeperService, h.ZooKeeper, hbaseRealm),
		kerberos.Service(hbase.NameNodeService, h.NameNode, hbaseRealm), kerberos.Service(hbase.HTTPService, h.NameNode, hbaseRealm),
		kerberos.Service(hbase.DataNodeService, h.DataNode, hbaseRealm), kerberos.Service(hbase.HTTPService, h.DataNode, hbaseRealm),
		kerberos.Service(hbase.HBaseService, h.Master, hbaseRealm), kerberos.Service(hbase.HBaseService, h.RegionServer, hbaseRealm),
	}
	if h.BackupMaster != "" {
		p = append(p, kerberos.Service(hbase.HBaseService, h.BackupMaster, hbaseRealm))
	}
	return p
}

func (c *HBaseCluster) env(host string) []string {
	return append(os.Environ(), hbase.HostEnv+"="+host, hbase.BindEnv+"="+host, hbase.KeystorePasswordEnv+"="+testpki.KeystorePassword)
}

func (c *HBaseCluster) jvm(heap int, role hbase.Role, host string, args ...string) []string {
	in := hbase.Install{Conf: filepath.Join(c.dir, "conf", string(role)), Resources: filepath.Join(samples.RepoRoot(), "images", "hbase", "resources"), Lib: c.lib}
	return append(hbase.JVM(in, heap, c.KDC != nil, role, host)[1:], args...)
}

// in runs cmd in the network namespace of the host at address, when the cluster has one there.
func (c *HBaseCluster) in(address string, cmd *exec.Cmd) *exec.Cmd {
	if h := c.on[address]; h != nil {
		return h.Wrap(cmd)
	}
	return cmd
}

// start launches one process of the cluster on host, the role's process from now on.
func (c *HBaseCluster) start(t *testing.T, role hbase.Role, host string, heap int) *process {
	t.Helper()
	p := c.launch(t, role, host, heap)
	c.procs[role] = p
	return p
}

func (c *HBaseCluster) launch(t *testing.T, role hbase.Role, host string, heap int) *process {
	t.Helper()
	cmd := c.in(host, java(context.Background(), c.jvm(heap, role, host)...))
	cmd.Env = c.env(host)
	return launch(t, fmt.Sprintf("%s on %s", role, host), cmd)
}

// FailOver SIGKILLs the active Master and returns when the backup Master has taken over.
func (c *HBaseCluster) FailOver(t *testing.T) {
	t.Helper()
	if c.backup == nil {
		t.Fatal("FailOver needs a cluster started with a BackupMaster")
	}
	c.procs[hbase.Master].kill()
	c.backup.waitFor(t, "Master has completed initialization", 4*time.Minute)
	c.procs[hbase.Master], c.backup = c.backup, nil
}

// Memory is the resident memory of each process, in MiB.
func (c *HBaseCluster) Memory() map[string]int {
	out := map[string]int{}
	for role, p := range c.procs {
		out[string(role)] = rssMiB(p.cmd.Process.Pid)
	}
	if c.KDC != nil {
		out["KDC"] = rssMiB(c.KDC.proc.cmd.Process.Pid)
	}
	return out
}

func rssMiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return 0
}

// Log of one role's process.
func (c *HBaseCluster) Log(role hbase.Role) string { return c.procs[role].Log() }

// Smoke creates table, puts value into three rows, gets and scans them back through HBase's
// own client, configured by hbase.ClientProperties and logged in from a keytab when the
// profile uses Kerberos.
func (c *HBaseCluster) Smoke(t *testing.T, table, value string) error {
	t.Helper()
	return c.smoke(t, table, value, nil)
}

// ReadBack gets and scans the three rows an earlier Smoke put into table, and checks that
// they hold value.
func (c *HBaseCluster) ReadBack(t *testing.T, table, value string) error {
	t.Helper()
	return c.smoke(t, table, value, nil, "-Dsmoke.readBack=true")
}

// SmokeReviving is Smoke while a kubelet watches the cluster: a process that exits by itself
// while the client runs is started again at once (Revive), and returned with its last words.
func (c *HBaseCluster) SmokeReviving(t *testing.T, table, value string) (revived []hbase.Role, lastWords string, err error) {
	t.Helper()
	err = c.smoke(t, table, value, func() {
		roles, words := c.Revive(t)
		revived, lastWords = append(revived, roles...), lastWords+words
	})
	return revived, lastWords, err
}

// smoke runs the client, calling meanwhile (when set) every second until it ends.
func (c *HBaseCluster) smoke(t *testing.T, table, value string, meanwhile func(), jvm ...string) error {
	t.Helper()
	args := append(jvm, c.clientJVM()...)
	if c.Enc.AtRest != nil && c.Enc.AtRest.Engine != nil {
		// The table's column family encrypted, and flushed, so its HFile is on HDFS too.
		args = append([]string{"-Dsmoke.encryption=AES", "-Dsmoke.flush=true"}, args...)
	}
	smoke := javaProgram(t, filepath.Join(samples.RepoRoot(), "internal", "test", "dataplane", "testdata", "HBaseSmoke.java"), c.lib+"/*")
	// The client finds its hbase-site.xml on the classpath, before the jars'.
	smoke.classpath = filepath.Join(c.dir, "client") + ":" + smoke.classpath
	args = append(args, smoke.args(table, value)...)
	if c.KDC != nil {
		keytab := filepath.Join(c.dir, "client", "smoke.keytab")
		c.KDC.WriteKeytab(t, keytab, clientPrinc)
		args = append(args, clientPrinc, keytab)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	smokeCmd := java(ctx, args...)
	if c.client != nil {
		smokeCmd = c.client.Wrap(smokeCmd)
	}
	// A client still running at the deadline prints its threads (SIGQUIT) before it is
	// killed: where it waits says which server, or which step, did not answer.
	smokeCmd.Cancel = func() error { return smokeCmd.Process.Signal(syscall.SIGQUIT) }
	smokeCmd.WaitDelay = 5 * time.Second
	var output bytes.Buffer
	smokeCmd.Stdout, smokeCmd.Stderr = &output, &output
	if err := smokeCmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- smokeCmd.Wait() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-tick.C:
			if meanwhile != nil {
				meanwhile()
			}
		}
	}
	out := output.String() // Wait has returned: nothing writes to it any more
	if ctx.Err() != nil {
		log, _, _ := strings.Cut(out, "Full thread dump")
		return fmt.Errorf("no answer in 3 minutes (%v); the client's last words:\n%s\nits main thread:\n%s", err, tail(log, 20), javaThread(out, "main"))
	}
	if err != nil || !strings.Contains(out, "smoke ok") {
		return fmt.Errorf("%v\n%s", err, tail(out, 40))
	}
	return nil
}

const clientLog4j = `log4j.rootLogger=WARN,stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%d{HH:mm:ss,SSS} %p [%t] %c{1}: %m%n
`

// javaThread is one thread's stack from a JVM's thread dump: its quoted name's line up to the
// blank line that ends it.
func javaThread(dump, name string) string {
	start := strings.Index(dump, "\n\""+name+"\" ")
	if start < 0 {
		return "(no thread dump)\n" + tail(dump, 40)
	}
	stack := dump[start+1:]
	if end := strings.Index(stack, "\n\n"); end >= 0 {
		stack = stack[:end]
	}
	return stack
}

// driverTarget: the YCSB driver reaches the cluster as the operator's benchmark Jobs do, with
// hbase.ClientProperties, logged in as the smoke client when the profile uses Kerberos.
func (c *HBaseCluster) driverTarget(t *testing.T) (map[string]string, []string) {
	t.Helper()
	props := hbase.ClientProperties(c.Topology, c.Enc)
	var jvm []string
	if c.KDC != nil {
		keytab := filepath.Join(c.dir, "client", "smoke.keytab")
		c.KDC.WriteKeytab(t, keytab, clientPrinc)
		props["principal"], props["keytab"] = clientPrinc, keytab
		jvm = append(jvm, "-Djava.security.krb5.conf="+filepath.Join(c.dir, "conf", "krb5.conf"))
	}
	return props, jvm
}

// Stop ends every process of the cluster, as deleting its pods does.
func (c *HBaseCluster) Stop() {
	for _, role := range []hbase.Role{hbase.RegionServer, hbase.Master, hbase.DataNode, hbase.NameNode, hbase.ZooKeeper} {
		if p, ok := c.procs[role]; ok {
			p.stop()
		}
	}
	if c.backup != nil {
		c.backup.stop()
	}
}

// Revive starts again every role whose process ended by itself, as the kubelet restarts a
// container that exited, and returns those roles with the last words of the ones that died.
func (c *HBaseCluster) Revive(t *testing.T) (roles []hbase.Role, lastWords string) {
	t.Helper()
	for _, role := range []hbase.Role{hbase.ZooKeeper, hbase.NameNode, hbase.DataNode, hbase.Master, hbase.RegionServer} {
		if p, ok := c.procs[role]; ok && !p.alive() {
			lastWords += fmt.Sprintf("%s:\n%s%s\n", role, abortReason(p.Log()), tail(withoutClasspath(p.Log()), 5))
			roles = append(roles, role)
			c.restart(t, role)
		}
	}
	return roles, lastWords
}

// abortReason is the line an HBase server logs when it aborts itself ("***** ABORTING region
// server ...: WAL sync timeout ..."), which its shutdown's last lines no longer show.
func abortReason(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "***** ABORTING") {
			return line + "\n"
		}
	}
	return ""
}

// Kill ends a role's process with SIGKILL, as a crash or an OOM kill does, and starts it again
// at once with the same address, files and keytab, as the kubelet restarts a container; it
// returns when the process serves again.
func (c *HBaseCluster) Kill(t *testing.T, role hbase.Role) {
	t.Helper()
	c.procs[role].kill()
	c.restart(t, role)
}

func (c *HBaseCluster) clientJVM() []string {
	jvm := []string{"-Xmx256m", "-Djava.net.preferIPv4Stack=true"}
	if c.KDC != nil {
		jvm = append(jvm, "-Djava.security.krb5.conf="+filepath.Join(c.dir, "conf", "krb5.conf"))
	}
	return append(jvm, hbase.JDK17Options...)
}

// withoutClasspath drops Hadoop's start-up line listing every jar.
func withoutClasspath(log string) string {
	lines := strings.Split(log, "\n")
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return strings.Contains(l, "classpath = ") }), "\n")
}

func mkfile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, path, body)
}
