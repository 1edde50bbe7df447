package dataplane

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"secured.dev/operator/internal/fscrypt"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/gobuild"
	"secured.dev/operator/internal/test/loopfs"
)

// The on-disk canary of an HBase datastore whose DataNode volume is encrypted (atRest.volume),
// on real processes: ZooKeeper, the NameNode and the DataNode keep their data on one ext4
// filesystem, and the init container's command (cmd/volume-encryption) has encrypted the
// DataNode's block directory as the DataNode pod's init container does. A value put through
// HBase reaches the DataNode's blocks (the WAL): it reads there through the filesystem, whose
// key the kernel holds, and is nowhere on the device once the processes stopped and the
// filesystem let go of its pages; a marker in a plain file of the same filesystem is found there.
func TestEncryptedVolumeKeepsHBaseBlocksOffTheDisk(t *testing.T) {
	withHBase(t)
	// Sparse: the DataNode keeps a whole block's room (128 MiB) free for each block it writes.
	fs := loopfs.Mount(t, 4<<30)
	data := filepath.Join(fs.Dir, "data")
	key := filepath.Join(t.TempDir(), "volume.key")
	secret := make([]byte, fscrypt.KeySize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	blocks := filepath.Join(data, filepath.Base(hbase.DataNodeDir))
	if out, err := exec.Command(gobuild.Command(t, "secured.dev/operator/cmd/volume-encryption"), "--dir="+blocks, "--key="+key).CombinedOutput(); err != nil {
		t.Fatalf("volume-encryption: %v\n%s", err, out)
	}
	c := StartHBaseClusterIn(t, hbaseProfile(t, "", disabled), data)
	marker, control := Marker(t), Marker(t)
	if err := c.Smoke(t, "canary", marker); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fs.Dir, "control"), []byte(control), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Stop() // the DataNode closes the WAL's block
	if len(OnDisk(t, blocks, marker)) == 0 {
		t.Fatalf("the marker is not in the DataNode's blocks under %s: the value never reached the volume, so the device check proves nothing", blocks)
	}
	fs.Detach(t) // everything the page cache held reaches the image
	if !OnDevice(t, fs.Image, control) {
		t.Fatal("a marker in a plain file is not on the device: the search cannot see clear text")
	}
	if OnDevice(t, fs.Image, marker) {
		t.Fatal("the value put through HBase is on the device in clear")
	}
	t.Logf("the value is in the DataNode's blocks through the filesystem and nowhere on the device; a plain file's marker is")
}
