#!/usr/bin/env python3
"""Where does the spread of a study's pairs come from? Reads a study report's JSON (make demo
writes bin/demo/report.json: each run's window, the datastore each cell measured) and what
hack/kind/cpu-trace.sh recorded beside the study (bin/cpu-trace: the kernel's cpu.stat of every
container once a second, the CPU time of each JVM thread every other second), and prints, for
every pair the analysis makes (a cell's run against the baseline's run of the same round and
setting):

- the pair's log ratio (x100) on the report's server CPU per operation (the kubelets' samples
  inside the window) and on the container's counter read at the window's exact edges (the
  once-a-second samples interpolated), with their standard deviations: if the second spreads
  much less, the kubelets' sampling is what widens the intervals;
- which JVM thread groups (a thread's name without its number) carry the variance of the pairs'
  differences in CPU-µs per operation: each group's covariance with the total over the total's
  variance, so that the shares add up to 1, with the group's mean and standard deviation.

Both figures divide by the run's throughput times its window, the operations at a fixed rate.
An analysis of the evidence, not the study's method.

Usage: hack/kind/run-threads.py bin/demo/report.json [bin/cpu-trace]
"""
import bisect
import collections
import datetime
import glob
import itertools
import json
import math
import os
import re
import statistics
import sys


def trace(directory, pods):
    """The datastore containers' counters: pod -> [(t, usage µs)], pod -> thread -> [(t, ns)], names."""
    ids = {}
    for line in open(os.path.join(directory, "names.txt")):
        f = line.split()
        if len(f) == 2 and f[1].rsplit("/", 1)[0].split("/", 1)[-1] in pods and f[1].rsplit("/", 1)[1] in ("cassandra", "hbase"):
            ids[f[0]] = f[1].split("/")[1]
    usage = collections.defaultdict(list)
    threads = collections.defaultdict(lambda: collections.defaultdict(list))
    group = {}
    for path in glob.glob(os.path.join(directory, "node-*.txt")):
        for line in open(path):
            f = line.split()
            if len(f) < 5:
                continue
            pod = ids.get(f[1].removesuffix(".scope"))
            if pod is None:
                continue
            if f[2] == "T" and len(f) >= 6:
                threads[pod][f[3]].append((float(f[0]), int(f[4])))
                group[pod, f[3]] = re.sub(r"[-#:]?[0-9]+$", "", " ".join(f[5:]))
            elif len(f) == 5:
                usage[pod].append((float(f[0]), int(f[2])))
    return usage, threads, group


def at(series, t):
    """The counter at t, interpolated between the samples either side; None outside them."""
    i = bisect.bisect_left(series, (t,))
    if i == 0 or i == len(series):
        return None
    (t0, v0), (t1, v1) = series[i - 1], series[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def seconds(stamp):
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def hodges_lehmann(d):
    return statistics.median((a + b) / 2 for a, b in itertools.combinations_with_replacement(d, 2))


def main(report_path, directory="bin/cpu-trace"):
    report = json.load(open(report_path))
    cells = [c for c in report["cells"] if c.get("runCosts") and c.get("datastore")]
    if not cells:
        sys.exit("run-threads: the report names no cell's datastore or runs (a report of an older operator?)")
    pods = {c["datastore"] + "-0" for c in cells}
    usage, threads, group = trace(directory, pods)
    for series in usage.values():
        series.sort()
    for per in threads.values():
        for series in per.values():
            series.sort()
    runs = {}
    for c in cells:
        pod = c["datastore"] + "-0"
        for r in c["runCosts"]:
            if not (r.get("start") and r.get("end") and r.get("serverCPUMicrosPerOp")):
                continue
            s, e = seconds(r["start"]), seconds(r["end"])
            a, b = at(usage[pod], s), at(usage[pod], e)
            if a is None or b is None:
                continue
            ops = r["throughputOpsPerSec"] * (e - s)
            by = collections.Counter()
            for tid, series in threads[pod].items():
                x, y = at(series, s), at(series, e)
                if x is not None and y is not None:
                    by[group[pod, tid]] += (y - x) / 1e3 / ops
            runs[c["name"], r["round"]] = {"report": r["serverCPUMicrosPerOp"], "edges": (b - a) / ops, "groups": by}
    if not runs:
        sys.exit(f"run-threads: no run's window lies inside what {directory} recorded")
    for c in cells:
        if c["profile"] == report["baseline"]:
            continue
        base = next(b["name"] for b in cells if b["profile"] == report["baseline"] and b["acceleration"] == c["acceleration"]
                    and b["nodes"] == c["nodes"] and b.get("fieldLength") == c.get("fieldLength"))
        rounds = sorted(r for (n, r) in runs if n == c["name"] and (base, r) in runs)
        if len(rounds) < 3:
            print(f"{c['name']}: {len(rounds)} pairs inside the recording, too few")
            continue
        print(f"{c['name']} against {base}, {len(rounds)} pairs (rounds {', '.join(map(str, rounds))}):")
        for metric, label in (("report", "kubelet samples:"), ("edges", "window's edges:")):
            d = [100 * math.log(runs[c["name"], r][metric] / runs[base, r][metric]) for r in rounds]
            print(f"  log ratio x100, {label:16s} {' '.join('%6.1f' % x for x in d)}   sd {statistics.stdev(d):.1f}, estimate {hodges_lehmann(d):.1f}")
        total = [runs[c["name"], r]["edges"] - runs[base, r]["edges"] for r in rounds]
        var = statistics.pvariance(total)
        print(f"  difference in CPU-µs per operation: mean {statistics.mean(total):.1f}, sd {math.sqrt(var):.1f}; by thread group (share of its variance, mean, sd):")
        shares = []
        for g in set().union(*(runs[n, r]["groups"] for r in rounds for n in (c["name"], base))):
            d = [runs[c["name"], r]["groups"][g] - runs[base, r]["groups"][g] for r in rounds]
            cov = statistics.mean((x - statistics.mean(d)) * (y - statistics.mean(total)) for x, y in zip(d, total))
            shares.append((cov / var if var else 0.0, g, statistics.mean(d), statistics.pstdev(d)))
        for share, g, mean, sd in sorted(shares, reverse=True)[:6]:
            print(f"    {g:24s} {share:5.2f} {mean:8.1f} {sd:6.1f}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
