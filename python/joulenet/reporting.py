"""A self-contained HTML report of a sweep store: a one-screen summary (the
winner of each metric, its margin, whether the intervals overlap), then per
scenario the runs, tables of means with 95% intervals in SI units, and
plots (inline SVG); the manifest last.

CLI: ``joulenet-report SWEEP_DB -o report.html`` or
``python -m joulenet report SWEEP_DB -o report.html``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import html
import io
import os
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence, Union

import pandas as pd

from . import units
from .store import Store

REPORT_METRICS = [
    "aggregate_goodput_bps", "energy_j", "energy_per_bit_j", "efficiency",
    "energy_overhead", "duration_s", "flows_completed",
]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; }
td:first-child, th:first-child { text-align: left; }
.fig { display: inline-block; margin: 0.5em; vertical-align: top; }
.fig svg { max-width: 520px; height: auto; }
code { background: #f4f4f4; padding: 0 0.2em; }
.err { color: #a00; }
"""


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    text = buf.getvalue()
    return text[text.find("<svg"):]


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, border=0, na_rep="–", float_format=lambda v: f"{v:.6g}")


def _cells(agg: pd.DataFrame) -> pd.DataFrame:
    """Each row's ``mean (lo–hi)`` in the SI unit chosen for its metric,
    ``†`` marking a bootstrap interval; adds ``cell`` and ``column``."""
    agg = agg.copy()
    agg["cell"], agg["column"] = "", ""
    for key, rows in agg.groupby("metric"):
        base = units.to_base(str(key))
        values = pd.concat([rows["mean"], rows["hi"]]).dropna() * base
        divisor, unit = units.si_prefix(values, units.metric(str(key)).unit)
        scaled = values / divisor
        digits = units.decimals(float(scaled.abs().max()) if len(scaled) else 0.0)
        f = lambda v: f"{v * base / divisor:.{digits}f}"  # noqa: E731
        for i, r in rows.iterrows():
            if pd.isna(r["mean"]):
                cell = "–"
            elif r["method"] == "single" or pd.isna(r["lo"]):
                cell = f(r["mean"])
            else:
                mark = "†" if r["method"] == "bootstrap" else ""
                cell = f"{f(r['mean'])} ({f(r['lo'])}–{f(r['hi'])}){mark}"
            agg.at[i, "cell"] = cell
            agg.at[i, "column"] = units.axis_label(str(key), unit)
    return agg


def _compare(rows: pd.DataFrame, better: str) -> Optional[dict]:
    """The best row of ``rows`` against the runner-up."""
    rows = rows.dropna(subset=["mean"]).sort_values("mean", ascending=(better == "lower"))
    if len(rows) < 2:
        return None
    best, second = rows.iloc[0], rows.iloc[1]
    margin = (abs(best["mean"] - second["mean"]) / abs(second["mean"])
              if second["mean"] else float("inf"))
    single = pd.isna(best["lo"]) or pd.isna(second["lo"])
    overlap = not single and best["lo"] <= second["hi"] and second["lo"] <= best["hi"]
    return {"best": best, "second": second, "margin": margin, "single": single,
            "overlap": overlap}


def _summary(agg: pd.DataFrame, params: List[str]) -> List[dict]:
    """Per metric with a better direction, who wins. With a protocol
    parameter beside others, protocols are compared at each point of the
    others and the summary counts the wins; otherwise every point is a
    contender."""
    hue = next((p for p in params if "protocol" in p), None)
    others = [p for p in params if p != hue] if hue else []
    contender = [hue] if hue else params
    name = lambda r: ", ".join(f"{units.parameter_label(g)} {r[g]}" for g in contender)  # noqa: E731
    out = []
    for key, rows in agg.groupby("metric"):
        m = units.metric(str(key))
        if m.better is None:
            continue
        groups = [c for _, g in rows.groupby(others)
                  if (c := _compare(g, m.better))] if others else \
            [c for c in [_compare(rows, m.better)] if c]
        if not groups:
            continue
        winners = pd.Series([name(c["best"]) for c in groups])
        counts = winners.value_counts()
        top = counts.index[0]
        mine = [c for c, w in zip(groups, winners) if w == top]
        out.append({
            "metric": units.axis_label(str(key), ""), "better": m.better, "winner": top,
            "wins": len(mine), "points": len(groups),
            "others": [(w, int(n)) for w, n in counts.items() if w != top],
            "tie": all(c["margin"] == 0 for c in mine),
            "example": mine[0], "margins": [c["margin"] for c in mine],
            "separate": sum(not c["overlap"] and not c["single"] for c in mine),
            "single": all(c["single"] for c in mine),
        })
    return out


def _summary_html(scenario: str, rows: List[dict]) -> str:
    if not rows:
        return ""
    items = []
    for r in rows:
        ex = r["example"]
        lo, hi = min(r["margins"]), max(r["margins"])
        margin = f"{lo:.0%}" if lo == hi else f"{lo:.0%}–{hi:.0%}"
        where = "" if r["points"] == 1 else f" at {r['wins']} of {r['points']} points"
        where += "".join(f"; {html.escape(str(w))} at {n}" for w, n in r["others"])
        if r["tie"]:
            items.append(f"<tr><td>{html.escape(r['metric'])}</td><td colspan='3'>equal "
                         f"everywhere ({html.escape(ex['best']['cell'])})</td></tr>")
            continue
        if r["single"]:
            verdict = "one seed: no interval"
        elif r["points"] == 1:
            verdict = ("intervals do not overlap" if r["separate"] else
                       "intervals overlap: not a clear winner")
        else:
            verdict = f"intervals separate at {r['separate']} of {r['wins']}"
        items.append(
            f"<tr><td>{html.escape(r['metric'])} ({r['better']} is better)</td>"
            f"<td><b>{html.escape(str(r['winner']))}</b>{where}</td>"
            f"<td>{margin} ahead of the next; e.g. {html.escape(ex['best']['cell'])} vs "
            f"{html.escape(ex['second']['cell'])}</td><td>{verdict}</td></tr>")
    return (f"<h3>{html.escape(scenario)}</h3><table><tr><th>metric</th><th>best</th>"
            f"<th>margin</th><th>95% intervals</th></tr>{''.join(items)}</table>")


def _legend(agg: pd.DataFrame) -> str:
    keys = set(agg["metric"])
    defs = [f"<li><b>{html.escape(units.axis_label(k, ''))}</b>: "
            f"{html.escape(units.metric(k).definition)}</li>"
            for k in sorted(keys) if units.metric(k).definition]
    note = ("<li>(lo–hi): 95% interval of the mean over seeds, Student's t; † percentile "
            "bootstrap (4000 resamples) where t would leave the quantity's range (below 0, "
            "or above 1 for a fraction)</li>")
    return f"<ul class='legend'>{''.join(defs)}{note}</ul>"


def _is_num(series: pd.Series) -> bool:
    vals = series.dropna()
    return len(vals) > 0 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)


def write_report(
    store: Union[str, "os.PathLike[str]", Store],
    out: Union[str, "os.PathLike[str]"] = "report.html",
    title: Optional[str] = None,
    metrics: Sequence[str] = REPORT_METRICS,
) -> str:
    """Write the report of every scenario in ``store`` to ``out``; returns
    the path written."""
    from . import plot

    own = not isinstance(store, Store)
    st = Store(store) if own else store
    try:
        parts: List[str] = []
        summary: List[str] = []
        title = title or f"joulenet sweep report: {Path(st.path).name}"
        for h in st.scenario_hashes():
            res = st.results(scenario_hash=h)
            runs = res.runs
            name = runs["scenario"].iloc[0]
            params = res.params
            parts.append(f"<h2>Scenario <code>{html.escape(str(name))}</code> "
                         f"(hash {h})</h2>")
            counts = runs.groupby(["joulenet_version", "outcome"]).size().reset_index(name="runs")
            parts.append("<h3>Runs</h3>" + _table(counts))
            errors = runs[runs["outcome"] != "ok"]
            if not errors.empty:
                parts.append("<h3 class='err'>Failed runs</h3>"
                             + _table(errors[params + ["seed", "error"]]))
            df = res.df
            if df.empty:
                continue
            agg = res.aggregate(metrics)
            if not agg.empty:
                agg = _cells(agg)
                index = params if params else []
                summary.append(_summary_html(str(name), _summary(agg, index)))
                if index:
                    wide = agg.pivot_table(index=index, columns="column", values="cell",
                                           aggfunc="first").reset_index()
                    n = agg.groupby(index)["n"].max().reset_index()
                    wide = wide.merge(n.rename(columns={"n": "seeds"}), on=index)
                    wide = wide.rename(columns={p: units.parameter_label(p) for p in index})
                else:
                    wide = agg.set_index("column")[["cell"]].T
                parts.append("<h3>Means and 95% intervals over seeds</h3>" + _table(wide)
                             + _legend(agg))
            figs = []
            hue = next((p for p in params if "protocol" in p), None) or next(
                (p for p in params if not _is_num(runs[p])), None)
            xs = [p for p in params if p != hue and _is_num(runs[p]) and runs[p].nunique() > 1]
            for x in xs[:2]:
                for m in ("aggregate_goodput_bps", "energy_per_bit_j"):
                    figs.append(plot.metric_vs_param(res, x, m, hue=hue))
            by = hue or (params[0] if params else None)
            if by is not None:
                for m in ("energy_j", "aggregate_goodput_bps"):
                    figs.append(plot.box(res, m, by))
            flows = res.flows
            if not flows.empty:
                figs.append(plot.goodput_cdf(flows, hue="protocol"))
            if figs:
                parts.append("<h3>Figures</h3>")
                parts.extend(f"<div class='fig'>{_svg(f)}</div>" for f in figs)
        head = [f"<h1>{html.escape(title)}</h1>",
                f"<p>Generated {_dt.datetime.now().isoformat(timespec='seconds')} from "
                f"<code>{html.escape(str(st.path))}</code>.</p>"]
        if any(summary):
            head.append("<h2>Summary</h2>" + "".join(summary))
        man = pd.DataFrame(sorted(st.manifest().items()), columns=["key", "value"])
        tail = ["<h2>Manifest</h2>" + _table(man)]
        sweeps = pd.DataFrame(st.sweeps())
        if not sweeps.empty:
            tail.append("<h2>Sweeps</h2>" + _table(sweeps))
        body = "".join(head + parts + tail)
        page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
                f"</title><style>{_CSS}</style></head><body>{body}</body></html>")
        Path(out).write_text(page, encoding="utf-8")
        return str(out)
    finally:
        if own:
            st.close()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``joulenet-report SWEEP_DB -o report.html``."""
    ap = argparse.ArgumentParser(
        prog="joulenet-report",
        description="Write a self-contained HTML report of a joulenet sweep store.")
    ap.add_argument("db", help="the sweep's SQLite store")
    ap.add_argument("-o", "--output", default="report.html", help="HTML file to write")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    if not Path(args.db).exists():
        print(f"joulenet-report: {args.db}: no such file", file=sys.stderr)
        return 2
    path = write_report(args.db, args.output, title=args.title)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
