package cqlbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mounted Secret's files become the login; a missing or empty key is an error that says what
// to mount.
func TestReadLogin(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadLogin(dir); err == nil || !strings.Contains(err.Error(), "mount the datastore's login Secret") {
		t.Errorf("no files: %v", err)
	}
	for key, v := range map[string]string{"username": "sdo_client\n", "password": "p@ss word\n"} {
		if err := os.WriteFile(filepath.Join(dir, key), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := ReadLogin(dir)
	if err != nil || *l != (Login{Username: "sdo_client", Password: "p@ss word"}) {
		t.Errorf("ReadLogin = %+v, %v", l, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "password"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLogin(dir); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty password: %v", err)
	}
}
