package fieldcrypt

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The files of a key directory: a Kubernetes Secret mounted as a volume, or any directory.
const (
	// KeyFilePrefix names encryption keys: encryption-key-<id>, id 0-255, raw bytes. The
	// highest id seals.
	KeyFilePrefix = "encryption-key-"
	// SigningKeyFile is a PKCS #8 private key in PEM, for writers.
	SigningKeyFile = "signing-key.pem"
	// VerifyingKeyFile is a PKIX public key in PEM, for readers that must not sign; ignored
	// when the signing key is present.
	VerifyingKeyFile = "verifying-key.pem"
)

// LoadDir builds a codec from the keys in dir for a cipher and a signature algorithm. A file
// the configuration needs and does not find is an error that names it; keys the configuration
// does not use are refused, so a profile and its Secret cannot silently disagree.
func LoadDir(dir string, c Cipher, s Signature) (*Codec, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("fieldcrypt: reading the key directory: %w", err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, "..") { // a mounted Secret's own bookkeeping
			continue
		}
		if files[name], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("fieldcrypt: %w", err)
		}
	}
	k, err := FromFiles(files, c, s)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, dir)
	}
	return k, nil
}

// FromFiles is LoadDir of files already read: a Secret's data, by key.
func FromFiles(files map[string][]byte, c Cipher, s Signature) (*Codec, error) {
	cfg := Config{Cipher: c, Signature: s}
	var pub crypto.PublicKey
	for name, b := range files {
		var err error
		switch {
		case strings.HasPrefix(name, KeyFilePrefix):
			id, err := strconv.ParseUint(strings.TrimPrefix(name, KeyFilePrefix), 10, 8)
			if err != nil {
				return nil, fmt.Errorf("fieldcrypt: %s: name encryption keys %s<id> with an id from 0 to 255", name, KeyFilePrefix)
			}
			cfg.Keys = append(cfg.Keys, Key{ID: uint8(id), Secret: b})
		case name == SigningKeyFile:
			if cfg.Signer, err = parsePrivate(b); err != nil {
				return nil, fmt.Errorf("fieldcrypt: %s: %w", name, err)
			}
		case name == VerifyingKeyFile:
			if pub, err = parsePublic(b); err != nil {
				return nil, fmt.Errorf("fieldcrypt: %s: %w", name, err)
			}
		}
	}
	if cfg.Signer == nil {
		cfg.Verifier = pub
	}
	slices.SortFunc(cfg.Keys, func(a, b Key) int { return int(a.ID) - int(b.ID) })
	if c != CipherNone && len(cfg.Keys) == 0 {
		return nil, fmt.Errorf("fieldcrypt: %s needs a key: no %s<id> file", c, KeyFilePrefix)
	}
	if s != SignatureNone && cfg.Signer == nil && cfg.Verifier == nil {
		return nil, fmt.Errorf("fieldcrypt: %s needs %s (or, to verify only, %s)", s, SigningKeyFile, VerifyingKeyFile)
	}
	return New(cfg)
}

func parsePrivate(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM \"PRIVATE KEY\" (PKCS #8) block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T cannot sign", k)
	}
	return s, nil
}

func parsePublic(b []byte) (crypto.PublicKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM \"PUBLIC KEY\" (PKIX) block")
	}
	return x509.ParsePKIXPublicKey(blk.Bytes)
}

// GenerateKeys draws new keys for a cipher (with an AES key of aesBytes, 16 or 32; ChaCha20
// always takes 32) and a signature algorithm, as the files LoadDir reads: the data of a Secret.
// The encryption key gets id 1.
func GenerateKeys(c Cipher, aesBytes int, s Signature) (map[string][]byte, error) {
	files := map[string][]byte{}
	switch c {
	case CipherNone:
	case CipherAESGCM, CipherChaCha20Poly1305:
		n := aesBytes
		if c == CipherChaCha20Poly1305 {
			n = 32
		}
		if n != 16 && n != 32 {
			return nil, fmt.Errorf("fieldcrypt: an AES key has 16 or 32 bytes, not %d", n)
		}
		key := make([]byte, n)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		files[KeyFilePrefix+"1"] = key
	default:
		return nil, fmt.Errorf("fieldcrypt: unknown cipher %d", c)
	}
	var signer crypto.Signer
	var err error
	switch s {
	case SignatureNone:
		return files, nil
	case SignatureEd25519:
		_, signer, err = ed25519.GenerateKey(rand.Reader)
	case SignatureECDSAP256:
		signer, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case SignatureRSA2048:
		signer, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		return nil, fmt.Errorf("fieldcrypt: unknown signature %d", s)
	}
	if err != nil {
		return nil, err
	}
	priv, err := x509.MarshalPKCS8PrivateKey(signer)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil {
		return nil, err
	}
	files[SigningKeyFile] = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: priv})
	files[VerifyingKeyFile] = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return files, nil
}
