#!/usr/bin/env bash
# Builds the container images a Kubernetes v1.36 node runs (what kubeadm lists for the image
# repository secured.dev/k8s, plus the pod network) from binaries built out of the Go module
# proxy and a Debian base from the Debian mirror. Each image is built once and saved as a
# tarball in bin/images/; prints those tarballs, one per line. Needs a Docker engine
# (hack/kind/docker-up.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
REPO=$K8S_IMAGE_REPO
log() { echo "kube-images: $*" >&2; }
export DOCKER_BUILDKIT=0 # the classic builder needs nothing from a registry for FROM scratch

"$root/hack/build/kube-binaries.sh" kube-apiserver kube-controller-manager kube-scheduler kube-proxy >/dev/null
kube() { echo "$root/bin/$1/$KUBE_VERSION/$1"; }
etcd=$("$root/hack/build/build-go-binary.sh" etcd "$root/hack/build/etcd" . "$ETCD_VERSION")
coredns=$("$root/hack/build/build-go-binary.sh" coredns "$root/hack/build/coredns" . "$COREDNS_VERSION")
# Our own programs are versioned by the hash of their source.
src_version() { cat "$root"/hack/kind/"$1"/*.go | sha256sum | cut -c1-12; }
pause=$("$root/hack/build/build-go-binary.sh" pause "$root" ./hack/kind/pause "$(src_version pause)")
podnet=$("$root/hack/build/build-go-binary.sh" podnet "$root" ./hack/kind/podnet "$(src_version podnet)")

# image TAG BASE BINARY PATH_IN_IMAGE [ENTRYPOINT]: one binary on a base, saved as a tarball.
image() {
  local tag=$1 base=$2 bin=$3 path=$4 entrypoint=${5:-}
  local tar="$root/bin/images/${tag//[\/:]/_}.tar"
  if [[ -f $tar ]]; then
    echo "$tar"
    return
  fi
  log "building $tag"
  local ctx
  ctx=$(mktemp -d)
  cp "$bin" "$ctx/binary"
  {
    echo "FROM $base"
    echo "ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin"
    echo "COPY binary $path"
    [[ -n $entrypoint ]] && echo "ENTRYPOINT [\"$entrypoint\"]"
  } >"$ctx/Dockerfile"
  docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
  rm -rf "$ctx"
  mkdir -p "$(dirname "$tar")"
  docker save -o "$tar.tmp" "$tag"
  mv "$tar.tmp" "$tar"
  echo "$tar"
}

# A Debian base for the components that shell out to iptables, conntrack or ip.
base_tar=$("$root/hack/kind/rootfs.sh" k8s-base iptables conntrack iproute2 kmod ca-certificates)
base_tag="$REPO/debian-base:bookworm-$(basename "$base_tar" .tar | sed 's/^k8s-base-//')"
if ! docker image inspect "$base_tag" >/dev/null 2>&1; then
  log "importing $base_tag"
  docker import "$base_tar" "$base_tag" >/dev/null
fi

for c in kube-apiserver kube-controller-manager kube-scheduler; do
  image "$REPO/$c:$KUBE_VERSION" scratch "$(kube $c)" "/usr/local/bin/$c"
done
image "$REPO/kube-proxy:$KUBE_VERSION" "$base_tag" "$(kube kube-proxy)" /usr/local/bin/kube-proxy
image "$REPO/etcd:$ETCD_IMAGE_TAG" scratch "$etcd" /usr/local/bin/etcd
image "$REPO/coredns:$COREDNS_VERSION" scratch "$coredns" /coredns /coredns
image "$REPO/pause:$PAUSE_TAG" scratch "$pause" /pause /pause
image "$REPO/podnet:$(src_version podnet)" "$base_tag" "$podnet" /usr/local/bin/podnet /usr/local/bin/podnet
