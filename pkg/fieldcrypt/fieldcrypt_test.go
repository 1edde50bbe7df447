package fieldcrypt

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type vector struct {
	Name, Cipher, Signature, SigningKey string
	KeyID                               uint8
	Key, Nonce, Value, Context          string
	Envelope, Text                      string
	Deterministic                       bool
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Format  int
		Vectors []vector
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.Format != Version || len(f.Vectors) < 10 {
		t.Fatalf("vectors.json: format %d, %d vectors", f.Format, len(f.Vectors))
	}
	return f.Vectors
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var ciphers = map[string]Cipher{"None": CipherNone, "AES-GCM": CipherAESGCM, "ChaCha20-Poly1305": CipherChaCha20Poly1305}
var signatures = map[string]Signature{"None": SignatureNone, "Ed25519": SignatureEd25519, "ECDSA-P256": SignatureECDSAP256, "RSA-2048": SignatureRSA2048}

// codecFor builds the vector's codec, drawing its nonce from the vector.
func codecFor(t *testing.T, v vector) *Codec {
	t.Helper()
	c := Config{Cipher: ciphers[v.Cipher], Signature: signatures[v.Signature], Rand: bytes.NewReader(unhex(t, v.Nonce))}
	if c.Cipher != CipherNone {
		c.Keys = []Key{{ID: v.KeyID, Secret: unhex(t, v.Key)}}
	}
	if v.SigningKey != "" {
		s, err := parsePrivate([]byte(v.SigningKey))
		if err != nil {
			t.Fatal(err)
		}
		c.Signer = s
	}
	k, err := New(c)
	if err != nil {
		t.Fatalf("%s: %v", v.Name, err)
	}
	return k
}

// The vectors come from an independent implementation of the documented format (Python's
// cryptography, testdata/vectors.py): this package opens every one, and seals exactly the same
// bytes wherever the algorithms are deterministic (all but ECDSA).
func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			value, ctx, env := unhex(t, v.Value), unhex(t, v.Context), unhex(t, v.Envelope)
			got, err := codecFor(t, v).Open(nil, env, ctx)
			if err != nil || !bytes.Equal(got, value) {
				t.Fatalf("Open: %q, %v; want %q", got, err, value)
			}
			if got, err := codecFor(t, v).OpenText(nil, v.Text, ctx); err != nil || !bytes.Equal(got, value) {
				t.Fatalf("OpenText: %q, %v; want %q", got, err, value)
			}
			sealed, err := codecFor(t, v).Seal(nil, value, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if v.Deterministic && !bytes.Equal(sealed, env) {
				t.Errorf("Seal:\n got %x\nwant %x", sealed, env)
			}
			if len(sealed) != len(value)+codecFor(t, v).Overhead() {
				t.Errorf("Seal: %d bytes for a %d-byte value; Overhead says %d", len(sealed), len(value), codecFor(t, v).Overhead())
			}
		})
	}
}

// Every byte of an envelope is protected: flipping any one, opening in another context, with
// another key or by a codec configured otherwise fails with ErrOpen, never with the value.
func TestTamperingNeverOpens(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			value, ctx, env := unhex(t, v.Value), unhex(t, v.Context), unhex(t, v.Envelope)
			k := codecFor(t, v)
			for i := range env {
				bad := bytes.Clone(env)
				bad[i] ^= 0x01
				if got, err := k.Open(nil, bad, ctx); !errors.Is(err, ErrOpen) {
					t.Fatalf("byte %d flipped: %q, %v; want ErrOpen", i, got, err)
				}
			}
			for _, bad := range [][]byte{env[:len(env)-1], append(bytes.Clone(env), 0), nil} {
				if _, err := k.Open(nil, bad, ctx); !errors.Is(err, ErrOpen) {
					t.Fatalf("%d of %d bytes: %v; want ErrOpen", len(bad), len(env), err)
				}
			}
			if _, err := k.Open(nil, env, append(bytes.Clone(ctx), 'x')); !errors.Is(err, ErrOpen) {
				t.Fatalf("another context: %v; want ErrOpen", err)
			}
			if v.Cipher == "None" {
				// Signed only: the value is in clear, but a codec that expects encryption refuses it.
				enc, err := New(Config{Cipher: CipherAESGCM, Keys: []Key{{ID: 0, Secret: make([]byte, 32)}}, Signature: signatures[v.Signature], Signer: k.signer})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := enc.Open(nil, env, ctx); !errors.Is(err, ErrOpen) {
					t.Fatalf("a signed-only envelope opened by an encrypting codec: %v", err)
				}
				if !bytes.Contains(env, value) {
					t.Errorf("a signed-only envelope does not carry its value in clear")
				}
				return
			}
			if len(value) >= 8 && bytes.Contains(env, value) {
				t.Errorf("the envelope carries its value in clear")
			}
			other := bytes.Clone(unhex(t, v.Key))
			other[0] ^= 0xff
			wrong, err := New(Config{Cipher: ciphers[v.Cipher], Keys: []Key{{ID: v.KeyID, Secret: other}}, Signature: k.sig, Signer: k.signer})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := wrong.Open(nil, env, ctx); !errors.Is(err, ErrOpen) {
				t.Fatalf("another key: %v; want ErrOpen", err)
			}
			if k.sig != SignatureNone {
				// The downgrade: the same cipher and key without the signature must not open a
				// signed envelope, nor may a signing codec open an unsigned one.
				unsigned, _ := New(Config{Cipher: ciphers[v.Cipher], Keys: []Key{{ID: v.KeyID, Secret: unhex(t, v.Key)}}})
				if _, err := unsigned.Open(nil, env, ctx); !errors.Is(err, ErrOpen) {
					t.Fatalf("opened without the signature: %v", err)
				}
				plain, _ := unsigned.Seal(nil, value, ctx)
				if _, err := k.Open(nil, plain, ctx); !errors.Is(err, ErrOpen) {
					t.Fatalf("a signing codec opened an unsigned envelope: %v", err)
				}
			}
		})
	}
}

// Keys rotate: a codec holding the old and the new key seals with the new one and opens both.
func TestKeyRotation(t *testing.T) {
	old := Key{ID: 1, Secret: bytes.Repeat([]byte{1}, 32)}
	next := Key{ID: 2, Secret: bytes.Repeat([]byte{2}, 32)}
	before, _ := New(Config{Cipher: CipherAESGCM, Keys: []Key{old}})
	after, _ := New(Config{Cipher: CipherAESGCM, Keys: []Key{old, next}})
	ctx := []byte("t/k/c")
	oldEnv, _ := before.Seal(nil, []byte("old"), ctx)
	newEnv, _ := after.Seal(nil, []byte("new"), ctx)
	if oldEnv[3] != 1 || newEnv[3] != 2 {
		t.Fatalf("key ids %d and %d; want 1 then 2", oldEnv[3], newEnv[3])
	}
	for _, env := range [][]byte{oldEnv, newEnv} {
		if _, err := after.Open(nil, env, ctx); err != nil {
			t.Errorf("the rotated codec: %v", err)
		}
	}
	if _, err := before.Open(nil, newEnv, ctx); !errors.Is(err, ErrOpen) || !strings.Contains(err.Error(), "key 2") {
		t.Errorf("a codec without the new key: %v; want ErrOpen naming key 2", err)
	}
}

// Configurations that cannot work are refused with what to change.
func TestConfigurationErrors(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(nil)
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{}, "neither a cipher nor a signature"},
		{Config{Cipher: CipherAESGCM}, "needs at least one key"},
		{Config{Cipher: CipherAESGCM, Keys: []Key{{Secret: make([]byte, 24)}}}, "16-byte (AES-128) or 32-byte (AES-256)"},
		{Config{Cipher: CipherChaCha20Poly1305, Keys: []Key{{Secret: make([]byte, 16)}}}, "32-byte key"},
		{Config{Cipher: CipherAESGCM, Keys: []Key{{ID: 3, Secret: make([]byte, 16)}, {ID: 3, Secret: make([]byte, 16)}}}, "key id 3 given twice"},
		{Config{Signature: SignatureRSA2048, Signer: edKey}, "does not make RSA-2048 signatures"},
		{Config{Signature: SignatureEd25519}, "needs a signing or a verifying key"},
		{Config{Cipher: CipherAESGCM, Keys: []Key{{Secret: make([]byte, 16)}}, Signer: edKey}, "without a signature algorithm"},
		{Config{Cipher: 9, Keys: []Key{{Secret: make([]byte, 16)}}}, "unknown cipher"},
	} {
		if _, err := New(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v; want an error saying %q", tc.c, err, tc.want)
		}
	}
	verifier, _ := New(Config{Signature: SignatureEd25519, Verifier: edKey.Public()})
	if _, err := verifier.Seal(nil, []byte("v"), nil); err == nil || !strings.Contains(err.Error(), "only verifies") {
		t.Errorf("a verify-only codec sealed: %v", err)
	}
}

// The files GenerateKeys writes are what LoadDir reads, for every combination; a reader given
// only the verifying key opens what the writer sealed; a directory that disagrees with the
// configuration is refused.
func TestGeneratedKeysLoad(t *testing.T) {
	ctx := []byte("ycsb.usertable/user9/field0")
	for c := range 3 {
		for s := range 4 {
			cipher, sig := Cipher(c), Signature(s)
			if cipher == CipherNone && sig == SignatureNone {
				continue
			}
			files, err := GenerateKeys(cipher, 16, sig)
			if err != nil {
				t.Fatal(err)
			}
			writerDir, readerDir := t.TempDir(), t.TempDir()
			for name, b := range files {
				write(t, filepath.Join(writerDir, name), b)
				if name != SigningKeyFile {
					write(t, filepath.Join(readerDir, name), b)
				}
			}
			writer, err := LoadDir(writerDir, cipher, sig)
			if err != nil {
				t.Fatalf("%s %s: %v", cipher, sig, err)
			}
			env, err := writer.Seal(nil, []byte("value"), ctx)
			if err != nil {
				t.Fatal(err)
			}
			reader, err := LoadDir(readerDir, cipher, sig)
			if err != nil {
				t.Fatalf("%s %s reader: %v", cipher, sig, err)
			}
			if got, err := reader.Open(nil, env, ctx); err != nil || string(got) != "value" {
				t.Errorf("%s %s: the reader got %q, %v", cipher, sig, got, err)
			}
		}
	}
	files, _ := GenerateKeys(CipherAESGCM, 32, SignatureEd25519)
	dir := t.TempDir()
	for name, b := range files {
		write(t, filepath.Join(dir, name), b)
	}
	if _, err := LoadDir(dir, CipherAESGCM, SignatureNone); err == nil || !strings.Contains(err.Error(), "without a signature algorithm") {
		t.Errorf("a signing key the configuration does not use: %v", err)
	}
	if _, err := LoadDir(dir, CipherChaCha20Poly1305, SignatureEd25519); err != nil {
		t.Errorf("a 32-byte key for ChaCha20: %v", err)
	}
	if _, err := LoadDir(t.TempDir(), CipherAESGCM, SignatureNone); err == nil || !strings.Contains(err.Error(), "no encryption-key-<id> file") {
		t.Errorf("an empty directory: %v", err)
	}
	write(t, filepath.Join(dir, "encryption-key-x"), make([]byte, 16))
	if _, err := LoadDir(dir, CipherAESGCM, SignatureEd25519); err == nil || !strings.Contains(err.Error(), "id from 0 to 255") {
		t.Errorf("a misnamed key: %v", err)
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// What a cell costs the client, per cipher and signature and per value size (PACE's dimension):
// go test -bench . -benchmem ./pkg/fieldcrypt/
func BenchmarkSealOpen(b *testing.B) {
	ctx := []byte("ycsb.usertable/user1000000/field0")
	for _, tc := range []struct {
		name string
		c    Cipher
		s    Signature
	}{{"aes-gcm", CipherAESGCM, SignatureNone}, {"chacha20", CipherChaCha20Poly1305, SignatureNone}, {"aes-gcm+ed25519", CipherAESGCM, SignatureEd25519}, {"aes-gcm+ecdsa", CipherAESGCM, SignatureECDSAP256}, {"aes-gcm+rsa", CipherAESGCM, SignatureRSA2048}} {
		files, err := GenerateKeys(tc.c, 32, tc.s)
		if err != nil {
			b.Fatal(err)
		}
		dir := b.TempDir()
		for name, v := range files {
			if err := os.WriteFile(filepath.Join(dir, name), v, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		k, err := LoadDir(dir, tc.c, tc.s)
		if err != nil {
			b.Fatal(err)
		}
		for _, size := range []int{10, 100, 1000, 10000} {
			value := bytes.Repeat([]byte{'v'}, size)
			env, _ := k.Seal(nil, value, ctx)
			b.Run(tc.name+"/seal/"+strconv.Itoa(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				buf := make([]byte, 0, len(env))
				for b.Loop() {
					if _, err := k.Seal(buf[:0], value, ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(tc.name+"/open/"+strconv.Itoa(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				buf := make([]byte, 0, size)
				for b.Loop() {
					if _, err := k.Open(buf[:0], env, ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
