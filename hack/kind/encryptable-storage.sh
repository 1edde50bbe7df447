#!/usr/bin/env bash
# Gives every Kind worker a filesystem that can encrypt files (ext4 made with -O encrypt, on a
# loop device over a sparse file in the node's /var), mounted at /var/local-path-encryptable:
# the node path of the "encryptable" StorageClass (hack/kind/local-path-storage.yaml), under
# which atRest.volume datastores run. The default class ("standard") stays on the node's own
# filesystem, which here cannot encrypt, so both answers can be tested. Idempotent: a mounted
# node is left alone, and a node restarted by Docker mounts its existing image again.
# "encryptable-storage.sh release" unmounts and detaches the loop devices, which belong to the
# host and would outlive the nodes: hack/kind/kind-down.sh and kind-up.sh run it before they
# delete the cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
kind="$root/bin/kind-cli/$KIND_VERSION/kind"
log() { echo "encryptable-storage: $*" >&2; }

# Runs inside the node. The loop device's node may be missing from the container's /dev
# (Docker copies the devices that exist when the container starts): it is made from the
# device's number.
mount_script='set -eu
img=/var/encryptable-storage.img dir=/var/local-path-encryptable
if mountpoint -q "$dir"; then exit 0; fi
if [ ! -f "$img" ]; then truncate -s 8G "$img"; mkfs.ext4 -q -O encrypt "$img"; fi
dev=$(losetup -j "$img" | cut -d: -f1 | head -n1)
[ -n "$dev" ] || dev=$(losetup -f --show "$img")
[ -b "$dev" ] || mknod "$dev" b 7 "${dev#/dev/loop}"
mkdir -p "$dir"
mount "$dev" "$dir"
echo "$dev"'

release_script='umount /var/local-path-encryptable 2>/dev/null || true
for dev in $(losetup -j /var/encryptable-storage.img | cut -d: -f1); do losetup -d "$dev"; done'

case ${1:-mount} in
mount)
  for node in $("$kind" get nodes --name secured); do
    [[ $node == *control-plane* ]] && continue
    dev=$(docker exec "$node" sh -c "$mount_script")
    log "$node: /var/local-path-encryptable on ${dev:-its loop device, already mounted} (ext4 -O encrypt)"
  done
  ;;
release)
  for node in $("$kind" get nodes --name secured 2>/dev/null); do
    docker exec "$node" sh -c "$release_script" || log "$node: could not release its loop device"
  done
  ;;
*)
  echo "usage: $0 [mount|release]" >&2
  exit 2
  ;;
esac
