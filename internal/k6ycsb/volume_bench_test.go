package k6ycsb

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/stats"
	"secured.dev/operator/internal/test/dataplane"
)

// BenchmarkEncryptedVolumeCassandra is the second half of `make bench-storage`: what an
// encrypted volume costs a datastore rather than a disk. Two Cassandra nodes keep their data on
// one ext4 filesystem of a loop device, one in a plain directory and one in a directory fscrypt
// encrypts (AES-256-XTS), both pinned to core 0 with the k6 client on core 1. Each is loaded
// with YCSB's table (seed 002's 40 MB database: 40,000 records of 1 KB) and flushed to
// SSTables. Each round runs workload A (50% reads, 50% updates) on both in a random order; before
// each run the node's memtables are flushed and the kernel's page cache dropped, so that the
// run starts by reading SSTables from the device through the cipher. Each encrypted run is
// compared with the plain run of its round (paired log ratios, Hodges-Lehmann estimate, exact
// signed-rank interval) on throughput, on the node's own CPU per operation, and on the whole
// machine's CPU per operation (the kernel encrypts and decrypts partly in worker threads that
// no process is charged for).
//
// It runs once per invocation whatever b.N is. BENCH_VOL_ROUNDS (6), BENCH_VOL_RECORDS (40000),
// BENCH_VOL_DURATION (10s) and BENCH_VOL_VUS (32) change its size; the report is also written to
// bin/bench-storage/cassandra.md.
func BenchmarkEncryptedVolumeCassandra(b *testing.B) {
	rounds := dataplane.Rounds(b, "BENCH_VOL_ROUNDS")
	records, duration, vus := dataplane.EnvOr("BENCH_VOL_RECORDS", "40000"), dataplane.EnvOr("BENCH_VOL_DURATION", "10s"), dataplane.EnvOr("BENCH_VOL_VUS", "32")
	_, plain, encrypted := dataplane.PlainAndEncrypted(b, 8<<30) // sparse: only what Cassandra writes takes room
	dirs := []string{plain, encrypted}
	off := v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}
	step := cassandra.Target(v1alpha1.EffectiveEncryption{ClientToNode: off, NodeToNode: off})
	names := []string{"plain", "encrypted"}
	nodes := make([]*dataplane.CassandraNode, len(dirs))
	server := make([]*cpuTrace, len(dirs))
	for i, d := range dirs {
		nodes[i] = dataplane.StartCassandra(b, dataplane.Node{Address: fmt.Sprintf("127.0.0.%d", 65+i), JMXPort: 7265 + i, Step: step, DataDir: d})
		if msg, err := exec.Command("taskset", "-a", "-p", "-c", serverCPUs, strconv.Itoa(nodes[i].Pid())).CombinedOutput(); err != nil {
			b.Fatalf("pinning Cassandra to CPU %s: %v\n%s", serverCPUs, err, msg)
		}
		server[i] = &cpuTrace{}
		server[i].follow(nodes[i].Pid())
	}
	envFor := func(i int) map[string]string {
		return map[string]string{"CQL_HOSTS": nodes[i].NativeAddress(), "YCSB_RECORD_COUNT": records, "YCSB_VUS": vus}
	}
	for i := range nodes {
		if s, log, err := runK6(b, merge(envFor(i), map[string]string{"YCSB_PHASE": "load"})); err != nil || s.Errors > 0 {
			b.Fatalf("loading the %s node: %v %s\n%s", names[i], err, s.FirstError, log)
		}
	}
	throughput := make([][]float64, len(nodes))
	nodeCPU := make([][]float64, len(nodes))    // operations per CPU-second of the node's process
	machineCPU := make([][]float64, len(nodes)) // operations per CPU-second of the whole machine
	order := rand.New(rand.NewPCG(0, 2))        // fixed: a rerun runs the same schedule
	for r := range rounds {
		for _, i := range order.Perm(len(nodes)) {
			if out, err := nodes[i].Nodetool("flush"); err != nil {
				b.Fatalf("nodetool flush: %v\n%s", err, out)
			}
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o200); err != nil {
				b.Fatalf("dropping the page cache: %v", err)
			}
			machine := &cpuTrace{}
			machine.sample(dataplane.ReadMachineCPU)
			s, log, err := k6Command{env: merge(envFor(i), map[string]string{"YCSB_WORKLOAD": "A", "YCSB_WARMUP": "2s", "YCSB_DURATION": duration}),
				cpus: clientCPUs}.run(b)
			machine.stop()
			server[i].record() // a sample after the window's end
			if err != nil || s.Errors > 0 {
				b.Fatalf("%s node, round %d: %v %s\n%s", names[i], r+1, err, s.FirstError, log)
			}
			ops := float64(s.Operations)
			throughput[i] = append(throughput[i], s.Throughput())
			nodeCPU[i] = append(nodeCPU[i], ops/server[i].between(b, s.Start, s.End))
			machineCPU[i] = append(machineCPU[i], ops/machine.between(b, s.Start, s.End))
			b.Logf("round %d, %s: %.0f ops/s, %.0f ops per node CPU-s, %.0f ops per machine CPU-s", r+1, names[i],
				s.Throughput(), nodeCPU[i][r], machineCPU[i][r])
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "| volume | median ops/s | throughput overhead [95%% CI] | median ops per node CPU-s | node CPU overhead [95%% CI] | median ops per machine CPU-s | machine CPU overhead [95%% CI] |\n|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&report, "| plain | %.0f | baseline | %.0f | baseline | %.0f | baseline |\n", stats.Median(throughput[0]), stats.Median(nodeCPU[0]), stats.Median(machineCPU[0]))
	fmt.Fprintf(&report, "| encrypted | %.0f | %s | %.0f | %s | %.0f | %s |\n",
		stats.Median(throughput[1]), stats.ComparePaired(throughput[0], throughput[1]).Summary(),
		stats.Median(nodeCPU[1]), stats.ComparePaired(nodeCPU[0], nodeCPU[1]).Summary(),
		stats.Median(machineCPU[1]), stats.ComparePaired(machineCPU[0], machineCPU[1]).Summary())
	b.Logf("workload A on Cassandra, %s records of 1 KB, %s users, %d rounds of %s runs after a 2 s warm-up, flushed and the page cache dropped before each, Cassandra on CPU %s, the client on CPU %s:\n%s",
		records, vus, rounds, duration, serverCPUs, clientCPUs, report.String())
	dataplane.SaveReport(b, "bench-storage", "cassandra.md", report.String())
}
