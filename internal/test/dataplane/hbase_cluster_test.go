package dataplane

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testpki"
	"secured.dev/operator/internal/verify"
)

// hbaseProfile resolves a shipped profile (or inline settings when name is "") for engine HBase.
func hbaseProfile(t *testing.T, name string, inline *v1alpha1.EncryptionSettings) v1alpha1.EffectiveEncryption {
	t.Helper()
	var base *v1alpha1.EncryptionSettings
	if name != "" {
		p, err := samples.Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		base = &p.Spec.EncryptionSettings
	}
	res, errs := crypto.Resolve(base, inline, v1alpha1.EngineHBase, field.NewPath("spec", "encryption"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return res.Effective
}

var disabled = &v1alpha1.EncryptionSettings{
	ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}},
	NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}},
}

// tlsOnly is native TLS 1.3 on every RPC port, without Kerberos.
var tlsOnly = &v1alpha1.EncryptionSettings{
	ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired,
		TLS: &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv13}}}},
	NodeToNode: &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired,
		TLS: &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv13}}}},
	HBase: &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationSimple},
}

// The HBase data-plane profiles (run alone with: make test-hbase). Each starts a real
// ZooKeeper, HDFS, HBase (and KDC) from Maven Central's jars with exactly the rendered files,
// creates a table, puts, gets and scans through HBase's client while tcpdump watches HBase RPC
// and HDFS block transfer, and checks what a marker value shows on each: readable where the
// profile leaves the channel plaintext, absent where it encrypts. Native TLS is also probed.
func TestHBaseProfile(t *testing.T) {
	withHBase(t)
	for _, tc := range []struct {
		name    string
		profile string
		inline  *v1alpha1.EncryptionSettings
	}{
		{"NoSecurity", "", disabled},
		{"KerberosAuthentication", "hbase-kerberos-authentication", nil},
		{"KerberosPrivacy", "hbase-kerberos-privacy", nil},
		{"HDFSEncryptionOnly", "hbase-hdfs-encryption", nil},
		{"KerberosPrivacyAES", "hbase-kerberos-privacy-aes", nil},
		{"NativeTLSWithKerberos", "hbase-native-tls", nil},
		{"NativeTLSWithoutKerberos", "", tlsOnly},
		{"EngineAtRest", "", &v1alpha1.EncryptionSettings{ClientToNode: disabled.ClientToNode, NodeToNode: disabled.NodeToNode,
			AtRest: &v1alpha1.AtRestEncryption{Engine: &v1alpha1.EngineAtRest{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := hbaseProfile(t, tc.profile, tc.inline)
			c := StartHBaseCluster(t, enc)
			t.Logf("resident memory (MiB): %v", c.Memory())
			marker := Marker(t)
			var rpc []byte
			blocks := Capture(t, []int{hbase.DataNodePort}, func() {
				rpc = Capture(t, []int{hbase.RegionServerPort, hbase.MasterPort}, func() {
					if err := c.Smoke(t, "smoke", marker); err != nil {
						t.Fatalf("create, put, get, scan: %v", err)
					}
				})
			})
			// ZooKeeper holds HBase's metadata: with Kerberos, a session that has not
			// authenticated may not even list it; with TLS required, no plaintext session opens.
			code, err := ZooKeeperReadCode(fmt.Sprintf("%s:%d", c.Hosts.ZooKeeper, hbase.ZooKeeperPort))
			wantCode := map[bool]int32{false: 0, true: -124}[enc.HBase.Authentication == v1alpha1.AuthenticationKerberos]
			switch {
			case enc.ClientToNode.Mode == v1alpha1.ChannelRequired:
				if err == nil {
					t.Errorf("a plaintext ZooKeeper session opened (listing /: code %d); want none with TLS required", code)
				} else {
					t.Logf("a plaintext ZooKeeper session: %v", err)
				}
			case err != nil || code != wantCode:
				t.Errorf("an unauthenticated ZooKeeper session listing /: code %d (%v), want %d", code, err, wantCode)
			default:
				t.Logf("an unauthenticated ZooKeeper session listing /: code %d", code)
			}
			wantRPC, wantBlocks := visibleMarker(enc)
			if got := bytes.Contains(rpc, []byte(marker)); got != wantRPC {
				t.Errorf("marker readable on HBase RPC: %v, want %v (%d bytes captured)", got, wantRPC, len(rpc))
			}
			if got := bytes.Contains(blocks, []byte(marker)); got != wantBlocks {
				t.Errorf("marker readable on HDFS block transfer: %v, want %v (%d bytes captured)", got, wantBlocks, len(blocks))
			}
			// The on-disk canary: the write-ahead log (and, encrypted, the flushed HFile) on the
			// DataNode's disk holds the marker in clear unless HBase encrypts at rest.
			atRest := enc.AtRest != nil && enc.AtRest.Engine != nil
			if found := OnDisk(t, c.Topology.Layout.DataDir, marker); (len(found) > 0) == atRest {
				t.Errorf("marker in clear on disk: %v; want found: %v", found, !atRest)
			} else {
				t.Logf("on-disk canary: marker in clear in %d files (at rest encrypted: %v)", len(found), atRest)
			}
			if enc.ClientToNode.Mode == v1alpha1.ChannelDisabled {
				return
			}
			for role, host := range map[string]string{"RegionServer": c.Hosts.RegionServer, "Master": c.Hosts.Master, "ZooKeeper": c.Hosts.ZooKeeper} {
				port := map[string]int{"RegionServer": hbase.RegionServerPort, "Master": hbase.MasterPort, "ZooKeeper": hbase.ZooKeeperPort}[role]
				opts := map[bool]probe.Options{false: probe.HBaseRPC, true: probe.ZooKeeperClient}[role == "ZooKeeper"]
				got, err := probe.Scan(context.Background(), fmt.Sprintf("%s:%d", host, port), opts)
				t.Logf("%s: protocols %v suites %v plaintext %v", role, got.VersionNames(), got.SuiteNames(), deref(got.PlaintextAccepted))
				roots := x509.NewCertPool()
				roots.AppendCertsFromPEM(c.CA.PEM)
				id := &verify.Identity{Roots: roots, DNSName: host} // the node must prove it is the node
				if f := verify.WithIdentity(verify.Compare(enc.ClientToNode, got, err), enc.ClientToNode, id, got, err, time.Now()); !f.Verified {
					t.Errorf("%s RPC: EncryptionVerified=False %s: %v", role, f.Reason, f.Differences)
				}
			}
			// The probe's refused handshakes leave one line each in the servers' logs, not a
			// stack trace each, which would rotate the logs away under periodic probes.
			for role, refusal := range map[hbase.Role]string{hbase.Master: "caught unexpected downstream exception",
				hbase.RegionServer: "caught unexpected downstream exception", hbase.ZooKeeper: "NettyServerCnxnFactory: Exception caught"} {
				lines := strings.Split(c.procs[role].Log(), "\n")
				refused, frames := 0, 0
				for i, line := range lines {
					if strings.Contains(line, refusal) {
						refused++
						if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\tat ") {
							frames++
						}
					}
				}
				if refused == 0 || frames > 0 {
					t.Errorf("%s's log: %d refused handshakes, %d of them with a stack trace; want one line each", role, refused, frames)
				} else {
					t.Logf("%s's log: %d refused handshakes, one line each", role, refused)
				}
			}
		})
	}
}

// visibleMarker: whether a value written through the client can be read on HBase RPC and on
// HDFS block transfer under the profile.
func visibleMarker(enc v1alpha1.EffectiveEncryption) (rpc, blocks bool) {
	h := enc.HBase
	kerberized := h.Authentication == v1alpha1.AuthenticationKerberos
	rpc = enc.ClientToNode.Mode != v1alpha1.ChannelRequired && !(kerberized && h.HBaseRPCProtection == v1alpha1.ProtectionPrivacy)
	blocks = !(kerberized && (*h.DataTransfer.Encrypt || h.DataTransfer.Protection == v1alpha1.ProtectionPrivacy))
	// Encrypted at rest, the blocks HBase writes (WAL, HFiles) are ciphertext before they travel.
	blocks = blocks && (enc.AtRest == nil || enc.AtRest.Engine == nil)
	return rpc, blocks
}

// Enabling native TLS on a running plaintext cluster, the way the operator rolls it
// (hbase.Next): one stage per roll, restarting the RegionServer and the Master in turn (each
// order once) with the next step's files. Between the two restarts the processes run adjacent
// steps; a client with the older step's configuration must still create, put, get and scan,
// and the RegionServer must still reach the Master. After each roll a client with the new
// step's configuration must work; at the end the wire probe finds TLS only.
func TestHBaseProfileTransitionToTLS(t *testing.T) {
	withHBase(t)
	plain := hbaseProfile(t, "", disabled)
	target := hbaseProfile(t, "", &v1alpha1.EncryptionSettings{
		ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired,
			TLS: &v1alpha1.TLSSettings{Protocols: []v1alpha1.TLSProtocol{v1alpha1.TLSv13}}}},
		NodeToNode: &v1alpha1.NodeToNodeEncryption{ChannelEncryption: v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelRequired}},
		HBase:      &v1alpha1.HBaseSecurity{Authentication: v1alpha1.AuthenticationSimple},
	})
	c := StartHBaseCluster(t, plain)
	if err := c.Smoke(t, "before", "plaintext"); err != nil {
		t.Fatalf("plaintext cluster: %v", err)
	}
	rollThrough(t, c, plain, target, func(roll int) []hbase.Role {
		if roll%2 == 0 {
			return []hbase.Role{hbase.Master, hbase.RegionServer}
		}
		return []hbase.Role{hbase.RegionServer, hbase.Master}
	})
	for _, ep := range []struct {
		addr string
		opts probe.Options
	}{{fmt.Sprintf("%s:%d", c.Hosts.RegionServer, hbase.RegionServerPort), probe.HBaseRPC}, {fmt.Sprintf("%s:%d", c.Hosts.ZooKeeper, hbase.ZooKeeperPort), probe.ZooKeeperClient}} {
		got, err := probe.Scan(context.Background(), ep.addr, ep.opts)
		if f := verify.Compare(target.ClientToNode, got, err); !f.Verified {
			t.Errorf("%s after the transition: EncryptionVerified=False %s: %v", ep.addr, f.Reason, f.Differences)
		}
	}
}

// Raising the SASL levels of HBase and Hadoop RPC on a live Kerberos cluster from
// authentication to privacy, as the operator does: three rolls (both levels accepted, the old
// one asked for; both, the new one asked for; privacy alone), each restarting the DataNode, the
// NameNode, the RegionServer and the Master one after the other, and after every single
// restart, with the processes one step apart, a client must create, put, get and scan. A direct
// jump fails the same test at its first restart: a DataNode that asks for privacy alone never
// registers with a NameNode that accepts authentication alone. Block transfer stays at
// authentication: once HBase's WAL wraps its blocks in SASL privacy, a restart of this
// one-DataNode cluster's DataNode leaves the Master's WAL hung (it never opens a new pipeline;
// a table cannot be created), with or without a change of level (README, "Changing security on
// a live HBase").
func TestHBaseProfileTransitionOfSASLLevels(t *testing.T) {
	withHBase(t)
	base := hbaseProfile(t, "hbase-kerberos-authentication", nil)
	target := hbaseProfile(t, "hbase-kerberos-authentication", &v1alpha1.EncryptionSettings{HBase: &v1alpha1.HBaseSecurity{
		HBaseRPCProtection: v1alpha1.ProtectionPrivacy, HadoopRPCProtection: v1alpha1.ProtectionPrivacy}})
	c := StartHBaseCluster(t, base)
	if err := c.Smoke(t, "before", "v"); err != nil {
		t.Fatalf("cluster at SASL authentication: %v", err)
	}
	applied := rollThrough(t, c, base, target, func(roll int) []hbase.Role {
		order := []hbase.Role{hbase.DataNode, hbase.NameNode, hbase.RegionServer, hbase.Master}
		if roll%2 == 0 {
			order[2], order[3] = order[3], order[2]
		}
		return order
	})
	for role, want := range map[hbase.Role]string{hbase.Master: "hbase.rpc.protection</name><value>privacy<", hbase.NameNode: "hadoop.rpc.protection</name><value>privacy<"} {
		if files := hbase.RoleFiles(mustFiles(t, c, applied), role); !strings.Contains(files["hbase-site.xml"]+files["core-site.xml"]+files["hdfs-site.xml"], want) {
			t.Errorf("the %s does not end at privacy alone (%s)", role, want)
		}
	}
}

// rollThrough takes the cluster from applied to target as the operator does (hbase.Next), one
// roll per step: ZooKeeper first when its files change, then the roles(roll) one at a time.
// After every restart, with the processes one step apart, a client must create, put, get and
// scan; before the last one it takes the new step's configuration. It returns the final step.
func rollThrough(t *testing.T, c *HBaseCluster, applied, target v1alpha1.EffectiveEncryption, roles func(roll int) []hbase.Role) v1alpha1.EffectiveEncryption {
	t.Helper()
	for roll := 1; !hbase.SameStep(applied, target); roll++ {
		next := hbase.Next(&applied, target)
		began := time.Now()
		c.Reconfigure(t, next)
		// ZooKeeper's client port follows the RPC ports' TLS: its pods roll with the others
		// when its files change, in no particular order.
		if !maps.Equal(zooKeeperFiles(t, c, applied), zooKeeperFiles(t, c, next)) {
			c.Restart(t, hbase.ZooKeeper)
		}
		order := roles(roll)
		for i, role := range order {
			c.Restart(t, role)
			if i == len(order)-1 {
				c.ConfigureClient(t, next)
			}
			revived, words, err := c.SmokeReviving(t, fmt.Sprintf("roll%d%s", roll, role), "v")
			if len(revived) > 0 {
				// On one DataNode, a DataNode restart can break the Master's WAL for good,
				// whatever the levels (README, "Changing security on a live HBase"): the Master
				// aborts, at the latest when a write has waited for its WAL for a minute
				// (hbase.regionserver.wal.sync.timeout), and its pod's kubelet starts it again.
				// A Master that cannot start at this step fails the test in Revive.
				t.Logf("roll %d, %s restarted: %v exited by themselves and started again, as their kubelet would; their last words:\n%s", roll, role, revived, words)
				if err != nil {
					err = c.Smoke(t, fmt.Sprintf("roll%d%sagain", roll, role), "v")
				}
			}
			if err != nil {
				t.Fatalf("roll %d (%s), %s restarted, %v not yet: %v", roll, hbase.Describe(&applied, next), role, order[i+1:], err)
			}
		}
		t.Logf("roll %d: %s in %s", roll, hbase.Describe(&applied, next), time.Since(began).Round(time.Second))
		applied = next
	}
	return applied
}

func mustFiles(t *testing.T, c *HBaseCluster, enc v1alpha1.EffectiveEncryption) map[string]string {
	t.Helper()
	files, err := hbase.Files(c.Topology, enc)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// zooKeeperFiles are the files ZooKeeper reads under enc.
func zooKeeperFiles(t *testing.T, c *HBaseCluster, enc v1alpha1.EffectiveEncryption) map[string]string {
	t.Helper()
	return hbase.RoleFiles(mustFiles(t, c, enc), hbase.ZooKeeper)
}

// Rotating every Kerberos key of a running cluster the way the operator does: keytabs gain
// the next version and the Master and RegionServer restart with them while the KDC still
// issues the current one (they log in and accept tickets), then the KDC issues the new
// version. Clients log in from their rotated keytab throughout.
func TestHBaseProfileKeyRotation(t *testing.T) {
	withHBase(t)
	c := StartHBaseCluster(t, hbaseProfile(t, "hbase-kerberos-authentication", nil))
	if err := c.Smoke(t, "before", "v"); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}
	began := time.Now()
	c.RotateKeys(t)
	c.Restart(t, hbase.RegionServer)
	c.Restart(t, hbase.Master)
	if err := c.Smoke(t, "prepublished", "v"); err != nil {
		t.Fatalf("keys pre-published, KDC still on version 1: %v", err)
	}
	c.KDC.Promote(t)
	if err := c.Smoke(t, "promoted", "v"); err != nil {
		t.Fatalf("KDC issues version 2: %v", err)
	}
	t.Logf("rotation: pre-publish, roll of Master and RegionServer, promotion in %s", time.Since(began).Round(time.Second))
}

// A CA rotation the way cert-manager does it, on a running TLS cluster: the new CA has the old
// one's subject; the trust bundle gains it, then every node certificate is re-issued by it.
// The Master and the RegionServer serve the new certificates without a restart, and a client
// that starts now, trusting the bundle, creates, puts, gets and scans. (From a PEM bundle,
// HBase keeps one CA per subject, the old one here, and refuses the new certificates.)
func TestHBaseCARotation(t *testing.T) {
	withHBase(t)
	c := StartHBaseCluster(t, hbaseProfile(t, "", tlsOnly))
	if err := c.Smoke(t, "before", "v"); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}
	began := time.Now()
	previous, next := c.CA, testpki.New(t)
	c.Trust(t, next, previous)
	c.CA = next
	c.IssueNodeCertificates(t)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(next.PEM)
	for role, host := range map[string]string{"RegionServer": c.Hosts.RegionServer, "Master": c.Hosts.Master} {
		port := map[string]int{"RegionServer": hbase.RegionServerPort, "Master": hbase.MasterPort}[role]
		id := &verify.Identity{Roots: roots, DNSName: host}
		deadline := time.Now().Add(3 * time.Minute)
		for {
			got, err := probe.Scan(context.Background(), fmt.Sprintf("%s:%d", host, port), probe.HBaseRPC)
			if err == nil && id.Check(got.Chain, time.Now()) == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still serves a certificate the new CA did not sign, 3 minutes after the rotation (%v)", role, err)
			}
			time.Sleep(2 * time.Second)
		}
	}
	t.Logf("both servers present the new CA's certificates %s after the rotation", time.Since(began).Round(time.Second))
	if err := c.Smoke(t, "after", "v"); err != nil {
		t.Fatalf("a new client trusting the bundle, after the rotation: %v", err)
	}
	// ZooKeeper reads its certificate only when it starts: the operator restarts it on a new
	// certificate revision. The Master and RegionServer, which now present the new CA's
	// certificates, reconnect to it and keep serving.
	c.Restart(t, hbase.ZooKeeper)
	zk := fmt.Sprintf("%s:%d", c.Hosts.ZooKeeper, hbase.ZooKeeperPort)
	got, err := probe.Scan(context.Background(), zk, probe.ZooKeeperClient)
	if err != nil {
		t.Fatalf("probing ZooKeeper after its restart: %v", err)
	}
	if err := (&verify.Identity{Roots: roots, DNSName: c.Hosts.ZooKeeper}).Check(got.Chain, time.Now()); err != nil {
		t.Errorf("ZooKeeper after its restart: %v", err)
	}
	if err := c.Smoke(t, "zkrestarted", "v"); err != nil {
		t.Fatalf("after ZooKeeper restarted with the new CA's certificate: %v", err)
	}
}
