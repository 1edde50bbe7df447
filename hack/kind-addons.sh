#!/usr/bin/env bash
# Installs what every e2e run expects in the Kind cluster: the node crypto-feature labeller
# (no Node Feature Discovery here) and, from the next change on, cert-manager. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/hack/versions.sh"
export KUBECONFIG="$root/bin/kind/kubeconfig"
kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
"$root/hack/kube-binaries.sh" kubectl >/dev/null
log() { echo "kind-addons: $*" >&2; }

declare -A image
while IFS='=' read -r name tag; do image[$name]=$tag; done < <("$root/hack/images.sh")

log "crypto labeller ${image[crypto-labeller]}"
sed "s|IMAGE|${image[crypto-labeller]}|" "$root/config/labeller/crypto-labeller.yaml" |
  "$kubectl" apply --server-side --field-manager=kind-addons -f - >/dev/null
"$kubectl" -n secured-system rollout status daemonset/crypto-labeller --timeout=120s >&2
