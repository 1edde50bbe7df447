// Command coredns is upstream CoreDNS with its default plugin set, built from the Go module
// proxy (hack/build/build-go-binary.sh) for the offline Kind node image.
package main

import (
	_ "github.com/coredns/coredns/core/plugin" // the plugins of a standard build
	"github.com/coredns/coredns/coremain"
)

func main() {
	coremain.Run()
}
