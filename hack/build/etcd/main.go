// Command etcd is upstream's etcd server entry point, built from the Go module proxy by
// hack/build/build-go-binary.sh (for envtest and the Kind node image).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
