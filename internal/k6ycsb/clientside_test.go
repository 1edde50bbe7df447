package k6ycsb

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/internal/writecheck"
	"secured.dev/operator/pkg/fieldcrypt"
)

// checkClientSide loads and runs YCSB with the first half of every record's fields encrypted
// (AES-256-GCM) and signed (Ed25519) in the client, against a real Cassandra: every write is
// read back intact through the envelopes; the server holds only envelopes of those fields,
// never their values, and the other half in clear; a value moved to another cell, or read with
// another key, fails the read instead of returning it.
func checkClientSide(t *testing.T, node *dataplane.CassandraNode, with func(map[string]string) map[string]string) {
	t.Helper()
	const records, fields, sealed = 200, 10, 5
	keys := dataplane.ClientKeys(t, fieldcrypt.CipherAESGCM, fieldcrypt.SignatureEd25519)
	history := filepath.Join(t.TempDir(), "history")
	env := func(keyDir string, extra map[string]string) map[string]string {
		return with(merge(map[string]string{"CQL_KEYSPACE": "sealed", "YCSB_RECORD_COUNT": fmt.Sprint(records), "YCSB_HISTORY_FILE": history,
			"YCSB_CLIENT_CIPHER": "AES-GCM", "YCSB_CLIENT_SIGNATURE": "Ed25519", "YCSB_CLIENT_FIELDS": fmt.Sprint(sealed), "YCSB_CLIENT_KEY_DIR": keyDir}, extra))
	}
	want := benchresult.ClientSide{Cipher: "AES-GCM", Signature: "Ed25519", Fields: sealed}
	for _, phase := range []struct {
		name string
		env  map[string]string
		mix  map[string]float64
	}{
		{"load", map[string]string{"YCSB_PHASE": "load", "YCSB_VERIFY_WRITES": "true"}, nil},
		{"A", map[string]string{"YCSB_WORKLOAD": "A", "YCSB_DURATION": "3s", "YCSB_VERIFY_WRITES": "true"}, map[string]float64{"read": 0.5, "update": 0.5}},
		// A count, not a duration: signed scans ran 29 in 2 s on a slower, loaded 2-core machine,
		// too few for the mix (no insert among them in 22% of such runs); in 200 operations a
		// 5% insert share is missing once in 28,000.
		{"E", map[string]string{"YCSB_WORKLOAD": "E", "YCSB_OPERATION_COUNT": "200", "YCSB_VERIFY_WRITES": "true"}, map[string]float64{"scan": 0.95, "insert": 0.05}},
	} {
		s, out, err := runK6(t, env(keys, phase.env))
		if err != nil {
			t.Fatalf("%s with client-side encryption: %v\n%s", phase.name, err, out)
		}
		if phase.mix != nil {
			checkRun(t, phase.name+" client-side", s, "plaintext", "none", phase.mix)
		}
		if s.ClientSide == nil || *s.ClientSide != want {
			t.Errorf("%s: summary's clientSide %+v; want %+v", phase.name, s.ClientSide, want)
		}
		if w := s.Writes; s.Errors != 0 || w == nil || !w.Intact() || w.Checked < records*fields {
			t.Fatalf("%s: %d errors (%s), writes %+v; want every write read back through its envelope", phase.name, s.Errors, s.FirstError, w)
		}
		t.Logf("%s: %d ops, %.0f ops/s, %.2f client CPU s; %d acknowledged writes, %d key-fields verified", phase.name, s.Operations, s.Throughput(), s.ClientCPUSeconds, s.Writes.Acknowledged, s.Writes.Verified)
	}

	// What the server holds: envelopes in the protected fields, whose values it never sees;
	// the values themselves in the others.
	codec, err := fieldcrypt.LoadDir(keys, fieldcrypt.CipherAESGCM, fieldcrypt.SignatureEd25519)
	if err != nil {
		t.Fatal(err)
	}
	session := dataplane.CQLSession(t, nil, node)
	table := tableRows(t, session, "sealed")
	if len(table) < records {
		t.Fatalf("%d records stored; want at least %d", len(table), records)
	}
	for key, vs := range table {
		for f, v := range vs {
			if f >= sealed {
				if _, ok := writecheck.Unseal(key, f, []byte(v)); !ok {
					t.Fatalf("%s field%d: %q is not a sealed YCSB value in clear", key, f, v)
				}
				continue
			}
			plain, err := codec.OpenText(nil, v, []byte(fmt.Sprintf("sealed.usertable/%s/field%d", key, f)))
			if err != nil {
				t.Fatalf("%s field%d does not open: %v", key, f, err)
			}
			envelope, _ := base64.RawStdEncoding.DecodeString(v)
			if bytes.Contains(envelope, plain[:16]) || strings.Contains(v, string(plain[:16])) {
				t.Fatalf("%s field%d: the stored envelope carries its value in clear", key, f)
			}
		}
	}

	// Each protected value moved one column to the right: every read of a record now fails,
	// and the checker counts the moved values as corrupted.
	for key, vs := range table {
		if err := session.Query("UPDATE sealed.usertable SET field1 = ? WHERE y_id = ?", vs[0], key).Consistency(gocql.All).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	moved, out, err := runK6(t, env(keys, map[string]string{"YCSB_WORKLOAD": "C", "YCSB_DURATION": "2s"}))
	if err != nil {
		t.Fatalf("workload C over moved envelopes: %v\n%s", err, out)
	}
	if moved.Operations != 0 || moved.Errors < 100 || !strings.Contains(moved.FirstError, "does not open") {
		t.Errorf("workload C over moved envelopes: %d operations, %d errors (%s); want every read failed because field1 does not open", moved.Operations, moved.Errors, moved.FirstError)
	}
	t.Logf("moved envelopes: %d of %d reads failed: %s", moved.Errors, moved.Errors+moved.Operations, moved.FirstError)
	found, out, err := runK6(t, env(keys, map[string]string{"YCSB_PHASE": "verify"}))
	if err != nil {
		t.Fatalf("verify after the move: %v\n%s", err, out)
	}
	// Every record the history holds has its moved field1 corrupted. (The table may hold a record
	// more: an insert in flight when a run's window ended is written but neither counted nor
	// recorded.)
	if w := found.Writes; w == nil || w.Checked < records*fields || w.Checked > int64(len(table)*fields) || w.Corrupted != w.Checked/fields || w.Lost != 0 {
		t.Errorf("after the move: writes %+v of %d stored records; want every checked record's field1 corrupted, none lost", w, len(table))
	}

	// Another key opens nothing.
	other := dataplane.ClientKeys(t, fieldcrypt.CipherAESGCM, fieldcrypt.SignatureEd25519)
	wrong, out, err := runK6(t, env(other, map[string]string{"YCSB_WORKLOAD": "C", "YCSB_DURATION": "2s"}))
	if err != nil || wrong.Operations != 0 || wrong.Errors < 100 || !strings.Contains(wrong.FirstError, "does not open") {
		t.Errorf("reads with another key: %v, %d operations, %d errors (%s)\n%s", err, wrong.Operations, wrong.Errors, wrong.FirstError, out)
	}
}
