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
	tier.FullPackage("dataplane", "real Cassandra, HBase, KDC and tunnel processes")
	os.Exit(m.Run())
}
