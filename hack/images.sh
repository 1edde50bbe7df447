#!/usr/bin/env bash
# images.sh: builds the product's container images locally (no registry needed) and, when the
# Kind cluster runs, loads them into it. Each image is FROM scratch or a base built from Debian
# packages, tagged with a hash of its inputs, built once and saved in bin/images/. Prints
# "name=image" lines. Later issues add Cassandra, HBase, the KDC, k6 and VPN images here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/hack/versions.sh"
log() { echo "images: $*" >&2; }
export DOCKER_BUILDKIT=0
"$root/hack/docker-up.sh"

# go_image NAME PACKAGE: a static Go binary of this module on scratch, running as a non-root user.
go_image() {
  local name=$1 pkg=$2 version
  version=$( (cd "$root" && git ls-files --cached --others --exclude-standard go.mod go.sum api internal cmd controllers | xargs sha256sum | sha256sum) | cut -c1-12)
  local tag="secured.dev/$name:$version"
  local tar="$root/bin/images/${tag//[\/:]/_}.tar"
  if [[ ! -f $tar ]]; then
    log "building $tag"
    local bin ctx
    bin=$("$root/hack/build-go-binary.sh" "$name" "$root" "$pkg" "$version")
    ctx=$(mktemp -d)
    cp "$bin" "$ctx/$name"
    printf 'FROM scratch\nCOPY %s /%s\nUSER 65532:65532\nENTRYPOINT ["/%s"]\n' "$name" "$name" "$name" >"$ctx/Dockerfile"
    docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
    rm -rf "$ctx"
    mkdir -p "$(dirname "$tar")"
    docker save -o "$tar.tmp" "$tag" && mv "$tar.tmp" "$tar"
  fi
  echo "$name=$tag $tar"
}

images=(
  "$(go_image manager ./cmd/manager)"
  "$(go_image crypto-labeller ./cmd/crypto-labeller)"
)

kind="$root/bin/kind-cli/$KIND_VERSION/kind"
if [[ -x $kind ]] && "$kind" get clusters 2>/dev/null | grep -qx secured; then
  for line in "${images[@]}"; do
    tar=${line##* }
    log "loading ${line%% *} into the Kind cluster"
    "$kind" load image-archive "$tar" --name secured >/dev/null
  done
fi
printf '%s\n' "${images[@]%% *}"
