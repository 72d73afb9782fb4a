"""Means and 95% intervals, as the CLI reports them: Student's t, or the
percentile bootstrap (4000 resamples, fixed seed) where t would leave the
quantity's domain (a negative count, an efficiency above 1). The same rule
as ``crates/sim/src/interval.rs``."""

from __future__ import annotations

import math
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

_T975 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
    2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074,
    2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]


def t975(df: int) -> float:
    """Two-sided 95% quantile of Student's t with ``df`` degrees of freedom
    (the same table as the Rust side)."""
    if df <= 0:
        return math.nan
    if df <= 30:
        return _T975[df - 1]
    if df <= 60:
        return 2.042 - (df - 30) * (2.042 - 2.000) / 30.0
    if df <= 120:
        return 2.000 - (df - 60) * (2.000 - 1.980) / 60.0
    return 1.960


def ci95(values: Iterable[float]) -> float:
    """Half-width of the 95% confidence interval of the mean (NaN for n < 2)."""
    xs = [float(x) for x in values if x is not None and not pd.isna(x)]
    n = len(xs)
    if n < 2:
        return math.nan
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return t975(n - 1) * math.sqrt(var / n)


BOOTSTRAP_RESAMPLES = 4000
_BOOTSTRAP_SEED = 0x6A6F756C656E6574  # "joulenet"


def _inside(x: float, domain: str) -> bool:
    if domain == "nonnegative":
        return x >= 0
    if domain == "unit":
        return 0 <= x <= 1
    return True


def interval95(values: Iterable[float], domain: str = "real") -> Tuple[float, float, str]:
    """(lo, hi, method) of the 95% interval of the mean of ``values``.

    ``domain`` is ``"real"``, ``"nonnegative"`` or ``"unit"`` ([0, 1]).
    Student's t unless it would leave the domain; then the percentile
    bootstrap of the mean, which stays within the samples' range. ``method``
    is ``"t"``, ``"bootstrap"`` or ``"single"`` (fewer than two values: NaN
    bounds)."""
    xs = np.array([float(x) for x in values if x is not None and not pd.isna(x)])
    if len(xs) < 2:
        return math.nan, math.nan, "single"
    mean, half = float(xs.mean()), ci95(xs)
    lo, hi = mean - half, mean + half
    if _inside(lo, domain) and _inside(hi, domain):
        return lo, hi, "t"
    rng = np.random.Generator(np.random.PCG64(_BOOTSTRAP_SEED))
    means = xs[rng.integers(0, len(xs), size=(BOOTSTRAP_RESAMPLES, len(xs)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi), "bootstrap"


def mean_ci(
    df: pd.DataFrame,
    by: Union[str, Sequence[str]],
    value: str = "value",
    domain: Optional[str] = None,
) -> pd.DataFrame:
    """Per group of ``by``: ``n``, ``mean``, ``std``, ``ci95`` (Student's t
    half-width), ``lo``, ``hi`` and ``method`` (:func:`interval95`). NaN
    values are ignored.

    ``domain`` bounds the interval; by default it is each metric's own
    (:mod:`joulenet.units`) when ``by`` includes ``metric``, else the reals
    (plain mean ± t).

    >>> mean_ci(res.df.query("metric == 'energy_j'"), by=["flow.protocol"], domain="nonnegative")
    """
    from .units import metric as describe

    by_list: List[str] = [by] if isinstance(by, str) else list(by)
    frame = df if by_list else df[[value]].assign(_all=0)
    keys = by_list or ["_all"]
    g = frame.groupby(keys, sort=True, dropna=False)[value]
    out = g.agg(n="count", mean="mean", std="std")
    out["ci95"] = g.agg(ci95)
    bounds = []
    for key, values in g:
        row_key = key if isinstance(key, tuple) else (key,)
        dom = domain
        if dom is None:
            dom = describe(str(row_key[keys.index("metric")])).domain if "metric" in keys else "real"
        bounds.append(interval95(values, dom))
    out["lo"] = [b[0] for b in bounds]
    out["hi"] = [b[1] for b in bounds]
    out["method"] = [b[2] for b in bounds]
    out = out.reset_index()
    if not by_list:
        out = out.drop(columns="_all")
    return out


def metric_mean_ci(
    tidy: pd.DataFrame,
    metric: str,
    by: Union[str, Sequence[str]],
    kind: Optional[str] = None,
) -> pd.DataFrame:
    """:func:`mean_ci` of one metric of a tidy (long-format) sweep frame,
    its interval kept inside the metric's domain."""
    from .units import metric as describe

    sel = tidy[tidy["metric"] == metric]
    if kind is not None:
        sel = sel[sel["kind"] == kind]
    return mean_ci(sel, by, domain=describe(metric).domain)
