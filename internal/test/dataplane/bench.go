package dataplane

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"secured.dev/operator/internal/test/samples"
)

// EnvOr is the environment variable name, or fallback when it is unset or empty: how the
// datastore benchmarks take their sizes.
func EnvOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// Rounds is a randomized benchmark's number of rounds from the environment variable name: 6 by
// default, the fewest with which a paired signed-rank test gives a 95% interval, and at least 2.
func Rounds(t testing.TB, name string) int {
	t.Helper()
	rounds, err := strconv.Atoi(EnvOr(name, "6"))
	if err != nil || rounds < 2 {
		t.Fatalf("%s=%q: give 2 or more", name, os.Getenv(name))
	}
	return rounds
}

// SaveReport writes a benchmark's report to bin/<dir>/<file>, where the make target says it is.
func SaveReport(t testing.TB, dir, file, report string) {
	t.Helper()
	out := filepath.Join(samples.RepoRoot(), "bin", dir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, file), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
}
