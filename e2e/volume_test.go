//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
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
	control := dataplane.Marker(t)
	controlFile := "/var/local-path-encryptable/e2e-control-" + ns.Name
	if out, err := exec.Command("docker", "exec", node, "sh", "-c", `printf %s "$1" > "$2" && sync`, "sh", control, controlFile).CombinedOutput(); err != nil {
		t.Fatalf("writing the control marker on %s: %v: %s", node, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "exec", node, "rm", "-f", controlFile).Run() })
	if !deviceHolds(t, node, control) {
		t.Fatalf("a marker in a plain file on %s's device is not found: the device search cannot see clear text", node)
	}
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

// deviceHolds says whether the bytes of the worker's encryptable device hold marker, after
// the node's filesystems are synced.
func deviceHolds(t *testing.T, node, marker string) bool {
	t.Helper()
	if !strings.HasPrefix(marker, "canary-") {
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
