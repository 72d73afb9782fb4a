#!/usr/bin/env python3
"""Table and plot of scripts/bench-runtime.sh's lossy-link part.

Usage: plot_bench_runtime.py RESULTS.tsv RATE_MBIT OUTDIR
Reads the `link` rows (part, protocol, loss %, goodput Mbit/s), writes
OUTDIR/link.md (one row per loss level, one column per contender, plus the
target 0.9 x (1 - p) x rate and whether the best joulenet protocol meets it
and beats every kernel variant) and OUTDIR/link.png when matplotlib is there.
"""
import math
import sys
from collections import OrderedDict


def main():
    path, rate, outdir = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    data = OrderedDict()  # protocol -> {loss: goodput}
    for line in open(path):
        part, proto, loss, g = line.rstrip("\n").split("\t")
        if part != "link":
            continue
        data.setdefault(proto, {})[float(loss)] = float(g)
    losses = sorted({l for d in data.values() for l in d})
    protos = list(data)
    ours = [p for p in protos if not p.startswith("linux-") and p != "udp"]
    kernel = [p for p in protos if p.startswith("linux-")]
    head = ["loss %"] + protos + ["0.9(1-p)R", "best joulenet", "target met"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for l in losses:
        target = 0.9 * (1 - l / 100) * rate
        vals = {p: data[p].get(l, math.nan) for p in protos}
        best = max(ours, key=lambda p: -1 if math.isnan(vals[p]) else vals[p])
        kbest = max((vals[k] for k in kernel if not math.isnan(vals[k])), default=0.0)
        met = vals[best] >= target and vals[best] > kbest
        cells = ["%g" % l] + ["%.2f" % vals[p] for p in protos]
        cells += ["%.2f" % target, "%s %.2f" % (best, vals[best]), "yes" if met else "no"]
        rows.append("| " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    open(f"{outdir}/link.md", "w").write(table + "\n")
    print(table)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no matplotlib: no plot)")
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, p in enumerate(protos):
        xs = [l for l in losses if l in data[p]]
        style = "--" if p.startswith("linux-") else ("-." if p == "udp" else "-")
        ax.plot(xs, [data[p][l] for l in xs], style, marker="o", label=p,
                color=plt.cm.tab20(i % 20))
    ax.plot(losses, [(1 - l / 100) * rate for l in losses], "k:", label="(1-p)·rate")
    ax.plot(losses, [0.9 * (1 - l / 100) * rate for l in losses], color="grey", ls=":",
            label="0.9·(1-p)·rate")
    ax.set_xlabel("random loss per packet, both directions (%)")
    ax.set_ylabel("receiver goodput (Mbit/s)")
    ax.set_title(f"{rate:g} Mbit/s veth link: joulenet protocols vs Linux TCP")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(f"{outdir}/link.png", dpi=90)
    print(f"plot: {outdir}/link.png")


if __name__ == "__main__":
    main()
