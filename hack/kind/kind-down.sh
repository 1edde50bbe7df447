#!/usr/bin/env bash
# Deletes the e2e Kind cluster. Images stay cached; the Docker engine keeps running (stop it
# with hack/kind/docker-down.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
kind="$root/bin/kind-cli/$KIND_VERSION/kind"
[[ -x $kind ]] || exit 0
"$root/hack/kind/encryptable-storage.sh" release
"$kind" delete cluster --name secured --kubeconfig "$root/bin/kind/kubeconfig"
# Undo what hack/kind/kind-up.sh changed on the host: the network and its forwarding rule.
if docker network inspect kind >/dev/null 2>&1; then
  bridge=$(docker network inspect kind -f '{{index .Options "com.docker.network.bridge.name"}}')
  if [[ -n $bridge ]]; then
    while iptables -D DOCKER-USER -i "$bridge" ! -o "$bridge" -j DROP 2>/dev/null; do :; done
  fi
  docker network rm kind >/dev/null 2>&1 || true
fi
