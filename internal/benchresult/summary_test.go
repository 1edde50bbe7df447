package benchresult

import (
	"strings"
	"testing"
	"time"
)

// A summary survives the trip through a termination message, and a reader refuses what it
// cannot trust.
func TestSummaryRoundTrip(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := Summary{Driver: "k6-ycsb", Phase: "run", Start: start, End: start.Add(60 * time.Second),
		Operations: 600_000, Protocol: "TLSv1.3", Suite: "TLS_AES_128_GCM_SHA256", FirstError: strings.Repeat("x", 2000)}
	for _, op := range []string{"read", "update", "insert", "scan", "readmodifywrite"} {
		s.Latencies = append(s.Latencies, Latency{Operation: op, Count: 1 << 40, Errors: 1 << 40, P50: 1 << 40, P95: 1 << 40, P99: 1 << 40, Max: 1 << 40})
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Throughput() != 10_000 || got.Suite != s.Suite || len(got.Latencies) != 5 || len(got.FirstError) > 520 {
		t.Errorf("round trip: %+v", got)
	}
	if _, err := Parse([]byte(`{"version":"benchresult.secured.dev/v0"}`)); err == nil || !strings.Contains(err.Error(), "this operator reads") {
		t.Errorf("another version: %v", err)
	}
	if _, err := Parse([]byte(`not json`)); err == nil {
		t.Error("garbage parsed")
	}
	s.Profile = strings.Repeat("p", MaxBytes)
	if _, err := s.Marshal(); err == nil {
		t.Error("a summary larger than a termination message was accepted")
	}
}

// Two pods' results add up; the merged tail is the worse pod's.
func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a := Summary{Start: t0, End: t0.Add(10 * time.Second), Operations: 1000, ClientCPUSeconds: 1, Protocol: "TLSv1.3",
		Connections: map[string]int64{"tls": 3, "plaintext": 1},
		Latencies:   []Latency{{Operation: "read", Count: 600, P50: 100, P95: 200, P99: 300, Max: 900}, {Operation: "update", Count: 400, P50: 50, P95: 60, P99: 70, Max: 80}}}
	b := Summary{Start: t0.Add(time.Second), End: t0.Add(11 * time.Second), Operations: 3000, Errors: 2, ClientCPUSeconds: 2, FirstError: "read: timeout",
		Connections: map[string]int64{"tls": 2},
		Latencies:   []Latency{{Operation: "read", Count: 3000, Errors: 2, P50: 200, P95: 250, P99: 260, Max: 500}}}
	m, throughput := Merge([]Summary{a, b})
	if throughput != 400 || m.Operations != 4000 || m.Errors != 2 || m.ClientCPUSeconds != 3 || m.FirstError != "read: timeout" ||
		!m.Start.Equal(t0) || !m.End.Equal(t0.Add(11*time.Second)) || m.Protocol != "TLSv1.3" {
		t.Fatalf("merged %+v, %v ops/s", m, throughput)
	}
	if m.Connections["tls"] != 5 || m.Connections["plaintext"] != 1 || a.Connections["tls"] != 3 {
		t.Errorf("connections merged to %v (the first pod's now %v); want tls 5, plaintext 1, and the pod's own untouched", m.Connections, a.Connections)
	}
	want := []Latency{{Operation: "read", Count: 3600, Errors: 2, P50: 183, P95: 250, P99: 300, Max: 900}, {Operation: "update", Count: 400, P50: 50, P95: 60, P99: 70, Max: 80}}
	for i, l := range want {
		if m.Latencies[i] != l {
			t.Errorf("latency %d: %+v; want %+v", i, m.Latencies[i], l)
		}
	}
	if _, tp := Merge(nil); tp != 0 {
		t.Error("nothing merged has a throughput")
	}
}
