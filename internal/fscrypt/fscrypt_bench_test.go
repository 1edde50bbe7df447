//go:build linux

package fscrypt_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/internal/stats"
	"secured.dev/operator/internal/test/dataplane"
)

// BenchmarkEncryptedVolume is `make bench-storage`: what an encrypted volume costs, seed 002's
// question (guest disk encryption in IaaS, measured there with SQLIO), on this machine's kernel.
// One ext4 filesystem on a loop device (direct I/O on its image, so reads reach the disk) holds
// a plain directory and one encrypted by fscrypt (AES-256-XTS). fio runs sequential write and
// read (64 KiB blocks) and random read and write (8 KiB blocks), one request at a time,
// through the page cache as a datastore does, on a file in each; writes end with an fsync,
// reads start with the file's cache dropped, so every byte goes through the cipher.
// Throughput is the bytes moved over the wall time of fio's run, final fsync included. The two directories run once per round in a random order, and
// each job's encrypted figure is compared with the plain one of the same round (paired log
// ratios, Hodges-Lehmann estimate, exact signed-rank interval: internal/stats), on throughput
// and on MB per CPU-second of the whole machine over the job (the kernel encrypts and decrypts
// partly in worker threads, not in fio's own time).
//
// It runs once per invocation whatever b.N is. BENCH_FIO_ROUNDS (6, the fewest with a 95%
// signed-rank interval), BENCH_FIO_SIZE (256m, per file) and BENCH_FIO_RUNTIME (5s, the cap of
// a random job) change its size; the report is also written to bin/bench-storage/report.md.
func BenchmarkEncryptedVolume(b *testing.B) {
	rounds := dataplane.Rounds(b, "BENCH_FIO_ROUNDS")
	size, runtime := dataplane.EnvOr("BENCH_FIO_SIZE", "256m"), dataplane.EnvOr("BENCH_FIO_RUNTIME", "5s")
	bytes, err := parseSize(size)
	if err != nil {
		b.Fatalf("BENCH_FIO_SIZE=%q: %v", size, err)
	}
	_, plain, encrypted := dataplane.PlainAndEncrypted(b, 3*bytes+64<<20)
	dirs := []string{plain, encrypted}
	// Seed 002's SQLIO patterns, a database's: random reads of 8 KiB and sequential writes of
	// 64 KiB; and the other two at the same sizes.
	jobs := []fioJob{
		{"sequential write 64 KiB", "write", "64k", false},
		{"sequential read 64 KiB", "read", "64k", false},
		{"random read 8 KiB", "randread", "8k", true},
		{"random write 8 KiB", "randwrite", "8k", true},
	}
	// [job][directory] per round
	mbps := make([][2][]float64, len(jobs))
	iops := make([][2][]float64, len(jobs))
	perCPU := make([][2][]float64, len(jobs))
	order := rand.New(rand.NewPCG(0, 2)) // fixed: a rerun runs the same schedule
	for r := range rounds {
		for _, d := range order.Perm(len(dirs)) {
			for j, job := range jobs {
				res := job.run(b, filepath.Join(dirs[d], "file"), size, runtime)
				mbps[j][d] = append(mbps[j][d], res.bytesPerSecond/1e6)
				iops[j][d] = append(iops[j][d], res.iops)
				perCPU[j][d] = append(perCPU[j][d], res.bytes/1e6/res.cpuSeconds)
				b.Logf("round %d, %s, %s: %.1f MB/s, %.0f IOPS, %.1f MB per CPU-s", r+1, filepath.Base(dirs[d]), job.name,
					res.bytesPerSecond/1e6, res.iops, res.bytes/1e6/res.cpuSeconds)
			}
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "| job | plain MB/s | encrypted MB/s | throughput overhead [95%% CI] | plain IOPS | encrypted IOPS | plain MB per CPU-s | encrypted MB per CPU-s | CPU overhead [95%% CI] |\n|---|---|---|---|---|---|---|---|---|\n")
	for j, job := range jobs {
		fmt.Fprintf(&report, "| %s | %.1f | %.1f | %s | %.0f | %.0f | %.1f | %.1f | %s |\n", job.name,
			stats.Median(mbps[j][0]), stats.Median(mbps[j][1]), stats.ComparePaired(mbps[j][0], mbps[j][1]).Summary(),
			stats.Median(iops[j][0]), stats.Median(iops[j][1]),
			stats.Median(perCPU[j][0]), stats.Median(perCPU[j][1]), stats.ComparePaired(perCPU[j][0], perCPU[j][1]).Summary())
	}
	b.Logf("fio on ext4 (loop device, direct I/O on its image), %s per file, random jobs capped at %s, %d rounds, kernel %s, cipher %s:\n%s",
		size, runtime, rounds, kernelRelease(b), kernelCipher(), report.String())
	dataplane.SaveReport(b, "bench-storage", "report.md", report.String())
}

// fioJob is one fio job: a name for the report, fio's rw, the block size, and whether it is
// capped by BENCH_FIO_RUNTIME (random jobs) rather than run over the whole file.
type fioJob struct {
	name, rw, blockSize string
	capped              bool
}

type fioResult struct {
	bytes, bytesPerSecond, iops, cpuSeconds float64
}

func (j fioJob) run(b *testing.B, file, size, runtime string) fioResult {
	b.Helper()
	args := []string{"--name=" + j.rw, "--filename=" + file, "--rw=" + j.rw, "--bs=" + j.blockSize, "--size=" + size,
		"--ioengine=psync", "--invalidate=1", "--end_fsync=1", "--output-format=json"}
	if j.capped {
		args = append(args, "--runtime="+runtime)
	}
	before, began := dataplane.MachineCPU(b), time.Now()
	out, err := exec.Command("fio", args...).Output()
	if err != nil {
		b.Fatalf("fio %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// fio's own bandwidth may leave out the final fsync; the wall time holds it.
	wall, cpu := time.Since(began).Seconds(), dataplane.MachineCPU(b)-before
	var report struct {
		Jobs []struct {
			Read, Write struct {
				IOBytes float64 `json:"io_bytes"`
				IOs     float64 `json:"total_ios"`
			}
		}
	}
	if err := json.Unmarshal(out, &report); err != nil || len(report.Jobs) != 1 {
		b.Fatalf("fio's report: %v\n%s", err, out)
	}
	side := report.Jobs[0].Read
	if strings.Contains(j.rw, "write") {
		side = report.Jobs[0].Write
	}
	if side.IOBytes == 0 || cpu <= 0 {
		b.Fatalf("fio %s moved %v bytes in %v CPU-seconds:\n%s", j.rw, side.IOBytes, cpu, out)
	}
	return fioResult{bytes: side.IOBytes, bytesPerSecond: side.IOBytes / wall, iops: side.IOs / wall, cpuSeconds: cpu}
}

func kernelRelease(b *testing.B) string {
	out, err := exec.Command("uname", "-r").Output()
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// kernelCipher is the implementation the kernel chose for AES-XTS (aesni_intel's
// "xts-aes-aesni" with AES-NI, the generic "aes-fixed-time" without), from /proc/crypto.
func kernelCipher() string {
	b, err := os.ReadFile("/proc/crypto")
	if err != nil {
		return "unknown"
	}
	best, priority := "unknown", -1
	for _, entry := range strings.Split(string(b), "\n\n") {
		fields := map[string]string{}
		for _, line := range strings.Split(entry, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		if p, err := strconv.Atoi(fields["priority"]); err == nil && fields["name"] == "xts(aes)" && p > priority {
			best, priority = fields["driver"], p
		}
	}
	return best
}

func parseSize(s string) (int64, error) {
	mult := map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}
	n, err := strconv.ParseInt(strings.TrimRight(strings.ToLower(s), "kmg"), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("give a size such as 256m")
	}
	if m, ok := mult[strings.ToLower(s)[len(s)-1]]; ok {
		n *= m
	}
	return n, nil
}
