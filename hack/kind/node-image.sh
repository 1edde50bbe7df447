#!/usr/bin/env bash
# Builds a Kind node image for Kubernetes $KUBE_VERSION from package registries only: a Debian
# root filesystem with systemd, containerd and runc (hack/kind/rootfs.sh), kubelet/kubeadm/kubectl
# built from the Go module proxy (hack/build/kube-binaries.sh), every image kubeadm and the pod network
# need preloaded into containerd (hack/kind/kube-images.sh), and our entrypoint and configuration
# (hack/kind/node/). The image is tagged with a hash of all its inputs, built once, and its tag
# printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
log() { echo "node-image: $*" >&2; }
export DOCKER_BUILDKIT=0

rootfs=$("$root/hack/kind/rootfs.sh" kind-node systemd systemd-sysv dbus iproute2 iptables nftables kmod \
  ca-certificates conntrack ethtool socat util-linux mount procps containerd runc \
  containernetworking-plugins libseccomp2 pigz jq)
"$root/hack/build/kube-binaries.sh" kubelet kubeadm kubectl >/dev/null
mapfile -t images < <("$root/hack/kind/kube-images.sh")
podnet_image=$(docker image ls --format '{{.Repository}}:{{.Tag}}' "$K8S_IMAGE_REPO/podnet" | head -1)

inputs=$( {
  basename "$rootfs"
  for b in kubelet kubeadm kubectl; do sha256sum "$root/bin/$b/$KUBE_VERSION/$b" | cut -c1-16; done
  printf '%s\n' "${images[@]##*/}"
  sha256sum <"$root/hack/kind/docker/runc-drop-sys-resource"
  (cd "$root/hack/kind/node" && find . -type f | sort | xargs sha256sum)
} | sha256sum | cut -c1-12)
tag="secured.dev/kind-node:$KUBE_VERSION-$inputs"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi
start=$SECONDS

base="secured.dev/kind-base:$(basename "$rootfs" .tar | sed 's/^kind-node-//')"
if ! docker image inspect "$base" >/dev/null 2>&1; then
  log "importing the root filesystem as $base"
  docker import -c 'ENV container=docker' "$rootfs" "$base" >/dev/null
fi

log "assembling $tag"
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp -a "$root/hack/kind/node" "$ctx/files"
sed -i "s|PODNET_IMAGE|$podnet_image|" "$ctx/files/kind/manifests/default-cni.yaml"
echo "$KUBE_VERSION" >"$ctx/files/kind/version"
mkdir -p "$ctx/files/usr/bin" "$ctx/images"
for b in kubelet kubeadm kubectl; do cp "$root/bin/$b/$KUBE_VERSION/$b" "$ctx/files/usr/bin/"; done
cp "$root/hack/kind/docker/runc-drop-sys-resource" "$ctx/files/usr/local/bin/runc"
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $base
COPY files/ /
RUN systemctl enable containerd.service kubelet.service && \
    systemctl mask getty.target systemd-logind.service && \
    rm -f /etc/machine-id && touch /etc/machine-id
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/node-entrypoint", "/sbin/init"]
DOCKERFILE
docker build -q -t "$tag-unloaded" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }

log "preloading ${#images[@]} images into the node's containerd"
cid=$(docker run -d --privileged --entrypoint /usr/bin/containerd "$tag-unloaded")
trap 'docker rm -f "$cid" >/dev/null 2>&1; rm -rf "$ctx"' EXIT
for _ in $(seq 50); do docker exec "$cid" ctr version >/dev/null 2>&1 && break; sleep 0.2; done
for tar in "${images[@]}"; do
  docker cp "$tar" "$cid:/image.tar"
  docker exec "$cid" ctr --namespace=k8s.io images import --no-unpack /image.tar >/dev/null
  docker exec "$cid" rm /image.tar
done
docker stop "$cid" >/dev/null
docker commit -c 'ENTRYPOINT ["/usr/local/bin/node-entrypoint", "/sbin/init"]' -c 'CMD []' "$cid" "$tag" >/dev/null
docker rm "$cid" >/dev/null
docker rmi "$tag-unloaded" >/dev/null
log "built $tag in $((SECONDS - start))s"
echo "$tag"
