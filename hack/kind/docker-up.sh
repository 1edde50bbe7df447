#!/usr/bin/env bash
# Makes sure a Docker engine answers on /var/run/docker.sock. When none runs, installs Debian's
# docker.io and containerd (if missing) and starts containerd and dockerd in the background,
# recording their PIDs in bin/docker/ so hack/kind/docker-down.sh stops exactly them. Nothing is
# written under /etc: dockerd gets its settings as flags. On hosts whose capability bounding set
# lacks CAP_SYS_RESOURCE, dockerd runs containers through hack/kind/docker/runc-drop-sys-resource.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
state="$root/bin/docker"
log() { echo "docker-up: $*" >&2; }
sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo

if docker info >/dev/null 2>&1; then
  log "a Docker engine is running"
  exit 0
fi

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v containerd >/dev/null || need+=(containerd)
command -v jq >/dev/null || need+=(jq)
command -v iptables >/dev/null || need+=(iptables)
if ((${#need[@]})); then
  log "installing ${need[*]} from Debian"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

mkdir -p "$state"
# Bit 24 of CapBnd is CAP_SYS_RESOURCE.
capbnd=$(awk '/^CapBnd/ {print $2}' /proc/self/status)
runtime_flags=()
if (((0x$capbnd >> 24 & 1) == 0)); then
  log "this host cannot grant CAP_SYS_RESOURCE: containers run through the runc wrapper"
  runtime_flags=(--add-runtime "drop-sys-resource=$root/hack/kind/docker/runc-drop-sys-resource" --default-runtime drop-sys-resource)
fi

# Each daemon in a session of its own: stopping whatever ran this script (a make target, a
# build in the background) by its process group must not stop the engine that Kind runs on.
if ! [[ -S /run/containerd/containerd.sock ]] || ! $sudo ctr version >/dev/null 2>&1; then
  log "starting containerd (log: $state/containerd.log)"
  $sudo setsid nohup containerd >"$state/containerd.log" 2>&1 &
  echo $! >"$state/containerd.pid"
  for _ in $(seq 50); do [[ -S /run/containerd/containerd.sock ]] && break; sleep 0.2; done
fi

log "starting dockerd (log: $state/dockerd.log)"
$sudo setsid nohup dockerd --containerd=/run/containerd/containerd.sock "${runtime_flags[@]}" >"$state/dockerd.log" 2>&1 &
echo $! >"$state/dockerd.pid"
for _ in $(seq 150); do
  if docker info >/dev/null 2>&1; then
    log "Docker engine ready ($(docker version --format '{{.Server.Version}}'))"
    exit 0
  fi
  sleep 0.2
done
log "dockerd did not come up; last lines of its log:"
tail -20 "$state/dockerd.log" >&2
exit 1
