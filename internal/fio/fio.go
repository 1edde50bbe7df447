// Package fio runs fio, the storage benchmark, the way a DatastoreBenchmark's storage workload
// does (seed 002's SQLIO runs), and reads its JSON report into a benchmark summary.
package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/benchresult"
)

// Driver names fio's summaries.
const Driver = "fio"

// FileName of the file fio reads or writes, in Job.Dir.
const FileName = "fio.data"

// Job is one measured fio run.
type Job struct {
	// Dir holds the file: the scratch volume's directory, encrypted or not.
	Dir     string
	Pattern v1alpha1.StoragePattern
	// BlockSize and FileSize in bytes.
	BlockSize, FileSize int64
	// Limit caps a random pattern's run; sequential ones go over the whole file.
	Limit time.Duration
}

// rw is fio's name for the pattern.
var rw = map[v1alpha1.StoragePattern]string{
	v1alpha1.StorageSequentialRead:  "read",
	v1alpha1.StorageSequentialWrite: "write",
	v1alpha1.StorageRandomRead:      "randread",
	v1alpha1.StorageRandomWrite:     "randwrite",
}

// Validate refuses what fio would read as something else: fio splits file names at ':'.
func (j Job) Validate() error {
	switch {
	case !filepath.IsAbs(j.Dir) || strings.ContainsAny(j.Dir, ":,\n") || filepath.Clean(j.Dir) != j.Dir:
		return fmt.Errorf("--dir %q must be a clean absolute path without ':' or ','", j.Dir)
	case rw[j.Pattern] == "":
		return fmt.Errorf("--pattern %q is not one of SequentialRead, SequentialWrite, RandomRead, RandomWrite", j.Pattern)
	case j.BlockSize < 4096 || j.BlockSize%4096 != 0:
		return fmt.Errorf("--block-size-kib must be a multiple of 4, at least 4")
	case j.FileSize < 4*j.BlockSize:
		return fmt.Errorf("--file-size-mib must hold at least four blocks")
	case j.Limit < time.Second:
		return fmt.Errorf("--duration must be at least 1s")
	}
	return nil
}

func (j Job) writes() bool { return strings.Contains(rw[j.Pattern], "write") }

func (j Job) random() bool { return strings.HasPrefix(rw[j.Pattern], "rand") }

// layoutArgs lay the file out before the measured run, as SQLIO's test file exists before
// its runs: a read then finds data, and a write overwrites a file of the same size.
func (j Job) layoutArgs() []string {
	return []string{"--name=layout", "--filename=" + filepath.Join(j.Dir, FileName), "--rw=read",
		"--size=" + strconv.FormatInt(j.FileSize, 10), "--create_only=1", "--create_fsync=1", "--output-format=json"}
}

// args of the measured run: one request at a time (psync) through the page cache, as a
// datastore reads and writes; the file's cache dropped first (invalidate), writes fsynced at
// the end (end_fsync), so every byte goes through the volume and its cipher.
func (j Job) args() []string {
	a := []string{"--name=" + rw[j.Pattern], "--filename=" + filepath.Join(j.Dir, FileName), "--rw=" + rw[j.Pattern],
		"--bs=" + strconv.FormatInt(j.BlockSize, 10), "--size=" + strconv.FormatInt(j.FileSize, 10),
		"--ioengine=psync", "--invalidate=1", "--output-format=json"}
	if j.writes() {
		a = append(a, "--end_fsync=1")
	}
	if j.random() {
		a = append(a, "--runtime="+strconv.Itoa(int(j.Limit.Seconds())))
	}
	return a
}

// Run lays the file out, then measures; the summary's window is the measured fio's wall time,
// its CPU that process's user and system time (the kernel's writeback and decryption workers
// run outside it).
func Run(ctx context.Context, fio string, j Job) (benchresult.Summary, error) {
	if err := j.Validate(); err != nil {
		return benchresult.Summary{}, err
	}
	// A plain scratch volume has no directory yet; an encrypted one has it from its init container.
	if err := os.MkdirAll(j.Dir, 0o700); err != nil {
		return benchresult.Summary{}, err
	}
	if _, _, err := run(ctx, fio, j.layoutArgs()); err != nil {
		return benchresult.Summary{}, fmt.Errorf("laying out the file: %w", err)
	}
	start := time.Now()
	out, cpu, err := run(ctx, fio, j.args())
	if err != nil {
		return benchresult.Summary{}, err
	}
	return Summarize(out, j, start, time.Now(), cpu)
}

func run(ctx context.Context, fio string, args []string) ([]byte, time.Duration, error) {
	cmd := exec.CommandContext(ctx, fio, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("fio %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var cpu time.Duration
	if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	return out, cpu, nil
}

// report is the part of fio's JSON output a summary needs.
type report struct {
	Jobs []struct {
		Error int  `json:"error"`
		Read  side `json:"read"`
		Write side `json:"write"`
	} `json:"jobs"`
}

type side struct {
	IOBytes  int64 `json:"io_bytes"`
	TotalIOs int64 `json:"total_ios"`
	ClatNs   struct {
		Max        float64            `json:"max"`
		Percentile map[string]float64 `json:"percentile"`
	} `json:"clat_ns"`
}

// Summarize reads fio's JSON report of j, measured from start to end with cpu of fio's time.
func Summarize(out []byte, j Job, start, end time.Time, cpu time.Duration) (benchresult.Summary, error) {
	// fio may print notes before its JSON.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		return benchresult.Summary{}, fmt.Errorf("fio's report: %w", err)
	}
	if len(r.Jobs) != 1 {
		return benchresult.Summary{}, fmt.Errorf("fio's report has %d jobs, not 1", len(r.Jobs))
	}
	job := r.Jobs[0]
	s, op := job.Read, "read"
	if j.writes() {
		s, op = job.Write, "write"
	}
	sum := benchresult.Summary{Driver: Driver, Phase: "run", Start: start, End: end,
		Operations: s.TotalIOs, Bytes: s.IOBytes, ClientCPUSeconds: cpu.Seconds()}
	if job.Error != 0 {
		sum.Errors, sum.FirstError = 1, fmt.Sprintf("fio's job ended with error %d (%s)", job.Error, syscall.Errno(job.Error))
	}
	if s.TotalIOs == 0 {
		return sum, errors.New("fio's report counts no " + op)
	}
	micros := func(p string) int64 { return int64(s.ClatNs.Percentile[p]/1000 + 0.5) }
	sum.Latencies = []benchresult.Latency{{Operation: op, Count: s.TotalIOs,
		P50: micros("50.000000"), P95: micros("95.000000"), P99: micros("99.000000"), Max: int64(s.ClatNs.Max/1000 + 0.5)}}
	return sum, nil
}
