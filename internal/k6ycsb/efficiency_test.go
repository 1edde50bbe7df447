package k6ycsb

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/benchresult"
	"secured.dev/operator/internal/test/samples"
)

// BenchmarkClientEfficiency is `make bench-client`: workload A with 1 KB records against one
// local Cassandra, over plaintext and over pinned TLS 1.3 on the same node, reporting the
// client's operations per CPU-second (what decides whether the client can be the
// bottleneck) and writing a CPU profile of each run to bin/bench-client/. It runs once per
// invocation whatever b.N is; BENCH_CLIENT_DURATION (60s), BENCH_CLIENT_RECORDS (100000) and
// BENCH_CLIENT_VUS (64) change its size. Plaintext and TLS alternate over two rounds.
func BenchmarkClientEfficiency(b *testing.B) {
	duration := envOr("BENCH_CLIENT_DURATION", "60s")
	records := envOr("BENCH_CLIENT_RECORDS", "100000")
	vus := envOr("BENCH_CLIENT_VUS", "64")
	out := filepath.Join(samples.RepoRoot(), "bin", "bench-client")
	if err := os.MkdirAll(out, 0o755); err != nil {
		b.Fatal(err)
	}
	const address = "127.0.0.62"
	node, caFile := tlsOptionalNode(b, address, 7262)
	base := map[string]string{"CQL_HOSTS": node.NativeAddress(), "YCSB_RECORD_COUNT": records, "YCSB_VUS": vus}
	b.Logf("loading %s records of 1 KB", records)
	load, log, err := runK6(b, merge(base, map[string]string{"YCSB_PHASE": "load", "YCSB_VUS": "32"}))
	if err != nil || load.Errors > 0 {
		b.Fatalf("load: %v %s\n%s", err, load.FirstError, log)
	}
	b.Logf("load: %.0f inserts/s", load.Throughput())
	// Cassandra's JIT and the flushes after the load would otherwise favour the second run.
	if _, log, err := runK6(b, merge(base, map[string]string{"YCSB_WORKLOAD": "A", "YCSB_DURATION": "30s"})); err != nil {
		b.Fatalf("burn-in: %v\n%s", err, log)
	}

	var report strings.Builder
	fmt.Fprintf(&report, "| session | ops/s | read p50/p99 µs | update p50/p99 µs | client CPU s | ops per client CPU-s |\n|---|---|---|---|---|---|\n")
	sessions := []struct {
		name string
		env  map[string]string
	}{
		{"plaintext", nil},
		{"TLSv1.3 TLS_AES_128_GCM_SHA256", pinned(nil, caFile, address, "TLS_AES_128_GCM_SHA256")},
	}
	// Alternating rounds, so drift of the server (compaction, JIT) does not favour one session.
	for i := range 2 * len(sessions) {
		run := sessions[i%len(sessions)]
		slug := fmt.Sprintf("%s-%d", strings.Fields(run.name)[0], i/len(sessions)+1)
		env := merge(base, merge(run.env, map[string]string{"YCSB_WORKLOAD": "A", "YCSB_WARMUP": "10s", "YCSB_DURATION": duration}))
		profile := filepath.Join(out, slug+".pprof")
		port := 6565 + strings.Count(report.String(), "\n")
		done := profileDuring(b, port, 15*time.Second, 8*time.Second, profile)
		s, log, err := runK6(b, env, "--profiling-enabled", "--address", "127.0.0.1:"+strconv.Itoa(port))
		<-done
		if err != nil || s.Errors > 0 {
			b.Fatalf("%s: %v %s\n%s", run.name, err, s.FirstError, log)
		}
		lat := map[string]benchresult.Latency{}
		for _, l := range s.Latencies {
			lat[l.Operation] = l
		}
		perCPU := float64(s.Operations) / s.ClientCPUSeconds
		fmt.Fprintf(&report, "| %s (round %d) | %.0f | %d / %d | %d / %d | %.1f | %.0f |\n", run.name, i/len(sessions)+1, s.Throughput(),
			lat["read"].P50, lat["read"].P99, lat["update"].P50, lat["update"].P99, s.ClientCPUSeconds, perCPU)
		b.ReportMetric(perCPU, "ops/cpu-s-"+slug)
		if top, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=20", profile).CombinedOutput(); err == nil {
			b.Logf("%s: where the client's CPU goes (%s)\n%s", run.name, profile, top)
		}
	}
	b.Logf("workload A, %s records of 1 KB, %s VUs, %s measured after 10 s warm-up, one Cassandra on this machine:\n%s", records, vus, duration, report.String())
	if err := os.WriteFile(filepath.Join(out, "report.md"), []byte(report.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// profileDuring fetches a CPU profile from k6's profiling endpoint after a delay.
func profileDuring(b *testing.B, port int, after, length time.Duration, file string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(after)
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", port, int(length.Seconds())))
		if err != nil {
			b.Logf("CPU profile: %v", err)
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err == nil {
			err = os.WriteFile(file, data, 0o644)
		}
		if err != nil {
			b.Logf("CPU profile: %v", err)
		}
	}()
	return done
}

func envOr(name, dflt string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return dflt
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
