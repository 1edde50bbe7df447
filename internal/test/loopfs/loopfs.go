// Package loopfs gives a test a fresh ext4 filesystem of its own, made with the encrypt feature
// in an image file and mounted from a loop device, so that it can see exactly what reached the
// disk. It needs root (losetup, mount) and e2fsprogs (hack/build/prereqs.sh).
package loopfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// FS is a mounted filesystem and the image behind it.
type FS struct {
	Image string // the image file: the disk as the device sees it
	Dir   string // where it is mounted
	loop  string // the loop device while attached
}

// Mount makes an ext4 filesystem of size bytes and mounts it until the test ends. The loop
// device does direct I/O on the image, so that the host's page cache holds no second copy and
// reads of the filesystem reach the disk.
func Mount(t testing.TB, size int64) *FS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("loopfs needs root to attach a loop device and mount it (make test runs as root on the project's machines)")
	}
	dir := t.TempDir()
	// Everything lives under a shared mount of its own. A program that ip netns exec starts
	// meanwhile gets a copy of this machine's mounts, and on a machine whose root mount is
	// private that copy would hold the filesystem after Detach's umount: unwritten, its key
	// loaded, its loop device attached. A copy of a shared mount is its slave instead, and the
	// umount reaches it.
	run(t, "mount", "--bind", dir, dir)
	t.Cleanup(func() { run(t, "umount", dir) })
	run(t, "mount", "--make-shared", dir)
	fs := &FS{Image: filepath.Join(dir, "disk.img"), Dir: filepath.Join(dir, "mnt")}
	f, err := os.Create(fs.Image)
	if err == nil {
		err = f.Truncate(size)
		_ = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(fs.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "mkfs.ext4", "-q", "-F", "-O", "encrypt", fs.Image)
	fs.Attach(t)
	t.Cleanup(func() { fs.Detach(t) })
	return fs
}

// Attach mounts the filesystem again after Detach; a new mount holds no encryption key.
func (fs *FS) Attach(t testing.TB) {
	t.Helper()
	if fs.loop != "" {
		return
	}
	if held := fs.attachedTo(t); held != "" {
		// A second mount of the image beside the one that lives on would share its blocks and
		// not its key: the test would neither prove a restart nor keep the image whole.
		t.Fatalf("%s is still attached after its unmount (%s): a program with a private copy of this machine's mounts (unshare --mount) holds the filesystem", fs.Image, held)
	}
	fs.loop = strings.TrimSpace(run(t, "losetup", "--find", "--show", "--direct-io=on", fs.Image))
	run(t, "mount", "-t", "ext4", fs.loop, fs.Dir)
}

// Detach writes everything back to the image, unmounts the filesystem and frees the loop
// device.
func (fs *FS) Detach(t testing.TB) {
	t.Helper()
	if fs.loop == "" {
		return
	}
	// umount writes back only when it drops the filesystem's last mount, which a copy of it
	// that another program's mount namespace still holds would keep.
	run(t, "sync", "--file-system", fs.Dir)
	run(t, "umount", fs.Dir)
	run(t, "losetup", "--detach", fs.loop)
	fs.loop = ""
}

// attachedTo lists the loop devices the image is attached to, empty when none.
func (fs *FS) attachedTo(t testing.TB) string {
	t.Helper()
	return strings.TrimSpace(run(t, "losetup", "--associated", fs.Image))
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
