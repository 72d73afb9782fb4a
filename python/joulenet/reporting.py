"""A self-contained HTML report of a sweep store: manifest, runs, tables of
mean ± 95% CI per parameter point, and plots (inline SVG).

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

from .store import Store

REPORT_METRICS = [
    "aggregate_goodput_bps", "energy_j", "energy_per_bit_j", "efficiency",
    "duration_s", "flows_completed",
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


def _fmt_ci(mean: float, ci: float) -> str:
    if pd.isna(mean):
        return "–"
    if pd.isna(ci):
        return f"{mean:.4g}"
    return f"{mean:.4g} ± {ci:.2g}"


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
        title = title or f"joulenet sweep report: {Path(st.path).name}"
        parts.append(f"<h1>{html.escape(title)}</h1>")
        parts.append(f"<p>Generated {_dt.datetime.now().isoformat(timespec='seconds')} from "
                     f"<code>{html.escape(str(st.path))}</code>.</p>")
        man = pd.DataFrame(sorted(st.manifest().items()), columns=["key", "value"])
        parts.append("<h2>Manifest</h2>" + _table(man))
        sweeps = pd.DataFrame(st.sweeps())
        if not sweeps.empty:
            parts.append("<h2>Sweeps</h2>" + _table(sweeps))
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
                agg["cell"] = [_fmt_ci(m, c) for m, c in zip(agg["mean"], agg["ci95"])]
                index = params if params else []
                if index:
                    wide = agg.pivot_table(index=index, columns="metric", values="cell",
                                           aggfunc="first").reset_index()
                else:
                    wide = agg.set_index("metric")[["cell"]].T
                n = agg.groupby(index)["n"].max().reset_index() if index else None
                if n is not None:
                    wide = wide.merge(n.rename(columns={"n": "seeds"}), on=index)
                parts.append("<h3>Mean ± 95% CI over seeds</h3>" + _table(wide))
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
        page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
                f"</title><style>{_CSS}</style></head><body>{''.join(parts)}</body></html>")
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
