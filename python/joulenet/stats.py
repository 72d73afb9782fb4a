"""Means and 95% confidence intervals (Student's t), as the CLI reports them."""

from __future__ import annotations

import math
from typing import Iterable, List, Optional, Sequence, Union

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


def mean_ci(
    df: pd.DataFrame,
    by: Union[str, Sequence[str]],
    value: str = "value",
) -> pd.DataFrame:
    """Per group of ``by``: ``n``, ``mean``, ``std``, ``ci95`` (half-width),
    ``lo`` and ``hi``. NaN values are ignored.

    >>> mean_ci(res.df.query("metric == 'energy_j'"), by=["flow.protocol"])
    """
    by_list: List[str] = [by] if isinstance(by, str) else list(by)
    if not by_list:
        g = df[[value]].assign(_all=0).groupby("_all")[value]
    else:
        g = df.groupby(by_list, sort=True, dropna=False)[value]
    out = g.agg(n="count", mean="mean", std="std")
    out["ci95"] = g.agg(ci95)
    out["lo"] = out["mean"] - out["ci95"]
    out["hi"] = out["mean"] + out["ci95"]
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
    """:func:`mean_ci` of one metric of a tidy (long-format) sweep frame."""
    sel = tidy[tidy["metric"] == metric]
    if kind is not None:
        sel = sel[sel["kind"] == kind]
    return mean_ci(sel, by)
