package dataplane

import (
	"bytes"
	"fmt"
	"maps"
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

	var restarted []hbase.Role
	for _, role := range []hbase.Role{hbase.RegionServer, hbase.Master, hbase.DataNode, hbase.NameNode, hbase.ZooKeeper} {
		if !maps.Equal(hbase.RoleFiles(mustFiles(t, c, base), role), hbase.RoleFiles(mustFiles(t, c, target), role)) {
			restarted = append(restarted, role)
		}
	}
	if fmt.Sprint(restarted) != fmt.Sprint([]hbase.Role{hbase.RegionServer, hbase.Master, hbase.DataNode, hbase.NameNode}) {
		t.Fatalf("roles whose files change: %v; want the RegionServer, the Master and HDFS, not ZooKeeper", restarted)
	}
	c.Reconfigure(t, target)
	c.ConfigureClient(t, target)
	began := time.Now()
	for _, role := range restarted {
		c.procs[role].stop()
	}
	stopped := time.Since(began)
	// Their pods start together: HDFS first needs its DataNode's block report to leave safe
	// mode, and the Master its RegionServer to host hbase:meta.
	nn, dn := c.start(t, hbase.NameNode, c.Hosts.NameNode, 256), c.start(t, hbase.DataNode, c.Hosts.DataNode, 256)
	nn.waitFor(t, "NameNode RPC up", 2*time.Minute)
	dn.waitFor(t, "Successfully sent block report", 2*time.Minute)
	nn.waitFor(t, "Leaving safe mode", 2*time.Minute)
	master, rs := c.start(t, hbase.Master, c.Hosts.Master, 512), c.start(t, hbase.RegionServer, c.Hosts.RegionServer, 512)
	rs.waitFor(t, "Serving as", 2*time.Minute)
	master.waitFor(t, "Master has completed initialization", 4*time.Minute)
	up := time.Since(began)
	if _, blocks := blockCanary(t, c, "after"); blocks {
		t.Error("after the change the marker still crosses HDFS block transfer in clear")
	}
	if err := c.ReadBack(t, "before", written); err != nil {
		t.Errorf("the rows written before the change: %v", err)
	}
	t.Logf("HDFS block encryption on, in one step: %s stopped in %s, all serving again after %s, a client worked again after %s (its own JVM start included)",
		restarted, stopped.Round(100*time.Millisecond), up.Round(time.Second), time.Since(began).Round(time.Second))
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
