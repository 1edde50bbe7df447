package dataplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testpki"
)

// HBaseStandalone is one HBase process in standalone mode: master, region server and an
// embedded ZooKeeper in one JVM, on the local file system, no security. It is what the
// benchmark driver's own test needs; the secured, distributed HBase has its own harness.
type HBaseStandalone struct {
	// Address the master and region server bind to (a loopback address of its own).
	Address string
	// ZooKeeperPort of the embedded ZooKeeper, which always binds 127.0.0.1.
	ZooKeeperPort int
	// Security of its RPC.
	Security HBaseSecurity
	proc     *process
}

// HBaseSecurity is how HBase RPC is secured: Kerberos (SASL) and native TLS, each optional.
type HBaseSecurity struct {
	Kerberos *HBaseKerberos
	// TLS: native TLS on every RPC port, plaintext refused, with a certificate from this CA.
	TLS *testpki.CA
	// tlsDir holds the server's certificate files once started.
	tlsDir string
}

// ClientProperties are what a client sets to reach an HBase secured this way.
func (s HBaseSecurity) ClientProperties() map[string]string {
	p := map[string]string{}
	if s.Kerberos != nil {
		for k, v := range s.Kerberos.ClientProperties() {
			p[k] = v
		}
	}
	if s.TLS != nil {
		p["hbase.client.netty.tls.enabled"] = "true"
		p["hbase.rpc.tls.truststore.location"] = filepath.Join(s.tlsDir, "ca.crt")
		p["hbase.rpc.tls.truststore.type"] = "PEM"
	}
	return p
}

// HBaseKerberos is Kerberos authentication of HBase RPC at a SASL protection level.
type HBaseKerberos struct {
	KDC *KDC
	// Protection: authentication, integrity or privacy (hbase.rpc.protection).
	Protection string
}

// ServerPrincipal is the principal HBase runs as on address (hbase/<address>@REALM): host
// names are addresses here, so no reverse lookup decides it.
func (k *HBaseKerberos) ServerPrincipal(address string) string {
	return "hbase/" + address + "@" + k.KDC.Realm
}

// ClientProperties are what a client sets to reach this HBase.
func (k *HBaseKerberos) ClientProperties() map[string]string {
	return map[string]string{
		"hbase.security.authentication":         "kerberos",
		"hbase.rpc.protection":                  k.Protection,
		"hbase.master.kerberos.principal":       "hbase/_HOST@" + k.KDC.Realm,
		"hbase.regionserver.kerberos.principal": "hbase/_HOST@" + k.KDC.Realm,
	}
}

// StartHBaseStandalone starts HBase from Maven Central's jars (hack/build/hbase-jars.sh) and waits
// until the master has initialised; the test's end stops it by its process group.
func StartHBaseStandalone(t testing.TB, address string, zkPort int, security HBaseSecurity) *HBaseStandalone {
	t.Helper()
	lib, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "hbase-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving HBase jars: %v", err)
	}
	dir := t.TempDir()
	props := map[string]string{
		"hbase.cluster.distributed":              "false",
		"hbase.rootdir":                          "file://" + filepath.Join(dir, "hbase"),
		"hbase.zookeeper.property.dataDir":       filepath.Join(dir, "zookeeper"),
		"hbase.zookeeper.quorum":                 "127.0.0.1",
		"hbase.zookeeper.property.clientPort":    fmt.Sprint(zkPort),
		"hbase.unsafe.stream.capability.enforce": "false",
		"hbase.master.hostname":                  address,
		"hbase.regionserver.hostname":            address,
		"hbase.master.info.port":                 "-1",
		"hbase.regionserver.info.port":           "-1",
	}
	coreSite := map[string]string{}
	jvm := []string{"-Xmx512m"}
	if security.TLS != nil {
		security.tlsDir = filepath.Join(dir, "tls")
		security.TLS.WriteSecretWithKey(t, security.tlsDir, false, address)
		props["hbase.rpc.server.impl"] = "org.apache.hadoop.hbase.ipc.NettyRpcServer"
		props["hbase.server.netty.tls.enabled"] = "true"
		props["hbase.server.netty.tls.supportplaintext"] = "false"
		props["hbase.server.netty.tls.client.auth.mode"] = "NONE"
		props["hbase.rpc.tls.keystore.location"] = filepath.Join(security.tlsDir, "tls-combined.pem")
		props["hbase.rpc.tls.keystore.type"] = "PEM"
	}
	for k, v := range security.ClientProperties() {
		props[k] = v
	}
	if kerberos := security.Kerberos; kerberos != nil {
		props["hbase.master.keytab.file"] = kerberos.KDC.Keytab("hbase")
		props["hbase.regionserver.keytab.file"] = kerberos.KDC.Keytab("hbase")
		// Hadoop's login reads core-site.xml, not hbase-site.xml.
		coreSite["hadoop.security.authentication"] = "kerberos"
		jvm = append(jvm, kerberos.KDC.JVMOption())
	}
	conf := filepath.Join(dir, "conf")
	files := map[string]string{
		"hbase-site.xml":   hbase.SiteXML(props),
		"core-site.xml":    hbase.SiteXML(coreSite),
		"log4j.properties": "log4j.rootLogger=INFO,console\nlog4j.appender.console=org.apache.log4j.ConsoleAppender\nlog4j.appender.console.layout=org.apache.log4j.PatternLayout\nlog4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n\n",
	}
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(conf, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append(jvm, hbase.JDK17Options...)
	args = append(args, "-cp", conf+":"+strings.TrimSpace(string(lib))+"/*", "org.apache.hadoop.hbase.master.HMaster", "start")
	h := &HBaseStandalone{Address: address, ZooKeeperPort: zkPort, Security: security}
	h.proc = startProcess(t, "HBase on "+address, java(context.Background(), args...), "Master has completed initialization", 3*time.Minute)
	return h
}

// Log returns what HBase logged so far.
func (h *HBaseStandalone) Log() string { return h.proc.Log() }
