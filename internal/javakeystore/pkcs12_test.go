package javakeystore

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/asn1"
	"os"
	"testing"
)

// testdata/java-made.p12 was written by Java 17's own KeyStore ("PKCS12"): one AES key 00..0f
// under the alias "testing:1", key password "kpass", store password "spass":
//
//	ks.setEntry("testing:1", new SecretKeyEntry(new SecretKeySpec(raw, "AES")), new PasswordProtection("kpass".toCharArray()));
//	ks.store(out, "spass".toCharArray());
//
// Reading it with this package's layout and key derivations proves they are Java's: the MAC
// checks with the store password, the shrouded key opens with the key password.
func TestReadsWhatJavaWrites(t *testing.T) {
	der, err := os.ReadFile("testdata/java-made.p12")
	if err != nil {
		t.Fatal(err)
	}
	entries := open(t, der, "spass", "kpass")
	want := []Entry{{Alias: "testing:1", Key: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}}
	if len(entries) != 1 || entries[0].Alias != want[0].Alias || !bytes.Equal(entries[0].Key, want[0].Key) {
		t.Fatalf("read %+v; want %+v", entries, want)
	}
}

// What SecretKeys writes reads back the same way, every entry in order; a wrong password fails
// the MAC. (That Java reads it too is proven by Cassandra starting with it, in the data-plane
// tier.)
func TestWritesWhatJavaReads(t *testing.T) {
	in := []Entry{{Alias: "sdo:1", Key: bytes.Repeat([]byte{7}, 16)}, {Alias: "sdo:2", Key: bytes.Repeat([]byte{9}, 32)}}
	der, err := SecretKeys(in, "pässwörd")
	if err != nil {
		t.Fatal(err)
	}
	got := open(t, der, "pässwörd", "pässwörd")
	if len(got) != 2 || got[0].Alias != "sdo:1" || !bytes.Equal(got[1].Key, in[1].Key) {
		t.Fatalf("read back %+v", got)
	}
	if macOK(t, der, "wrong") {
		t.Error("the MAC checks with a wrong password")
	}
	for _, bad := range [][]Entry{nil, {{Alias: "a", Key: make([]byte, 10)}}, {{Key: make([]byte, 16)}}} {
		if _, err := SecretKeys(bad, "p"); err == nil {
			t.Errorf("SecretKeys(%v) accepted", bad)
		}
	}
	if _, err := SecretKeys(in, ""); err == nil {
		t.Error("an empty password accepted")
	}
}

type parsedPFX struct {
	Version  int
	AuthSafe contentInfo
	MacData  macData
}

func macOK(t *testing.T, der []byte, storePassword string) bool {
	t.Helper()
	var p parsedPFX
	if _, err := asn1.Unmarshal(der, &p); err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, pkcs12KDF(storePassword, p.MacData.Salt, 3, p.MacData.Iterations, 32))
	m.Write(p.AuthSafe.Content)
	return hmac.Equal(m.Sum(nil), p.MacData.Mac.Digest)
}

// open checks the MAC and decrypts every secret key.
func open(t *testing.T, der []byte, storePassword, keyPassword string) []Entry {
	t.Helper()
	if !macOK(t, der, storePassword) {
		t.Fatal("the MAC does not check")
	}
	var p parsedPFX
	unmarshal(t, der, &p)
	var safes []contentInfo
	unmarshal(t, p.AuthSafe.Content, &safes)
	var out []Entry
	for _, s := range safes {
		var bags []struct {
			ID         asn1.ObjectIdentifier
			Value      asn1.RawValue `asn1:"explicit,tag:0"`
			Attributes []attribute   `asn1:"set"`
		}
		unmarshal(t, s.Content, &bags)
		for _, b := range bags {
			if !b.ID.Equal(oidSecretBag) {
				t.Fatalf("bag %v; want secretBag", b.ID)
			}
			var sb secretBag
			unmarshal(t, b.Value.Bytes, &sb)
			var enc encryptedKeyInfo
			unmarshal(t, sb.Value, &enc)
			var params pbes2Params
			unmarshal(t, enc.Algorithm.Parameters.FullBytes, &params)
			var kdf pbkdf2Params
			unmarshal(t, params.KDF.Parameters.FullBytes, &kdf)
			var iv []byte
			unmarshal(t, params.Encryption.Parameters.FullBytes, &iv)
			k, err := pbkdf2.Key(sha256.New, keyPassword, kdf.Salt, kdf.Iterations, 32)
			must(t, err)
			block, err := aes.NewCipher(k)
			must(t, err)
			plain := make([]byte, len(enc.Data))
			cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, enc.Data)
			var info keyInfo
			unmarshal(t, plain[:len(plain)-int(plain[len(plain)-1])], &info)
			if !info.Algorithm.Algorithm.Equal(oidAES) {
				t.Fatalf("key algorithm %v; want AES", info.Algorithm.Algorithm)
			}
			e := Entry{Key: info.Key}
			for _, a := range b.Attributes {
				if a.ID.Equal(oidFriendlyName) {
					var name asn1.RawValue
					unmarshal(t, a.Values.Bytes, &name)
					for i := 0; i+1 < len(name.Bytes); i += 2 {
						e.Alias += string(rune(name.Bytes[i])<<8 | rune(name.Bytes[i+1]))
					}
				}
			}
			out = append(out, e)
		}
	}
	return out
}

func unmarshal(t *testing.T, der []byte, v any) {
	t.Helper()
	if _, err := asn1.Unmarshal(der, v); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
