package k6ycsb

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/internal/ycsb"
)

// checkWrites records every write of a load and a run in one history against a real
// Cassandra, finds everything acknowledged, then damages three records behind the client's
// back (an older value restored, a value overwritten with bytes nobody sealed, a record
// deleted) and finds exactly that damage, named for what it is.
func checkWrites(t *testing.T, node *dataplane.CassandraNode, with func(map[string]string) map[string]string) {
	t.Helper()
	const records, fields = 200, 10
	history := filepath.Join(t.TempDir(), "history")
	env := func(extra map[string]string) map[string]string {
		return with(merge(map[string]string{"CQL_KEYSPACE": "checked", "YCSB_RECORD_COUNT": fmt.Sprint(records), "YCSB_HISTORY_FILE": history}, extra))
	}
	intact := func(what string, s benchresult.Summary, checked int64) {
		t.Helper()
		if w := s.Writes; w == nil || !w.Intact() || w.Checked != checked || w.Consistency != "ALL" {
			t.Fatalf("%s: writes %+v; want %d key-fields checked at ALL, every one verified", what, w, checked)
		}
		t.Logf("%s: %d acknowledged writes, %d key-fields read back at ALL, all verified", what, s.Writes.Acknowledged, s.Writes.Checked)
	}
	load, out, err := runK6(t, env(map[string]string{"YCSB_PHASE": "load", "YCSB_VERIFY_WRITES": "true"}))
	if err != nil {
		t.Fatalf("load with a write history: %v\n%s", err, out)
	}
	intact("load", load, records*fields)
	if load.Writes.Acknowledged != records*fields {
		t.Errorf("load: %d acknowledged writes; want %d (a record counts once per field)", load.Writes.Acknowledged, records*fields)
	}

	session := dataplane.CQLSession(t, nil, node)
	before := tableRows(t, session, "checked")
	run, out, err := runK6(t, env(map[string]string{"YCSB_WORKLOAD": "A", "YCSB_DURATION": "3s", "YCSB_VERIFY_WRITES": "true"}))
	if err != nil {
		t.Fatalf("workload A with a write history: %v\n%s", err, out)
	}
	checkRun(t, "A with a write history", run, "plaintext", "none", map[string]float64{"read": 0.5, "update": 0.5})
	intact("load and run", run, records*fields)
	if run.Writes.Acknowledged <= load.Writes.Acknowledged {
		t.Errorf("the run's history holds %d acknowledged writes, the load alone %d: the run's were not appended", run.Writes.Acknowledged, load.Writes.Acknowledged)
	}

	// The damage: a field the run updated gets its loaded value back (stale), another record's
	// field gets bytes nobody sealed (corrupted), a third record is deleted (lost, every field).
	after := tableRows(t, session, "checked")
	var staleKey string
	var staleField int
	for key, vs := range after {
		for f, v := range vs {
			if staleKey == "" && v != before[key][f] {
				staleKey, staleField = key, f
			}
		}
	}
	if staleKey == "" {
		t.Fatal("the run updated no field")
	}
	var others []string
	for key := range after {
		if key != staleKey && len(others) < 2 {
			others = append(others, key)
		}
	}
	now := time.Now().UnixMicro()
	for _, stmt := range []struct {
		cql  string
		args []any
	}{
		{fmt.Sprintf("UPDATE checked.usertable USING TIMESTAMP ? SET %s = ? WHERE y_id = ?", ycsb.FieldName(staleField)), []any{now, before[staleKey][staleField], staleKey}},
		{"UPDATE checked.usertable USING TIMESTAMP ? SET field0 = ? WHERE y_id = ?", []any{now, strings.Repeat("x", 100), others[0]}},
		{"DELETE FROM checked.usertable USING TIMESTAMP ? WHERE y_id = ?", []any{now, others[1]}},
	} {
		if err := session.Query(stmt.cql, stmt.args...).Consistency(gocql.All).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt.cql, err)
		}
	}
	found, out, err := runK6(t, env(map[string]string{"YCSB_PHASE": "verify"}))
	if err != nil {
		t.Fatalf("verify phase: %v\n%s", err, out)
	}
	w := found.Writes
	if w == nil {
		t.Fatalf("verify phase: no writes in the summary %+v", found)
	}
	want := benchresult.Writes{Acknowledged: run.Writes.Acknowledged, Checked: records * fields, Verified: records*fields - 12,
		Lost: fields, Stale: 1, Corrupted: 1, Consistency: "ALL", FirstProblem: w.FirstProblem}
	if *w != want {
		t.Errorf("after the damage: %+v\nwant %+v", *w, want)
	}
	t.Logf("after the damage: %d verified, %d lost, %d stale, %d corrupted; first: %s", w.Verified, w.Lost, w.Stale, w.Corrupted, w.FirstProblem)
}

// tableRows is a keyspace's whole usertable as the server holds it, by key.
func tableRows(t *testing.T, s *gocql.Session, keyspace string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	it := s.Query("SELECT y_id, field0, field1, field2, field3, field4, field5, field6, field7, field8, field9 FROM " + keyspace + ".usertable").Consistency(gocql.All).Iter()
	var key string
	vals := make([]string, 10)
	dest := []any{&key}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	for it.Scan(dest...) {
		out[key] = append([]string(nil), vals...)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("reading the table: %v", err)
	}
	return out
}
