// Package javakeystore writes PKCS #12 keystores holding secret (symmetric) keys in the layout
// Java's own KeyStore ("PKCS12") writes and reads: the key stores of Cassandra's transparent data
// encryption (JKSKeyProvider) and HBase's (KeyStoreKeyProvider). The operator makes them from
// keys it draws, so that the keystore is a Secret like every other key, and no keytool has to
// run in a pod.
//
// Each entry is a SafeBag of type secretBag holding a pkcs8ShroudedKeyBag: the key as
// {version 0, AlgorithmIdentifier, OCTET STRING key} encrypted with PBES2 (PBKDF2 with
// HMAC-SHA256, AES-256-CBC), named by a friendlyName attribute (the alias). Integrity comes
// from a MAC over the contents (HMAC-SHA256 keyed by RFC 7292's PKCS #12 key derivation), as
// Java's keytool writes it.
package javakeystore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"fmt"
	"unicode/utf16"
)

// Entry is one secret key and its alias.
type Entry struct {
	Alias string
	// Key is the raw key: 16, 24 or 32 bytes of AES.
	Key []byte
}

// Iterations of PBKDF2 and of the MAC's key derivation: Java's defaults.
const Iterations = 10000

var (
	oidData           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSecretBag      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 5}
	oidShroudedKeyBag = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidFriendlyName   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 20}
	oidLocalKeyID     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 21}
	oidPBES2          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA256     = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidAES256CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidAES            = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1}
	oidSHA256         = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
)

type algorithm struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     []byte `asn1:"explicit,tag:0"`
}

type safeBag struct {
	ID         asn1.ObjectIdentifier
	Value      asn1.RawValue // [0] EXPLICIT, built by hand: a RawValue ignores tag options
	Attributes []attribute   `asn1:"set"`
}

type attribute struct {
	ID     asn1.ObjectIdentifier
	Values asn1.RawValue `asn1:"set"`
}

type secretBag struct {
	ID    asn1.ObjectIdentifier
	Value []byte `asn1:"explicit,tag:0"`
}

type encryptedKeyInfo struct {
	Algorithm algorithm
	Data      []byte
}

type pbes2Params struct {
	KDF        algorithm
	Encryption algorithm
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int
	PRF        algorithm
}

type keyInfo struct {
	Version   int
	Algorithm algorithm
	Key       []byte
}

type macData struct {
	Mac struct {
		Algorithm algorithm
		Digest    []byte
	}
	Salt       []byte
	Iterations int
}

type pfx struct {
	Version  int
	AuthSafe contentInfo
	MacData  macData
}

var null = asn1.RawValue{Tag: asn1.TagNull}

// SecretKeys returns a PKCS #12 keystore with the entries, every key and the store protected by
// password (Java's KeyStoreProvider configurations give the key and the store one each; the
// operator uses the same for both).
func SecretKeys(entries []Entry, password string) ([]byte, error) {
	if len(entries) == 0 {
		return nil, errors.New("javakeystore: no entries")
	}
	if password == "" {
		return nil, errors.New("javakeystore: an empty password: Java refuses to derive keys from it")
	}
	var bags []safeBag
	for i, e := range entries {
		if n := len(e.Key); n != 16 && n != 24 && n != 32 {
			return nil, fmt.Errorf("javakeystore: %s: an AES key has 16, 24 or 32 bytes, not %d", e.Alias, n)
		}
		if e.Alias == "" {
			return nil, errors.New("javakeystore: an entry without an alias")
		}
		shrouded, err := shroud(e.Key, password)
		if err != nil {
			return nil, err
		}
		inner, err := asn1.Marshal(secretBag{ID: oidShroudedKeyBag, Value: shrouded})
		if err != nil {
			return nil, err
		}
		name, err := asn1.Marshal(asn1.RawValue{Tag: asn1.TagBMPString, Bytes: bmp(e.Alias)})
		if err != nil {
			return nil, err
		}
		id, err := asn1.Marshal(fmt.Appendf(nil, "secured.dev %d", i+1))
		if err != nil {
			return nil, err
		}
		bags = append(bags, safeBag{ID: oidSecretBag, Value: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: inner},
			Attributes: []attribute{{ID: oidFriendlyName, Values: set(name)}, {ID: oidLocalKeyID, Values: set(id)}}})
	}
	contents, err := asn1.Marshal(bags)
	if err != nil {
		return nil, err
	}
	authSafe, err := asn1.Marshal([]contentInfo{{ContentType: oidData, Content: contents}})
	if err != nil {
		return nil, err
	}
	p := pfx{Version: 3, AuthSafe: contentInfo{ContentType: oidData, Content: authSafe}}
	salt := make([]byte, 20)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	macKey := pkcs12KDF(password, salt, 3, Iterations, 32)
	m := hmac.New(sha256.New, macKey)
	m.Write(authSafe)
	p.MacData.Mac.Algorithm = algorithm{Algorithm: oidSHA256, Parameters: null}
	p.MacData.Mac.Digest, p.MacData.Salt, p.MacData.Iterations = m.Sum(nil), salt, Iterations
	return asn1.Marshal(p)
}

// shroud encrypts the key's PrivateKeyInfo-shaped encoding with PBES2, as Java does.
func shroud(key []byte, password string) ([]byte, error) {
	plain, err := asn1.Marshal(keyInfo{Algorithm: algorithm{Algorithm: oidAES, Parameters: null}, Key: key})
	if err != nil {
		return nil, err
	}
	salt, iv := make([]byte, 20), make([]byte, aes.BlockSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	if _, err := rand.Read(iv); err != nil {
		return nil, err
	}
	k, err := pbkdf2.Key(sha256.New, password, salt, Iterations, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	for range pad {
		plain = append(plain, byte(pad))
	}
	ct := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, plain)

	kdf, err := asn1.Marshal(pbkdf2Params{Salt: salt, Iterations: Iterations, KeyLength: 32, PRF: algorithm{Algorithm: oidHMACSHA256, Parameters: null}})
	if err != nil {
		return nil, err
	}
	ivDER, err := asn1.Marshal(iv)
	if err != nil {
		return nil, err
	}
	params, err := asn1.Marshal(pbes2Params{KDF: algorithm{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdf}},
		Encryption: algorithm{Algorithm: oidAES256CBC, Parameters: asn1.RawValue{FullBytes: ivDER}}})
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(encryptedKeyInfo{Algorithm: algorithm{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: params}}, Data: ct})
}

// set wraps one DER value as the contents of a SET.
func set(der []byte) asn1.RawValue {
	return asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSet, IsCompound: true, Bytes: der}
}

// bmp is s in UTF-16 big-endian, without a terminator.
func bmp(s string) []byte {
	var out []byte
	for _, r := range utf16.Encode([]rune(s)) {
		out = append(out, byte(r>>8), byte(r))
	}
	return out
}

// pkcs12KDF is RFC 7292's key derivation (appendix B.2) with SHA-256, for id 3 (MAC keys): the
// password is the BMPString with a two-byte terminator.
func pkcs12KDF(password string, salt []byte, id byte, iterations, size int) []byte {
	const v = 64 // SHA-256's block size
	pw := append(bmp(password), 0, 0)
	D := make([]byte, v)
	for i := range D {
		D[i] = id
	}
	fill := func(in []byte) []byte {
		if len(in) == 0 {
			return nil
		}
		n := v * ((len(in) + v - 1) / v)
		out := make([]byte, n)
		for i := range out {
			out[i] = in[i%len(in)]
		}
		return out
	}
	I := append(fill(salt), fill(pw)...)
	var out []byte
	for len(out) < size {
		h := sha256.New()
		h.Write(D)
		h.Write(I)
		A := h.Sum(nil)
		for range iterations - 1 {
			s := sha256.Sum256(A)
			A = s[:]
		}
		out = append(out, A...)
		// I_j = I_j + B + 1 for every v-byte block of I, with B = A repeated to v bytes.
		B := fill(A)
		for j := 0; j < len(I); j += v {
			carry := 1
			for k := v - 1; k >= 0; k-- {
				sum := int(I[j+k]) + int(B[k]) + carry
				I[j+k], carry = byte(sum), sum>>8
			}
		}
	}
	return out[:size]
}
