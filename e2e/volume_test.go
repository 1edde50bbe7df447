//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/dataplane"
)

// The "encryptable" StorageClass's backing file on each worker (hack/kind/encryptable-storage.sh).
const encryptableImage = "/var/encryptable-storage.img"

// Encrypted volumes on Kind (atRest.volume, seed 002) below TLS 1.3, in a namespace under the
// restricted Pod Security Standard:
//   - on the default StorageClass, whose node filesystem cannot encrypt, the datastore never
//     starts Cassandra in clear: Ready says why, in the init container's own words;
//   - on the "encryptable" class (ext4 -O encrypt on a loop device), the node starts, and the
//     on-disk canary holds on the device itself: a marker written over CQL is readable through
//     the node's filesystem (the kernel holds the key) and nowhere in the device's bytes, before
//     and after the node's restart (its drain flushes the memtable into SSTables, which
//     Cassandra's own encryption leaves in clear), while a marker in a plain file beside the
//     data is found there (the search can find what is in clear); the restarted node reads it back.
func TestEncryptedVolumeOnKindKeepsDataOffTheDevice(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	ns := testNamespace(t, c, "volume", "restricted")
	applyProfile(t, c, "tls13-aes128-gcm")
	volumeDatastore := func(name, class string) *v1alpha1.SecuredDatastore {
		topology := smallCassandra(1)
		if class != "" {
			topology.Storage.StorageClassName = ptr.To(class)
		}
		return &v1alpha1.SecuredDatastore{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name},
			Spec: v1alpha1.SecuredDatastoreSpec{
				Engine: v1alpha1.EngineCassandra, Cassandra: topology,
				Encryption: v1alpha1.DatastoreEncryption{ProfileRef: "tls13-aes128-gcm", EncryptionSettings: v1alpha1.EncryptionSettings{
					AtRest: &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{}},
				}},
			},
		}
	}

	plainDisk := volumeDatastore("clear-disk", "")
	if err := c.Create(ctx, plainDisk); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, "Ready says why the default class's volume cannot be encrypted", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(plainDisk), plainDisk); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(plainDisk.Status.Conditions, v1alpha1.ConditionReady)
		switch {
		case ready == nil:
			return fmt.Errorf("no Ready condition yet")
		case ready.Status == metav1.ConditionTrue:
			t.Fatalf("a datastore whose volume cannot be encrypted became Ready: %s", ready.Message)
		case !strings.Contains(ready.Message, "container volume-encryption") || !strings.Contains(ready.Message, "does not support encryption"):
			return fmt.Errorf("Ready: %s", ready.Message)
		}
		t.Logf("Ready=False %s: %s", ready.Reason, ready.Message)
		return nil
	})
	if err := c.Delete(ctx, plainDisk); err != nil {
		t.Fatal(err)
	}

	ds := volumeDatastore("sealed-disk", "encryptable")
	start := time.Now()
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, ds, start, "ready")
	t.Logf("1-node datastore on an encrypted volume Ready in %s", time.Since(start).Round(time.Second))

	marker := dataplane.Marker(t)
	dir, node := dataDir(t, c, ds, cassandra.NamesOf(ds).Pod(0))
	if !strings.HasPrefix(dir, "/var/local-path-encryptable/") {
		t.Fatalf("the volume is at %s on %s, not on the encryptable filesystem", dir, node)
	}
	writeMarker(t, c, ds, "canary-write", marker)
	// The commit log reaches the filesystem at each periodic sync (10 s); sync pushes the
	// filesystem's blocks down to the device.
	time.Sleep(12 * time.Second)
	if found := grepNode(t, node, marker, dir); found == "" {
		t.Fatalf("the marker is not readable through %s on %s: the write did not reach the volume, so the device check below proves nothing", dir, node)
	}
	if found := deviceHolds(t, node, marker); found {
		t.Fatalf("the marker is in clear on %s's encrypted device", node)
	}
	deviceShowsClearText(t, node, ns.Name)
	t.Logf("on-disk canary: the marker is readable through %s and absent from %s's device; a plain file's marker is found there", dir, node)

	restartPod(t, c, ns.Name, cassandra.NamesOf(ds).Pod(0))
	if found := grepNode(t, node, marker, dir); !strings.Contains(found, "/data/e2e/kv-") {
		t.Errorf("after the drain the marker is not in the SSTables as the filesystem shows them (found: %q)", found)
	}
	if deviceHolds(t, node, marker) {
		t.Errorf("after the flush into SSTables the marker is in clear on %s's device", node)
	}
	readMarker(t, c, ds, "canary-read", marker)
}

// deviceShowsClearText writes a marker into a plain file of the worker's encryptable filesystem
// and fails the test unless the device search finds it: a search that finds nothing proves
// something only if it can find clear text.
func deviceShowsClearText(t *testing.T, node, namespace string) {
	t.Helper()
	control := dataplane.Marker(t)
	controlFile := "/var/local-path-encryptable/e2e-control-" + namespace
	if out, err := exec.Command("docker", "exec", node, "sh", "-c", `printf %s "$1" > "$2" && sync`, "sh", control, controlFile).CombinedOutput(); err != nil {
		t.Fatalf("writing the control marker on %s: %v: %s", node, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "exec", node, "rm", "-f", controlFile).Run() })
	if !deviceHolds(t, node, control) {
		t.Fatalf("a marker in a plain file on %s's device is not found: the device search cannot see clear text", node)
	}
}

// deviceHolds says whether the bytes of the worker's encryptable device hold marker, after
// the node's filesystems are synced.
func deviceHolds(t *testing.T, node, marker string) bool {
	t.Helper()
	if !strings.HasPrefix(marker, "canary-") && !strings.HasPrefix(marker, "canary_") {
		t.Fatalf("refusing to search for %q", marker)
	}
	if out, err := exec.Command("docker", "exec", node, "sync").CombinedOutput(); err != nil {
		t.Fatalf("sync on %s: %v: %s", node, err, out)
	}
	out, err := exec.Command("docker", "exec", node, "grep", "-c", "-a", "-F", "--", marker, encryptableImage).CombinedOutput()
	switch code := exitCode(err); code {
	case 0:
		return true
	case 1:
		return false
	default:
		t.Fatalf("searching %s on %s: %v: %s", encryptableImage, node, err, out)
		return false
	}
}

// An HBase datastore with encrypted volumes (atRest.volume) on Kind: its DataNode's volume on
// the "encryptable" class, its block directory encrypted by the init container. A benchmark
// writes into a table named by a random marker (HBase's WAL names the table in every entry,
// so the marker reaches the DataNode's blocks): the marker reads there through the worker's
// filesystem, which holds the key, and is nowhere in the device's bytes, while a marker in a
// plain file of the same filesystem is found there.
func TestEncryptedHBaseVolumeOnKindKeepsBlocksOffTheDevice(t *testing.T) {
	c := newClient(t)
	ns := testNamespace(t, c, "hbase-volume", "restricted")
	off := v1alpha1.ChannelEncryption{Mode: v1alpha1.ChannelDisabled}
	ds := &v1alpha1.SecuredDatastore{
		ObjectMeta: metav1.ObjectMeta{Name: "sealedhdfs", Namespace: ns.Name},
		Spec: v1alpha1.SecuredDatastoreSpec{
			Engine: v1alpha1.EngineHBase,
			HBase: &v1alpha1.HBaseTopology{RegionServers: ptr.To[int32](1), DataNodes: ptr.To[int32](1),
				Storage: v1alpha1.StorageSpec{Size: ptr.To(resource.MustParse("1Gi")), StorageClassName: ptr.To("encryptable")}},
			Encryption: v1alpha1.DatastoreEncryption{EncryptionSettings: v1alpha1.EncryptionSettings{
				ClientToNode: &v1alpha1.ClientToNodeEncryption{ChannelEncryption: off},
				NodeToNode:   &v1alpha1.NodeToNodeEncryption{ChannelEncryption: off},
				AtRest:       &v1alpha1.AtRestEncryption{Volume: &v1alpha1.VolumeAtRest{}},
			}},
		},
	}
	t.Logf("HBase with an encrypted DataNode volume Ready in %s", createHBase(t, c, ds).Round(time.Second))
	dir, node := dataDir(t, c, ds, hbase.NamesOf(ds).StatefulSet(hbase.DataNode)+"-0")
	if !strings.HasPrefix(dir, "/var/local-path-encryptable/") {
		t.Fatalf("the DataNode's volume is at %s on %s, not on the encryptable filesystem", dir, node)
	}
	blocks := dir + "/" + filepath.Base(hbase.DataNodeDir)

	marker := strings.ReplaceAll(dataplane.Marker(t), "-", "_") // a table name
	b := &v1alpha1.DatastoreBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-canary", Namespace: ns.Name},
		Spec: v1alpha1.DatastoreBenchmarkSpec{
			Target:      v1alpha1.BenchmarkTarget{DatastoreRef: &v1alpha1.SecuredDatastoreReference{Name: ds.Name}},
			Workload:    v1alpha1.Workload{Preset: "A", RecordCount: ptr.To[int64](500), Table: marker, Duration: &metav1.Duration{Duration: 5 * time.Second}},
			Load:        v1alpha1.Load{Mode: v1alpha1.LoadMaxThroughput, VirtualUsers: ptr.To[int32](4)},
			Repetitions: ptr.To[int32](1),
			WarmUp:      &metav1.Duration{Duration: time.Second},
		},
	}
	runBenchmark(t, c, b, 10*time.Minute)
	if found := grepNode(t, node, marker, blocks); found == "" {
		t.Fatalf("the table's name is not readable in the DataNode's blocks under %s on %s: the writes did not reach the volume, so the device check proves nothing", blocks, node)
	}
	if deviceHolds(t, node, marker) {
		t.Fatalf("the table's name is in clear on %s's encrypted device", node)
	}
	deviceShowsClearText(t, node, ns.Name)
	t.Logf("on-disk canary: the table %s is readable in the DataNode's blocks and absent from %s's device; a plain file's marker is found there", marker, node)
}
