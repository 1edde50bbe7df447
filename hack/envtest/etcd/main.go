// Command etcd is upstream's etcd server entry point, built from the Go module proxy for envtest.
// See hack/envtest-assets.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
