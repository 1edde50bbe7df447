package dataplane

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"secured.dev/operator/internal/fscrypt"
	"secured.dev/operator/internal/test/loopfs"
)

// PlainAndEncrypted mounts a fresh ext4 filesystem of size bytes (loopfs: root, a loop device)
// with two empty directories on it, one plain and one encrypted by fscrypt under a key of its
// own, for what compares the two on one device.
func PlainAndEncrypted(t testing.TB, size int64) (fs *loopfs.FS, plain, encrypted string) {
	t.Helper()
	fs = loopfs.Mount(t, size)
	plain, encrypted = filepath.Join(fs.Dir, "plain"), filepath.Join(fs.Dir, "encrypted")
	for _, d := range []string{plain, encrypted} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, fscrypt.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if _, err := fscrypt.Prepare(encrypted, key); err != nil {
		t.Fatal(err)
	}
	return fs, plain, encrypted
}
