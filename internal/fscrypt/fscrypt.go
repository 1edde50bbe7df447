//go:build linux

// Package fscrypt encrypts directories of an ext4 (or f2fs) filesystem with the kernel's
// file-based encryption: the contents of every file below the directory are written to the
// device in AES-256-XTS and the names in AES-256-CTS, under a 64-byte master key the kernel
// holds for the filesystem. It needs no device-mapper, which is what this project's machines
// lack for dm-crypt, and encrypts on the same kernel path a guest's disk encryption does (seed
// 002), per file rather than per block device.
package fscrypt

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// KeySize of a master key, in bytes (the size fscrypt's v2 policies derive per-file keys from).
const KeySize = 64

// Identifier names a master key the kernel holds: the hash of the key, which the kernel
// computes, so it reveals nothing of the key.
type Identifier [unix.FSCRYPT_KEY_IDENTIFIER_SIZE]byte

func (id Identifier) String() string { return fmt.Sprintf("%x", id[:]) }

// ErrUnsupported: the filesystem cannot encrypt (not ext4 or f2fs, or made without the encrypt
// feature; tune2fs -O encrypt adds it to an unmounted ext4).
var ErrUnsupported = errors.New("the filesystem does not support encryption: use ext4 made with -O encrypt (tune2fs -O encrypt adds it)")

// AddKey hands key to the filesystem that holds path (any file or directory of it) and returns
// its identifier. Until the filesystem is unmounted, the kernel opens every file encrypted
// under it. Adding a key the filesystem holds already is no error.
func AddKey(path string, key []byte) (Identifier, error) {
	if len(key) != KeySize {
		return Identifier{}, fmt.Errorf("fscrypt: a master key has %d bytes, not %d", KeySize, len(key))
	}
	// struct fscrypt_add_key_arg, then the raw key.
	buf := make([]byte, unsafe.Sizeof(unix.FscryptAddKeyArg{})+KeySize)
	arg := (*unix.FscryptAddKeyArg)(unsafe.Pointer(&buf[0]))
	arg.Key_spec.Type = unix.FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER
	arg.Raw_size = KeySize
	copy(buf[unsafe.Sizeof(unix.FscryptAddKeyArg{}):], key)
	defer clear(buf)
	if err := ioctl(path, unix.FS_IOC_ADD_ENCRYPTION_KEY, unsafe.Pointer(&buf[0])); err != nil {
		return Identifier{}, fmt.Errorf("fscrypt: adding a key to the filesystem of %s: %w", path, err)
	}
	var id Identifier
	copy(id[:], arg.Key_spec.U[:len(id)])
	return id, nil
}

// Encrypt makes the empty directory dir encrypted under the key id, which the filesystem must
// hold (AddKey): every file and directory created below it from now on is encrypted.
func Encrypt(dir string, id Identifier) error {
	policy := unix.FscryptPolicyV2{
		Version:                   unix.FSCRYPT_POLICY_V2,
		Contents_encryption_mode:  unix.FSCRYPT_MODE_AES_256_XTS,
		Filenames_encryption_mode: unix.FSCRYPT_MODE_AES_256_CTS,
		Flags:                     unix.FSCRYPT_POLICY_FLAGS_PAD_32,
		Master_key_identifier:     id,
	}
	if err := ioctl(dir, unix.FS_IOC_SET_ENCRYPTION_POLICY, unsafe.Pointer(&policy)); err != nil {
		return fmt.Errorf("fscrypt: encrypting %s: %w", dir, err)
	}
	return nil
}

// KeyOf returns the identifier of the key dir is encrypted under, and false when dir is not
// encrypted.
func KeyOf(dir string) (Identifier, bool, error) {
	arg := unix.FscryptGetPolicyExArg{Size: uint64(len(unix.FscryptGetPolicyExArg{}.Policy))}
	switch err := ioctl(dir, unix.FS_IOC_GET_ENCRYPTION_POLICY_EX, unsafe.Pointer(&arg)); {
	case errors.Is(err, unix.ENODATA):
		return Identifier{}, false, nil
	case err != nil:
		return Identifier{}, false, fmt.Errorf("fscrypt: reading the encryption policy of %s: %w", dir, err)
	}
	if arg.Policy[0] != unix.FSCRYPT_POLICY_V2 {
		return Identifier{}, false, fmt.Errorf("fscrypt: %s is encrypted under a version %d policy, which this operator does not set", dir, arg.Policy[0])
	}
	policy := (*unix.FscryptPolicyV2)(unsafe.Pointer(&arg.Policy[0]))
	return policy.Master_key_identifier, true, nil
}

// Prepare readies dir as an encrypted volume's data directory before the datastore starts, as
// the pod's init container does at every start: it hands the key to the filesystem (after a
// node's restart the filesystem has forgotten it), encrypts dir when it is new and empty, and
// otherwise checks that dir is encrypted under this very key. It fails closed: a directory
// that already holds files in clear, or is encrypted under another key, is refused, never
// used as it is.
func Prepare(dir string, key []byte) (Identifier, error) {
	id, err := AddKey(dir, key)
	if err != nil {
		return Identifier{}, err
	}
	current, encrypted, err := KeyOf(dir)
	switch {
	case err != nil:
		return Identifier{}, err
	case encrypted && current != id:
		return Identifier{}, fmt.Errorf("fscrypt: %s is encrypted under key %s, not under the given key %s: the key Secret is not the one this volume was encrypted with", dir, current, id)
	case encrypted:
		return id, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Identifier{}, err
	}
	if len(entries) > 0 {
		return Identifier{}, fmt.Errorf("fscrypt: %s holds %d entries in clear (%s first): only an empty directory becomes encrypted, and data written before would stay readable on the disk; start from a new volume", dir, len(entries), entries[0].Name())
	}
	return id, Encrypt(dir, id)
}

func ioctl(path string, request uintptr, arg unsafe.Pointer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), request, uintptr(arg))
	switch errno {
	case 0:
		return nil
	case unix.EOPNOTSUPP, unix.ENOTTY:
		return ErrUnsupported
	case unix.EEXIST:
		return fmt.Errorf("%w: the directory is encrypted already, under another key or policy", errno)
	case unix.ENOTEMPTY:
		return fmt.Errorf("%w: only an empty directory can become encrypted", errno)
	case unix.ENOKEY:
		return fmt.Errorf("%w: the filesystem does not hold that key (AddKey first)", errno)
	case unix.ENOTDIR:
		return fmt.Errorf("%w: only a directory can become encrypted", errno)
	}
	return errno
}
