package dataplane

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/pkg/fieldcrypt"
)

// The YCSB HBase driver's Java FieldCrypt speaks pkg/fieldcrypt's format: it opens every test
// vector (made by an independent Python implementation), seals the deterministic ones to the
// same bytes, and never opens a damaged envelope or one from another context.
func TestFieldCryptInJavaMatchesTheVectors(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(samples.RepoRoot(), "pkg", "fieldcrypt", "testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []struct {
			Name, Cipher, Signature, SigningKey, Key, Nonce, Value, Context, Envelope string
			KeyID                                                                     int
			Deterministic                                                             bool
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, v := range f.Vectors {
		var signing, verifying string
		if v.SigningKey != "" {
			blk, _ := pem.Decode([]byte(v.SigningKey))
			k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			pub, err := x509.MarshalPKIXPublicKey(k.(crypto.Signer).Public())
			if err != nil {
				t.Fatal(err)
			}
			signing = base64.StdEncoding.EncodeToString([]byte(v.SigningKey))
			verifying = base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
		}
		lines = append(lines, strings.Join([]string{v.Name, v.Cipher, v.Signature, fmt.Sprint(v.KeyID), v.Key, v.Nonce, signing, verifying,
			v.Value, v.Context, v.Envelope, fmt.Sprint(v.Deterministic)}, "\t"))
	}
	tsv := filepath.Join(t.TempDir(), "vectors.tsv")
	if err := os.WriteFile(tsv, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vectors := javaProgram(t, filepath.Join(samples.RepoRoot(), "internal", "test", "dataplane", "testdata", "FieldCryptVectors.java"), driverClasspath(t))
	out, err := java(context.Background(), vectors.args(tsv)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("vectors ok %d", len(f.Vectors))) {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(string(out)))
}

func driverClasspath(t *testing.T) string {
	t.Helper()
	cp, err := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "ycsb-hbase.sh")).Output()
	if err != nil {
		t.Fatalf("building the YCSB HBase driver: %v", err)
	}
	return strings.TrimSpace(string(cp))
}

// clientSideHBase loads and runs workload A through the driver with the first five of ten
// fields encrypted and signed in the client (AES-256-GCM + Ed25519), into a table of its own:
// no error, and the summary says what was applied. Read with another key, every read fails.
func clientSideHBase(t *testing.T, h *HBaseStandalone, w func(string, int64) map[string]string) {
	t.Helper()
	keyDir := func() string { return ClientKeys(t, fieldcrypt.CipherAESGCM, fieldcrypt.SignatureEd25519) }
	keys := keyDir()
	with := func(props map[string]string, dir string) map[string]string {
		props["table"] = "sealedtable"
		props["clientside.cipher"], props["clientside.signature"], props["clientside.fields"], props["clientside.keydir"] = "AES-GCM", "Ed25519", "5", dir
		return props
	}
	load := w("A", 0)
	load["createtable"] = "true"
	want := benchresult.ClientSide{Cipher: "AES-GCM", Signature: "Ed25519", Fields: 5}
	// In this order: the run reads the table the load creates.
	for _, p := range []struct {
		phase string
		props map[string]string
	}{{"load", with(load, keys)}, {"run", with(w("A", 2000), keys)}} {
		phase := p.phase
		s := runYCSBHBase(t, h, phase, p.props)
		if s.Errors != 0 || s.ClientSide == nil || *s.ClientSide != want {
			t.Fatalf("client-side %s: %d errors (%s), clientSide %+v; want none and %+v", phase, s.Errors, s.FirstError, s.ClientSide, want)
		}
	}
	props := with(w("C", 500), keyDir())
	s := runYCSBHBase(t, h, "run", props)
	if s.Operations != 0 || s.Errors < 500 || !strings.Contains(s.FirstError, "does not open") {
		t.Errorf("reads with another key: %d operations, %d errors (%s); want every read failed", s.Operations, s.Errors, s.FirstError)
	}
}
