package dataplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/test/testpki"
)

// A three-server ZooKeeper ensemble of an HBase datastore, each server a real QuorumPeerMain
// with the files internal/render/hbase renders: with Kerberos the servers authenticate each
// other (quorum SASL), with TLS they speak TLS to each other and prove membership with a
// certificate of the datastore's CA; either way they elect a leader. A third server that runs
// and reaches their peer ports but cannot prove membership is refused and never joins: with
// Kerberos, its zoo.cfg lacks the quorum's authentication lines (as a server set up by someone
// else would); with TLS, its certificate comes from another CA. Without quorum SASL on the
// first two, or trusting the other CA, it joins (checked by hand).
func TestZooKeeperEnsembleAdmitsMembersOnly(t *testing.T) {
	withHBase(t)
	for _, tc := range []struct {
		name    string
		profile string
		inline  *v1alpha1.EncryptionSettings
		// membership: the zoo.cfg lines that make a server a member; the third server lacks them.
		membership []string
		// foreignCA: the third server's certificate and trust come from another CA.
		foreignCA bool
		// proof: what each member logs once the quorum authenticated it.
		proof []string
	}{
		{"Kerberos", "hbase-kerberos-authentication", nil, []string{"quorum.auth."}, false,
			[]string{"QuorumServer successfully logged in", "QuorumLearner successfully logged in"}},
		{"TLS", "", tlsOnly, []string{"sslQuorum=true", "ssl.quorum.keyStore"}, true,
			[]string{"Using TLS encrypted quorum communication", "SSL handshake complete"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ensembleAdmitsMembersOnly(t, hbaseProfile(t, tc.profile, tc.inline), tc.membership, tc.foreignCA, tc.proof)
		})
	}
}

func ensembleAdmitsMembersOnly(t *testing.T, enc v1alpha1.EffectiveEncryption, membership []string, foreignCA bool, proof []string) {
	lib, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "hbase-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving HBase jars: %v", err)
	}
	hosts := []string{"127.0.0.111", "127.0.0.112", "127.0.0.113"}
	kerberized := enc.HBase.Authentication == v1alpha1.AuthenticationKerberos
	var principals []string
	var kdc *KDC
	if kerberized {
		for _, h := range hosts {
			principals = append(principals, kerberos.Service(hbase.ZooKeeperService, h, hbaseRealm))
		}
		kdc = StartKDC(t, hbaseRealm, "127.0.0.110", kdcPort, principals...)
	}
	ca, foreign := testpki.New(t), testpki.New(t)

	dir := t.TempDir()
	start := func(i int, member bool) *process {
		t.Helper()
		d := filepath.Join(dir, fmt.Sprint(i))
		topo := hbase.Topology{ZooKeeper: hosts,
			Layout: hbase.Layout{DataDir: filepath.Join(d, "data"), KeytabDir: filepath.Join(d, "keytab"), TLSDir: filepath.Join(d, "tls"), TrustDir: filepath.Join(d, "trust")}}
		if kerberized {
			topo.Realm, topo.KDC = hbaseRealm, kdc.Address
		}
		files, err := hbase.Files(topo, enc)
		if err != nil {
			t.Fatal(err)
		}
		// In pods each server has a network of its own and listens on all its addresses; here
		// the three share this machine's, so each binds its own loopback address instead.
		address := "clientPortAddress="
		if strings.Contains(files["zoo.cfg"], "\nsecureClientPort=") {
			address = "secureClientPortAddress="
		}
		files["zoo.cfg"] = strings.Replace(files["zoo.cfg"], "quorumListenOnAllIPs=true\n", address+hosts[i]+"\n", 1)
		var kept, found []string
		for _, line := range strings.Split(files["zoo.cfg"], "\n") {
			if slices.ContainsFunc(membership, func(prefix string) bool { return strings.HasPrefix(line, prefix) }) {
				found = append(found, line)
				if !member && !foreignCA {
					continue
				}
			}
			kept = append(kept, line)
		}
		if len(found) < len(membership) {
			t.Fatalf("zoo.cfg of the ensemble lacks some of %v:\n%s", membership, files["zoo.cfg"])
		}
		files["zoo.cfg"] = strings.Join(kept, "\n")
		for name, body := range files {
			mkfile(t, filepath.Join(d, "conf", name), body)
		}
		mkfile(t, filepath.Join(d, "data", "zookeeper", "myid"), fmt.Sprint(i+1))
		if kerberized {
			kdc.WriteKeytab(t, topo.Layout.Keytab(), principals[i])
		}
		issuer := ca
		if !member && foreignCA {
			issuer = foreign
		}
		issuer.WriteSecretWithKey(t, topo.Layout.TLSDir, false, hosts[i])
		writeTrust(t, topo.Layout.TrustDir, issuer)
		in := hbase.Install{Conf: filepath.Join(d, "conf"), Resources: filepath.Join(samples.RepoRoot(), "images", "hbase", "resources"), Lib: strings.TrimSpace(string(lib))}
		cmd := java(context.Background(), hbase.JVM(in, 128, kerberized, hbase.ZooKeeper, hosts[i])[1:]...)
		cmd.Env = append(os.Environ(), hbase.HostEnv+"="+hosts[i], hbase.BindEnv+"="+hosts[i])
		return launch(t, fmt.Sprintf("ZooKeeper %d on %s", i+1, hosts[i]), cmd)
	}

	zk := []*process{start(0, true), start(1, true), start(2, false)}
	role := func(p *process) string {
		log := p.Log()
		switch {
		case strings.Contains(log, "LEADING -"):
			return "leader"
		case strings.Contains(log, "FOLLOWING -"):
			return "follower"
		}
		return ""
	}
	deadline := time.Now().Add(2 * time.Minute)
	for role(zk[0]) == "" || role(zk[1]) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the two members formed no quorum:\n%s\n%s", tail(zk[0].Log(), 30), tail(zk[1].Log(), 30))
		}
		time.Sleep(time.Second)
	}
	t.Logf("quorum of servers 1 and 2: %s and %s", role(zk[0]), role(zk[1]))
	for i, p := range zk[:2] {
		for _, want := range proof {
			if !strings.Contains(p.Log(), want) {
				t.Errorf("server %d never logged %q:\n%s", i+1, want, tail(p.Log(), 30))
			}
		}
	}
	// Give the third its chances: several election rounds.
	time.Sleep(20 * time.Second)
	if r := role(zk[2]); r != "" {
		t.Fatalf("the server that is no member joined the ensemble as %s:\n%s", r, tail(zk[2].Log(), 30))
	}
	if !zk[2].alive() {
		t.Fatalf("the third server exited instead of being refused:\n%s", tail(zk[2].Log(), 30))
	}
	t.Logf("server 3 (no proof of membership): running, still outside the ensemble after 20 s")
}
