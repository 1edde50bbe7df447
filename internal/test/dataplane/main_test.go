package dataplane

import (
	"flag"
	"os"
	"testing"

	"secured.dev/operator/internal/test/tier"
)

// TestMain: every test here runs real datastores, KDCs or tunnels.
func TestMain(m *testing.M) {
	flag.Parse()
	keepJVMDefaultsWhenBenchmarking()
	tier.FullPackage("dataplane", "real Cassandra, HBase, KDC and tunnel processes")
	code := m.Run()
	removeCompiledJava()
	os.Exit(code)
}

// inParallel lets the test run beside the package's other inParallel tests, two at a time (go
// test's -parallel is GOMAXPROCS), once the others are done. Run one at a time, the package kept
// 1.07 of two cores busy over its 46 minutes (50 CPU-minutes): most of a test is waiting for
// rings, Masters and regions. Each of these tests runs its processes on loopback addresses,
// ports and JMX ports no other of them uses, and what any of them captures on the wire it checks
// for a marker of its own. At most one of them may start an HBase cluster: its ZooKeeper listens
// on every address, so a second cluster's Master would reach the first one's.
func inParallel(t *testing.T) {
	t.Parallel()
}
