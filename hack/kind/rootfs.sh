#!/usr/bin/env bash
# rootfs.sh NAME PACKAGE... builds a Debian bookworm root filesystem (debootstrap minbase plus
# the packages) as a tarball in bin/rootfs/NAME-<hash of the package list>.tar, unless it is
# already there, and prints its path. Debian's package mirror is the only source.
set -euo pipefail
name=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
hash=$(printf '%s\n' "$suite" "$@" | sha256sum | cut -c1-12)
out="$root/bin/rootfs/$name-$hash.tar"
if [[ -f $out ]]; then
  echo "$out"
  exit 0
fi
sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
command -v debootstrap >/dev/null || {
  echo "rootfs: installing debootstrap from Debian" >&2
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq debootstrap >/dev/null
}
echo "rootfs: debootstrap $suite for $name (about a minute)..." >&2
start=$SECONDS
# A leading underscore keeps the go tool out of it (go vet ./... while an image builds).
work=$(mktemp -d "$root/bin/_rootfs-work.XXXXXX")
trap '$sudo rm -rf "$work"' EXIT
mkdir -p "$(dirname "$out")"
include=$(IFS=,; echo "$*")
$sudo debootstrap --variant=minbase ${include:+--include="$include"} "$suite" "$work/fs" "$mirror" >"$work/log" 2>&1 ||
  { tail -20 "$work/log" >&2; exit 1; }
# Package caches and lists are dead weight in an image.
$sudo rm -rf "$work/fs/var/cache/apt/archives/"*.deb "$work/fs/var/lib/apt/lists/"* "$work/fs/usr/share/doc" "$work/fs/usr/share/man"
$sudo tar -C "$work/fs" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "rootfs: $name built in $((SECONDS - start))s ($(du -h "$out" | cut -f1))" >&2
echo "$out"
