// Package hbase renders the configuration of an HBase cluster on HDFS and ZooKeeper from a
// datastore's effective encryption: hbase-site.xml, core-site.xml, hdfs-site.xml,
// ssl-server.xml, zoo.cfg and krb5.conf. The same files configure the pods and the data-plane
// tests' real processes.
//
// One file set serves every process of a cluster. What differs per process comes from its
// environment, which Hadoop's Configuration expands (${env.NAME}): HostEnv is the name peers use
// to reach the process (its principal's host), BindEnv the address it listens on.
package hbase

import (
	"fmt"
	"sort"
	"strings"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/render/certs"
	"secured.dev/operator/internal/render/datakeys"
)

// Ports of the cluster's services (the upstream defaults).
const (
	ZooKeeperPort         = 2181
	ZooKeeperPeerPort     = 2888
	ZooKeeperElectionPort = 3888
	NameNodePort          = 8020
	NameNodeHTTPPort      = 9870
	NameNodeHTTPSPort     = 9871
	DataNodePort          = 9866 // block data transfer
	DataNodeIPCPort       = 9867
	DataNodeHTTPPort      = 9864
	DataNodeHTTPSPort     = 9865
	MasterPort            = 16000
	RegionServerPort      = 16020
)

// Environment variables every process sets.
const (
	// HostEnv: the host name peers reach this process by, and its principal's host.
	HostEnv = "SD_HOST"
	// BindEnv: the address the process listens on (0.0.0.0 in pods).
	BindEnv = "SD_BIND"
	// KeystorePasswordEnv: the password of the PKCS#12 keystore HDFS's HTTPS server reads.
	KeystorePasswordEnv = "SD_KEYSTORE_PASSWORD"
)

// Kerberos service names of the principals (service/host@REALM), and the local users they map to.
const (
	ZooKeeperService = "zookeeper" // what ZooKeeper's clients expect by default
	NameNodeService  = "nn"
	DataNodeService  = "dn"
	HBaseService     = "hbase"
	HTTPService      = "HTTP" // SPNEGO, for HDFS's web servers
	hdfsUser         = "hdfs"
	hbaseUser        = "hbase"
)

// Layout is where a process finds its files.
type Layout struct {
	// DataDir holds ZooKeeper's snapshots, the NameNode's metadata and the DataNode's blocks.
	DataDir string
	// KeytabDir holds service.keytab, the keys of every principal of the process's pod.
	KeytabDir string
	// TLSDir holds cert-manager's Secret: tls-combined.pem (HBase's PEM keystore) and
	// keystore.p12 (HDFS's HTTPS keystore).
	TLSDir string
	// TrustDir holds the trust bundle ConfigMap's files, the CAs the process trusts.
	TrustDir string
	// AtRestDir holds the at-rest keys' Secret (internal/render/atrest's files).
	AtRestDir string
}

// dataNodeSubdir of DataDir holds a DataNode's blocks; DataNodeDir is it in the pods, the
// directory an encrypted volume encrypts.
const (
	dataNodeSubdir = "datanode"
	DataNodeDir    = "/data/" + dataNodeSubdir
)

// PodLayout is the layout in the pods.
var PodLayout = Layout{DataDir: "/data", KeytabDir: "/etc/secured/keytab", TLSDir: "/etc/secured/tls", TrustDir: "/etc/secured/trust", AtRestDir: "/etc/secured/at-rest"}

// Keytab is the keytab file every service reads.
func (l Layout) Keytab() string { return l.KeytabDir + "/service.keytab" }

// Topology is what the configuration needs to know about the cluster.
type Topology struct {
	// ZooKeeper: host names of the ensemble's servers, in server-id order.
	ZooKeeper []string
	// Bootstrap: host:port of the Master and RegionServers, where clients learn the cluster's
	// layout over HBase RPC instead of from ZooKeeper.
	Bootstrap []string
	// NameNode: host name of the NameNode.
	NameNode string
	// Replication of HDFS blocks.
	Replication int
	// DataNodes: how many there are.
	DataNodes int
	// Realm and KDC (host:port) when the profile uses Kerberos.
	Realm, KDC string
	Layout     Layout
}

// Files renders every configuration file, by name.
func Files(c Topology, enc v1alpha1.EffectiveEncryption) (map[string]string, error) {
	s, err := securityOf(c, enc)
	if err != nil {
		return nil, err
	}
	if c.Layout == (Layout{}) {
		c.Layout = PodLayout
	}
	files := map[string]string{
		"core-site.xml":    SiteXML(coreSite(c, s)),
		"hdfs-site.xml":    SiteXML(hdfsSite(c, s)),
		"hbase-site.xml":   SiteXML(hbaseSite(c, s)),
		"zoo.cfg":          zooCfg(c, s),
		"log4j.properties": log4j,
	}
	if s.kerberos {
		files["krb5.conf"] = kerberos.Krb5Conf(c.Realm, c.KDC)
		files["ssl-server.xml"] = SiteXML(sslServer(c))
		files[zooKeeperJAAS] = zooKeeperJAASFile(c)
	}
	return files, nil
}

// security is the effective profile in the terms of the files.
type security struct {
	kerberos   bool
	hbase      *v1alpha1.HBaseSecurity
	tls        bool // the RPC servers speak TLS
	plaintext  bool // and also accept plaintext (a transition step)
	tlsPeers   bool // servers reach each other over TLS
	tlsChannel v1alpha1.EffectiveChannel
	atRest     *v1alpha1.EngineAtRest // HBase encrypts its WAL and encrypted column families' HFiles
}

func securityOf(c Topology, enc v1alpha1.EffectiveEncryption) (security, error) {
	h := enc.HBase
	if h == nil {
		return security{}, fmt.Errorf("the effective profile has no hbase settings: resolve it for engine HBase")
	}
	s := security{hbase: h, kerberos: h.Authentication == v1alpha1.AuthenticationKerberos, tlsChannel: enc.ClientToNode}
	if enc.AtRest != nil {
		s.atRest = enc.AtRest.Engine
	}
	if s.kerberos && (c.Realm == "" || c.KDC == "") {
		return s, fmt.Errorf("Kerberos needs a realm and a KDC")
	}
	if *h.DataTransfer.Encrypt && !s.kerberos {
		// HDFS hands out data-encryption keys with block access tokens, which need Kerberos.
		return s, fmt.Errorf("hbase.dataTransfer.encrypt needs authentication: Kerberos")
	}
	s.tls = enc.ClientToNode.Mode != v1alpha1.ChannelDisabled
	s.plaintext = enc.ClientToNode.Mode == v1alpha1.ChannelOptional
	// Peers send TLS unless nodeToNode is Disabled: whether a server also accepts plaintext is
	// clientToNode's mode, since one RPC port serves both.
	s.tlsPeers = enc.NodeToNode.Mode != v1alpha1.ChannelDisabled
	if s.tlsPeers && !s.tls {
		return s, fmt.Errorf("nodeToNode TLS needs clientToNode TLS: HBase serves clients and peers on one RPC port")
	}
	if !s.tlsPeers && enc.ClientToNode.Mode == v1alpha1.ChannelRequired {
		return s, fmt.Errorf("clientToNode Required refuses the plaintext RPC that Masters and RegionServers send each other without nodeToNode TLS")
	}
	return s, nil
}

func lower(p v1alpha1.SASLProtection) string { return strings.ToLower(string(p)) }

func coreSite(c Topology, s security) map[string]string {
	p := map[string]string{
		"fs.defaultFS":                   fmt.Sprintf("hdfs://%s:%d", c.NameNode, NameNodePort),
		"hadoop.security.authentication": "simple",
		// HBase owns this HDFS: it may create /hbase and act as a superuser in it.
		"hadoop.user.group.static.mapping.overrides": hbaseUser + "=supergroup;dr.who=;",
	}
	if s.kerberos {
		p["hadoop.security.authentication"] = "kerberos"
		// Service-level authorization stays off: it matches a caller's principal against
		// service/_HOST with _HOST from a reverse lookup of the caller's address, which in a
		// pod network (and on one test host) names no principal. Every RPC is still
		// Kerberos-authenticated, and HDFS permissions still apply by user.
		p["hadoop.security.authorization"] = "false"
		p["hadoop.rpc.protection"] = lower(s.hbase.HadoopRPCProtection)
		p["hadoop.security.auth_to_local"] = strings.Join([]string{
			rule(NameNodeService, c.Realm, hdfsUser), rule(DataNodeService, c.Realm, hdfsUser),
			rule(HBaseService, c.Realm, hbaseUser), rule(HTTPService, c.Realm, hdfsUser), "DEFAULT",
		}, "\n")
	}
	return p
}

// rule maps every host's principal of a service to one local user.
func rule(service, realm, user string) string {
	return fmt.Sprintf("RULE:[2:$1@$0](%s@%s)s/.*/%s/", service, realm, user)
}

func hdfsSite(c Topology, s security) map[string]string {
	host, bind := "${env."+HostEnv+"}", "${env."+BindEnv+"}"
	l := c.Layout
	p := map[string]string{
		"dfs.replication":                    fmt.Sprint(c.Replication),
		"dfs.namenode.name.dir":              "file://" + l.DataDir + "/namenode",
		"dfs.datanode.data.dir":              "file://" + l.DataDir + "/" + dataNodeSubdir,
		"dfs.namenode.rpc-address":           fmt.Sprintf("%s:%d", c.NameNode, NameNodePort),
		"dfs.namenode.rpc-bind-host":         bind,
		"dfs.namenode.http-address":          fmt.Sprintf("%s:%d", c.NameNode, NameNodeHTTPPort),
		"dfs.namenode.https-address":         fmt.Sprintf("%s:%d", c.NameNode, NameNodeHTTPSPort),
		"dfs.namenode.http-bind-host":        bind,
		"dfs.namenode.https-bind-host":       bind,
		"dfs.datanode.address":               fmt.Sprintf("%s:%d", bind, DataNodePort),
		"dfs.datanode.ipc.address":           fmt.Sprintf("%s:%d", bind, DataNodeIPCPort),
		"dfs.datanode.http.address":          fmt.Sprintf("%s:%d", bind, DataNodeHTTPPort),
		"dfs.datanode.https.address":         fmt.Sprintf("%s:%d", bind, DataNodeHTTPSPort),
		"dfs.datanode.hostname":              host,
		"dfs.client.use.datanode.hostname":   "true",
		"dfs.datanode.use.datanode.hostname": "true",
		// Pod addresses reverse-resolve to names the DataNodes do not register with.
		"dfs.namenode.datanode.registration.ip-hostname-check": "false",
		"dfs.namenode.safemode.min.datanodes":                  "1",
	}
	if !s.kerberos {
		return p
	}
	keytab := l.Keytab()
	principal := func(service string) string { return kerberos.Service(service, "_HOST", c.Realm) }
	d := s.hbase.DataTransfer
	for k, v := range map[string]string{
		"dfs.block.access.token.enable":                   "true",
		"dfs.namenode.kerberos.principal":                 principal(NameNodeService),
		"dfs.namenode.keytab.file":                        keytab,
		"dfs.namenode.kerberos.internal.spnego.principal": principal(HTTPService),
		"dfs.datanode.kerberos.principal":                 principal(DataNodeService),
		"dfs.datanode.keytab.file":                        keytab,
		"dfs.web.authentication.kerberos.principal":       principal(HTTPService),
		"dfs.web.authentication.kerberos.keytab":          keytab,
		// A secure DataNode without privileged ports authenticates block transfers with SASL,
		// which HDFS allows only when its web servers speak HTTPS alone.
		"dfs.data.transfer.protection": lower(d.Protection),
		"dfs.http.policy":              "HTTPS_ONLY",
		"dfs.encrypt.data.transfer":    fmt.Sprint(*d.Encrypt),
	} {
		p[k] = v
	}
	if *d.Encrypt {
		// The plural key: HDFS ignores dfs.encrypt.data.transfer.cipher.suite without a word.
		p["dfs.encrypt.data.transfer.cipher.suites"] = d.CipherSuite
		p["dfs.encrypt.data.transfer.cipher.key.bitlength"] = fmt.Sprint(d.KeyBitLength)
	}
	return p
}

func hbaseSite(c Topology, s security) map[string]string {
	host, bind := "${env."+HostEnv+"}", "${env."+BindEnv+"}"
	p := map[string]string{
		"hbase.cluster.distributed":           "true",
		"hbase.rootdir":                       fmt.Sprintf("hdfs://%s:%d/hbase", c.NameNode, NameNodePort),
		"hbase.zookeeper.quorum":              strings.Join(c.ZooKeeper, ","),
		"hbase.zookeeper.property.clientPort": fmt.Sprint(ZooKeeperPort),
		"hbase.master.hostname":               host,
		"hbase.unsafe.regionserver.hostname":  host,
		"hbase.master.ipc.address":            bind,
		"hbase.regionserver.ipc.address":      bind,
		"hbase.master.port":                   fmt.Sprint(MasterPort),
		"hbase.regionserver.port":             fmt.Sprint(RegionServerPort),
		// The web UIs are off: they would be one more unauthenticated, unencrypted port.
		"hbase.master.info.port":       "-1",
		"hbase.regionserver.info.port": "-1",
		"hbase.rpc.server.impl":        "org.apache.hadoop.hbase.ipc.NettyRpcServer",
		// A WAL that cannot reach a DataNode when it opens a new file leaves that DataNode out
		// of every new WAL for six hours. A rolling restart makes every DataNode unreachable for
		// a moment; with no more DataNodes than replicas, the WAL could then place no file and
		// HBase stops writing. So it may leave out only the DataNodes the replicas can spare.
		"hbase.regionserver.async.wal.max.exclude.datanode.count": fmt.Sprint(max(0, c.DataNodes-c.Replication)),
		// A WAL whose stream broke when its DataNode restarted sometimes never rolls to a new
		// one (HBase 2.6.4's asynchronous WAL, seen on one DataNode under load), and every write
		// then waits for it. After a minute without a sync the server aborts (the Master's local
		// region aborts on any failed update) and its kubelet starts it again, where HBase's
		// default would hold every write for five minutes first.
		"hbase.regionserver.wal.sync.timeout": "60000",
	}
	for k, v := range rpcClient(c, s.hbaseEnc()) {
		p[k] = v
	}
	for k, v := range zooKeeperClient(c, s) {
		p[k] = v
	}
	if s.kerberos {
		p["hbase.master.keytab.file"] = c.Layout.Keytab()
		p["hbase.regionserver.keytab.file"] = c.Layout.Keytab()
		// The Master and RegionServers log in to ZooKeeper as themselves (HBase substitutes
		// _HOST with hbase.master.hostname or hbase.unsafe.regionserver.hostname), which
		// makes HBase guard its znodes with ACLs for that identity.
		p["hbase.zookeeper.client.keytab.file"] = c.Layout.Keytab()
		p["hbase.zookeeper.client.kerberos.principal"] = kerberos.Service(HBaseService, "_HOST", c.Realm)
	}
	if a := s.atRest; a != nil {
		// HBase's transparent encryption: each encrypted column family's data key is wrapped with
		// the master key from the keystore, whose password HBase reads from the properties file
		// of the same Secret (never from this file, which is a ConfigMap).
		dir := c.Layout.AtRestDir
		p["hbase.crypto.keyprovider"] = "org.apache.hadoop.hbase.io.crypto.KeyStoreKeyProvider"
		p["hbase.crypto.keyprovider.parameters"] = "pkcs12://" + dir + "/" + datakeys.KeystoreFile + "?passwordFile=" + dir + "/" + datakeys.PropertiesFile
		p["hbase.crypto.master.key.name"] = datakeys.KeyAlias(a.KeyBits)
		p["hbase.regionserver.wal.encryption"] = "true"
	}
	if s.tls {
		l := c.Layout
		ch := s.tlsChannel
		p["hbase.server.netty.tls.enabled"] = "true"
		p["hbase.server.netty.tls.supportplaintext"] = fmt.Sprint(s.plaintext)
		p["hbase.server.netty.tls.client.auth.mode"] = clientAuthMode(ch.ClientAuth)
		// A client certificate is checked against the CA; a client's host name cannot be
		// (pod addresses reverse-resolve to nothing it was issued for).
		p["hbase.server.netty.tls.verify.client.hostname"] = "false"
		p["hbase.rpc.tls.keystore.location"] = newTLSContext(l, ch).keyStore
		p["hbase.rpc.tls.keystore.type"] = keyStoreType
		// The servers are each other's clients: nodeToNode decides whether they use TLS.
		p["hbase.client.netty.tls.enabled"] = fmt.Sprint(s.tlsPeers)
	}
	return p
}

// clientAuthMode is the profile's client authentication as HBase and ZooKeeper name it.
func clientAuthMode(a v1alpha1.ClientAuth) string {
	switch a {
	case v1alpha1.ClientAuthRequired:
		return "NEED"
	case v1alpha1.ClientAuthOptional:
		return "WANT"
	}
	return "NONE"
}

// hbaseEnc is the effective profile as the servers see it.
func (s security) hbaseEnc() v1alpha1.EffectiveEncryption {
	return v1alpha1.EffectiveEncryption{ClientToNode: s.tlsChannel, HBase: s.hbase}
}

// ClientProperties are what an HBase client (the benchmark driver, an application) sets to
// reach the cluster with the profile: the Master and RegionServers to bootstrap from, Kerberos
// and SASL, TLS. Clients never talk to ZooKeeper: HBase's RPC connection registry asks the
// servers, over the RPC channel the profile secures, where the active Master and meta are. So
// ZooKeeper answers only the datastore's pods.
func ClientProperties(c Topology, enc v1alpha1.EffectiveEncryption) map[string]string {
	p := rpcClient(c, enc)
	p["hbase.client.registry.impl"] = "org.apache.hadoop.hbase.client.RpcConnectionRegistry"
	p["hbase.client.bootstrap.servers"] = strings.Join(c.Bootstrap, ",")
	return p
}

// rpcClient is how any client of HBase RPC, the servers among them, speaks it with the profile.
func rpcClient(c Topology, enc v1alpha1.EffectiveEncryption) map[string]string {
	if c.Layout == (Layout{}) {
		c.Layout = PodLayout
	}
	p := map[string]string{}
	if h := enc.HBase; h != nil && h.Authentication == v1alpha1.AuthenticationKerberos {
		p["hadoop.security.authentication"] = "kerberos"
		p["hbase.security.authentication"] = "kerberos"
		p["hbase.rpc.protection"] = lower(h.HBaseRPCProtection)
		p["hbase.master.kerberos.principal"] = kerberos.Service(HBaseService, "_HOST", c.Realm)
		p["hbase.regionserver.kerberos.principal"] = kerberos.Service(HBaseService, "_HOST", c.Realm)
		p["hbase.rpc.crypto.encryption.aes.enabled"] = fmt.Sprint(*h.AESTransform)
	}
	// A client that can use TLS does, as Cassandra's do: it then keeps working when a roll
	// moves the servers from Optional to Required.
	if ch := enc.ClientToNode; ch.Mode != v1alpha1.ChannelDisabled {
		tc := newTLSContext(c.Layout, ch)
		p["hbase.client.netty.tls.enabled"] = "true"
		p["hbase.rpc.tls.truststore.location"] = tc.trustStore
		p["hbase.rpc.tls.truststore.type"] = trustStoreType
		p["hbase.rpc.tls.enabledProtocols"] = tc.protocols
		p["hbase.rpc.tls.protocol"] = tc.protocol
		p["hbase.rpc.tls.ciphersuites"] = tc.suites
		// A renewed certificate and a trust bundle that gained a CA are picked up without a
		// restart, by servers and clients alike: a client that kept the trust it started with
		// could not connect anywhere once a CA rotation re-issued the servers' certificates.
		p["hbase.rpc.tls.certReload"] = "true"
	}
	return p
}

// keyStoreType and trustStoreType: cert-manager's combined PEM (key and chain in one file, which
// HBase and ZooKeeper reload in place) and the trust bundle's PKCS#12 store.
const (
	keyStoreType   = "PEM"
	trustStoreType = "PKCS12"
)

// tlsContext is what every JDK TLS context of a role reads, whether HBase RPC's or ZooKeeper's,
// server or client: the node certificate, the trust store, and the channel's protocols (the
// last one preferred) and suites in the JDK's names.
type tlsContext struct{ keyStore, trustStore, protocols, protocol, suites string }

func newTLSContext(l Layout, ch v1alpha1.EffectiveChannel) tlsContext {
	tc := tlsContext{
		keyStore:   l.TLSDir + "/tls-combined.pem",
		trustStore: l.TrustDir + "/" + certs.TrustStoreKey,
		protocols:  joinProtocols(ch.Protocols),
		suites:     strings.Join(jsseNames(ch.CipherSuites), ","),
	}
	if n := len(ch.Protocols); n > 0 {
		tc.protocol = string(ch.Protocols[n-1])
	}
	return tc
}

func joinProtocols(ps []v1alpha1.TLSProtocol) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return strings.Join(out, ",")
}

// jsseNames maps IANA suite names to the JDK's (HBase's TLS is the JDK's).
func jsseNames(iana []string) []string {
	out := make([]string, 0, len(iana))
	for _, name := range iana {
		if s, ok := crypto.Lookup(name); ok && s.JSSEName != "" {
			out = append(out, s.JSSEName)
		} else {
			out = append(out, name)
		}
	}
	return out
}

func sslServer(c Topology) map[string]string {
	return map[string]string{
		"ssl.server.keystore.location":    c.Layout.TLSDir + "/keystore.p12",
		"ssl.server.keystore.type":        "pkcs12",
		"ssl.server.keystore.password":    "${env." + KeystorePasswordEnv + "}",
		"ssl.server.keystore.keypassword": "${env." + KeystorePasswordEnv + "}",
	}
}

// zooKeeperJAAS is ZooKeeper's login configuration, with Kerberos.
const zooKeeperJAAS = "zookeeper-jaas.conf"

// HostProperty is the Java system property that carries a process's host name into files a
// JVM expands properties in (JAAS configurations), since the files are shared by every pod.
const HostProperty = "secured.host"

// zooKeeperJAASFile logs ZooKeeper in as zookeeper/<its host>, the principal its clients ask
// tickets for (they name the server by the host in their connect string; JVM asks them not to
// canonicalise it). In an ensemble the same identity authenticates the servers to each other
// (QuorumServer when a peer connects, QuorumLearner when it connects to a peer).
func zooKeeperJAASFile(c Topology) string {
	contexts := []string{"Server"}
	if len(c.ZooKeeper) > 1 {
		contexts = append(contexts, quorumServerContext, quorumLearnerContext)
	}
	var b strings.Builder
	for _, name := range contexts {
		fmt.Fprintf(&b, `%s {
  com.sun.security.auth.module.Krb5LoginModule required
  useKeyTab=true
  keyTab="%s"
  storeKey=true
  useTicketCache=false
  principal="%s";
};
`, name, c.Layout.Keytab(), kerberos.Service(ZooKeeperService, "${"+HostProperty+"}", c.Realm))
	}
	return b.String()
}

// The JAAS contexts of the ensemble's own authentication.
const (
	quorumServerContext  = "QuorumServer"
	quorumLearnerContext = "QuorumLearner"
)

func zooCfg(c Topology, s security) string {
	lines := []string{
		"tickTime=2000", "initLimit=10", "syncLimit=5",
		"dataDir=" + c.Layout.DataDir + "/zookeeper",
	}
	lines = append(lines, zooKeeperTLS(c, s)...)
	lines = append(lines,
		// The admin server is one more unauthenticated HTTP port.
		"admin.enableServer=false",
		"4lw.commands.whitelist=ruok,srvr")
	if s.kerberos {
		// Every session must authenticate with Kerberos, or it is closed: ZooKeeper holds
		// HBase's metadata, and its clients are the Master and RegionServers only.
		lines = append(lines,
			"authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
			"enforce.auth.enabled=true", "enforce.auth.schemes=sasl",
			// hbase/<host>@REALM is the user hbase, whichever host it runs on.
			"kerberos.removeHostFromPrincipal=true", "kerberos.removeRealmFromPrincipal=true")
	}
	if !s.kerberos {
		// Without Kerberos nobody is authenticated, so HBase creates its znodes open to all and
		// ACLs protect nothing. But a cluster that ran with Kerberos keeps znodes whose ACLs
		// admit the Kerberos user hbase alone: after Kerberos is switched off, its Master
		// could not write them ("NoAuth for /hbase/draining") and never started again.
		// ZooKeeper stays closed to anything but the datastore's own pods (NetworkPolicy).
		lines = append(lines, "skipACL=yes")
	}
	if len(c.ZooKeeper) > 1 && s.kerberos {
		// A server joins the ensemble only with Kerberos credentials of its own: whoever could
		// reach the peer ports would otherwise take part in elections and receive every write.
		lines = append(lines,
			"quorum.auth.enableSasl=true", "quorum.auth.learnerRequireSasl=true", "quorum.auth.serverRequireSasl=true",
			"quorum.auth.server.saslLoginContext="+quorumServerContext, "quorum.auth.learner.saslLoginContext="+quorumLearnerContext,
			// _HOST: the host of the peer as the server list names it, as for clients. ZooKeeper
			// replaces it only in a principal without a realm (the default realm then applies).
			"quorum.auth.kerberos.servicePrincipal="+ZooKeeperService+"/_HOST")
	}
	if len(c.ZooKeeper) > 1 {
		lines = append(lines, "quorumListenOnAllIPs=true")
		for i, h := range c.ZooKeeper {
			lines = append(lines, fmt.Sprintf("server.%d=%s:%d:%d", i+1, h, ZooKeeperPeerPort, ZooKeeperElectionPort))
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// zooKeeperTLS is ZooKeeper's share of the RPC TLS stages (Next): its client port moves with
// the RPC ports (TLS and plaintext on one port while clientToNode is Optional, TLS only once it
// is Required), and its clients, the Master and RegionServers, call it with TLS once they call
// their peers with TLS (zooKeeperClient). An ensemble's servers speak TLS to each other from the
// same stage, and accept both until TLS is required, so that a roll that restarts them one by
// one keeps a quorum. Keys ZooKeeper does not know itself become its zookeeper.* system
// properties, which is where its TLS settings live.
func zooKeeperTLS(c Topology, s security) []string {
	if !s.tls {
		return []string{fmt.Sprintf("clientPort=%d", ZooKeeperPort)}
	}
	// ZooKeeper's NIO server speaks no TLS.
	lines := []string{"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory"}
	if s.plaintext {
		lines = append(lines, fmt.Sprintf("clientPort=%d", ZooKeeperPort), "client.portUnification=true")
	} else {
		lines = append(lines, fmt.Sprintf("secureClientPort=%d", ZooKeeperPort))
	}
	lines = append(lines, zooKeeperTLSFiles(c, "ssl.", s.tlsChannel)...)
	lines = append(lines, "ssl.clientAuth="+strings.ToLower(clientAuthMode(s.tlsChannel.ClientAuth)))
	if len(c.ZooKeeper) > 1 {
		lines = append(lines, fmt.Sprintf("sslQuorum=%t", s.tlsPeers), fmt.Sprintf("portUnification=%t", s.plaintext),
			// Servers renewed by cert-manager keep their quorum connections; ZooKeeper re-reads
			// the quorum's files itself (not the client port's: a renewal restarts the servers).
			"sslQuorumReloadCertFiles=true",
			// A peer's certificate must chain to the datastore's CA. Its host name cannot be
			// checked: the server would look up the name of the peer's address, which in a pod
			// network names nothing the certificate was issued for.
			"ssl.quorum.hostnameVerification=false")
		lines = append(lines, zooKeeperTLSFiles(c, "ssl.quorum.", s.tlsChannel)...)
	}
	return lines
}

// zooKeeperTLSFiles are the keystore, trust store, protocols and suites of one of ZooKeeper's
// TLS contexts (prefix "ssl." for clients, "ssl.quorum." for the ensemble), or of its client.
func zooKeeperTLSFiles(c Topology, prefix string, ch v1alpha1.EffectiveChannel) []string {
	tc := newTLSContext(c.Layout, ch)
	return []string{
		prefix + "keyStore.location=" + tc.keyStore, prefix + "keyStore.type=" + keyStoreType,
		prefix + "trustStore.location=" + tc.trustStore, prefix + "trustStore.type=" + trustStoreType,
		prefix + "enabledProtocols=" + tc.protocols,
		prefix + "protocol=" + tc.protocol,
		prefix + "ciphersuites=" + tc.suites,
	}
}

// zooKeeperClient is how the Master and RegionServers reach ZooKeeper: with TLS (and their node
// certificate, should ZooKeeper ask for one) from the stage where they call their peers with
// TLS. HBase hands every hbase.zookeeper.property.* key to its ZooKeeper client.
func zooKeeperClient(c Topology, s security) map[string]string {
	p := map[string]string{}
	if !s.tlsPeers {
		return p
	}
	p["hbase.zookeeper.property.client.secure"] = "true"
	p["hbase.zookeeper.property.clientCnxnSocket"] = "org.apache.zookeeper.ClientCnxnSocketNetty"
	for _, line := range zooKeeperTLSFiles(c, "ssl.", s.tlsChannel) {
		k, v, _ := strings.Cut(line, "=")
		p["hbase.zookeeper.property."+k] = v
	}
	return p
}

// log4j is every role's logging. HBase's RPC server and ZooKeeper's TLS server log each TLS
// handshake they refuse with the whole stack trace (about 60 lines), and one wire probe makes
// hundreds of handshakes: probing every 30 s, a Master's log rotated away within minutes, and
// one probe left ZooKeeper's with 16,800 lines. Those loggers keep their messages, each on one
// line with the exception's first line.
const log4j = `log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
log4j.logger.org.apache.hadoop.hbase.ipc.NettyRpcServer=INFO,handshakes
log4j.additivity.org.apache.hadoop.hbase.ipc.NettyRpcServer=false
log4j.logger.org.apache.zookeeper.server.NettyServerCnxnFactory=INFO,handshakes
log4j.additivity.org.apache.zookeeper.server.NettyServerCnxnFactory=false
log4j.appender.handshakes=org.apache.log4j.ConsoleAppender
log4j.appender.handshakes.layout=org.apache.log4j.EnhancedPatternLayout
log4j.appender.handshakes.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m %throwable{short}%n
`

// siteXML renders Hadoop-style properties, sorted by name so the files are stable.
func SiteXML(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, xmlEscape(props[k]))
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// ZooKeeperBind is the line a tunnelled ZooKeeper server's start adds to its copy of zoo.cfg:
// its client port on its tunnel address alone. zoo.cfg cannot read the environment, and the
// servers of an ensemble share one file. Once clientToNode is Required the only client port is
// the secure one, and ZooKeeper refuses to start with an address for a port it does not open
// ("clientPortAddress is set but clientPort is not set").
func ZooKeeperBind(enc v1alpha1.EffectiveEncryption, address string) string {
	if enc.ClientToNode.Mode == v1alpha1.ChannelRequired {
		return "secureClientPortAddress=" + address
	}
	return "clientPortAddress=" + address
}
