package hbase

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/test/golden"
	"secured.dev/operator/internal/test/samples"
)

var topology = Topology{
	ZooKeeper: []string{"events-zk-0.events-zk.db.svc.cluster.local", "events-zk-1.events-zk.db.svc.cluster.local", "events-zk-2.events-zk.db.svc.cluster.local"},
	NameNode:  "events-nn-0.events-nn.db.svc.cluster.local", Replication: 3,
	Realm: "EVENTS.DB.SVC", KDC: "events-kdc.db.svc.cluster.local:88",
}

func resolve(t *testing.T, s *v1alpha1.EncryptionSettings) v1alpha1.EffectiveEncryption {
	t.Helper()
	res, errs := crypto.Resolve(s, nil, v1alpha1.EngineHBase, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return res.Effective
}

// concat joins the files of a cluster, by name, into one reviewable golden file.
func concat(files map[string]string) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString("=== " + n + "\n" + files[n])
	}
	return []byte(b.String())
}

// Every shipped HBase profile, and plaintext, renders to its golden file set.
func TestShippedProfilesRenderToGoldenFiles(t *testing.T) {
	profiles, err := samples.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]*v1alpha1.EncryptionSettings{"plaintext": {
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}},
	}}
	for _, p := range profiles {
		if p.Spec.HBase != nil {
			cases[p.Name] = &p.Spec.EncryptionSettings
		}
	}
	if len(cases) < 7 {
		t.Fatalf("%d HBase profiles; the catalogue ships six", len(cases)-1)
	}
	for name, s := range cases {
		files, err := Files(topology, resolve(t, s))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		golden.Check(t, name+".files", concat(files))
		all := string(concat(files))
		if strings.Contains(all, "dfs.encrypt.data.transfer.cipher.suite<") {
			t.Errorf("%s: the singular cipher-suite key, which HDFS ignores", name)
		}
	}
}

// The settings a profile names land in the keys Hadoop and HBase read.
func TestProfileSettingsReachTheirKeys(t *testing.T) {
	p, err := samples.Profile("hbase-kerberos-privacy-aes")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(topology, resolve(t, &p.Spec.EncryptionSettings))
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]string{
		"hbase-site.xml": {prop("hbase.security.authentication", "kerberos"), prop("hbase.rpc.protection", "privacy"), prop("hbase.rpc.crypto.encryption.aes.enabled", "true"),
			prop("hbase.regionserver.kerberos.principal", "hbase/_HOST@EVENTS.DB.SVC")},
		"core-site.xml": {prop("hadoop.security.authentication", "kerberos"), prop("hadoop.rpc.protection", "privacy")},
		"hdfs-site.xml": {prop("dfs.encrypt.data.transfer", "true"), prop("dfs.encrypt.data.transfer.cipher.suites", "AES/CTR/NoPadding"),
			prop("dfs.encrypt.data.transfer.cipher.key.bitlength", "256"), prop("dfs.data.transfer.protection", "privacy"), prop("dfs.http.policy", "HTTPS_ONLY")},
		"krb5.conf": {"kdc = events-kdc.db.svc.cluster.local:88", "rdns = false"},
	} {
		for _, w := range want {
			if !strings.Contains(files[file], w) {
				t.Errorf("%s lacks %s", file, w)
			}
		}
	}
}

// The WAL may leave out of its files only the DataNodes the replicas can spare: a rolling
// restart makes each unreachable for a moment, and HBase then avoids it for six hours.
func TestWALExcludesNoDataNodeTheReplicasNeed(t *testing.T) {
	for _, tc := range []struct{ dataNodes, replication, want int }{{1, 1, 0}, {3, 3, 0}, {6, 3, 3}, {0, 3, 0}} {
		c := topology
		c.DataNodes, c.Replication = tc.dataNodes, tc.replication
		files, err := Files(c, resolve(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if w := prop("hbase.regionserver.async.wal.max.exclude.datanode.count", fmt.Sprint(tc.want)); !strings.Contains(files["hbase-site.xml"], w) {
			t.Errorf("%d DataNodes, replication %d: hbase-site.xml lacks %s", tc.dataNodes, tc.replication, w)
		}
	}
}

func prop(k, v string) string { return "<name>" + k + "</name><value>" + v + "</value>" }

// Bad combinations are refused with what to change.
func TestImpossibleCombinationsAreRefused(t *testing.T) {
	on := true
	for want, tc := range map[string]struct {
		c Topology
		s *v1alpha1.EncryptionSettings
	}{
		"needs authentication: Kerberos": {topology, &v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{DataTransfer: &v1alpha1.HDFSDataTransfer{Encrypt: &on}}}},
		"needs a realm and a KDC":        {Topology{ZooKeeper: topology.ZooKeeper, NameNode: topology.NameNode}, &v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationKerberos}}},
	} {
		if _, err := Files(tc.c, resolve(t, tc.s)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error saying %q, got %v", want, err)
		}
	}
	if _, err := Files(topology, v1alpha1.EffectiveEncryption{}); err == nil || !strings.Contains(err.Error(), "engine HBase") {
		t.Errorf("a profile resolved for another engine: %v", err)
	}
}

// clientToNode Optional accepts TLS and plaintext on the one RPC port; whether Masters and
// RegionServers call each other with TLS is nodeToNode's mode (Optional sends TLS, as in
// Cassandra). Both are the intermediate steps of enabling TLS on a live topology.
func TestOptionalTLSAcceptsBoth(t *testing.T) {
	for rr, peersTLS := range map[v1alpha1.ChannelMode]string{v1alpha1.ChannelDisabled: "false", v1alpha1.ChannelOptional: "true", v1alpha1.ChannelRequired: "true"} {
		s := &v1alpha1.EncryptionSettings{
			ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelOptional}},
			NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: rr}},
		}
		files, err := Files(topology, resolve(t, s))
		if err != nil {
			t.Fatal(err)
		}
		site := files["hbase-site.xml"]
		wants := []string{prop("hbase.server.netty.tls.enabled", "true"), prop("hbase.server.netty.tls.supportplaintext", "true"), prop("hbase.client.netty.tls.enabled", peersTLS)}
		// ZooKeeper's clients are the Masters and RegionServers: TLS once they call peers with it.
		if peersTLS == "true" {
			wants = append(wants, prop("hbase.zookeeper.property.client.secure", "true"))
		} else if strings.Contains(site, "hbase.zookeeper.property.client.secure") {
			t.Errorf("nodeToNode %s: the Masters and RegionServers call ZooKeeper with TLS before their peers", rr)
		}
		for _, w := range wants {
			if !strings.Contains(site, w) {
				t.Errorf("nodeToNode %s: hbase-site.xml lacks %s", rr, w)
			}
		}
		// ZooKeeper's client port, like the RPC ports, accepts both; an ensemble's servers too.
		zoo := files["zoo.cfg"]
		for _, w := range []string{"\nclientPort=2181\n", "\nclient.portUnification=true\n", "\nportUnification=true\n", "\nsslQuorum=" + peersTLS + "\n"} {
			if !strings.Contains(zoo, w) {
				t.Errorf("nodeToNode %s: zoo.cfg lacks %q:\n%s", rr, strings.TrimSpace(w), zoo)
			}
		}
		if strings.Contains(zoo, "secureClientPort") {
			t.Errorf("nodeToNode %s: zoo.cfg refuses plaintext clients while clientToNode is Optional:\n%s", rr, zoo)
		}
	}
}

// A tunnelled ZooKeeper binds the client port its zoo.cfg opens, and only that one: ZooKeeper
// refuses to start with clientPortAddress when clientToNode Required leaves it secureClientPort
// alone. (The data-plane HBase clusters bind every ZooKeeper so, TLS profiles among them.)
func TestZooKeeperBindsThePortZooCfgOpens(t *testing.T) {
	for _, mode := range []v1alpha1.ChannelMode{v1alpha1.ChannelDisabled, v1alpha1.ChannelOptional, v1alpha1.ChannelRequired} {
		s := &v1alpha1.EncryptionSettings{
			ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: mode}},
			NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: mode}},
		}
		enc := resolve(t, s)
		files, err := Files(topology, enc)
		if err != nil {
			t.Fatal(err)
		}
		bind := ZooKeeperBind(enc, "100.80.0.1")
		key, address, _ := strings.Cut(bind, "=")
		port, ok := strings.CutSuffix(key, "Address")
		if address != "100.80.0.1" || !ok || !strings.Contains("\n"+files["zoo.cfg"], "\n"+port+"=") {
			t.Errorf("clientToNode %s: %q binds a port zoo.cfg does not open:\n%s", mode, bind, files["zoo.cfg"])
		}
		for _, other := range []string{"clientPort", "secureClientPort"} {
			if other != port && strings.Contains("\n"+files["zoo.cfg"], "\n"+other+"=") {
				t.Errorf("clientToNode %s: zoo.cfg opens %s as well, which %q leaves on every address", mode, other, bind)
			}
		}
	}
}

// A client reloads its trust bundle as the servers do: after a CA rotation re-issues the
// servers' certificates, a client that kept the bundle it started with could reach none of them.
func TestTLSClientsReloadTheirTrust(t *testing.T) {
	s := &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
		NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
	}
	p := ClientProperties(topology, resolve(t, s))
	if p["hbase.client.netty.tls.enabled"] != "true" || p["hbase.rpc.tls.truststore.location"] == "" || p["hbase.rpc.tls.certReload"] != "true" {
		t.Errorf("client properties %v; want TLS with the trust bundle, reloaded when it changes", p)
	}
}
