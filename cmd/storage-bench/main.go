// Command storage-bench is the client of a DatastoreBenchmark's storage workload: it runs fio
// (internal/fio) on the scratch volume the Job mounts and writes the run's summary where the
// kubelet reads the container's termination message, as the k6 and YCSB clients do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/fio"
)

func main() {
	var j fio.Job
	var pattern, summary, fioPath string
	var blockKiB, fileMiB int64
	flag.StringVar(&j.Dir, "dir", "", "directory of the scratch volume the file goes to")
	flag.StringVar(&pattern, "pattern", "", "SequentialRead, SequentialWrite, RandomRead or RandomWrite")
	flag.Int64Var(&blockKiB, "block-size-kib", 64, "size of each I/O, in KiB")
	flag.Int64Var(&fileMiB, "file-size-mib", 1024, "size of the file, in MiB")
	flag.DurationVar(&j.Limit, "duration", time.Minute, "the longest a random pattern runs")
	flag.StringVar(&summary, "summary", "/dev/termination-log", "file the run's summary (benchresult JSON) is written to")
	flag.StringVar(&fioPath, "fio", "fio", "the fio binary")
	flag.Parse()
	j.Pattern, j.BlockSize, j.FileSize = v1alpha1.StoragePattern(pattern), blockKiB<<10, fileMiB<<20

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, j, fioPath, summary); err != nil {
		fmt.Fprintln(os.Stderr, "storage-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, j fio.Job, fioPath, summary string) error {
	fmt.Printf("storage-bench: %s, %d KiB blocks, %d MiB file in %s\n", j.Pattern, j.BlockSize>>10, j.FileSize>>20, j.Dir)
	s, err := fio.Run(ctx, fioPath, j)
	if err != nil {
		return err
	}
	b, err := s.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(summary, b, 0o644); err != nil {
		return err
	}
	d := s.End.Sub(s.Start).Seconds()
	fmt.Printf("storage-bench: %d I/Os, %.1f MB/s, %.0f IOPS over %.1f s, fio's CPU %.2f s\n", s.Operations, float64(s.Bytes)/d/1e6, float64(s.Operations)/d, d, s.ClientCPUSeconds)
	return nil
}
