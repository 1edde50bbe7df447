package dataplane

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"secured.dev/operator/internal/test/tier"
)

// TestMain: every test here runs real datastores, KDCs or tunnels.
func TestMain(m *testing.M) {
	flag.Parse()
	freeParallelSlots()
	keepJVMDefaultsWhenBenchmarking()
	tier.FullPackage("dataplane", "real Cassandra, HBase, KDC and tunnel processes")
	code := m.Run()
	removeCompiledJava()
	os.Exit(code)
}

// The package's tests run in two lanes, one Cassandra test beside one HBase test, because a test
// mostly waits for rings, Masters and regions: run one at a time, the package kept 1.07 of two
// cores busy over its 46 minutes (50 CPU-minutes). Tests of one engine share fixed addresses and
// ports (and an HBase cluster's ZooKeeper listens on every address, so a second cluster's Master
// would reach the first one's), so a lane holds one test at a time. Across the lanes, every test
// uses loopback addresses, ports and JMX ports the other engine's tests do not, or network
// namespaces of its own, and what any of them captures on the wire it filters by its engine's
// ports and checks for a marker of its own. Tests that start neither engine run first, alone.
//
// The HBase lane held twice the Cassandra lane's work and ended 12 minutes after it in CI (46
// minutes for the package), so the tests of a standalone HBase (one JVM, its ZooKeeper on a
// port of its own on 127.0.0.1, its RPC on an address no cluster uses) run in the Cassandra
// lane: beside the HBase lane's clusters, which bind every client port to their own addresses.
var (
	cassandraLane = make(chan struct{}, 1)
	hbaseLane     = make(chan struct{}, 1)
)

// withCassandra runs the test in the Cassandra lane.
func withCassandra(t *testing.T) { inLane(t, cassandraLane) }

// withHBase runs the test in the HBase lane: HBase, HDFS and ZooKeeper.
func withHBase(t *testing.T) { inLane(t, hbaseLane) }

// withStandaloneHBase runs a test of a standalone HBase (StartHBaseStandalone) in the Cassandra
// lane.
func withStandaloneHBase(t *testing.T) { inLane(t, cassandraLane) }

func inLane(t *testing.T, lane chan struct{}) {
	t.Parallel()
	lane <- struct{}{}
	t.Cleanup(func() { <-lane }) // registered first, so it runs after every other cleanup
}

// laneSlots: go test runs at most -parallel tests at once (GOMAXPROCS by default, 2 here), and
// a test waiting for its lane holds one of them: two HBase tests could take both and leave the
// Cassandra lane idle. The lanes bound what runs; the slots must not. An explicit -parallel
// still wins.
const laneSlots = 64

func freeParallelSlots() {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(laneSlots)); err != nil {
			panic(err) // the testing package always defines it
		}
	}
}
