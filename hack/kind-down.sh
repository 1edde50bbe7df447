#!/usr/bin/env bash
# Deletes the e2e Kind cluster. Images stay cached; the Docker engine keeps running (stop it
# with hack/docker-down.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/hack/versions.sh"
kind="$root/bin/kind-cli/$KIND_VERSION/kind"
[[ -x $kind ]] || exit 0
"$kind" delete cluster --name secured --kubeconfig "$root/bin/kind/kubeconfig"
