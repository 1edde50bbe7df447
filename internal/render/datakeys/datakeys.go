// Package datakeys names and fills the Secrets of the keys that protect data rather than the
// wire, the same for both engines: <datastore>-at-rest-keys, the keystore of engine-level
// encryption at rest, and <datastore>-client-keys, the keys of client-side encryption
// (pkg/fieldcrypt's files). Cassandra's JKSKeyProvider and HBase's KeyStoreKeyProvider both read
// the PKCS #12 keystore; Cassandra takes its password from the password file (through the
// launcher), HBase each key's password from the properties file. Both Secrets outlive the
// datastore object, as the data does.
package datakeys

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/javakeystore"
)

// AtRestSecret names the at-rest keystore's Secret.
func AtRestSecret(ds *v1alpha1.SecuredDatastore) string { return ds.Name + "-at-rest-keys" }

// ClientKeysSecret names the client-side keys' Secret.
func ClientKeysSecret(ds *v1alpha1.SecuredDatastore) string { return ds.Name + "-client-keys" }

// AtRestVolume is the pod volume that mounts the at-rest Secret, in every engine's pods, and
// VolumeKeyVolume the one that mounts its volume key alone, for the init container that
// encrypts the data volume.
const (
	AtRestVolume    = "at-rest"
	VolumeKeyVolume = "volume-key"
)

// EngineKeyFiles are the at-rest Secret's files the datastore itself reads.
var EngineKeyFiles = []string{KeystoreFile, PasswordFile, PropertiesFile}

// The at-rest Secret's files. VolumeKeyFile is the encrypted volume's key (fscrypt's 64 bytes),
// there only once a profile encrypts volumes.
const (
	KeystoreFile   = "keystore.p12"
	PasswordFile   = "password"
	PropertiesFile = "passwords.properties"
	VolumeKeyFile  = "volume.key"
)

// VolumeKeySize is the volume key's length in bytes (fscrypt.KeySize).
const VolumeKeySize = 64

// KeyBits are the key sizes the keystore holds, each from the start: a change of keyBits is
// then a roll, and what was written with the other key still reads.
var KeyBits = []int32{128, 256}

// KeyAlias names the key of a size. No colon: HBase looks passwords up in a properties file,
// where a colon separates a key from its value.
func KeyAlias(keyBits int32) string { return fmt.Sprintf("sdo-aes%d-1", keyBits) }

// AtRestData draws a key of each size and a password from r (crypto/rand when nil) and returns
// the Secret's files; the volume key is added (AddVolumeKey) only where a profile encrypts volumes.
func AtRestData(r io.Reader) (map[string][]byte, error) {
	if r == nil {
		r = rand.Reader
	}
	pw := make([]byte, 24)
	if _, err := io.ReadFull(r, pw); err != nil {
		return nil, err
	}
	password := base64.RawURLEncoding.EncodeToString(pw)
	var entries []javakeystore.Entry
	var properties []byte
	for _, bits := range KeyBits {
		key := make([]byte, bits/8)
		if _, err := io.ReadFull(r, key); err != nil {
			return nil, err
		}
		entries = append(entries, javakeystore.Entry{Alias: KeyAlias(bits), Key: key})
		properties = fmt.Appendf(properties, "%s=%s\n", KeyAlias(bits), password)
	}
	keystore, err := javakeystore.SecretKeys(entries, password)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{KeystoreFile: keystore, PasswordFile: []byte(password), PropertiesFile: properties}, nil
}

// AddVolumeKey draws a volume key from r (crypto/rand when nil) into the Secret's files data,
// unless they hold one already, which is never replaced; it reports whether it added one.
func AddVolumeKey(data map[string][]byte, r io.Reader) (bool, error) {
	if len(data[VolumeKeyFile]) > 0 {
		return false, nil
	}
	if r == nil {
		r = rand.Reader
	}
	key := make([]byte, VolumeKeySize)
	if _, err := io.ReadFull(r, key); err != nil {
		return false, fmt.Errorf("making the volume key: %w", err)
	}
	data[VolumeKeyFile] = key
	return true, nil
}

// Missing names the files data lacks, empty when it has them all.
func Missing(data map[string][]byte) []string {
	var out []string
	for _, f := range EngineKeyFiles {
		if len(data[f]) == 0 {
			out = append(out, f)
		}
	}
	return out
}
