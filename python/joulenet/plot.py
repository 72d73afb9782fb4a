"""The figures transport papers use, as matplotlib figures.

Every function returns a :class:`matplotlib.figure.Figure` built without
pyplot, so it works without a display (servers, CI); save it with
:func:`save` (PNG, SVG, PDF by extension) or ``fig.savefig``.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, List, Optional, Sequence, Union

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import units
from .stats import mean_ci

Frame = Union[pd.DataFrame, Any]  # a DataFrame or a SweepResult


def _tidy(data: Frame) -> pd.DataFrame:
    return data.df if hasattr(data, "df") and not isinstance(data, pd.DataFrame) else data


def _figure(figsize=(6.4, 4.0)) -> Figure:
    return Figure(figsize=figsize, layout="constrained")


def _scale(metric: str, values: Iterable[float]) -> tuple:
    """(factor from stored values to plotted ones, axis label): the SI
    prefix that reads best for these values, so that no axis carries a
    1e-6 offset."""
    base = units.to_base(metric)
    divisor, unit = units.si_prefix([v * base for v in values], units.metric(metric).unit)
    return base / divisor, units.axis_label(metric, unit)


def _label(metric: str) -> str:
    """``energy_per_bit_j`` → ``energy per bit``, ``efficiency`` → ``ε efficiency``."""
    return units.axis_label(metric, "")


def metric_vs_param(
    data: Frame,
    x: str,
    metric: str,
    hue: Optional[str] = None,
    kind: str = "summary",
    entity: Optional[str] = None,
    logx: bool = False,
    title: Optional[str] = None,
) -> Figure:
    """Mean of ``metric`` against parameter ``x`` with a 95% confidence
    band over seeds, one line per value of ``hue`` (e.g. ``flow.protocol``).

    ``data`` is a :class:`~joulenet.SweepResult` or its tidy ``.df``."""
    df = _tidy(data)
    df = df[(df["metric"] == metric) & (df["kind"] == kind)]
    if entity is not None:
        df = df[df["entity"] == str(entity)]
    by = [hue, x] if hue else [x]
    stats = mean_ci(df, by, domain=units.metric(metric).domain)
    factor, ylabel = _scale(metric, pd.concat([stats["mean"], stats["hi"]]).dropna())
    fig = _figure()
    ax = fig.add_subplot()
    groups = stats.groupby(hue, sort=True) if hue else [(None, stats)]
    for name, g in groups:
        g = g.sort_values(x)
        xs = g[x].to_numpy()
        line = ax.plot(xs, g["mean"] * factor, marker="o", label=str(name) if hue else None)[0]
        lo, hi = g["lo"].to_numpy(dtype=float) * factor, g["hi"].to_numpy(dtype=float) * factor
        ok = ~np.isnan(lo)
        if ok.any():
            ax.fill_between(xs[ok], lo[ok], hi[ok], alpha=0.2, color=line.get_color())
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(units.parameter_label(x))
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if hue:
        ax.legend(title=units.parameter_label(hue))
    ax.set_title(title or f"{_label(metric)}: mean and 95% interval over seeds")
    return fig


def cdf(
    flows: Frame,
    metric: str = "goodput_bps",
    hue: Optional[str] = "protocol",
    scale: Optional[float] = None,
    xlabel: Optional[str] = None,
    title: Optional[str] = None,
) -> Figure:
    """Empirical CDF of a per-flow metric (default goodput), one curve per
    ``hue`` value, in the SI unit that reads best (or multiplied by
    ``scale`` if given). ``flows`` is a flows DataFrame (``.flows`` of a run
    or a sweep) or a SweepResult."""
    df = flows.flows if hasattr(flows, "flows") and not isinstance(flows, pd.DataFrame) else flows
    if scale is None:
        scale, auto_label = _scale(metric, df[metric].dropna().to_numpy(dtype=float))
    else:
        auto_label = f"{_label(metric)} ×{scale:g}"
    fig = _figure()
    ax = fig.add_subplot()
    groups = df.groupby(hue, sort=True) if hue else [(None, df)]
    for name, g in groups:
        v = np.sort(g[metric].dropna().to_numpy(dtype=float) * scale)
        if len(v) == 0:
            continue
        y = np.arange(1, len(v) + 1) / len(v)
        ax.step(v, y, where="post", label=str(name) if hue else None)
    ax.set_xlabel(xlabel or auto_label)
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    if hue:
        ax.legend(title=units.parameter_label(hue))
    ax.set_title(title or f"CDF of per-flow {_label(metric)}")
    return fig


def goodput_cdf(flows: Frame, hue: Optional[str] = "protocol") -> Figure:
    """CDF of per-flow goodput per protocol."""
    return cdf(flows, "goodput_bps", hue)


def box(
    data: Frame,
    metric: str,
    by: str,
    kind: str = "summary",
    title: Optional[str] = None,
) -> Figure:
    """Box plot (median, quartiles, 1.5 IQR whiskers) of ``metric`` over
    runs, one box per value of the column ``by``."""
    df = _tidy(data)
    df = df[(df["metric"] == metric) & (df["kind"] == kind)]
    names: List[Any] = sorted(df[by].dropna().unique(), key=lambda v: (str(type(v)), v))
    values = [df[df[by] == n]["value"].dropna().to_numpy(dtype=float) for n in names]
    factor, ylabel = _scale(metric, np.concatenate(values) if values else [])
    values = [v * factor for v in values]
    fig = _figure()
    ax = fig.add_subplot()
    ax.boxplot(values, showfliers=True)
    ax.set_xticks(range(1, len(names) + 1))
    ax.set_xticklabels([str(n) for n in names])
    ax.set_xlabel(units.parameter_label(by))
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title or f"{_label(metric)} (quartiles)")
    return fig


def timeseries(
    data: Any,
    names: Union[str, Sequence[str]] = "cwnd",
    entity: Optional[Union[str, Iterable[str]]] = None,
    title: Optional[str] = None,
) -> Figure:
    """Time series (``cwnd``, ``rate``, ``goodput``, ``queue``, ``channel``,
    ``wave`` ...) of a :class:`~joulenet.RunResult` or a long series frame,
    one panel per name, one line per entity. ``channel`` (0 good / 1 bad)
    is drawn as steps."""
    df = data.series() if hasattr(data, "series") and not isinstance(data, pd.DataFrame) else data
    names = [names] if isinstance(names, str) else list(names)
    if entity is not None:
        ents = {entity} if isinstance(entity, str) else set(entity)
        df = df[df["entity"].isin(ents)]
    fig = _figure((6.4, 2.4 * len(names) + 0.6))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    for ax, name in zip(axes, names):
        d = df[df["series"] == name]
        for ent, g in d.groupby("entity", sort=True):
            g = g.sort_values("time_s")
            if name == "channel":
                ax.step(g["time_s"], g["value"], where="post", label=str(ent))
            else:
                ax.plot(g["time_s"], g["value"], label=str(ent))
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
        if d["entity"].nunique() > 1:
            ax.legend(fontsize="small")
    axes[-1].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    return fig


def residual_map(
    data: Any,
    flows: Optional[Frame] = None,
    title: Optional[str] = None,
) -> Figure:
    """Each node of a shared medium at its position, coloured by the energy
    left in its battery at the end of the run (``residual_j`` over
    ``battery_j``), dead nodes crossed out, and the measured flows drawn as
    arrows from source to destination. ``data`` is a
    :class:`~joulenet.RunResult` or its ``nodes`` frame (with ``x_m``,
    ``y_m``, ``residual_j``, ``battery_j``, ``died_at_s``)."""
    nodes = data.nodes if hasattr(data, "nodes") and not isinstance(data, pd.DataFrame) else data
    if flows is None and hasattr(data, "flows") and not isinstance(data, pd.DataFrame):
        flows = data.flows
    nodes = nodes.dropna(subset=["x_m", "y_m"])
    fig = _figure((5.6, 4.8))
    ax = fig.subplots()
    share = (nodes["residual_j"] / nodes["battery_j"]).astype(float)
    pos = {int(n): (x, y) for n, x, y in zip(nodes["node"], nodes["x_m"], nodes["y_m"])}
    if flows is not None:
        for _, f in _tidy(flows).iterrows():
            a, b = pos.get(int(f["from"])), pos.get(int(f["to"]))
            if a and b:
                ax.annotate("", xy=b, xytext=a, arrowprops=dict(arrowstyle="->", color="0.6", lw=0.8))
    sc = ax.scatter(nodes["x_m"], nodes["y_m"], c=share, cmap="RdYlGn", vmin=0.0, vmax=1.0, s=140, edgecolors="k", zorder=3)
    dead = nodes[nodes["died_at_s"].notna()]
    ax.scatter(dead["x_m"], dead["y_m"], marker="x", c="k", s=90, zorder=4, label="dead")
    for n, (x, y) in pos.items():
        ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(7, 6), fontsize="x-small")
    fig.colorbar(sc, ax=ax, label="residual / capacity")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_aspect("equal")
    if len(dead):
        ax.legend(fontsize="small", loc="upper right")
    if title:
        ax.set_title(title)
    return fig


def save(fig: Figure, path: Union[str, "os.PathLike[str]"], *more: Union[str, "os.PathLike[str]"], dpi: int = 150) -> None:
    """Save a figure to one or more paths; the format follows the extension
    (``.png``, ``.svg``, ``.pdf``)."""
    for p in (path, *more):
        fig.savefig(p, dpi=dpi)
