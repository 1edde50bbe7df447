// Command kubeadm is upstream's kubeadm entry point, built through this wrapper module because
// k8s.io/kubernetes cannot be `go install`ed: its go.mod points every staging module at a local
// path. hack/build/kube-binaries.sh builds it.
package main

import (
	"k8s.io/kubernetes/cmd/kubeadm/app"
	utilerrors "k8s.io/kubernetes/cmd/kubeadm/app/util/errors"
)

func main() {
	utilerrors.HandleError(app.Run())
}
