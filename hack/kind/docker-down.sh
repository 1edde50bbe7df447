#!/usr/bin/env bash
# Stops the dockerd and containerd that hack/kind/docker-up.sh started (by the PIDs it recorded),
# and nothing else. Images and containers stay in /var/lib/docker for the next start.
set -euo pipefail
state="$(cd "$(dirname "$0")/../.." && pwd)/bin/docker"
sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
for name in dockerd containerd; do
  pidfile="$state/$name.pid"
  [[ -f $pidfile ]] || continue
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    echo "docker-down: stopping $name ($pid)" >&2
    $sudo kill "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$pidfile"
done
