package k6ycsb

import (
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/test/dataplane"
)

// BenchmarkServerWarmUp is `make bench-warmup`: how long a fresh Cassandra node takes to settle
// at a study's load, so that a study's warm-up is chosen on a measurement rather than a guess.
// One node with the demo study's heap (1.5 GiB) on core 0, our client on core 1, YCSB B (95%
// reads) on the demo's 10 KB rows (2,000 records of 10 fields of 1,000 bytes) at a fixed 1,000
// operations per second, for 7 minutes (BENCH_WARMUP_DURATION), over plaintext or, with
// BENCH_WARMUP_TLS=1, TLS 1.3 AES-128-GCM. It prints the server's CPU-microseconds per
// operation in consecutive windows of about 10 s and per minute: a study's runs compare cells
// only once that figure has stopped falling, because a JVM still warming is cheaper in its
// later runs whatever its profile.
//
// The server's CPU is the kernel's account of the process (/proc/<pid>/stat, sampled every
// 100 ms); the operations are the client's per-second counts. It runs once whatever b.N is.
func BenchmarkServerWarmUp(b *testing.B) {
	duration, err := time.ParseDuration(dataplane.EnvOr("BENCH_WARMUP_DURATION", "7m"))
	if err != nil || duration < time.Minute {
		b.Fatalf("BENCH_WARMUP_DURATION %q: give a duration of a minute or more, such as 7m", dataplane.EnvOr("BENCH_WARMUP_DURATION", ""))
	}
	rate := dataplane.EnvOr("BENCH_WARMUP_RATE", "1000")
	const address = "127.0.0.70"
	node, caFile := tlsOptionalNode(b, dataplane.Node{Address: address, JMXPort: 7270, HeapMiB: 1536})
	session := "plaintext"
	base := map[string]string{"CQL_HOSTS": node.NativeAddress(), "YCSB_RECORD_COUNT": "2000", "YCSB_FIELD_LENGTH": "1000", "YCSB_VUS": "32"}
	if dataplane.EnvOr("BENCH_WARMUP_TLS", "") != "" {
		base, session = pinned(base, caFile, address, "TLS_AES_128_GCM_SHA256"), "TLS 1.3 AES-128-GCM"
	}
	if msg, err := exec.Command("taskset", "-a", "-p", "-c", serverCPUs, strconv.Itoa(node.Pid())).CombinedOutput(); err != nil {
		b.Fatalf("pinning Cassandra to CPU %s: %v\n%s", serverCPUs, err, msg)
	}
	if load, log, err := runK6(b, merge(base, map[string]string{"YCSB_PHASE": "load"})); err != nil || load.Errors > 0 {
		b.Fatalf("load: %v %s\n%s", err, load.FirstError, log)
	}
	server := &cpuTrace{}
	server.follow(node.Pid())
	s, log, err := k6Command{cpus: clientCPUs, env: merge(base, map[string]string{
		"YCSB_WORKLOAD": "B", "YCSB_RATE": rate, "YCSB_WARMUP": "1s", "YCSB_DURATION": duration.String(),
	})}.run(b)
	server.stop()
	if err != nil || s.Errors > 0 {
		b.Fatalf("k6: %v %s\n%s", err, s.FirstError, log)
	}
	if s.DroppedIterations > s.Operations/50 {
		b.Fatalf("the client dropped %d of %d operations: the node cannot keep %s ops/s on one core; give BENCH_WARMUP_RATE a lower one", s.DroppedIterations, s.Operations+s.DroppedIterations, rate)
	}
	windows := warmUpWindows(b, server, s.Start, s.Series, s.SeriesStepSeconds)
	report := warmUpReport(windows, fmt.Sprintf("%s ops/s of YCSB B on 10 KB rows over %s, one fresh node (1.5 GiB heap) on CPU %s, the client on CPU %s", rate, session, serverCPUs, clientCPUs))
	b.Log("\n" + report)
	dataplane.SaveReport(b, "bench-warmup", strings.ReplaceAll(strings.Fields(session)[0], ".", "")+".md", report)
}

// warmUpWindow is the server's cost per operation over one window of the run.
type warmUpWindow struct {
	from, to      time.Duration // since the measured window's start
	microsPerOp   float64
	operations    int64
	serverSeconds float64
}

// warmUpWindows cuts the run into windows of whole series steps of at least 10 s.
func warmUpWindows(b *testing.B, server *cpuTrace, start time.Time, series []int64, step int) []warmUpWindow {
	if step <= 0 || len(series) == 0 {
		b.Fatal("the client reported no per-second series")
	}
	per := (10 + step - 1) / step
	var out []warmUpWindow
	for i := 0; i+per <= len(series); i += per {
		var ops int64
		for _, n := range series[i : i+per] {
			ops += n
		}
		from, to := time.Duration(i*step)*time.Second, time.Duration((i+per)*step)*time.Second
		cpu := server.between(b, start.Add(from), start.Add(to))
		out = append(out, warmUpWindow{from: from, to: to, operations: ops, serverSeconds: cpu, microsPerOp: cpu * 1e6 / float64(max(ops, 1))})
	}
	return out
}

// warmUpReport: every window, then each minute's mean and spread against the last minute's.
func warmUpReport(windows []warmUpWindow, setting string) string {
	var r strings.Builder
	fmt.Fprintf(&r, "Server CPU per operation from the first measured second, %s.\n\n| window | operations | server CPU-s | server µs/op |\n|---|---|---|---|\n", setting)
	for _, w := range windows {
		fmt.Fprintf(&r, "| %s–%s | %d | %.2f | %.0f |\n", w.from, w.to, w.operations, w.serverSeconds, w.microsPerOp)
	}
	minutes := map[int][]float64{}
	last := 0
	for _, w := range windows {
		m := int(w.to.Minutes() - 1e-9)
		minutes[m] = append(minutes[m], w.microsPerOp)
		last = max(last, m)
	}
	final := mean(minutes[last])
	fmt.Fprintf(&r, "\n| minute | windows | mean µs/op | sd between windows | against the last minute |\n|---|---|---|---|---|\n")
	for m := 0; m <= last; m++ {
		v := minutes[m]
		if len(v) == 0 {
			continue
		}
		sd := math.NaN()
		if len(v) > 1 {
			sd = sdOf(v)
		}
		fmt.Fprintf(&r, "| %d | %d | %.0f | %.0f (%.1f%%) | %+.1f%% |\n", m+1, len(v), mean(v), sd, 100*sd/mean(v), 100*(mean(v)/final-1))
	}
	return r.String()
}

// sdOf is the sample standard deviation.
func sdOf(v []float64) float64 {
	m, ss := mean(v), 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}
