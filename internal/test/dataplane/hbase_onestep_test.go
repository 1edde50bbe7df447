package dataplane

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/hbase"
)

// Switching HDFS block encryption (dataTransfer.encrypt) on in a live Kerberos cluster. No
// stage of Hadoop 3.4.2 accepts encrypted and unencrypted block transfers at once: a DataNode
// that encrypts expects every reader and writer to open with the NameNode's data encryption
// key, one that does not expects the block token's SASL exchange, and the DataNode has no
// setting that takes both (HADOOP-18967 proposed dfs.datanode.unsafe.sasl.allowed-not-required;
// 3.4.2's SaslDataTransferServer has no such key). So hbase.Next takes the change in one step
// and every role whose files change restarts together, as their pods do. The test measures the
// unavoidable gap, from the first process stopped to the first client that creates, puts, gets
// and scans again, shows on the wire that blocks travelled in clear before and encrypted
// after, and reads back the rows written before.
func TestHBaseDataTransferEncryptionChangesInOneStep(t *testing.T) {
	withHBase(t)
	base := hbaseProfile(t, "hbase-kerberos-authentication", nil)
	target := hbaseProfile(t, "hbase-kerberos-authentication", &v1alpha1.EncryptionSettings{
		HBase: &v1alpha1.HBaseSecurity{DataTransfer: &v1alpha1.HDFSDataTransfer{Encrypt: ptr.To(true)}}})
	if next := hbase.Next(&base, target); !hbase.SameStep(next, target) {
		t.Fatalf("HDFS block encryption must change in one step, got %s first", hbase.Describe(&base, next))
	}
	c := StartHBaseCluster(t, base)
	written, blocks := blockCanary(t, c, "before")
	if !blocks {
		t.Fatal("before the change the marker must cross HDFS block transfer in clear: the canary sees nothing to compare with")
	}

	c.ConfigureClient(t, target)
	restarted, stopped, up := changeInOneStep(t, c, base, target)
	if fmt.Sprint(restarted) != fmt.Sprint([]hbase.Role{hbase.RegionServer, hbase.Master, hbase.DataNode, hbase.NameNode}) {
		t.Errorf("roles whose files change: %v; want the RegionServer, the Master and HDFS, not ZooKeeper", restarted)
	}
	began := time.Now().Add(-up)
	if _, blocks := blockCanary(t, c, "after"); blocks {
		t.Error("after the change the marker still crosses HDFS block transfer in clear")
	}
	if err := c.ReadBack(t, "before", written); err != nil {
		t.Errorf("the rows written before the change: %v", err)
	}
	t.Logf("HDFS block encryption on, in one step: %s stopped in %s, all serving again after %s, a client worked again after %s (its own JVM start included)",
		restarted, stopped.Round(100*time.Millisecond), up.Round(time.Second), time.Since(began).Round(time.Second))
}

// Switching Kerberos on in a live cluster without TLS: every role's files change, ZooKeeper's
// too (SASL), and a server that requires Kerberos refuses callers that do not use it, so all
// restart together, as for block encryption. The test measures the gap, reads back with Kerberos
// the rows written without it, and finds HBase's znodes closed to unauthenticated sessions.
func TestHBaseKerberosTurnsOnInOneStep(t *testing.T) {
	withHBase(t)
	c := kerberosInOneStep(t, "on", hbaseProfile(t, "", disabled), hbaseProfile(t, "hbase-kerberos-authentication", nil), func(c *HBaseCluster) {
		c.setRealm()
		c.startKDC(t)
	})
	// The znodes written without Kerberos were open to anyone; the Master sets their ACLs when
	// it starts with Kerberos, so an unauthenticated session may no longer list HBase's metadata.
	if code, err := ZooKeeperReadCode(fmt.Sprintf("%s:%d", c.Hosts.ZooKeeper, hbase.ZooKeeperPort)); err != nil || code != -124 {
		t.Errorf("an unauthenticated ZooKeeper session listing /: code %d (%v), want -124", code, err)
	}
}

// Switching Kerberos off in a live cluster: the reverse move, in one step for the same reason
// (a server that no longer speaks SASL refuses callers that still do). The znodes HBase wrote
// with Kerberos carry ACLs for the Kerberos user hbase alone, which a Master without Kerberos
// cannot satisfy; the test shows whether HBase comes back, measures the gap, and reads back
// without Kerberos the rows written with it.
func TestHBaseKerberosTurnsOffInOneStep(t *testing.T) {
	withHBase(t)
	// The pods start without Kerberos from now on; the KDC is no longer asked.
	kerberosInOneStep(t, "off", hbaseProfile(t, "hbase-kerberos-authentication", nil), hbaseProfile(t, "", disabled), func(c *HBaseCluster) { c.KDC = nil })
}

// kerberosInOneStep checks that the operator switches Kerberos (on or off: turned) from base
// to target in one step, starts a cluster at base and writes rows, switches with every role
// restarting together (prepare readies the realm for target), then writes and reads back at
// target, and logs the gap. It returns the cluster.
func kerberosInOneStep(t *testing.T, turned string, base, target v1alpha1.EffectiveEncryption, prepare func(*HBaseCluster)) *HBaseCluster {
	t.Helper()
	if next := hbase.Next(&base, target); !hbase.SameStep(next, target) {
		t.Fatalf("Kerberos must change in one step, got %s first", hbase.Describe(&base, next))
	}
	c := StartHBaseCluster(t, base)
	written := Marker(t)
	if err := c.Smoke(t, "before", written); err != nil {
		t.Fatalf("before the change: %v", err)
	}
	prepare(c)
	restarted, stopped, up := changeInOneStep(t, c, base, target)
	if len(restarted) != 5 {
		t.Errorf("roles whose files change: %v; want all five", restarted)
	}
	c.ConfigureClient(t, target)
	began := time.Now().Add(-up)
	if err := c.Smoke(t, "after", "v"); err != nil {
		t.Fatalf("after the change: %v", err)
	}
	if err := c.ReadBack(t, "before", written); err != nil {
		t.Errorf("the rows written before the change: %v", err)
	}
	t.Logf("Kerberos %s, in one step: %s stopped in %s, all serving again after %s, a client worked again after %s (its own JVM start included)",
		turned, restarted, stopped.Round(100*time.Millisecond), up.Round(time.Second), time.Since(began).Round(time.Second))
	return c
}

// changeInOneStep takes a running cluster from base to target in one step, as the operator
// does where no staged way exists: every role whose files change stops, and all of them start
// again together, as their pods do. It returns those roles, how long they took to stop, and
// how long until every one served again.
func changeInOneStep(t *testing.T, c *HBaseCluster, base, target v1alpha1.EffectiveEncryption) (restarted []hbase.Role, stopped, up time.Duration) {
	t.Helper()
	for _, role := range []hbase.Role{hbase.RegionServer, hbase.Master, hbase.DataNode, hbase.NameNode, hbase.ZooKeeper} {
		if !maps.Equal(hbase.RoleFiles(mustFiles(t, c, base), role), hbase.RoleFiles(mustFiles(t, c, target), role)) {
			restarted = append(restarted, role)
		}
	}
	stopped, up = restartTogether(t, c, restarted, target)
	return restarted, stopped, up
}

// restartTogether stops the roles, renders target's files, and starts the roles again
// together, as their pods are when their files change at once. It returns how long they took to
// stop and how long until every one served again.
func restartTogether(t *testing.T, c *HBaseCluster, restarted []hbase.Role, target v1alpha1.EffectiveEncryption) (stopped, up time.Duration) {
	t.Helper()
	c.Reconfigure(t, target)
	began := time.Now()
	for _, role := range restarted {
		c.procs[role].stop()
	}
	stopped = time.Since(began)
	// HDFS needs its DataNode's block report to leave safe mode, and the Master its
	// RegionServer to host hbase:meta.
	if slices.Contains(restarted, hbase.ZooKeeper) {
		c.restart(t, hbase.ZooKeeper)
	}
	nn, dn := c.start(t, hbase.NameNode, c.Hosts.NameNode, 256), c.start(t, hbase.DataNode, c.Hosts.DataNode, 256)
	nn.waitFor(t, "NameNode RPC up", 2*time.Minute)
	dn.waitFor(t, "Successfully sent block report", 2*time.Minute)
	nn.waitFor(t, "Leaving safe mode", 2*time.Minute)
	master, rs := c.start(t, hbase.Master, c.Hosts.Master, 512), c.start(t, hbase.RegionServer, c.Hosts.RegionServer, 512)
	rs.waitFor(t, "Serving as", 2*time.Minute)
	master.waitFor(t, "Master has completed initialization", 4*time.Minute)
	return stopped, time.Since(began)
}

// blockCanary creates a table, puts a marker, gets and scans it while tcpdump watches HDFS
// block transfer, and reports the marker and whether it crossed block transfer in clear.
func blockCanary(t *testing.T, c *HBaseCluster, table string) (marker string, inClear bool) {
	t.Helper()
	marker = Marker(t)
	blocks := Capture(t, []int{hbase.DataNodePort}, func() {
		if err := c.Smoke(t, table, marker); err != nil {
			t.Fatalf("create, put, get, scan %s: %v", table, err)
		}
	})
	return marker, bytes.Contains(blocks, []byte(marker))
}
