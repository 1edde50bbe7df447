#!/usr/bin/env bash
# cpu-trace.sh record SECONDS | bursts: a second opinion on the study's CPU accounting, from the
# kernel's counters directly rather than through the kubelets and Prometheus.
#
#   record SECONDS  once a second for SECONDS (at most 3 h), every pod container's cpu.stat
#                   (usage, user and system microseconds) on every Kind worker, into
#                   bin/cpu-trace/node-<node>.txt; the containers' pod names into names.txt
#                   once a minute (a study's datastores are gone when it ends). Start it
#                   beside `make demo` or `make study`. The samplers inside the nodes stop
#                   after SECONDS samples even when this script is interrupted.
#                   Every other second it also reads each JVM thread's CPU time (schedstat)
#                   in those containers, with the thread's name.
#   bursts          for every datastore container (cassandra, hbase), each stretch of at
#                   least 8 s above a quarter of a core: the mean cores, user and system over
#                   its last 10 s, and per operation at BURST_RATE operations per second
#                   (default 800, the demo's fixed rate); then the same 10 s by JVM thread
#                   group (the name without its number), the six costliest, which tells the
#                   JIT compiler (C2 CompilerThre), the garbage collector (GC Thread) and
#                   Cassandra's periodic tasks (OptionalTasks) from the requests' own work.
#
# The sampler reads cgroup v2's cpu.stat under the node's kubelet.slice (the unified hierarchy
# where the node runs hybrid cgroups), the same counters the kubelet reports, and /proc of the
# processes in those cgroups.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
export KUBECONFIG="$root/bin/kind/kubeconfig"
kubectl="$root/bin/kubectl/$KUBE_VERSION/kubectl"
out="$root/bin/cpu-trace"

record() {
  local seconds=${1:?usage: cpu-trace.sh record SECONDS}
  [[ $seconds =~ ^[0-9]+$ && $seconds -le 10800 ]] || { echo "cpu-trace.sh: SECONDS must be a whole number up to 10800, not $seconds" >&2; exit 2; }
  mkdir -p "$out"
  # A second recorder would truncate the files the first one's node loops still append to,
  # and interleave two series of every container in them.
  exec 9> "$out/record.lock"
  flock -n 9 || { echo "cpu-trace.sh: another record is writing to $out; let it finish (its node loops end after SECONDS samples)" >&2; exit 2; }
  : > "$out/names.txt"
  nodes= pids=() # global: the EXIT trap runs after this function returned
  nodes=$(docker ps --filter label=io.x-k8s.kind.role=worker --format '{{.Names}}')
  [[ -n $nodes ]] || { echo "cpu-trace.sh: no Kind worker runs (make kind-up)" >&2; exit 2; }
  # Killing a docker exec client leaves its command running in the node: each loop leaves its
  # process id there, and an interrupted record stops them by it.
  stop() {
    kill "${pids[@]}" 2>/dev/null || true
    for node in $nodes; do
      docker exec "$node" sh -c 'p=$(cat /run/cpu-trace.pid 2>/dev/null) && tr "\0" " " < "/proc/$p/cmdline" | grep -q "cpu-trace-loop" && kill "$p"; rm -f /run/cpu-trace.pid' 2>/dev/null || true
    done
  }
  trap stop EXIT
  trap 'exit 130' INT TERM
  for node in $nodes; do
    # The loop runs inside the node, so one process samples all of its containers; its
    # iteration count bounds it even if this script is killed without its trap.
    docker exec "$node" sh -c '
      echo $$ > /run/cpu-trace.pid
      n=$1 i=0 list=
      while [ $i -lt $n ]; do
        [ $((i % 10)) -eq 0 ] && list=$(find /sys/fs/cgroup/unified/kubelet.slice /sys/fs/cgroup/kubelet.slice -name "cri-containerd-*.scope" -type d 2>/dev/null)
        t=$(date +%s.%N)
        for f in $list; do
          [ -r "$f/cpu.stat" ] && echo "$t ${f##*/cri-containerd-} $(head -3 "$f/cpu.stat" | cut -d" " -f2 | tr "\n" " ")"
          # Thread lines: "time id T tid nanoseconds name", six fields at least, where the
          # container lines have five. Builtins only per thread: a JVM runs about 200.
          [ $((i % 2)) -eq 0 ] || continue
          while read -r p; do
            read -r c 2>/dev/null < "/proc/$p/comm" && [ "$c" = java ] || continue
            for task in /proc/$p/task/*; do
              { read -r name < "$task/comm" && read -r ns rest < "$task/schedstat" && echo "$t ${f##*/cri-containerd-} T ${task##*/} $ns $name"; } 2>/dev/null
            done
          done 2>/dev/null < "$f/cgroup.procs"
        done
        i=$((i + 1))
        sleep 1
      done
      rm -f /run/cpu-trace.pid' cpu-trace-loop "$seconds" > "$out/node-$node.txt" &
    pids+=($!)
  done
  local end=$((SECONDS + seconds))
  while ((SECONDS < end)); do
    "$kubectl" get pods --all-namespaces -o go-template='{{range .items}}{{$pod := printf "%s/%s" .metadata.namespace .metadata.name}}{{range .status.containerStatuses}}{{.containerID}} {{$pod}}/{{.name}}{{"\n"}}{{end}}{{end}}' 2>/dev/null | sed 's|^[a-z]*://||' >> "$out/names.txt" || true
    echo "cpu-trace: $(( (end - SECONDS) / 60 )) min left, $(cat "$out"/node-*.txt | wc -l) samples" >&2
    # In the background, so that an interrupt is handled at once; without the lock, which an
    # interrupted record would otherwise leave held until the sleep ends.
    sleep $((end - SECONDS < 60 ? (end - SECONDS > 0 ? end - SECONDS : 0) : 60)) 9>&- &
    wait $! || true
  done
  wait "${pids[@]}" || true
}

bursts() {
  [[ -f $out/names.txt ]] || { echo "cpu-trace.sh: nothing recorded in $out (cpu-trace.sh record SECONDS)" >&2; exit 2; }
  local rate=${BURST_RATE:-800}
  [[ $rate =~ ^[0-9]+$ && $rate -gt 0 ]] || { echo "cpu-trace.sh: BURST_RATE must be a positive whole number, not $rate" >&2; exit 2; }
  awk -v rate="$rate" -v names="$out/names.txt" '
    BEGIN { while ((getline line < names) > 0) { split(line, f, " "); name[f[1]] = f[2] } }
    $3 == "T" {
      id = $2; sub(/\.scope$/, "", id); key = id SUBSEP $4
      # A thread seen before gives its CPU since then to the sample that ends there; a new
      # thread its first two seconds to none.
      if (!((id, $1) in span)) {
        span[id, $1] = (id in tlast) ? $1 - tlast[id] : 0; tlast[id] = $1; tt[id, ++tlen[id]] = $1
      }
      if (key in tn && $5 >= tn[key]) {
        group = $6; for (w = 7; w <= NF; w++) group = group " " $w
        sub(/[-#:]?[0-9]+$/, "", group)
        cpu[id, $1, group] += ($5 - tn[key]) / 1e9; groups[id, group] = 1
      }
      tn[key] = $5
      next
    }
    NF == 5 {
      id = $2; sub(/\.scope$/, "", id)
      if (!(id in name) || name[id] !~ /\/(cassandra|hbase)$/) next
      if (id in t0) {
        dt = $1 - t0[id]
        if (dt > 0) {
          k = ++len[id]; t[id, k] = $1; u[id, k] = ($3 - u0[id]) / dt / 1e6
          us[id, k] = ($4 - us0[id]) / dt / 1e6; sy[id, k] = ($5 - sy0[id]) / dt / 1e6
        }
      } else { first[id] = $1 }
      t0[id] = $1; u0[id] = $3; us0[id] = $4; sy0[id] = $5
    }
    function report(id, from, to,   k, a, b, c, m, began, long) {
      if (to - from + 1 < 8) return
      began = t[id, from] - first[id]; long = to - from + 1
      if (long > 10) from = to - 9
      for (k = from; k <= to; k++) { a += u[id, k]; b += us[id, k]; c += sy[id, k] }
      m = to - from + 1
      printf "  %6.0fs %4ds  %5.3f cores (user %5.3f, system %5.3f)  %4.0f us/op (user %4.0f, system %4.0f)\n", began, long, a / m, b / m, c / m, a / m / rate * 1e6, b / m / rate * 1e6, c / m / rate * 1e6
      threads(id, t[id, from] - 1, t[id, to])
    }
    # The JVM threads of container id between two instants, by group, costliest first.
    function threads(id, from, to,   k, g, n, i, j, x, sum, names, cores, line, covered) {
      for (k = 1; k <= tlen[id]; k++)
        if (tt[id, k] > from && tt[id, k] <= to) covered += span[id, tt[id, k]]
      if (covered <= 0) return
      for (x in groups) {
        split(x, g, SUBSEP); if (g[1] != id) continue
        sum = 0
        for (k = 1; k <= tlen[id]; k++)
          if (tt[id, k] > from && tt[id, k] <= to) sum += cpu[id, tt[id, k], g[2]]
        if (sum <= 0) continue
        names[++n] = g[2]; cores[n] = sum / covered
      }
      if (!n) return
      for (i = 2; i <= n; i++) # insertion sort, costliest first: a JVM has a few dozen groups
        for (j = i; j > 1 && cores[j] > cores[j - 1]; j--) { x = cores[j]; cores[j] = cores[j - 1]; cores[j - 1] = x; x = names[j]; names[j] = names[j - 1]; names[j - 1] = x }
      line = "          threads:"
      for (i = 1; i <= n && i <= 6; i++) line = line sprintf(" %s %.3f", names[i], cores[i])
      print line
    }
    END {
      for (id in len) {
        print name[id] " (" substr(id, 1, 13) "): each burst from (seconds after the first sample), for, then its last 10 s:"
        start = 0
        for (k = 1; k <= len[id]; k++) {
          if (u[id, k] > 0.25) { if (!start) start = k }
          else if (start) { report(id, start, k - 1); start = 0 }
        }
        if (start) report(id, start, len[id])
      }
    }' "$out"/node-*.txt # each container lives on one node, whose file is in time order
}

case ${1:-} in
  record) shift; record "$@" ;;
  bursts) bursts ;;
  *) echo "usage: cpu-trace.sh record SECONDS | bursts" >&2; exit 2 ;;
esac
