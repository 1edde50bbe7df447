#!/usr/bin/env bash
# Builds the two binaries envtest needs (kube-apiserver and etcd) from the Go module proxy,
# links them into bin/envtest/<versions>/ and prints that directory, so callers can use
#   KUBEBUILDER_ASSETS=$(hack/build/envtest-assets.sh)
# Upstream's setup-envtest downloads prebuilt tarballs from GitHub, which these machines cannot
# reach; building from source takes ~5 minutes on 2 cores, once.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
grep -q "go.etcd.io/etcd/server/v3 $ETCD_VERSION" "$root/hack/build/etcd/go.mod" ||
  { echo "envtest-assets: ETCD_VERSION $ETCD_VERSION differs from hack/build/etcd/go.mod" >&2; exit 1; }

etcd=$("$root/hack/build/build-go-binary.sh" etcd "$root/hack/build/etcd" . "$ETCD_VERSION")
apiserver_dir=$("$root/hack/build/kube-binaries.sh" kube-apiserver)
out="$root/bin/envtest/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$out"
ln -sf "$apiserver_dir/kube-apiserver" "$out/kube-apiserver"
ln -sf "$etcd" "$out/etcd"
echo "$out"
