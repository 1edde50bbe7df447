#!/usr/bin/env bash
# Builds the two binaries envtest needs (kube-apiserver and etcd) from the Go module proxy and
# caches them under bin/envtest/<versions>/. Prints that directory on stdout, so callers can use
#   KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)
# Upstream's setup-envtest downloads prebuilt tarballs from GitHub, which these machines cannot
# reach; building from source takes ~9 minutes on 2 cores, once.
set -euo pipefail

KUBE_VERSION=v1.36.3   # must match the require line in hack/envtest/kube-apiserver/go.mod
ETCD_VERSION=v3.6.8    # must match hack/envtest/etcd/go.mod (the etcd line k8s v1.36.3 pins)

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bin/envtest/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"
log() { echo "envtest-assets: $*" >&2; }

build() { # name, wrapper dir, extra ldflags
  local name=$1 dir=$2 ldflags=${3:-}
  if [[ -x "$out/$name" ]]; then
    log "$name cached at $out/$name"
    return
  fi
  log "building $name from the Go module proxy (one time; kube-apiserver takes ~8 min on 2 cores)..."
  local start=$SECONDS
  mkdir -p "$out"
  (cd "$dir" && CGO_ENABLED=0 GOWORK=off go build -mod=readonly -buildvcs=false -trimpath \
      -ldflags "-s -w $ldflags" -o "$out/$name.tmp" .)
  mv "$out/$name.tmp" "$out/$name"   # atomic: an interrupted build never looks cached
  log "built $name in $((SECONDS - start))s"
}

grep -q "k8s.io/kubernetes $KUBE_VERSION" "$root/hack/envtest/kube-apiserver/go.mod" ||
  { log "KUBE_VERSION $KUBE_VERSION differs from hack/envtest/kube-apiserver/go.mod"; exit 1; }
grep -q "go.etcd.io/etcd/server/v3 $ETCD_VERSION" "$root/hack/envtest/etcd/go.mod" ||
  { log "ETCD_VERSION $ETCD_VERSION differs from hack/envtest/etcd/go.mod"; exit 1; }

minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
build etcd "$root/hack/envtest/etcd"
build kube-apiserver "$root/hack/envtest/kube-apiserver" \
  "-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

echo "$out"
