// Command kube-apiserver is upstream's kube-apiserver entry point, built through this wrapper
// module because k8s.io/kubernetes cannot be `go install`ed: its go.mod points every staging
// module at a local path. See hack/envtest-assets.sh.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
