#!/usr/bin/env bash
# build-go-binary.sh NAME MODULE_DIR PACKAGE VERSION [LDFLAGS]
# Builds one static binary from a wrapper module under hack/ into bin/<NAME>/<VERSION>/<NAME>,
# unless it is already there, and prints its path. The wrapper modules pin upstream versions in
# their go.mod/go.sum, so a build needs only the Go module proxy. Interrupted builds never look
# cached: the binary is moved into place when complete, and concurrent callers wait for it.
set -euo pipefail
name=$1 dir=$2 pkg=$3 version=$4 ldflags=${5:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/bin/$name/$version/$name"
if [[ -x $out ]]; then
  echo "$out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
# One build per binary at a time: a test run beside make kind-up wants the same kube-apiserver,
# and two builds into one .tmp file left neither.
exec 9>"$out.lock"
flock 9
if [[ -x $out ]]; then
  echo "$out"
  exit 0
fi
echo "build: $name $version from the Go module proxy (cached afterwards in bin/$name/$version)..." >&2
start=$SECONDS
(cd "$dir" && CGO_ENABLED=0 GOWORK=off go build -mod=readonly -buildvcs=false -trimpath \
  -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg")
mv "$out.tmp" "$out"
echo "build: $name built in $((SECONDS - start))s" >&2
echo "$out"
