#!/usr/bin/env python3
"""Turn the figure CSVs that `joulenet reproduce` writes into PNGs.

Usage: plot_reproduction.py <dir>

Every `fig_<name>.csv` in <dir> starts with a comment line
`# title|xlabel|ylabel|logx` followed by `x,series,y` rows; it becomes
`<name>.png` beside it, one line per series. Deterministic: no timestamps in
the files, series in order of first appearance.
"""
import csv
import sys
from pathlib import Path

try:
    import matplotlib
except ImportError:
    # joulenet prints what to do; a traceback would only hide it.
    sys.exit(3)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(path: Path) -> Path:
    with path.open() as f:
        title, xlabel, ylabel, logx = f.readline().lstrip("# ").rstrip("\n").split("|")
        series = {}
        for row in csv.DictReader(f):
            series.setdefault(row["series"], []).append((float(row["x"]), float(row["y"])))
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for name, pts in series.items():
        pts.sort()
        style = "--" if "paper" in name else "-"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=3, label=name)
    if logx == "true":
        ax.set_xscale("log")
        ax.invert_xaxis()  # the papers put the worst channel (shortest good state) on the right
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    out = path.with_name(path.stem[len("fig_"):] + ".png")
    fig.savefig(out, metadata={"Software": None})
    plt.close(fig)
    return out


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    files = sorted(Path(sys.argv[1]).glob("fig_*.csv"))
    for f in files:
        plot(f)
    print(f"{len(files)} figure(s) in {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
