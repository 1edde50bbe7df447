// Command kube-controller-manager is upstream's kube-controller-manager entry point, built through this wrapper module because
// k8s.io/kubernetes cannot be `go install`ed: its go.mod points every staging module at a local
// path. hack/build/kube-binaries.sh builds it.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
