package k6ycsb

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"secured.dev/operator/internal/stats"
	"secured.dev/operator/internal/test/dataplane"
	"secured.dev/operator/pkg/fieldcrypt"
)

// BenchmarkClientSide is `make bench-client-side`: what encrypting and signing values in the
// client costs, PACE's question (seed 004), on one local Cassandra with Cassandra on core 0 and
// the client on core 1. For each field length (YCSB fieldlength; 10 fields a record), workload A
// runs closed loop with values stored as they are, encrypted (AES-256-GCM), and encrypted and
// signed (AES-256-GCM + Ed25519), each in its own keyspace loaded through the same protection.
// The three run once per round in a random order, for several rounds, and each protected
// profile is compared with the unprotected run of the same round (paired log ratios:
// Hodges-Lehmann estimate, exact signed-rank interval, internal/stats), on throughput and on
// operations per client CPU-second (the client's CPU from /proc over the measured window).
//
// It runs once per invocation whatever b.N is. BENCH_CS_SIZES (10,100,1000,10000),
// BENCH_CS_ROUNDS (6, the fewest with a 95% signed-rank interval), BENCH_CS_DURATION (8s),
// BENCH_CS_RECORDS (2000) and BENCH_CS_VUS (32) change its size; the report is also written to
// bin/bench-client-side/report.md.
func BenchmarkClientSide(b *testing.B) {
	sizes := strings.Split(dataplane.EnvOr("BENCH_CS_SIZES", "10,100,1000,10000"), ",")
	rounds := dataplane.Rounds(b, "BENCH_CS_ROUNDS")
	duration, records, vus := dataplane.EnvOr("BENCH_CS_DURATION", "8s"), dataplane.EnvOr("BENCH_CS_RECORDS", "2000"), dataplane.EnvOr("BENCH_CS_VUS", "32")
	const address = "127.0.0.64"
	node, _ := tlsOptionalNode(b, dataplane.Node{Address: address, JMXPort: 7264})
	if msg, err := exec.Command("taskset", "-a", "-p", "-c", serverCPUs, strconv.Itoa(node.Pid())).CombinedOutput(); err != nil {
		b.Fatalf("pinning Cassandra to CPU %s: %v\n%s", serverCPUs, err, msg)
	}
	// A key directory holds exactly what its configuration uses, as the operator's Secret does.
	profiles := []struct{ name, cipher, signature, keys string }{
		{"none", "", "", ""},
		{"AES-256-GCM", "AES-GCM", "", dataplane.ClientKeys(b, fieldcrypt.CipherAESGCM, fieldcrypt.SignatureNone)},
		{"AES-256-GCM + Ed25519", "AES-GCM", "Ed25519", dataplane.ClientKeys(b, fieldcrypt.CipherAESGCM, fieldcrypt.SignatureEd25519)},
	}
	envFor := func(size string, p int) map[string]string {
		e := map[string]string{"CQL_HOSTS": node.NativeAddress(), "CQL_KEYSPACE": fmt.Sprintf("cs_%s_%d", size, p),
			"YCSB_RECORD_COUNT": records, "YCSB_VUS": vus, "YCSB_FIELD_LENGTH": size}
		if c := profiles[p].cipher; c != "" {
			e["YCSB_CLIENT_CIPHER"], e["YCSB_CLIENT_KEY_DIR"] = c, profiles[p].keys
		}
		if s := profiles[p].signature; s != "" {
			e["YCSB_CLIENT_SIGNATURE"] = s
		}
		return e
	}
	order := rand.New(rand.NewPCG(4, 2)) // fixed: a rerun runs the same schedule
	var report strings.Builder
	fmt.Fprintf(&report, "| field length | protection | median ops/s | throughput overhead [95%% CI] | median ops per client CPU-s | client CPU overhead [95%% CI] |\n|---|---|---|---|---|---|\n")
	for _, size := range sizes {
		for p := range profiles {
			s, log, err := runK6(b, merge(envFor(size, p), map[string]string{"YCSB_PHASE": "load"}))
			if err != nil || s.Errors > 0 {
				b.Fatalf("load %s bytes %s: %v %s\n%s", size, profiles[p].name, err, s.FirstError, log)
			}
		}
		throughput := make([][]float64, len(profiles))
		perCPU := make([][]float64, len(profiles))
		for r := range rounds {
			for _, p := range order.Perm(len(profiles)) {
				trace := &cpuTrace{}
				s, log, err := k6Command{env: merge(envFor(size, p), map[string]string{"YCSB_WORKLOAD": "A", "YCSB_WARMUP": "2s", "YCSB_DURATION": duration}),
					cpus: clientCPUs, cpu: trace}.run(b)
				if err != nil || s.Errors > 0 {
					b.Fatalf("%s bytes %s round %d: %v %s\n%s", size, profiles[p].name, r, err, s.FirstError, log)
				}
				cpu := trace.between(b, s.Start, s.End)
				throughput[p] = append(throughput[p], s.Throughput())
				perCPU[p] = append(perCPU[p], float64(s.Operations)/cpu)
				b.Logf("%s bytes, %s, round %d: %.0f ops/s, %.0f ops per client CPU-s", size, profiles[p].name, r+1, s.Throughput(), float64(s.Operations)/cpu)
			}
		}
		for p := range profiles {
			row := fmt.Sprintf("| %s | %s | %.0f | ", size, profiles[p].name, stats.Median(throughput[p]))
			if p == 0 {
				row += fmt.Sprintf("baseline | %.0f | baseline |", stats.Median(perCPU[p]))
			} else {
				row += stats.ComparePaired(throughput[0], throughput[p]).Summary() + fmt.Sprintf(" | %.0f | ", stats.Median(perCPU[p])) +
					stats.ComparePaired(perCPU[0], perCPU[p]).Summary() + " |"
			}
			fmt.Fprintln(&report, row)
		}
	}
	b.Logf("workload A, %s records of 10 fields, %s users, %s rounds of %s runs after a 2 s warm-up, Cassandra on CPU %s, the client on CPU %s:\n%s",
		records, vus, strconv.Itoa(rounds), duration, serverCPUs, clientCPUs, report.String())
	dataplane.SaveReport(b, "bench-client-side", "report.md", report.String())
}
