package datakeys

import (
	"bytes"
	"strings"
	"testing"
)

// The Secret holds the keystore, its password, and the same password per alias for HBase.
func TestAtRestData(t *testing.T) {
	d, err := AtRestData(nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := Missing(d); len(m) != 0 {
		t.Fatalf("missing %v", m)
	}
	pw := string(d[PasswordFile])
	want := "sdo-aes128-1=" + pw + "\nsdo-aes256-1=" + pw + "\n"
	if string(d[PropertiesFile]) != want || len(pw) != 32 || strings.ContainsAny(pw, ":=\n") {
		t.Errorf("properties %q, password %q", d[PropertiesFile], pw)
	}
	other, _ := AtRestData(nil)
	if string(other[PasswordFile]) == pw {
		t.Error("two draws gave the same password")
	}
	if _, ok := d[VolumeKeyFile]; ok {
		t.Error("a volume key where no profile encrypts volumes")
	}
	if added, err := AddVolumeKey(d, nil); !added || err != nil {
		t.Fatalf("adding a volume key: %t, %v", added, err)
	}
	if added, err := AddVolumeKey(other, nil); !added || err != nil {
		t.Fatalf("adding a volume key: %t, %v", added, err)
	}
	k1, k2 := d[VolumeKeyFile], other[VolumeKeyFile]
	if len(k1) != VolumeKeySize || bytes.Equal(k1, k2) {
		t.Errorf("volume keys of %d and %d bytes, equal %t", len(k1), len(k2), bytes.Equal(k1, k2))
	}
	if added, _ := AddVolumeKey(d, nil); added || !bytes.Equal(d[VolumeKeyFile], k1) {
		t.Error("a volume key was replaced")
	}
	delete(d, KeystoreFile)
	if m := Missing(d); len(m) != 1 || m[0] != KeystoreFile {
		t.Errorf("Missing: %v", m)
	}
}
