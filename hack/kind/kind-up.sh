#!/usr/bin/env bash
# Brings up the e2e Kind cluster "secured" (1 control plane + 3 workers) and writes its
# kubeconfig to bin/kind/kubeconfig. Starts a Docker engine if none runs. Where a container
# registry is reachable, Kind's upstream node image is used; otherwise (these machines) the node
# image and every image in it are built from package registries (hack/kind/node-image.sh).
# Re-running is cheap: cached artifacts are reused and a running cluster is left alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
log() { echo "kind-up: [$(date +%H:%M:%S)] $*" >&2; }
start=$SECONDS

"$root/hack/kind/docker-up.sh"

kind="$root/bin/kind-cli/$KIND_VERSION/kind"
if [[ ! -x $kind ]]; then
  log "installing kind $KIND_VERSION from the Go module proxy"
  GOBIN="$(dirname "$kind")" go install "sigs.k8s.io/kind@$KIND_VERSION"
fi
kubeconfig="$root/bin/kind/kubeconfig"
mkdir -p "$(dirname "$kubeconfig")"

# The cluster's network is ours, on a bridge with a known name, so that nothing from the nodes
# is forwarded beyond it: tests talk only to addresses on this machine, and a packet for a
# not-yet-routed service address must die here rather than leave the host.
if ! docker network inspect kind >/dev/null 2>&1; then
  docker network create --driver bridge -o com.docker.network.bridge.name=kind0 kind >/dev/null
fi
bridge=$(docker network inspect kind -f '{{index .Options "com.docker.network.bridge.name"}}')
if [[ -n $bridge ]] && ! iptables -C DOCKER-USER -i "$bridge" ! -o "$bridge" -j DROP 2>/dev/null; then
  log "confining the kind network: host rule iptables DOCKER-USER -i $bridge ! -o $bridge -j DROP (hack/kind/kind-down.sh removes it)"
  iptables -I DOCKER-USER -i "$bridge" ! -o "$bridge" -j DROP
fi

# Kind nodes keep the address they were created with in the kubelet's flags; after a Docker
# restart that hands out other addresses the cluster cannot come back, so it is made anew.
addresses_moved() {
  local node want got
  for node in $("$kind" get nodes --name secured 2>/dev/null); do
    want=$(docker exec "$node" cat /var/lib/kubelet/kubeadm-flags.env 2>/dev/null | grep -o -- '--node-ip=[0-9.]*' | cut -d= -f2) || true
    got=$(docker inspect -f '{{.NetworkSettings.Networks.kind.IPAddress}}' "$node" 2>/dev/null) || true
    if [[ -n $want && $want != "$got" ]]; then
      log "node $node was created at $want and now has ${got:-no address}"
      return 0
    fi
  done
  return 1
}

if "$kind" get clusters 2>/dev/null | grep -qx secured; then
  # Stopped with the Docker engine, Kind's nodes do not restart with it.
  docker start $("$kind" get nodes --name secured) >/dev/null
  if addresses_moved; then
    log "the cluster cannot recover from new node addresses: deleting it to create it again"
    "$root/hack/kind/encryptable-storage.sh" release
    "$kind" delete cluster --name secured >/dev/null
  else
    log "cluster secured exists"
    "$kind" export kubeconfig --name secured --kubeconfig "$kubeconfig" >/dev/null 2>&1
    "$root/hack/build/kube-binaries.sh" kubectl >/dev/null
    kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
    waited=0
    until "$kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1; do
      if ((waited >= 300)); then
        log "the API server did not answer within 300s; last lines of the control plane's log:"
        docker logs --tail 20 secured-control-plane >&2 || true
        exit 1
      fi
      ((waited % 15 == 0)) && log "waiting for the API server (${waited}s)"
      sleep 5
      waited=$((waited + 5))
    done
    "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=300s >/dev/null
    "$root/hack/kind/kind-addons.sh"
    log "cluster ready in $((SECONDS - start))s; export KUBECONFIG=$kubeconfig"
    exit 0
  fi
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
"$root/hack/kind/kind-addons.sh"
log "cluster ready in $((SECONDS - start))s; export KUBECONFIG=$kubeconfig"
