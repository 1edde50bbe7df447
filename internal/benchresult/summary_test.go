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
