#!/usr/bin/env bash
# Builds cert-manager v1.11.5's controller, webhook and cainjector from the Go module proxy
# (hack/cert-manager wrapper module) into images tagged secured.dev/cert-manager-<name>:v1.11.5,
# saved in bin/images/. Prints "name=image tarball" lines. Users with a registry install current
# cert-manager from its Helm chart instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CERT_MANAGER_VERSION=v1.11.5 # hack/cert-manager/go.mod
export DOCKER_BUILDKIT=0
for name in controller webhook cainjector; do
  tag="secured.dev/cert-manager-$name:$CERT_MANAGER_VERSION"
  tar="$root/bin/images/${tag//[\/:]/_}.tar"
  if [[ ! -f $tar ]]; then
    bin=$("$root/hack/build-go-binary.sh" "cert-manager-$name" "$root/hack/cert-manager" "./cmd/$name" "$CERT_MANAGER_VERSION" \
      "-X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$CERT_MANAGER_VERSION")
    ctx=$(mktemp -d)
    cp "$bin" "$ctx/app"
    printf 'FROM scratch\nCOPY app /app\nUSER 1000:1000\nENTRYPOINT ["/app"]\n' >"$ctx/Dockerfile"
    docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
    rm -rf "$ctx"
    mkdir -p "$(dirname "$tar")"
    docker save -o "$tar.tmp" "$tag" && mv "$tar.tmp" "$tar"
  fi
  echo "cert-manager-$name=$tag $tar"
done
