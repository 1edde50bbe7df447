package fio

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"secured.dev/operator/api/v1alpha1"
)

// Each pattern runs on real fio over a small file: a sequential pattern moves the whole file
// once, a random one the blocks it reached, and the summary counts them as fio did.
func TestEveryPatternRunsOnFioAndIsSummarised(t *testing.T) {
	for _, p := range []v1alpha1.StoragePattern{v1alpha1.StorageSequentialWrite, v1alpha1.StorageSequentialRead, v1alpha1.StorageRandomRead, v1alpha1.StorageRandomWrite} {
		t.Run(string(p), func(t *testing.T) {
			j := Job{Dir: t.TempDir(), Pattern: p, BlockSize: 8 << 10, FileSize: 8 << 20, Limit: 5 * time.Second}
			s, err := Run(context.Background(), "fio", j)
			if err != nil {
				t.Fatal(err)
			}
			op := "read"
			if strings.Contains(string(p), "Write") {
				op = "write"
			}
			if len(s.Latencies) != 1 || s.Latencies[0].Operation != op || s.Latencies[0].Count != s.Operations || s.Latencies[0].P50 <= 0 || s.Latencies[0].Max < s.Latencies[0].P99 {
				t.Errorf("latencies %+v for %d %ss", s.Latencies, s.Operations, op)
			}
			if s.Bytes != s.Operations*j.BlockSize || s.Errors != 0 || s.Driver != Driver {
				t.Errorf("%d I/Os of %d bytes, but %d bytes, %d errors, driver %q", s.Operations, j.BlockSize, s.Bytes, s.Errors, s.Driver)
			}
			if whole := j.FileSize / j.BlockSize; s.Operations != whole {
				// 8 MiB is covered long before the limit, random or not.
				t.Errorf("%d I/Os; the file holds %d blocks", s.Operations, whole)
			}
			if !s.End.After(s.Start) || s.ClientCPUSeconds <= 0 {
				t.Errorf("window %s..%s, CPU %.3f s", s.Start, s.End, s.ClientCPUSeconds)
			}
			if _, err := s.Marshal(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestWritesAreFsyncedAndOnlyRandomPatternsAreCapped(t *testing.T) {
	for p, want := range map[v1alpha1.StoragePattern][]string{
		v1alpha1.StorageSequentialRead:  {"--rw=read", "--invalidate=1"},
		v1alpha1.StorageSequentialWrite: {"--rw=write", "--end_fsync=1"},
		v1alpha1.StorageRandomRead:      {"--rw=randread", "--runtime=30"},
		v1alpha1.StorageRandomWrite:     {"--rw=randwrite", "--end_fsync=1", "--runtime=30"},
	} {
		args := Job{Dir: "/scratch", Pattern: p, BlockSize: 4096, FileSize: 1 << 20, Limit: 30 * time.Second}.args()
		for _, w := range want {
			if !slices.Contains(args, w) {
				t.Errorf("%s: %v lacks %s", p, args, w)
			}
		}
		if capped := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--runtime=") }); capped != strings.HasPrefix(string(p), "Random") {
			t.Errorf("%s: capped %v: %v", p, capped, args)
		}
	}
}

func TestJobsFioWouldMisreadAreRefused(t *testing.T) {
	good := Job{Dir: "/scratch/data", Pattern: v1alpha1.StorageRandomRead, BlockSize: 8192, FileSize: 1 << 20, Limit: time.Minute}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, j := range map[string]Job{
		"relative dir":        {Dir: "scratch", Pattern: good.Pattern, BlockSize: good.BlockSize, FileSize: good.FileSize, Limit: good.Limit},
		"two files":           {Dir: "/scratch:/etc", Pattern: good.Pattern, BlockSize: good.BlockSize, FileSize: good.FileSize, Limit: good.Limit},
		"unclean dir":         {Dir: "/scratch/../etc", Pattern: good.Pattern, BlockSize: good.BlockSize, FileSize: good.FileSize, Limit: good.Limit},
		"unknown pattern":     {Dir: good.Dir, Pattern: "Mixed", BlockSize: good.BlockSize, FileSize: good.FileSize, Limit: good.Limit},
		"odd block":           {Dir: good.Dir, Pattern: good.Pattern, BlockSize: 5000, FileSize: good.FileSize, Limit: good.Limit},
		"file under 4 blocks": {Dir: good.Dir, Pattern: good.Pattern, BlockSize: good.BlockSize, FileSize: good.BlockSize, Limit: good.Limit},
	} {
		if err := j.Validate(); err == nil {
			t.Errorf("%s: accepted %+v", name, j)
		}
	}
}
