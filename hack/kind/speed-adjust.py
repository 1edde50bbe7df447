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

With a second argument, the per-second log of go run ./hack/speed-reference run on the same
machine during the study, it also scales each run by how fast a fixed piece of work ran during
the run's window (its start and end in the report), against the median over all runs: once by
the compute unit, once by the memory unit. That reference measures the machine and nothing of
the client.

Usage: hack/kind/speed-adjust.py bin/demo/report.json [speed-reference.tsv]
"""
import datetime
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


def reference(path):
    """Seconds of the speed-reference log: unix second -> (compute ns, memory ns)."""
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 4:
            out[int(f[0])] = (float(f[1]), float(f[2]))
    return out


def window_speed(ref, run, kind):
    """Mean CPU-ns per unit of the reference over the run's window, or None."""
    if not run.get("start") or not run.get("end"):
        return None
    parse = lambda t: int(datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp())
    seconds = [ref[t][kind] for t in range(parse(run["start"]), parse(run["end"])) if t in ref]
    return statistics.mean(seconds) if len(seconds) >= 5 else None


def main(path, reference_path=None):
    report = json.load(open(path))
    cells = report["cells"]
    ref = reference(reference_path) if reference_path else None
    covariates = [("client-speed adjusted", 1)]
    if ref:
        covariates += [("compute-reference adjusted", 2), ("memory-reference adjusted", 3)]
    runs = {}
    for c in cells:
        byround = {}
        for r in c.get("runCosts") or []:
            if not (r.get("serverCPUMicrosPerOp") and r.get("clientCPUMicrosPerOp")):
                continue
            row = [r["serverCPUMicrosPerOp"], r["clientCPUMicrosPerOp"]]
            if ref:
                row += [window_speed(ref, r, 0), window_speed(ref, r, 1)]
                if None in row:
                    continue
            byround[r["round"]] = tuple(row)
        runs[c["name"]] = byround
    medians = {n: [statistics.median(r[i] for r in v.values()) for i in range(len(next(iter(v.values()))))] for n, v in runs.items() if v}
    if ref:
        # The reference measures the machine, not the cell: one median over every run, so that
        # scaling cannot move one cell against another.
        overall = [statistics.median(r[i] for v in runs.values() for r in v.values()) for i in (2, 3)]
        for m in medians.values():
            m[2:] = overall
    for i, (label, _) in enumerate(covariates):
        server_dev, dev = [], []
        for name, v in runs.items():
            if v:
                server_dev += [r[0] / medians[name][0] - 1 for r in v.values()]
                dev += [r[i + 1] / medians[name][i + 1] - 1 for r in v.values()]
        if len(server_dev) > 2:
            print(f"server CPU per operation against {label.split()[0]}, each run against its median: correlation "
                  f"{statistics.correlation(server_dev, dev):.2f} over {len(server_dev)} runs")
    for c in cells:
        if c["profile"] == report["baseline"]:
            continue
        base = next(b for b in cells if b["profile"] == report["baseline"] and b["acceleration"] == c["acceleration"] and b["nodes"] == c["nodes"])
        rounds = sorted(set(runs[c["name"]]) & set(runs[base["name"]]))
        if len(rounds) < 6:
            print(f"{c['name']}: {len(rounds)} paired rounds, too few for an interval")
            continue

        def adjusted(name, rnd, covariate):
            server = runs[name][rnd][0]
            if covariate == 0:
                return server
            return server * medians[name][covariate] / runs[name][rnd][covariate]

        for label, covariate in [("as the study computes it", 0)] + covariates:
            d = [math.log(adjusted(c["name"], r, covariate) / adjusted(base["name"], r, covariate)) for r in rounds]
            est, lo, hi = paired(d)
            half = max(overhead(hi) - overhead(est), overhead(est) - overhead(lo))
            print(f"{c['name']:28s} {label:26s} {overhead(est):5.1f}% ({overhead(lo):.1f}..{overhead(hi):.1f}%), "
                  f"widest side {half:.1f} points, {len(rounds)} pairs")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
