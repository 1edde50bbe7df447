"""Reference values for internal/stats, computed with SciPy and brute force.

Regenerate (needs scipy; not part of the tests):
    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install scipy
    /tmp/ref/bin/python internal/stats/testdata/reference.py > internal/stats/testdata/reference.json

p-values come from scipy.stats.mannwhitneyu; the median's order-statistic interval from
scipy.stats.binom; the Hodges-Lehmann interval from the exact null distribution of U obtained
by enumerating every assignment of ranks (independent of the Go recurrence), or from the
normal approximation when there are ties.
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
print(json.dumps(out, indent=1))
