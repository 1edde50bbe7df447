#!/usr/bin/env bash
# Installs what every e2e run expects in the Kind cluster: the node crypto-feature labeller (no
# Node Feature Discovery here), NetworkPolicy enforcement (hack/kind/netpol), a default
# StorageClass that non-root pods can write, cert-manager and a Prometheus that receives remote
# writes. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
export KUBECONFIG="$root/bin/kind/kubeconfig"
kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
"$root/hack/build/kube-binaries.sh" kubectl >/dev/null
log() { echo "kind-addons: $*" >&2; }

declare -A image
while IFS='=' read -r name tag; do image[$name]=$tag; done < <("$root/hack/kind/images.sh")

log "crypto labeller ${image[crypto-labeller]}"
sed "s|IMAGE|${image[crypto-labeller]}|" "$root/config/labeller/crypto-labeller.yaml" |
  "$kubectl" apply --server-side --field-manager=kind-addons -f - >/dev/null
"$kubectl" -n secured-system rollout status daemonset/crypto-labeller --timeout=120s >&2

# Add-on images built from the module proxy (hack/kind/addon-images.sh), loaded into the nodes.
declare -A cm
while IFS='=' read -r name rest; do
  cm[$name]=${rest%% *}
  "$root/bin/kind-cli/$KIND_VERSION/kind" load image-archive "${rest##* }" --name secured >/dev/null
done < <("$root/hack/kind/addon-images.sh")

# NetworkPolicies enforced as on a user's cluster (our pod network alone does not enforce them).
log "netpol ${cm[netpol]##*:}"
sed "s|IMAGE|${cm[netpol]}|" "$root/hack/kind/netpol.yaml" |
  "$kubectl" apply --server-side --field-manager=kind-addons -f - >/dev/null
"$kubectl" -n kube-system rollout status daemonset/netpol --timeout=120s >&2

# The "encryptable" StorageClass's node filesystems (ext4 -O encrypt), before its provisioner.
"$root/hack/kind/encryptable-storage.sh"

# The default StorageClass: volumes that non-root pods can write (see the manifest). The node
# image's "standard" class uses another provisioner, and a class's provisioner is immutable.
log "local-path-provisioner ${cm[local-path-provisioner]##*:}"
if [[ $("$kubectl" get storageclass standard -o jsonpath='{.provisioner}' 2>/dev/null) == kubernetes.io/host-path ]]; then
  "$kubectl" delete storageclass standard >/dev/null
fi
sed "s|HELPER_IMAGE|${image[jre]}|g; s|IMAGE|${cm[local-path-provisioner]}|g" "$root/hack/kind/local-path-storage.yaml" |
  "$kubectl" apply --server-side --field-manager=kind-addons -f - >/dev/null
"$kubectl" -n local-path-storage rollout status deployment/local-path-provisioner --timeout=120s >&2

# cert-manager with the cert-manager.io/v1 CRDs of the API module we compile against (v1.21.2,
# a superset of what v1.11 knows). CombinedPEM output (Cassandra's keystore) is behind a feature
# gate in v1.11; later releases enable it by default.
helm=$("$root/hack/build/helm.sh")
cm_module=$(cd "$root/hack/build/cert-manager" && go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
api_module=$(cd "$root" && go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
log "cert-manager ${cm[cert-manager-controller]##*:}"
"$kubectl" apply --server-side --field-manager=kind-addons -f "$api_module/deploy/crds/" >/dev/null
"$kubectl" create namespace cert-manager --dry-run=client -o yaml | "$kubectl" apply --server-side --field-manager=kind-addons -f - >/dev/null
# The module carries the chart with its release-time Chart.yaml still a template.
chart=$(mktemp -d)
trap 'rm -rf "$chart"' EXIT
cp -r "$cm_module/deploy/charts/cert-manager" "$chart/" && chmod -R u+w "$chart"
sed 's/^version: .*/version: v1.11.5/; s/^appVersion: .*/appVersion: v1.11.5/' \
  "$chart/cert-manager/Chart.template.yaml" >"$chart/cert-manager/Chart.yaml"
"$helm" template cert-manager "$chart/cert-manager" --namespace cert-manager --kube-version "$KUBE_VERSION" \
  --set installCRDs=false --set startupapicheck.enabled=false \
  --set featureGates=AdditionalCertificateOutputFormats=true \
  --set image.repository="${cm[cert-manager-controller]%:*}" --set image.tag="${cm[cert-manager-controller]##*:}" \
  --set webhook.image.repository="${cm[cert-manager-webhook]%:*}" --set webhook.image.tag="${cm[cert-manager-webhook]##*:}" \
  --set cainjector.image.repository="${cm[cert-manager-cainjector]%:*}" --set cainjector.image.tag="${cm[cert-manager-cainjector]##*:}" \
  --set image.pullPolicy=IfNotPresent |
  "$kubectl" apply --server-side --field-manager=kind-addons --force-conflicts -f - >/dev/null
for d in cert-manager cert-manager-webhook cert-manager-cainjector; do
  "$kubectl" -n cert-manager rollout status "deployment/$d" --timeout=180s >&2
done

# Prometheus, receiving the benchmark clients' remote writes.
log "prometheus ${image[prometheus]%% *}"
# One static target per kubelet, labelled with its node (names and addresses from the API).
targets=$("$kubectl" get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}' |
  while read -r node ip; do
    printf "          - targets: ['%s:10250']\n            labels: {node: %s}\n" "$ip" "$node"
  done)
[ -n "$targets" ] || { echo "kind-addons: no node addresses for Prometheus to scrape" >&2; exit 1; }
sed "s|IMAGE|${image[prometheus]%% *}|" "$root/hack/kind/prometheus.yaml" |
  awk -v targets="$targets" '$1 == "KUBELET_TARGETS" { print targets; next } { print }' |
  "$kubectl" apply --server-side --field-manager=kind-addons -f - >/dev/null
# A changed configuration is read at start.
"$kubectl" -n monitoring rollout restart deployment/prometheus >/dev/null
"$kubectl" -n monitoring rollout status deployment/prometheus --timeout=120s >&2
