#!/usr/bin/env bash
# Builds the Kind clusters' add-ons from the Go module proxy into images saved in bin/images/:
# cert-manager v1.11.5's controller, webhook and cainjector (hack/build/cert-manager wrapper module),
# tagged secured.dev/cert-manager-<name>:v1.11.5, and rancher's local-path-provisioner
# (hack/build/local-path-provisioner), the default StorageClass, and our NetworkPolicy enforcer
# (hack/kind/netpol) on a Debian base with nft. Prints "name=image tarball" lines.
# Users with a registry install current releases from their charts instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
export DOCKER_BUILDKIT=0

# image NAME TAG MODULE_DIR PACKAGE VERSION [LDFLAGS]: the binary on scratch, as a non-root user.
image() {
  local name=$1 tag=$2 dir=$3 pkg=$4 version=$5 ldflags=${6:-}
  local tar="$root/bin/images/${tag//[\/:]/_}.tar"
  if [[ ! -f $tar ]]; then
    local bin ctx
    bin=$("$root/hack/build/build-go-binary.sh" "$name" "$dir" "$pkg" "$version" "$ldflags")
    ctx=$(mktemp -d)
    cp "$bin" "$ctx/app"
    printf 'FROM scratch\nCOPY app /app\nUSER 1000:1000\nENTRYPOINT ["/app"]\n' >"$ctx/Dockerfile"
    docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
    rm -rf "$ctx"
    mkdir -p "$(dirname "$tar")"
    docker save -o "$tar.tmp" "$tag" && mv "$tar.tmp" "$tar"
  fi
  echo "$name=$tag $tar"
}

for name in controller webhook cainjector; do
  image "cert-manager-$name" "secured.dev/cert-manager-$name:$CERT_MANAGER_VERSION" "$root/hack/build/cert-manager" "./cmd/$name" \
    "$CERT_MANAGER_VERSION" "-X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$CERT_MANAGER_VERSION"
done
image local-path-provisioner "secured.dev/local-path-provisioner:$LOCAL_PATH_PROVISIONER_VERSION" \
  "$root/hack/build/local-path-provisioner" github.com/rancher/local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION"

# The NetworkPolicy enforcer runs nft, so it needs Debian's nftables beside it; runs as root with
# NET_ADMIN on the host network, as every pod-network component does.
netpol_version=$(cat "$root"/hack/kind/netpol/*.go "$root/go.sum" | sha256sum | cut -c1-12)
netpol_tag="secured.dev/netpol:$netpol_version"
netpol_tar="$root/bin/images/${netpol_tag//[\/:]/_}.tar"
if [[ ! -f $netpol_tar ]]; then
  base_tar=$("$root/hack/kind/rootfs.sh" netpol-base nftables)
  base_tag="secured.dev/netpol-base:$(basename "$base_tar" .tar | sed 's/^netpol-base-//')"
  docker image inspect "$base_tag" >/dev/null 2>&1 || docker import "$base_tar" "$base_tag" >/dev/null
  bin=$("$root/hack/build/build-go-binary.sh" netpol "$root" ./hack/kind/netpol "$netpol_version")
  ctx=$(mktemp -d)
  cp "$bin" "$ctx/netpol"
  printf 'FROM %s\nCOPY netpol /usr/local/bin/netpol\nENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nENTRYPOINT ["/usr/local/bin/netpol"]\n' "$base_tag" >"$ctx/Dockerfile"
  docker build -q -t "$netpol_tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
  rm -rf "$ctx"
  mkdir -p "$(dirname "$netpol_tar")"
  docker save -o "$netpol_tar.tmp" "$netpol_tag" && mv "$netpol_tar.tmp" "$netpol_tar"
fi
echo "netpol=$netpol_tag $netpol_tar"
