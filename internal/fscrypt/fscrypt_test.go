//go:build linux

package fscrypt

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"secured.dev/operator/internal/test/loopfs"
	"secured.dev/operator/internal/test/tier"
)

// The on-disk canary of an encrypted volume: a marker written below an encrypted directory, in
// a file's contents and in its name, is nowhere on the device, while the same kind of marker
// outside it is (so the search can fail); after a remount the files cannot be read without the
// key, and with it they read back as written.
func TestEncryptedDirectoryLeavesNoPlaintextOnDisk(t *testing.T) {
	tier.Full(t, "root, a loop device and e2fsprogs")
	fs := loopfs.Mount(t, 64<<20)
	key := random(t, KeySize)
	id, err := AddKey(fs.Dir, key)
	if err != nil {
		t.Fatal(err)
	}
	enc, plain := filepath.Join(fs.Dir, "enc"), filepath.Join(fs.Dir, "plain")
	for _, d := range []string{enc, plain} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := Encrypt(enc, id); err != nil {
		t.Fatal(err)
	}
	secret, name, visible := "SECRET-"+hex.EncodeToString(random(t, 8)), "NAME-"+hex.EncodeToString(random(t, 8)), "VISIBLE-"+hex.EncodeToString(random(t, 8))
	contents := bytes.Repeat([]byte(secret+" "), 2000) // several blocks
	write(t, filepath.Join(enc, name), contents)
	write(t, filepath.Join(plain, "file"), []byte(visible))

	fs.Detach(t)
	disk, err := os.ReadFile(fs.Image)
	if err != nil {
		t.Fatal(err)
	}
	for marker, want := range map[string]bool{secret: false, name: false, visible: true} {
		if got := bytes.Contains(disk, []byte(marker)); got != want {
			t.Errorf("%s on the disk: %t, want %t", marker, got, want)
		}
	}

	fs.Attach(t)
	if _, err := os.ReadFile(filepath.Join(enc, name)); err == nil {
		t.Error("an encrypted file opened without its key after a remount")
	}
	entries, err := os.ReadDir(enc)
	if err != nil || len(entries) != 1 || entries[0].Name() == name {
		t.Errorf("without the key the directory lists %v (%v), want one name that is not %s", entries, err, name)
	}
	again, err := AddKey(fs.Dir, key)
	if err != nil || again != id {
		t.Fatalf("the same key again: %s, %v; want %s", again, err, id)
	}
	if got, err := os.ReadFile(filepath.Join(enc, name)); err != nil || !bytes.Equal(got, contents) {
		t.Errorf("with the key: %d bytes, %v; want the %d written", len(got), err, len(contents))
	}
}

// Misuse gets an error that says what to do.
func TestEncryptRefusesWhatItCannotDo(t *testing.T) {
	tier.Full(t, "root, a loop device and e2fsprogs")
	fs := loopfs.Mount(t, 16<<20)
	if _, err := AddKey(fs.Dir, make([]byte, 32)); err == nil || !strings.Contains(err.Error(), "64 bytes") {
		t.Errorf("a 32-byte key: %v", err)
	}
	id, err := AddKey(fs.Dir, random(t, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(fs.Dir, "full")
	write(t, filepath.Join(full, "file"), []byte("x"))
	if err := Encrypt(full, id); err == nil || !strings.Contains(err.Error(), "empty directory") {
		t.Errorf("a directory with a file in it: %v", err)
	}
	// A key the filesystem does not hold is not checked for root (CAP_FOWNER), so it is not
	// tested here: the operator adds the key before it encrypts a directory.
}

// Prepare, as the init container runs it at every start: a new empty directory becomes
// encrypted, a second start with the same key finds it so, and it refuses a directory encrypted
// under another key and one that holds files in clear.
func TestPrepareEncryptsOnceAndFailsClosed(t *testing.T) {
	tier.Full(t, "root, a loop device and e2fsprogs")
	fs := loopfs.Mount(t, 16<<20)
	key := random(t, KeySize)
	data := filepath.Join(fs.Dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	id, err := Prepare(data, key)
	if err != nil {
		t.Fatal(err)
	}
	if got, encrypted, err := KeyOf(data); err != nil || !encrypted || got != id {
		t.Fatalf("after Prepare: key %s, encrypted %t, %v; want %s", got, encrypted, err, id)
	}
	write(t, filepath.Join(data, "sstable"), []byte("rows"))
	fs.Detach(t) // a node restart: the filesystem forgets the key
	fs.Attach(t)
	if again, err := Prepare(data, key); err != nil || again != id {
		t.Fatalf("the next start: %s, %v", again, err)
	}
	if got, err := os.ReadFile(filepath.Join(data, "sstable")); err != nil || string(got) != "rows" {
		t.Fatalf("after the next start: %q, %v", got, err)
	}
	if _, err := Prepare(data, random(t, KeySize)); err == nil || !strings.Contains(err.Error(), "not under the given key") {
		t.Errorf("another key: %v", err)
	}
	inClear := filepath.Join(fs.Dir, "clear")
	write(t, filepath.Join(inClear, "old"), []byte("x"))
	if _, err := Prepare(inClear, key); err == nil || !strings.Contains(err.Error(), "in clear") {
		t.Errorf("a directory with files in clear: %v", err)
	}
	if _, encrypted, err := KeyOf(inClear); err != nil || encrypted {
		t.Errorf("the refused directory: encrypted %t, %v", encrypted, err)
	}
}

func random(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
