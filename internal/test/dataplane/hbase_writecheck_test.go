package dataplane

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/render/hbase"
	"secured.dev/operator/internal/test/samples"
	"secured.dev/operator/internal/writecheck"
	"secured.dev/operator/internal/ycsb"
)

// recordedRun is YCSB workload A over records records that records every write into history
// and reads them back at the end.
func recordedRun(t *testing.T, records int64, history string) map[string]string {
	t.Helper()
	wl, err := ycsb.Core("A")
	if err != nil {
		t.Fatal(err)
	}
	wl.RecordCount = records
	p := wl.Properties()
	p["writehistory"], p["verifywrites"] = history, "true"
	return p
}

// historyOf reads a history the driver wrote with internal/writecheck's reader: the formats are
// one. It returns the acknowledged entries by key and field.
func historyOf(t *testing.T, path string) (acked map[int64]map[int32][]writecheck.Entry, entries int) {
	t.Helper()
	acked = map[int64]map[int32][]writecheck.Entry{}
	if err := writecheck.Each(path, func(e writecheck.Entry) {
		entries++
		if e.Acked {
			if acked[e.Key] == nil {
				acked[e.Key] = map[int32][]writecheck.Entry{}
			}
			acked[e.Key][e.Field] = append(acked[e.Key][e.Field], e)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return acked, entries
}

// The YCSB HBase driver records its writes and reads them back as the k6 driver does
// (internal/writecheck's format and rules): a clean run is verified in full, and damage done
// behind its back is named for what it is — an older acknowledged value back in place (stale),
// bytes nobody sealed (corrupted), a deleted row (lost).
func TestYCSBHBaseDriverChecksItsWrites(t *testing.T) {
	withStandaloneHBase(t)
	const address, zkPort = "127.0.0.75", 21830
	h := StartHBaseStandalone(t, address, zkPort, HBaseSecurity{})
	history := filepath.Join(t.TempDir(), "history")

	load := recordedRun(t, 200, "")
	delete(load, "writehistory")
	delete(load, "verifywrites")
	load["createtable"] = "true"
	runYCSBHBase(t, h, "load", load)

	run := recordedRun(t, 200, history)
	run["operationcount"] = "4000"
	s := runYCSBHBase(t, h, "run", run)
	w := s.Writes
	if w == nil || !w.Intact() || w.Consistency != "STRONG" {
		t.Fatalf("a clean run's check: %+v; want every checked key-field verified", w)
	}
	acked, entries := historyOf(t, history)
	var ackedEntries int64
	for _, fields := range acked {
		for _, es := range fields {
			ackedEntries += int64(len(es))
			for _, e := range es {
				if at := time.UnixMicro(e.Stamp); at.Before(s.Start.Add(-time.Second)) || at.After(s.End.Add(time.Second)) {
					t.Fatalf("entry %+v stamped %s, outside the run %s..%s", e, at, s.Start, s.End)
				}
			}
		}
	}
	updates := int64(0)
	for _, l := range s.Latencies {
		if l.Operation == "update" {
			updates = l.Count
		}
	}
	if w.Acknowledged != ackedEntries || w.Acknowledged != updates || int64(entries) < updates {
		t.Fatalf("the check counted %d acknowledged writes, the history holds %d acknowledged of %d entries, the run made %d updates", w.Acknowledged, ackedEntries, entries, updates)
	}
	t.Logf("clean run: %d updates recorded; %d key-fields read back, all verified", updates, w.Checked)

	// Three distinct records: one gets an older acknowledged value back, one a value nobody
	// sealed, one is deleted.
	var picked []int64
	for k := range acked {
		if picked = append(picked, k); len(picked) == 3 {
			break
		}
	}
	if len(picked) < 3 {
		t.Fatalf("the run wrote %d records; want at least 3", len(picked))
	}
	staleKey, corruptKey, gone := picked[0], picked[1], picked[2]
	var staleField, corruptField int32
	for f := range acked[staleKey] {
		staleField = f
	}
	for f := range acked[corruptKey] {
		corruptField = f
	}
	// The older value: sealed as the client seals, recorded as acknowledged before the latest
	// write of its key-field, as if a replica had served an old copy.
	older := []byte(strings.Repeat("o", 100))
	tag := writecheck.Seal(writecheckName(staleKey), int(staleField), older)
	rec, err := writecheck.Create(history)
	if err != nil {
		t.Fatal(err)
	}
	rec.Record(writecheck.Entry{Key: staleKey, Field: staleField, Stamp: acked[staleKey][staleField][0].Stamp - 1, Tag: tag, Acked: true})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	damage(t, h, "put", writecheckName(staleKey), ycsb.FieldName(int(staleField)), hex.EncodeToString(older),
		"put", writecheckName(corruptKey), ycsb.FieldName(int(corruptField)), hex.EncodeToString([]byte(strings.Repeat("x", 100))),
		"delete", writecheckName(gone))

	// A run that writes nothing checks the same history again.
	check := recordedRun(t, 200, history)
	check["operationcount"], check["readproportion"], check["updateproportion"] = "1", "1", "0"
	d := runYCSBHBase(t, h, "run", check).Writes
	lost := int64(len(acked[gone]))
	if d == nil || d.Acknowledged != w.Acknowledged+1 || d.Checked != w.Checked || d.Stale != 1 || d.Corrupted != 1 || d.Lost != lost ||
		d.Unreadable != 0 || d.Verified != w.Checked-2-lost || d.FirstProblem == "" {
		t.Fatalf("after the damage: %+v; want 1 stale, 1 corrupted, %d lost, the rest of %d verified", d, lost, w.Checked)
	}
	t.Logf("after the damage: %d verified, %d stale, %d corrupted, %d lost; first: %s", d.Verified, d.Stale, d.Corrupted, d.Lost, d.FirstProblem)
}

// writecheckName is the record a Java history entry names: the HBase binding records the number
// in the record's name (already hashed by YCSB), so this is not ycsb.Workload.KeyName.
func writecheckName(k int64) string { return "user" + strconv.FormatInt(k, 10) }

// damage runs testdata/HBaseDamage.java against a plaintext standalone HBase.
func damage(t *testing.T, h *HBaseStandalone, ops ...string) {
	t.Helper()
	prog := javaProgram(t, filepath.Join(samples.RepoRoot(), "internal", "test", "dataplane", "testdata", "HBaseDamage.java"), driverClasspath(t))
	args := append(slices.Clone(hbase.JDK17Options), prog.args("127.0.0.1", strconv.Itoa(h.ZooKeeperPort))...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := java(ctx, append(args, ops...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("damage done %d", 3)) {
		t.Fatalf("damaging the table: %v\n%s", err, tail(string(out), 30))
	}
}

// Faults under a fixed-rate client that records every write, on the paper's native security
// (Kerberos, SASL privacy on HBase and Hadoop RPC, encrypted block transfer) with a backup
// Master: a RegionServer SIGKILLed (it restarts, the Master replays its WAL and reassigns its
// regions), then the active Master SIGKILLed (the backup takes over). Operations in flight may
// fail or wait; every write HBase acknowledged, before a fault or after it, must read back.
func TestHBaseFaultsLoseNoAcknowledgedWrite(t *testing.T) {
	withHBase(t)
	hosts := DefaultHBaseHosts
	hosts.BackupMaster = "127.0.0.87"
	c := StartHBaseClusterOn(t, hbaseProfile(t, "hbase-kerberos-privacy", nil), hosts)
	load := recordedRun(t, 1000, "")
	delete(load, "writehistory")
	delete(load, "verifywrites")
	load["createtable"] = "true"
	runYCSBHBase(t, c, "load", load)

	underWrites(t, c, "a RegionServer SIGKILLed", func() {
		c.Kill(t, hbase.RegionServer)
		// The kill took the RegionServer down the way a crash does: the Master recovered its WAL.
		if !strings.Contains(c.Log(hbase.Master), "ServerCrashProcedure") {
			t.Errorf("the Master ran no ServerCrashProcedure for the killed RegionServer; its last lines:\n%s", tail(withoutClasspath(c.Log(hbase.Master)), 20))
		}
	})
	underWrites(t, c, "the active Master SIGKILLed", func() { c.FailOver(t) })
}

// underWrites runs a 75 s YCSB A run at 200 operations per second that records its writes,
// injects the fault 25 s in, and checks every acknowledged write once the run is over.
func underWrites(t *testing.T, c *HBaseCluster, fault string, inject func()) {
	t.Helper()
	run := recordedRun(t, 1000, filepath.Join(t.TempDir(), "history"))
	run["operationcount"], run["maxexecutiontime"], run["target"] = strconv.Itoa(math.MaxInt32), "75", "200"
	type result struct {
		s   benchresult.Summary
		log string
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, log, err := tryYCSBHBase(t, c, "run", run)
		done <- result{s, log, err}
	}()
	time.Sleep(25 * time.Second) // the JVM starts, logs in and writes for a while
	began := time.Now()
	inject()
	t.Logf("%s: serving again after %s", fault, time.Since(began).Round(time.Second))
	r := <-done
	if r.err != nil {
		t.Fatalf("%s: the client: %v\n%s", fault, r.err, tail(r.log, 40))
	}
	s, w := r.s, r.s.Writes
	var worst int64
	for _, l := range s.Latencies {
		worst = max(worst, l.Max)
	}
	if w == nil {
		t.Fatalf("%s: the client checked no write (%s)", fault, s.FirstError)
	}
	t.Logf("%s: %d operations, %d failed (first: %s), slowest %.1f s; %d acknowledged writes, %d key-fields read back: %d verified, %d lost, %d stale, %d corrupted, %d unreadable",
		fault, s.Operations+s.Errors, s.Errors, s.FirstError, float64(worst)/1e6, w.Acknowledged, w.Checked, w.Verified, w.Lost, w.Stale, w.Corrupted, w.Unreadable)
	if !w.Intact() {
		t.Errorf("%s: acknowledged writes not intact: %s", fault, w.FirstProblem)
	}
}
