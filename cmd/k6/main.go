// Command k6 is k6 with the product's YCSB extension ("k6/x/ycsb") compiled in: the main
// xk6 would generate, written out so the build needs only the Go module proxy.
package main

import (
	"os"
	"runtime/debug"

	k6cmd "go.k6.io/k6/cmd"

	_ "secured.dev/operator/internal/k6ycsb"
)

func main() {
	// A load generator trades memory for CPU: at Go's default the collector took 14% of the
	// client's CPU in `make bench-client`. GOGC still wins when set.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	k6cmd.Execute()
}
