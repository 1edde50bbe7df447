//go:build linux

// Command volume-encryption readies an encrypted volume's data directory before a datastore
// starts; the operator runs it as the init container of each node whose profile sets
// atRest.volume. It hands the key in --key (64 bytes, the at-rest Secret's volume.key) to the
// kernel and encrypts --dir when it is new, or checks that it is encrypted under that key; it
// refuses a directory that holds files in clear or is encrypted under another key, and a
// filesystem that cannot encrypt, with a message that says what to do. It prints the key's
// identifier (a hash, which reveals nothing of the key), never the key.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"secured.dev/operator/internal/fscrypt"
)

func main() {
	dir := flag.String("dir", "", "the data directory to encrypt (created when missing)")
	keyFile := flag.String("key", "", "file holding the volume key, 64 bytes")
	flag.Parse()
	if err := run(*dir, *keyFile); err != nil {
		fmt.Fprintln(os.Stderr, "volume-encryption:", err)
		os.Exit(1)
	}
}

func run(dir, keyFile string) error {
	if dir == "" || keyFile == "" {
		return errors.New("--dir and --key are required")
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return fmt.Errorf("reading the volume key: %w", err)
	}
	defer clear(key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	id, err := fscrypt.Prepare(dir, key)
	if errors.Is(err, fscrypt.ErrUnsupported) {
		return fmt.Errorf("%s: %w; the volume's StorageClass must provide such a filesystem, or the profile must drop atRest.volume", dir, err)
	}
	if err != nil {
		return err
	}
	fmt.Printf("volume-encryption: %s is encrypted under key %s (fscrypt v2, AES-256-XTS)\n", dir, id)
	return nil
}
