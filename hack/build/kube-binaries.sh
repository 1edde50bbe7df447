#!/usr/bin/env bash
# kube-binaries.sh NAME... builds Kubernetes binaries (kube-apiserver, kubelet, kubeadm, kubectl,
# kube-controller-manager, kube-scheduler, kube-proxy) at KUBE_VERSION from the Go module proxy
# through the wrapper module hack/build/kube, caches them in bin/<name>/<version>/, and prints the
# directory of each. On 2 cores the first takes ~4-8 minutes, the others ~1-3 each.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
grep -q "k8s.io/kubernetes $KUBE_VERSION" "$root/hack/build/kube/go.mod" ||
  { echo "kube-binaries: KUBE_VERSION $KUBE_VERSION differs from hack/build/kube/go.mod" >&2; exit 1; }
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
ldflags="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
for name in "$@"; do
  [[ -d $root/hack/build/kube/cmd/$name ]] || { echo "kube-binaries: no wrapper for $name in hack/build/kube/cmd" >&2; exit 1; }
  bin=$("$root/hack/build/build-go-binary.sh" "$name" "$root/hack/build/kube" "./cmd/$name" "$KUBE_VERSION" "$ldflags")
  dirname "$bin"
done
