// Package tier sorts tests into the project's tiers. go test -short (make test-unit) runs the
// fast tier: pure logic and golden files. Tests that start an API server, real datastores or
// tools, or build binaries belong to the full tier, which make test runs.
package tier

import (
	"fmt"
	"os"
	"testing"
)

// Full marks a test of the full tier; needs says what it starts, for the -short listing.
func Full(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("full tier (needs %s): make test runs it", needs)
	}
}

// FullPackage is for a TestMain whose every test needs what the package starts: with -short
// it exits before starting anything. Call it after flag parsing (testing.Init and flag.Parse).
func FullPackage(pkg, needs string) {
	if testing.Short() {
		fmt.Printf("%s: full tier (needs %s): make test runs it\n", pkg, needs)
		os.Exit(0)
	}
}
