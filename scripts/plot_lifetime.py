#!/usr/bin/env python3
"""Figures and the table for docs/reproduction/lifetime.md from what
`joulenet run scenarios/lifetime/mesh-20.toml --seeds 1..=5 --out DIR`
writes (the write-up's copy is docs/reproduction/lifetime/).
Usage: scripts/plot_lifetime.py [DIR]"""
import csv, os, sys
from collections import defaultdict
try:
    import matplotlib
except ImportError:
    sys.exit(3)
matplotlib.use("Agg")
import matplotlib.pyplot as plt

d = sys.argv[1] if len(sys.argv) > 1 else "docs/reproduction/lifetime"
PROTOCOL, MAC = "param:flow.protocol", "param:medium.mac"

def rows(name):
    with open(os.path.join(d, name)) as f:
        return list(csv.DictReader(f))

def num(v):
    return float(v) if v not in ("", None) else None

summary = rows("summary.csv")
protocols = list(dict.fromkeys(r[PROTOCOL] for r in summary))
macs = list(dict.fromkeys(r[MAC] for r in summary))
METRICS = [("first_death_s", "first death"), ("fraction_dead_s", "25% dead"),
           ("first_partition_s", "first partition")]

def by_point(metric):
    """(protocol, mac) -> values over seeds; a metric that did not happen
    within the run counts as the run's end (a lower bound)."""
    out = defaultdict(list)
    for r in summary:
        v = num(r[metric])
        out[(r[PROTOCOL], r[MAC])].append(v if v is not None else float(r["duration_s"]))
    return out

def mean(xs):
    return sum(xs) / len(xs)

# Table for the write-up (markdown).
print("| MAC | protocol | first death s | 25% dead s | first partition s | delivered MB | energy/bit µJ |")
print("|---|---|---|---|---|---|---|")
stats = {m: by_point(m) for m, _ in METRICS}
delivered = defaultdict(list); epb = defaultdict(list)
for r in summary:
    delivered[(r[PROTOCOL], r[MAC])].append(float(r["bytes_delivered"]) / 1e6)
    if num(r["energy_per_bit_j"]) is not None:
        epb[(r[PROTOCOL], r[MAC])].append(float(r["energy_per_bit_j"]) * 1e6)
for mac in macs:
    for p in protocols:
        k = (p, mac)
        cells = [f"{mean(stats[m][k]):.0f} [{min(stats[m][k]):.0f}–{max(stats[m][k]):.0f}]" for m, _ in METRICS]
        e = f"{mean(epb[k]):.1f}" if epb[k] else "-"
        print(f"| {mac} | {p} | " + " | ".join(cells) + f" | {mean(delivered[k]):.2f} | {e} |")

# Lifetime bars: one panel per MAC, three bars per protocol, min–max over seeds.
fig, axes = plt.subplots(1, len(macs), figsize=(5.2 * len(macs), 3.6), sharey=True, squeeze=False)
width = 0.8 / len(METRICS)
for ax, mac in zip(axes[0], macs):
    for i, (m, label) in enumerate(METRICS):
        xs = [j + (i - 1) * width for j in range(len(protocols))]
        vals = [stats[m][(p, mac)] for p in protocols]
        ms = [mean(v) for v in vals]
        err = [[a - min(v) for a, v in zip(ms, vals)], [max(v) - a for a, v in zip(ms, vals)]]
        ax.bar(xs, ms, width, yerr=err, capsize=2, label=label)
    ax.set_xticks(range(len(protocols)), protocols, rotation=30)
    ax.set_title(f"802.11b, {mac}")
    ax.grid(axis="y", alpha=.3)
axes[0][0].set_ylabel("time (s; run ends at 900 s)")
axes[0][-1].legend(fontsize=8)
fig.tight_layout(); fig.savefig(os.path.join(d, "lifetime.png"), dpi=110); plt.close(fig)

# Residual energy over time, every node, one protocol per MAC (seed 1).
series = [r for r in rows("series.csv") if r["seed"] == "1" and r["series"] == "residual"]
fig, axes = plt.subplots(1, len(macs), figsize=(5.2 * len(macs), 3.4), sharey=True, squeeze=False)
for ax, mac in zip(axes[0], macs):
    by_node = defaultdict(list)
    for r in series:
        if r[PROTOCOL] == "newreno" and r[MAC] == mac:
            by_node[r["entity"]].append((float(r["time_s"]), float(r["value"])))
    for node, pts in sorted(by_node.items()):
        pts.sort()
        ax.plot([t for t, _ in pts], [v for _, v in pts], lw=0.8)
    ax.set_title(f"newreno, {mac}: residual per node")
    ax.set_xlabel("time (s)"); ax.grid(alpha=.3)
axes[0][0].set_ylabel("battery energy left (J)")
fig.tight_layout(); fig.savefig(os.path.join(d, "residual.png"), dpi=110); plt.close(fig)

# Residual map at the end: nodes at their positions coloured by what is
# left, dead nodes crossed, flows as arrows (seed 1).
nodes = rows("nodes.csv"); flows = rows("flows.csv")
fig, axes = plt.subplots(1, len(macs), figsize=(5.2 * len(macs), 4.4), squeeze=False)
for ax, mac in zip(axes[0], macs):
    ns = [r for r in nodes if r["seed"] == "1" and r[PROTOCOL] == "newreno" and r[MAC] == mac]
    pos = {r["node"]: (float(r["x_m"]), float(r["y_m"])) for r in ns}
    for f in flows:
        if f["seed"] == "1" and f[PROTOCOL] == "newreno" and f[MAC] == mac:
            ax.annotate("", xy=pos[f["to"]], xytext=pos[f["from"]],
                        arrowprops=dict(arrowstyle="->", color="0.6", lw=0.8))
    share = [float(r["residual_j"]) / float(r["battery_j"]) for r in ns]
    sc = ax.scatter([pos[r["node"]][0] for r in ns], [pos[r["node"]][1] for r in ns], c=share,
                    cmap="RdYlGn", vmin=0, vmax=1, s=140, edgecolors="k", zorder=3)
    dead = [pos[r["node"]] for r in ns if r["died_at_s"]]
    ax.scatter([x for x, _ in dead], [y for _, y in dead], marker="x", c="k", s=90, zorder=4)
    for n, (x, y) in pos.items():
        ax.annotate(n, (x, y), textcoords="offset points", xytext=(7, 6), fontsize=7)
    ax.set_title(f"newreno, {mac}: left at 900 s (x = dead)")
    ax.set_aspect("equal"); ax.set_xlabel("x (m)")
    fig.colorbar(sc, ax=ax, label="residual / capacity")
axes[0][0].set_ylabel("y (m)")
fig.tight_layout(); fig.savefig(os.path.join(d, "residual-map.png"), dpi=110); plt.close(fig)
