#!/usr/bin/env bash
# Builds Helm from the Go module proxy once (~80 s; no release downloads here), caches it under
# bin/helm/<version>/ and prints its path, so callers can use helm=$(hack/build/helm.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
helm="$root/bin/helm/$HELM_VERSION/helm"
if [[ ! -x $helm ]]; then
  echo "helm: building $HELM_VERSION from the Go module proxy (cached afterwards in bin/helm/$HELM_VERSION)..." >&2
  GOBIN="$(dirname "$helm")" GOFLAGS= go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
fi
echo "$helm"
