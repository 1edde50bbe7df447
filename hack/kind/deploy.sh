#!/usr/bin/env bash
# deploy.sh: installs the operator into the Kind cluster from this checkout with its Helm chart
# (charts/secured-datastore-operator): builds and loads the images (hack/kind/images.sh), then
# `helm upgrade --install` with them, and waits for the operator.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
log() { echo "deploy: $*" >&2; }
export KUBECONFIG=${KUBECONFIG:-$root/bin/kind/kubeconfig}
kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
helm=$("$root/hack/build/helm.sh")
release=secured-datastore-operator namespace=secured-system

declare -A img
while read -r line; do img[${line%%=*}]=${line#*=}; done < <("$root/hack/kind/images.sh")
log "operator ${img[manager]}, Cassandra ${img[cassandra]}"

# A cluster deployed before the chart has the same objects without Helm's ownership: let the
# release adopt the CRDs (deleting them would delete every datastore), and replace the
# operator's own objects (the Deployment's selector changed). The operator applies the
# shipped profiles themselves.
if ! "$helm" status "$release" -n "$namespace" >/dev/null 2>&1; then
  "$kubectl" -n "$namespace" delete deployment,serviceaccount "$release" --ignore-not-found >&2
  "$kubectl" delete clusterrole,clusterrolebinding "$release" --ignore-not-found >&2
  for obj in $("$kubectl" get crd -o name | grep 'datastore.secured.dev'); do
    "$kubectl" label --overwrite "$obj" app.kubernetes.io/managed-by=Helm >/dev/null
    "$kubectl" annotate --overwrite "$obj" meta.helm.sh/release-name="$release" meta.helm.sh/release-namespace="$namespace" >/dev/null
  done
fi

# kind-up runs the crypto labeller already; e2e namespaces are created per test, so the
# operator gets Secrets cluster-wide here.
"$helm" upgrade --install "$release" "$root/charts/secured-datastore-operator" -n "$namespace" --wait --timeout 3m \
  --set image.repository="${img[manager]%:*}" --set image.tag="${img[manager]##*:}" \
  --set images.cassandra="${img[cassandra]}" --set images.hbase="${img[hbase]}" --set images.kdc="${img[kdc]}" \
  --set images.vpn="${img[vpn]}" --set images.volumeEncryption="${img[volume-encryption]}" --set images.k6="${img[k6]}" --set images.ycsbHBase="${img[ycsb-hbase]}" --set images.storageBench="${img[storage-bench]}" \
  --set cryptoLabeller.enabled=false --set watch.allNamespaces=true \
  --set prometheus.remoteWriteURL=http://prometheus.monitoring.svc:9090/api/v1/write \
  --set prometheus.cpuAccounting.url=http://prometheus.monitoring.svc:9090 --set prometheus.cpuAccounting.settle=5s >&2
"$kubectl" -n "$namespace" rollout status "deployment/$release" --timeout=180s >&2
