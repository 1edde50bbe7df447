package k6ycsb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/internal/test/samples"
)

// The server and the client under test each get a core of their own, so that neither takes
// CPU from the other and the client's CPU is its own.
const (
	serverCPUs = "0"
	clientCPUs = "1"
)

// BenchmarkClientEfficiency is `make bench-client`: our k6 client and latte, the most
// CPU-efficient CQL load tool we know, side by side against one local Cassandra: YCSB workload A
// on 1 KB rows, the same connections (2) and concurrency (64), Cassandra on core 0 and the
// client on core 1; at maximum throughput and at a fixed rate, over plaintext and over TLS 1.3
// with TLS_AES_128_GCM_SHA256. It prints operations per client CPU-second for both clients and
// their ratio, and writes a CPU profile of each of our runs to bin/bench-client/.
//
// The fixed rate is half the lowest throughput the maximum-throughput runs reached (rounded
// down to a hundred), unless BENCH_CLIENT_RATE sets it: a rate the server cannot keep measures
// a saturated client again, not the cost of waiting between operations, so a run that did not
// keep its schedule fails the benchmark instead of being reported.
//
// Both clients' CPU comes from the same place: the kernel's account of the process
// (/proc/<pid>/stat, sampled every 100 ms), read over the client's own measured window, warm-up
// and start-up excluded. It runs once per invocation whatever b.N is; BENCH_CLIENT_DURATION
// (45s), BENCH_CLIENT_RECORDS (100000) and BENCH_CLIENT_VUS (64) change its size.
func BenchmarkClientEfficiency(b *testing.B) {
	duration := dataplane.EnvOr("BENCH_CLIENT_DURATION", "45s")
	records := dataplane.EnvOr("BENCH_CLIENT_RECORDS", "100000")
	vus := dataplane.EnvOr("BENCH_CLIENT_VUS", "64")
	rate := os.Getenv("BENCH_CLIENT_RATE")
	latte := latteBinary(b)
	out := filepath.Join(samples.RepoRoot(), "bin", "bench-client")
	if err := os.MkdirAll(out, 0o755); err != nil {
		b.Fatal(err)
	}
	const address = "127.0.0.62"
	node, caFile := tlsOptionalNode(b, dataplane.Node{Address: address, JMXPort: 7262})
	// -a: every thread of the JVM, those it starts later included.
	if msg, err := exec.Command("taskset", "-a", "-p", "-c", serverCPUs, strconv.Itoa(node.Pid())).CombinedOutput(); err != nil {
		b.Fatalf("pinning Cassandra to CPU %s: %v\n%s", serverCPUs, err, msg)
	}

	base := map[string]string{"CQL_HOSTS": node.NativeAddress(), "YCSB_RECORD_COUNT": records, "YCSB_VUS": vus}
	b.Logf("loading %s records of 1 KB for each client", records)
	load, log, err := runK6(b, merge(base, map[string]string{"YCSB_PHASE": "load", "YCSB_VUS": "32"}))
	if err != nil || load.Errors > 0 {
		b.Fatalf("load: %v %s\n%s", err, load.FirstError, log)
	}
	b.Logf("k6 load: %.0f inserts/s", load.Throughput())
	lt := latteRun{bin: latte, node: node.NativeAddress(), vus: vus, records: records, dir: b.TempDir()}
	for _, step := range []string{"schema", "load"} {
		if msg, err := lt.command(step).CombinedOutput(); err != nil {
			b.Fatalf("latte %s: %v\n%s", step, err, msg)
		}
	}
	// Cassandra's JIT and the flushes after the loads would otherwise favour the later runs.
	if _, log, err := runK6(b, merge(base, map[string]string{"YCSB_WORKLOAD": "A", "YCSB_DURATION": "30s"})); err != nil {
		b.Fatalf("burn-in: %v\n%s", err, log)
	}

	type session struct {
		name string
		k6   map[string]string
		tls  bool
	}
	sessions := []session{
		{name: "plaintext"},
		{name: "TLSv1.3 AES-128-GCM", k6: pinned(nil, caFile, address, "TLS_AES_128_GCM_SHA256"), tls: true},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "| load | session | k6 ops/s | k6 ops per client CPU-s | latte ops/s | latte ops per client CPU-s | k6 / latte |\n|---|---|---|---|---|---|---|\n")
	lowest := math.Inf(1) // the lowest maximum throughput, of either client in either session
	for _, fixed := range []bool{false, true} {
		mode := "maximum throughput"
		if fixed {
			if rate == "" {
				rate = strconv.Itoa(max(100, int(lowest/2/100)*100)) // a rate of 0 would mean unlimited
			}
			mode = "fixed rate " + rate + " ops/s"
		}
		for _, s := range sessions {
			slug := strings.ReplaceAll(strings.Fields(mode)[0]+"-"+strings.Fields(s.name)[0], ".", "")
			env := merge(base, merge(s.k6, map[string]string{"YCSB_WORKLOAD": "A", "YCSB_WARMUP": "10s", "YCSB_DURATION": duration}))
			lt.rate, lt.tls, lt.caFile, lt.duration = "", s.tls, caFile, duration
			if fixed {
				env["YCSB_RATE"], lt.rate = rate, rate
			}
			ours := ourEfficiency(b, env, filepath.Join(out, slug+".pprof"))
			peer := lt.efficiency(b)
			if fixed {
				kept(b, "k6", ours, rate)
				kept(b, "latte", peer, rate)
			}
			if !fixed {
				lowest = min(lowest, ours.throughput, peer.throughput)
			}
			fmt.Fprintf(&report, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.2f |\n", mode, s.name,
				ours.throughput, ours.perCPU(), peer.throughput, peer.perCPU(), ours.perCPU()/peer.perCPU())
			b.ReportMetric(ours.perCPU(), "ops/cpu-s-k6-"+slug)
			b.ReportMetric(peer.perCPU(), "ops/cpu-s-latte-"+slug)
		}
	}
	b.Logf("workload A, %s records of 1 KB, %s requests in flight over 2 connections, %s measured after 10 s warm-up, one Cassandra on CPU %s, the client on CPU %s:\n%s",
		records, vus, duration, serverCPUs, clientCPUs, report.String())
	dataplane.SaveReport(b, "bench-client", "report.md", report.String())
}

// efficiency is one client run: its throughput and its CPU over the measured window, and the
// operations it scheduled but could not start in time (k6 only; latte catches up instead).
type efficiency struct {
	throughput, operations, cpuSeconds, dropped float64
}

// kept fails the benchmark when a fixed-rate run fell more than 2% short of its schedule,
// whether it dropped the operations (k6) or served them late (latte, whose throughput then
// falls below the rate): the server was saturated and the figure would not be a fixed rate's.
func kept(b *testing.B, client string, e efficiency, rate string) {
	r, _ := strconv.ParseFloat(rate, 64)
	if e.dropped > 0.02*(e.operations+e.dropped) || e.throughput < 0.98*r {
		b.Fatalf("%s did not keep %s ops/s (%.0f ops/s, %.0f operations dropped): the server is saturated at that rate; give BENCH_CLIENT_RATE a lower one", client, rate, e.throughput, e.dropped)
	}
}

func (e efficiency) perCPU() float64 { return e.operations / e.cpuSeconds }

// ourEfficiency runs our client pinned to its core, with a CPU profile taken in the middle of
// the measured window.
func ourEfficiency(b *testing.B, env map[string]string, profile string) efficiency {
	port := freePort(b)
	done := profileDuring(b, port, 15*time.Second, 20*time.Second, profile)
	trace := &cpuTrace{}
	s, log, err := k6Command{
		env: env, cpus: clientCPUs, cpu: trace,
		args: []string{"--profiling-enabled", "--address", "127.0.0.1:" + strconv.Itoa(port)},
	}.run(b)
	<-done
	if err != nil || s.Errors > 0 {
		b.Fatalf("k6: %v %s\n%s", err, s.FirstError, log)
	}
	cpu := trace.between(b, s.Start, s.End)
	b.Logf("k6: %d operations, %.1f CPU-s by /proc (%.1f by its own rusage), %d dropped iterations", s.Operations, cpu, s.ClientCPUSeconds, s.DroppedIterations)
	if top, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", profile).CombinedOutput(); err == nil {
		b.Logf("where k6's CPU goes (%s)\n%s", profile, top)
	}
	return efficiency{throughput: s.Throughput(), operations: float64(s.Operations), cpuSeconds: cpu, dropped: float64(s.DroppedIterations)}
}

// latteRun runs bench/latte/ycsb-a.rn.
type latteRun struct {
	bin, node, vus, records, dir string
	rate, duration, caFile       string
	tls                          bool
}

func (l latteRun) command(step string, extra ...string) *exec.Cmd {
	script := filepath.Join(samples.RepoRoot(), "bench", "latte", "ycsb-a.rn")
	args := []string{"-c", clientCPUs, l.bin, step, script, "-P", "rows=" + l.records}
	if step != "schema" {
		args = append(args, "-q") // no progress bars
	}
	args = append(args,
		"--connections", "2", "--consistency", "ONE", "--retries", "0")
	args = append(args, extra...)
	if l.tls {
		args = append(args, "--ssl", "--ssl-ca", l.caFile)
	}
	cmd := exec.Command("taskset", append(args, "--", l.node)...)
	cmd.Dir = l.dir
	// latte's OpenSSL takes the pin from its configuration: TLS 1.3 with AES-128-GCM only, as
	// our client's pin; the benchmark checks on the server that it held.
	cmd.Env = append(os.Environ(), "LATTE_LOG_DIR="+l.dir, "OPENSSL_CONF="+l.opensslConf())
	return cmd
}

func (l latteRun) opensslConf() string {
	conf := filepath.Join(l.dir, "openssl.cnf")
	_ = os.WriteFile(conf, []byte(`openssl_conf = init
[init]
ssl_conf = ssl
[ssl]
system_default = pin
[pin]
MinProtocol = TLSv1.3
MaxProtocol = TLSv1.3
Ciphersuites = TLS_AES_128_GCM_SHA256
`), 0o644)
	return conf
}

// latteReport is the part of latte's JSON report the benchmark reads.
type latteReport struct {
	Result struct {
		StartTime  time.Time `json:"start_time"`
		EndTime    time.Time `json:"end_time"`
		CPUTimeS   float64   `json:"cpu_time_s"`
		CycleCount float64   `json:"cycle_count"`
		ErrorCount int64     `json:"error_count"`
		Errors     []string  `json:"errors"`
		Throughput struct {
			Value float64 `json:"value"`
		} `json:"cycle_throughput"`
	} `json:"result"`
}

func (l latteRun) efficiency(b *testing.B) efficiency {
	file := filepath.Join(l.dir, "report.json")
	extra := []string{"-d", l.duration, "-w", "10s", "-t", "1", "-p", l.vus, "-o", file}
	if l.rate != "" {
		extra = append(extra, "-r", l.rate)
	}
	cmd := l.command("run", extra...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatalf("latte: %v", err)
	}
	trace := &cpuTrace{}
	trace.follow(cmd.Process.Pid)
	seen := make(chan map[string]int, 1)
	go func() { time.Sleep(20 * time.Second); seen <- negotiatedSessions(b, l.node) }()
	err := cmd.Wait()
	trace.exited(cmd.ProcessState)
	if err != nil {
		b.Fatalf("latte run: %v\n%s", err, out.String())
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatalf("latte's report: %v\n%s", err, out.String())
	}
	var r latteReport
	if err := json.Unmarshal(raw, &r); err != nil {
		b.Fatalf("latte's report %s: %v", file, err)
	}
	if r.Result.ErrorCount > 0 {
		b.Fatalf("latte: %d errors, first %v", r.Result.ErrorCount, r.Result.Errors)
	}
	// A peer that negotiated something else than our client's pin would not be measuring the
	// same thing: the server's own view of its connections decides.
	sessions := <-seen
	want := "plaintext"
	if l.tls {
		want = "TLSv1.3 TLS_AES_128_GCM_SHA256"
	}
	if len(sessions) == 0 {
		b.Fatalf("latte: the server listed none of its connections; cannot tell what it negotiated")
	}
	for s := range sessions {
		if s != want {
			b.Fatalf("latte negotiated %v with the server; the comparison needs %s only", sessions, want)
		}
	}
	cpu := trace.between(b, r.Result.StartTime, r.Result.EndTime)
	b.Logf("latte: %.0f operations, %.1f CPU-s by /proc (%.1f by its own account), sessions %v", r.Result.CycleCount, cpu, r.Result.CPUTimeS, sessions)
	return efficiency{throughput: r.Result.Throughput.Value, operations: r.Result.CycleCount, cpuSeconds: cpu}
}

// negotiatedSessions counts the server's client connections of latte's driver by protocol and
// suite ("plaintext" without TLS), from Cassandra's system_views.clients.
func negotiatedSessions(b *testing.B, node string) map[string]int {
	c := gocql.NewCluster(node)
	c.Timeout, c.ConnectTimeout = 10*time.Second, 10*time.Second
	session, err := c.CreateSession()
	if err != nil {
		b.Logf("listing the server's connections: %v", err)
		return nil
	}
	defer session.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := session.Query("SELECT driver_name, ssl_enabled, ssl_protocol, ssl_cipher_suite FROM system_views.clients").IterContext(ctx)
	out := map[string]int{}
	var driver, protocol, suite string
	var ssl bool
	for iter.Scan(&driver, &ssl, &protocol, &suite) {
		if !strings.Contains(strings.ToLower(driver), "rust") {
			continue // ours, or the listing session itself
		}
		if ssl {
			out[protocol+" "+suite]++
		} else {
			out["plaintext"]++
		}
	}
	if err := iter.Close(); err != nil {
		b.Logf("listing the server's connections: %v", err)
	}
	return out
}

// cpuTrace samples a CPU account (a process's, or the whole machine's) every 100 ms, and a
// process's total at exit, so that the CPU over a window known only afterwards, such as a
// client's measured window, can be read.
type cpuTrace struct {
	mu   sync.Mutex
	at   []time.Time
	cpu  []float64
	read func() (float64, error)
	done chan struct{}
}

// follow samples a process's CPU while it lives.
func (t *cpuTrace) follow(pid int) {
	t.sample(func() (float64, error) { return dataplane.ReadProcessCPU(pid) })
}

// sample records read until it fails (a process that is gone) or stop.
func (t *cpuTrace) sample(read func() (float64, error)) {
	t.read, t.done = read, make(chan struct{})
	go func() {
		for t.record() {
			select {
			case <-t.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

func (t *cpuTrace) record() bool {
	cpu, err := t.read()
	if err != nil {
		return false
	}
	t.mu.Lock()
	t.at, t.cpu = append(t.at, time.Now()), append(t.cpu, cpu)
	t.mu.Unlock()
	return true
}

// stop ends the sampling with one last sample, so that a window that ended just before has a
// sample after it.
func (t *cpuTrace) stop() {
	close(t.done)
	t.record()
}

// exited adds the process's final account: a window that ends less than a sampling period
// before the process does still has a sample after it.
func (t *cpuTrace) exited(state *os.ProcessState) {
	if state == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.at, t.cpu = append(t.at, time.Now()), append(t.cpu, (state.UserTime()+state.SystemTime()).Seconds())
}

// between is the CPU the process used from start to end, interpolated between samples.
func (t *cpuTrace) between(b *testing.B, start, end time.Time) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The last /proc sample can land after the exit's account.
	sort.Sort(byTime{t})
	at := func(when time.Time) float64 {
		for i := 1; i < len(t.at); i++ {
			if !t.at[i].Before(when) {
				if t.at[i-1].After(when) {
					break
				}
				span := t.at[i].Sub(t.at[i-1]).Seconds()
				return t.cpu[i-1] + (t.cpu[i]-t.cpu[i-1])*when.Sub(t.at[i-1]).Seconds()/span
			}
		}
		b.Fatalf("no CPU samples around %s (sampled %d times)", when.Format(time.RFC3339Nano), len(t.at))
		return 0
	}
	return at(end) - at(start)
}

// freePort is a loopback port nothing listens on, for k6's profiling endpoint.
type byTime struct{ t *cpuTrace }

func (s byTime) Len() int           { return len(s.t.at) }
func (s byTime) Less(i, j int) bool { return s.t.at[i].Before(s.t.at[j]) }
func (s byTime) Swap(i, j int) {
	s.t.at[i], s.t.at[j] = s.t.at[j], s.t.at[i]
	s.t.cpu[i], s.t.cpu[j] = s.t.cpu[j], s.t.cpu[i]
}

func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// latteBinary builds latte once (hack/build/latte.sh caches it).
func latteBinary(b *testing.B) string {
	cmd := exec.Command(filepath.Join(samples.RepoRoot(), "hack", "build", "latte.sh"))
	cmd.Stderr = os.Stderr
	path, err := cmd.Output()
	if err != nil {
		b.Fatalf("building latte: %v", err)
	}
	return strings.TrimSpace(string(path))
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

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
