#!/usr/bin/env python3
"""Would a machine-speed covariate narrow a study's intervals? Reads a study report's JSON
(make demo writes bin/demo/report.json) and, for every non-baseline cell, prints the paired
overhead on server CPU per operation as the study computes it (Hodges-Lehmann estimate of the
per-round log ratios against the baseline of the same acceleration and size, exact Wilcoxon
signed-rank 95% interval), beside the same with each run's server figure scaled by how far its
client's CPU per operation lay from its cell's median.

Why: on one machine, client and server run on the same cores. When the host lends the VM more
or less speed (a busy hyperthread sibling, a clock change), both spend more or less CPU time per
operation. In one make demo study (2026-12-01) the server and client figures of three of its
four cells fell together by 13 to 23% for one round, and across its 32 runs the two deviations
from their cell's median correlated at 0.86. The client does the same work per operation within a cell, so
its deviation measures the machine. This is an analysis of the evidence, not the study's method:
the adjustment holds only where the clients share the servers' hardware, and in two of six
demo studies it widened the widest interval (README, "Where a round's time went").

Usage: hack/kind/speed-adjust.py bin/demo/report.json
"""
import itertools
import json
import math
import statistics
import sys


def signed_rank_critical(n, alpha=0.05):
    """Largest T with P(W <= T) <= alpha/2 under H0 (exact), or -1 when none."""
    counts = {0: 1}
    for rank in range(1, n + 1):
        nxt = dict(counts)
        for s, c in counts.items():
            nxt[s + rank] = nxt.get(s + rank, 0) + c
        counts = nxt
    total, cum, t = 2 ** n, 0, -1
    for s in sorted(counts):
        cum += counts[s]
        if cum / total > alpha / 2:
            break
        t = s
    return t


def paired(d):
    walsh = sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(d, 2))
    k = signed_rank_critical(len(d)) + 1
    if k < 1:
        return statistics.median(walsh), None, None
    return statistics.median(walsh), walsh[k - 1], walsh[-k]


def overhead(x):
    return 100 * (1 - math.exp(-x))


def main(path):
    report = json.load(open(path))
    cells = report["cells"]
    runs = {}
    for c in cells:
        byround = {}
        for r in c.get("runCosts") or []:
            if r.get("serverCPUMicrosPerOp") and r.get("clientCPUMicrosPerOp"):
                byround[r["round"]] = (r["serverCPUMicrosPerOp"], r["clientCPUMicrosPerOp"])
        runs[c["name"]] = byround
    medians = {n: statistics.median(c for _, c in v.values()) for n, v in runs.items() if v}
    server_dev, client_dev = [], []
    for v in runs.values():
        if v:
            ms, mc = statistics.median(s for s, _ in v.values()), statistics.median(c for _, c in v.values())
            server_dev += [s / ms - 1 for s, _ in v.values()]
            client_dev += [c / mc - 1 for _, c in v.values()]
    if len(server_dev) > 2:
        print(f"server and client CPU per operation, each run against its cell's median: correlation "
              f"{statistics.correlation(server_dev, client_dev):.2f} over {len(server_dev)} runs")
    for c in cells:
        if c["profile"] == report["baseline"]:
            continue
        base = next(b for b in cells if b["profile"] == report["baseline"] and b["acceleration"] == c["acceleration"] and b["nodes"] == c["nodes"])
        rounds = sorted(set(runs[c["name"]]) & set(runs[base["name"]]))
        if len(rounds) < 6:
            print(f"{c['name']}: {len(rounds)} paired rounds, too few for an interval")
            continue

        def adjusted(name, rnd, beta):
            server, client = runs[name][rnd]
            return server * (medians[name] / client) ** beta

        for label, beta in (("as the study computes it", 0), ("client-speed adjusted", 1)):
            d = [math.log(adjusted(c["name"], r, beta) / adjusted(base["name"], r, beta)) for r in rounds]
            est, lo, hi = paired(d)
            half = max(overhead(hi) - overhead(est), overhead(est) - overhead(lo))
            print(f"{c['name']:28s} {label:25s} {overhead(est):5.1f}% ({overhead(lo):.1f}..{overhead(hi):.1f}%), "
                  f"widest side {half:.1f} points, {len(rounds)} pairs")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
