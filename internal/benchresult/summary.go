package benchresult

import (
	"encoding/json"
	"fmt"
	"time"
)

// Version names the Summary format; a reader refuses another one instead of guessing.
const Version = "benchresult.secured.dev/v1"

// MaxBytes is what a container's termination message holds; a Summary must fit.
const MaxBytes = 4096

// Summary is one client's result for one phase of a benchmark.
type Summary struct {
	Version string `json:"version"`
	// Driver that produced it: k6-ycsb, ycsb-hbase or fio.
	Driver string `json:"driver"`
	// Phase: load, warmup or run.
	Phase    string    `json:"phase"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Profile  string    `json:"profile,omitempty"`
	Protocol string    `json:"protocol,omitempty"`
	Suite    string    `json:"cipherSuite,omitempty"`

	Operations        int64   `json:"operations"`
	Errors            int64   `json:"errors"`
	DroppedIterations int64   `json:"droppedIterations"`
	ClientCPUSeconds  float64 `json:"clientCPUSeconds"`
	// Bytes read or written, by a storage driver (fio).
	Bytes int64 `json:"bytes,omitempty"`
	// FirstError is the first failure's message, to say why a run is invalid.
	FirstError string `json:"firstError,omitempty"`
	// Connections the client opened, by kind: "tls" and "plaintext". Both kinds appear only
	// with a plaintext fallback, while a live cluster moves between plaintext and TLS.
	Connections map[string]int64 `json:"connections,omitempty"`

	Latencies []Latency `json:"latencies"`

	// Series: operations completed in each step of SeriesStepSeconds from Start, whole steps
	// only, so a reader can see whether the window was steady.
	Series            []int64 `json:"series,omitempty"`
	SeriesStepSeconds int     `json:"seriesStepSeconds,omitempty"`
	// WarmUp: how long the warm-up before the window ran, when it ran until steady.
	WarmUp *WarmUp `json:"warmUp,omitempty"`
	// Writes: what the history checker found, when the client recorded its writes.
	Writes *Writes `json:"writes,omitempty"`
	// ClientSide: the fields the client encrypted or signed before they left it.
	ClientSide *ClientSide `json:"clientSide,omitempty"`
}

// ClientSide is the client-side protection a run applied to every write and checked on every
// read (pkg/fieldcrypt): a read whose value does not open counts as an error.
type ClientSide struct {
	Cipher    string `json:"cipher"`
	Signature string `json:"signature"`
	// Fields: how many of a record's fields, from field0 on.
	Fields int `json:"fields"`
}

// WarmUp is a warm-up that ran until the throughput was steady: how long it took, and whether
// it ended steady or at its maximum.
type WarmUp struct {
	Seconds float64 `json:"seconds"`
	Steady  bool    `json:"steady"`
}

// Latency of one operation type, in microseconds.
type Latency struct {
	Operation string `json:"operation"`
	Count     int64  `json:"count"`
	Errors    int64  `json:"errors,omitempty"`
	P50       int64  `json:"p50"`
	P95       int64  `json:"p95"`
	P99       int64  `json:"p99"`
	Max       int64  `json:"max"`
}

// LatencyOf reads a histogram.
func LatencyOf(op string, h *Histogram, errors int64) Latency {
	return Latency{Operation: op, Count: h.Count(), Errors: errors,
		P50: h.Quantile(0.50), P95: h.Quantile(0.95), P99: h.Quantile(0.99), Max: h.Max()}
}

// Throughput is completed operations per second of the phase.
func (s Summary) Throughput() float64 {
	d := s.End.Sub(s.Start).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(s.Operations) / d
}

// Marshal encodes the summary compactly, refusing one a termination message cannot hold.
func (s Summary) Marshal() ([]byte, error) {
	s.Version = Version
	if len(s.FirstError) > 512 {
		s.FirstError = s.FirstError[:512] + "…"
	}
	if s.Writes != nil && len(s.Writes.FirstProblem) > 256 {
		w := *s.Writes
		w.FirstProblem = w.FirstProblem[:256] + "…"
		s.Writes = &w
	}
	b, err := json.Marshal(s)
	if err == nil && len(b) > MaxBytes {
		err = fmt.Errorf("summary is %d bytes; a termination message holds %d", len(b), MaxBytes)
	}
	return b, err
}

// Parse decodes a summary, refusing other versions.
func Parse(b []byte) (Summary, error) {
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return Summary{}, fmt.Errorf("benchmark summary: %w", err)
	}
	if s.Version != Version {
		return Summary{}, fmt.Errorf("benchmark summary version %q; this operator reads %q", s.Version, Version)
	}
	return s, nil
}

// Writes is the history checker's verdict on a phase's writes: after the phase, every
// key-field whose latest recorded write the datastore acknowledged is read back, and the read
// either finds that write (or a later one the client attempted and lost sight of) or not.
type Writes struct {
	// Acknowledged writes the client recorded; an inserted record counts once per field.
	Acknowledged int64 `json:"acknowledged"`
	// Checked key-fields: those with at least one acknowledged write.
	Checked int64 `json:"checked"`
	// Verified key-fields hold the latest acknowledged value, or the value of a later write
	// whose acknowledgement the client never received (it may have landed).
	Verified int64 `json:"verified"`
	// Lost key-fields hold nothing, or a value this history never wrote (one from before it).
	Lost int64 `json:"lost"`
	// Stale key-fields hold an older value from the history than the latest acknowledged one.
	Stale int64 `json:"stale"`
	// Corrupted key-fields hold a value whose seal does not match its key, field and content.
	Corrupted int64 `json:"corrupted"`
	// Unreadable key-fields could not be read at the checker's consistency.
	Unreadable int64 `json:"unreadable"`
	// Consistency the reads used.
	Consistency string `json:"consistency"`
	// FirstProblem names the first key-field that was not verified, and why; never a value.
	FirstProblem string `json:"firstProblem,omitempty"`
}

// Intact: something was checked, and everything checked was verified.
func (w Writes) Intact() bool { return w.Checked > 0 && w.Verified == w.Checked }
