package dataplane

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/kerberos"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/samples"
)

// A three-server ZooKeeper ensemble of a Kerberos HBase datastore, each server a real
// QuorumPeerMain with the files internal/render/hbase renders: the servers authenticate each
// other with Kerberos (quorum SASL) and elect a leader. A third server that runs and reaches
// their peer ports but does not authenticate as a quorum member (its zoo.cfg without quorum
// SASL, as a server set up by someone else would be) is refused and never joins; without
// quorum SASL on the first two it joins (checked by hand: remove the quorum.auth lines).
func TestZooKeeperEnsembleAdmitsKerberosPeersOnly(t *testing.T) {
	lib, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "hbase-jars.sh")).Output()
	if err != nil {
		t.Fatalf("resolving HBase jars: %v", err)
	}
	hosts := []string{"127.0.0.111", "127.0.0.112", "127.0.0.113"}
	var principals []string
	for _, h := range hosts {
		principals = append(principals, kerberos.Service(hbase.ZooKeeperService, h, hbaseRealm))
	}
	kdc := StartKDC(t, hbaseRealm, "127.0.0.110", kdcPort, principals...)
	enc := hbaseProfile(t, "hbase-kerberos-authentication", nil)

	dir := t.TempDir()
	start := func(i int, quorumSASL bool) *process {
		t.Helper()
		d := filepath.Join(dir, fmt.Sprint(i))
		topo := hbase.Topology{ZooKeeper: hosts, Realm: hbaseRealm, KDC: kdc.Address,
			Layout: hbase.Layout{DataDir: filepath.Join(d, "data"), KeytabDir: filepath.Join(d, "keytab")}}
		files, err := hbase.Files(topo, enc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(files["zoo.cfg"], "quorum.auth.serverRequireSasl=true") {
			t.Fatalf("zoo.cfg of a Kerberos ensemble does not demand quorum SASL:\n%s", files["zoo.cfg"])
		}
		// In pods each server has a network of its own and listens on all its addresses; here
		// the three share this machine's, so each binds its own loopback address instead.
		files["zoo.cfg"] = strings.Replace(files["zoo.cfg"], "quorumListenOnAllIPs=true\n", "clientPortAddress="+hosts[i]+"\n", 1)
		if !quorumSASL {
			var kept []string
			for _, line := range strings.Split(files["zoo.cfg"], "\n") {
				if !strings.HasPrefix(line, "quorum.auth.") {
					kept = append(kept, line)
				}
			}
			files["zoo.cfg"] = strings.Join(kept, "\n")
		}
		for name, body := range files {
			mkfile(t, filepath.Join(d, "conf", name), body)
		}
		mkfile(t, filepath.Join(d, "data", "zookeeper", "myid"), fmt.Sprint(i+1))
		kdc.WriteKeytab(t, topo.Layout.Keytab(), principals[i])
		in := hbase.Install{Conf: filepath.Join(d, "conf"), Resources: filepath.Join(samples.RepoRoot(), "images", "hbase", "resources"), Lib: strings.TrimSpace(string(lib))}
		cmd := exec.Command("java", hbase.JVM(in, 128, true, hbase.ZooKeeper, hosts[i])[1:]...)
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
			t.Fatalf("the two servers with keys of their own formed no quorum:\n%s\n%s", tail(zk[0].Log(), 30), tail(zk[1].Log(), 30))
		}
		time.Sleep(time.Second)
	}
	t.Logf("quorum of servers 1 and 2: %s and %s", role(zk[0]), role(zk[1]))
	// Quorum SASL took place: the peers logged in from their keytabs.
	for i, p := range zk[:2] {
		if !strings.Contains(p.Log(), "QuorumServer successfully logged in") || !strings.Contains(p.Log(), "QuorumLearner successfully logged in") {
			t.Errorf("server %d shows no Kerberos login of the quorum:\n%s", i+1, tail(p.Log(), 30))
		}
	}
	// Give the third its chances: several election rounds.
	time.Sleep(20 * time.Second)
	if r := role(zk[2]); r != "" {
		t.Fatalf("the server without quorum authentication joined the ensemble as %s:\n%s", r, tail(zk[2].Log(), 30))
	}
	if !zk[2].alive() {
		t.Fatalf("the third server exited instead of being refused:\n%s", tail(zk[2].Log(), 30))
	}
	t.Logf("server 3 (no quorum authentication): running, still outside the ensemble after 20 s")
}
