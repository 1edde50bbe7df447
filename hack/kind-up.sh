#!/usr/bin/env bash
# Brings up the e2e Kind cluster "secured" (1 control plane + 3 workers) and writes its
# kubeconfig to bin/kind/kubeconfig. Starts a Docker engine if none runs. Where a container
# registry is reachable, Kind's upstream node image is used; otherwise (these machines) the node
# image and every image in it are built from package registries (hack/kind/node-image.sh).
# Re-running is cheap: cached artifacts are reused and a running cluster is left alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/hack/versions.sh"
log() { echo "kind-up: [$(date +%H:%M:%S)] $*" >&2; }
start=$SECONDS

"$root/hack/docker-up.sh"

kind="$root/bin/kind-cli/$KIND_VERSION/kind"
if [[ ! -x $kind ]]; then
  log "installing kind $KIND_VERSION from the Go module proxy"
  GOBIN="$(dirname "$kind")" go install "sigs.k8s.io/kind@$KIND_VERSION"
fi
kubeconfig="$root/bin/kind/kubeconfig"
mkdir -p "$(dirname "$kubeconfig")"

if "$kind" get clusters 2>/dev/null | grep -qx secured; then
  log "cluster secured exists"
  "$kind" export kubeconfig --name secured --kubeconfig "$kubeconfig" >/dev/null 2>&1
  "$root/hack/kind-addons.sh"
  exit 0
fi

# The cluster's network is ours, on a bridge with a known name, so that nothing from the nodes
# is forwarded beyond it: tests talk only to addresses on this machine, and a packet for a
# not-yet-routed service address must die here rather than leave the host.
if ! docker network inspect kind >/dev/null 2>&1; then
  docker network create --driver bridge -o com.docker.network.bridge.name=kind0 kind >/dev/null
fi
bridge=$(docker network inspect kind -f '{{index .Options "com.docker.network.bridge.name"}}')
if [[ -n $bridge ]] && ! iptables -C DOCKER-USER -i "$bridge" ! -o "$bridge" -j DROP 2>/dev/null; then
  log "confining the kind network: host rule iptables DOCKER-USER -i $bridge ! -o $bridge -j DROP (hack/kind-down.sh removes it)"
  iptables -I DOCKER-USER -i "$bridge" ! -o "$bridge" -j DROP
fi

image_args=()
if [[ -n ${KIND_NODE_IMAGE:-} ]]; then
  image_args=(--image "$KIND_NODE_IMAGE")
elif timeout 5 docker pull -q busybox:latest >/dev/null 2>&1; then
  log "a container registry is reachable: using Kind's upstream node image"
else
  log "no container registry: building the node image from package registries (cached after the first time)"
  image_args=(--image "$("$root/hack/kind/node-image.sh")")
fi

log "creating cluster secured (1 control plane, 3 workers)"
"$kind" create cluster --config "$root/hack/kind/cluster.yaml" "${image_args[@]}" \
  --kubeconfig "$kubeconfig" --wait 5m
"$root/hack/kind-addons.sh"
log "cluster ready in $((SECONDS - start))s; export KUBECONFIG=$kubeconfig"
