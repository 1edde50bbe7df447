"""Reference values for internal/stats, computed with SciPy and brute force.

Regenerate (needs scipy; not part of the tests):
    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install scipy
    /tmp/ref/bin/python internal/stats/testdata/reference.py > internal/stats/testdata/reference.json

p-values come from scipy.stats.mannwhitneyu and scipy.stats.wilcoxon; the median's
order-statistic interval from scipy.stats.binom; the Hodges-Lehmann intervals from the exact
null distributions of U and W+ obtained by enumerating every assignment of ranks or signs
(independent of the Go recurrences), or from the normal approximation when there are ties.
"""
import itertools
import json
import math

import numpy as np
from scipy import stats

LEVEL = 0.95
rng = np.random.default_rng(20261122)


def median_ci(x):
    n, s = len(x), sorted(x)
    best = None
    for j in range(1, n // 2 + 1):
        coverage = 1 - 2 * stats.binom.cdf(j - 1, n, 0.5)
        if coverage < LEVEL:
            break
        best = {"low": s[j - 1], "high": s[n - j], "level": coverage}
    return best


def null_cdf(m, n):
    counts = [0] * (m * n + 1)
    for xs in itertools.combinations(range(m + n), m):
        # U of x = pairs (x, y) with x above y = Σ ranks(x) - m(m+1)/2 with 0-based positions.
        counts[sum(xs) - m * (m - 1) // 2] += 1
    total = sum(counts)
    cdf, acc = [], 0
    for c in counts:
        acc += c
        cdf.append(acc / total)
    return cdf


def hodges_lehmann(x, y):
    m, n = len(x), len(y)
    d = sorted(a - b for a in x for b in y)
    out = {"estimate": float(np.median(d))}
    ties = len(set(x + y)) < m + n
    if not ties and math.comb(m + n, m) <= 2_000_000:
        cdf = null_cdf(m, n)
        k = 0
        while k < len(cdf) and cdf[k] <= (1 - LEVEL) / 2 + 1e-12:
            k += 1
        level = 1 - 2 * cdf[k - 1] if k > 0 else None
    else:
        _, counts = np.unique(np.array(x + y), return_counts=True)
        t = float(np.sum(counts ** 3 - counts))
        total = m + n
        sigma = math.sqrt(m * n / 12 * ((total + 1) - t / (total * (total - 1))))
        k = math.floor(m * n / 2 - stats.norm.ppf(1 - (1 - LEVEL) / 2) * sigma)
        level = LEVEL
    if k >= 1:
        out["ci"] = {"low": d[k - 1], "high": d[m * n - k], "level": level}
    return out


def sample(n, centre, spread, decimals=0):
    return [float(v) for v in np.round(rng.normal(centre, spread, n), decimals)]


pairs = {
    "3v3": ([1000.0, 1012.0, 990.0], [800.0, 830.0, 815.0]),
    "4v4": ([1000.0, 1012.0, 990.0, 1005.0], [800.0, 830.0, 815.0, 790.0]),
    "5v5 overlapping": ([10.0, 12.5, 9.7, 11.2, 13.1], [9.9, 12.0, 10.4, 14.2, 11.9]),
    "4v6": (sample(4, 5000, 200), sample(6, 4700, 200)),
    "8v8": (sample(8, 21000, 900), sample(8, 20500, 900)),
    "5v5 ties": ([100.0, 100.0, 102.0, 98.0, 101.0], [99.0, 100.0, 97.0, 97.0, 96.0]),
    "10v12 ties": (sample(10, 50, 3), sample(12, 47, 3)),
    "60v50": (sample(60, 3000, 150, 3), sample(50, 2950, 150, 3)),
}

out = {"level": LEVEL, "median": [], "mannWhitney": [], "hodgesLehmann": []}
for name, x in {"n3": sample(3, 100, 10), "n5": sample(5, 100, 10), "n6": sample(6, 100, 10),
                "n8": sample(8, 100, 10), "n11": sample(11, 100, 10), "n20": sample(20, 100, 10)}.items():
    out["median"].append({"name": name, "x": x, "median": float(np.median(x)), "ci": median_ci(x)})
for name, (x, y) in pairs.items():
    ties = len(set(x + y)) < len(x) + len(y)
    exact = not ties and len(x) * len(y) <= 2500
    r = stats.mannwhitneyu(x, y, alternative="two-sided", method="exact" if exact else "asymptotic",
                           use_continuity=True)
    out["mannWhitney"].append({"name": name, "x": x, "y": y, "u": float(r.statistic),
                               "p": float(r.pvalue), "exact": exact})
    hl = hodges_lehmann(x, y)
    hl.update({"name": name, "x": x, "y": y})
    out["hodgesLehmann"].append(hl)


def signed_rank_null_cdf(n):
    counts = [0] * (n * (n + 1) // 2 + 1)
    for signs in itertools.product((0, 1), repeat=n):
        counts[sum(r + 1 for r, s in enumerate(signs) if s)] += 1
    total, cdf, acc = 2 ** n, [], 0
    for c in counts:
        acc += c
        cdf.append(acc / total)
    return cdf


def paired_shift(d):
    n = len(d)
    w = sorted((d[i] + d[j]) / 2 for i in range(n) for j in range(i, n))
    out = {"estimate": float(np.median(w))}
    a = [abs(v) for v in d]
    ties = len(set(a)) < n
    if not ties and 0.0 not in d:
        cdf = signed_rank_null_cdf(n)
        k = 0
        while k < len(cdf) and cdf[k] <= (1 - LEVEL) / 2 + 1e-12:
            k += 1
        level = 1 - 2 * cdf[k - 1] if k > 0 else None
    else:
        _, counts = np.unique(np.array(a), return_counts=True)
        t = float(np.sum(counts ** 3 - counts))
        sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - t / 48)
        k = math.floor(len(w) / 2 - stats.norm.ppf(1 - (1 - LEVEL) / 2) * sigma)
        level = LEVEL
    if k >= 1:
        out["ci"] = {"low": w[k - 1], "high": w[len(w) - k], "level": level}
    return out


def log_ratios(cell, base):
    return [math.log(c) - math.log(b) for c, b in zip(cell, base)]


drift = sample(8, 3000, 1200)
paired = {
    "5 rounds": sample(5, -0.1, 0.05, 3),
    "6 rounds": sample(6, -0.1, 0.05, 3),
    "8 rounds drifting": log_ratios([v * 0.9 * (1 + e) for v, e in zip(drift, sample(8, 0, 0.02, 4))], drift),
    "12 rounds around zero": sample(12, 0, 0.05, 4),
    "10 rounds ties": sample(10, -0.05, 0.03, 2),
    "7 rounds with a zero": [-0.12, -0.08, 0.0, -0.15, 0.03, -0.11, -0.09],
    "60 rounds": sample(60, -0.02, 0.05, 4),
}
out["signedRank"], out["pairedShift"] = [], []
for name, d in paired.items():
    nz = [v for v in d if v != 0]
    a = [abs(v) for v in nz]
    exact = len(set(a)) == len(a) and len(nz) == len(d) and len(d) <= 50
    ranks = stats.rankdata(a)
    r = stats.wilcoxon(d, zero_method="wilcox", correction=False, alternative="two-sided",
                       method="exact" if exact else "approx")
    out["signedRank"].append({"name": name, "d": d, "wPlus": float(sum(rk for rk, v in zip(ranks, nz) if v > 0)),
                              "p": float(r.pvalue), "exact": exact})
    ps = paired_shift(d)
    ps.update({"name": name, "d": d})
    out["pairedShift"].append(ps)
print(json.dumps(out, indent=1))
