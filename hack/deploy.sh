#!/usr/bin/env bash
# deploy.sh: installs the operator into the Kind cluster from this checkout: builds and loads
# the images (hack/images.sh), applies the CRDs, the RBAC and the manager, and waits for it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/hack/versions.sh"
log() { echo "deploy: $*" >&2; }
export KUBECONFIG=${KUBECONFIG:-$root/bin/kind/kubeconfig}
kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
apply() { "$kubectl" apply --server-side --field-manager=secured-deploy --force-conflicts "$@" >/dev/null; }

declare -A img
while read -r line; do img[${line%%=*}]=${line#*=}; done < <("$root/hack/images.sh")
log "operator ${img[manager]}, Cassandra ${img[cassandra]}"
apply -f "$root/config/crd/bases/"
apply -f "$root/config/rbac/role.yaml"
sed "s|CASSANDRA_IMAGE|${img[cassandra]}|; s|YCSB_HBASE_IMAGE|${img[ycsb-hbase]}|; s|HBASE_IMAGE|${img[hbase]}|; s|KDC_IMAGE|${img[kdc]}|; s|VPN_IMAGE|${img[vpn]}|; s|K6_IMAGE|${img[k6]}|; s|IMAGE|${img[manager]}|" "$root/config/manager/manager.yaml" | apply -f -
# The image tag changes with the code, so the rollout restarts the operator when it changed.
"$kubectl" -n secured-system rollout status deployment/secured-datastore-operator --timeout=180s >&2
