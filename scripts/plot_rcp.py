#!/usr/bin/env python3
"""Figures for docs/reproduction/rcp.md from the CSVs `joulenet reproduce rcp`
writes (default results/reproduce/rcp/; the write-up's copy is
docs/reproduction/rcp/). Usage: scripts/plot_rcp.py [DIR]"""
import csv, re, sys, os
from collections import defaultdict
try:
    import matplotlib
except ImportError:
    # joulenet prints what to do; a traceback would only hide it.
    sys.exit(3)
matplotlib.use("Agg")
import matplotlib.pyplot as plt

d = sys.argv[1] if len(sys.argv) > 1 else "docs/reproduction/rcp"

def rows(name):
    with open(os.path.join(d, name)) as f:
        return list(csv.DictReader(f))

def series(name, xkey, ykey, xconv=float):
    out = {}
    for r in rows(name):
        kv = dict(re.findall(r"(\S+)=(\S+)", r["point"]))
        x = xconv(re.sub(r"[a-zA-Z/]+$", "", kv[xkey]))
        out.setdefault(kv["protocol"], []).append((x, float(r[ykey])))
    return {k: sorted(v) for k, v in out.items()}

def plot(name, xkey, ykey, xlabel, ylabel, out, logx=False, ideal=None):
    plt.figure(figsize=(5, 3.5))
    for p, pts in series(name, xkey, ykey).items():
        plt.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=p)
    if ideal:
        xs = sorted({x for pts in series(name, xkey, ykey).values() for x, _ in pts})
        plt.plot(xs, [ideal(x) for x in xs], "k--", label="ideal")
    if logx:
        plt.xscale("log")
    plt.xlabel(xlabel); plt.ylabel(ylabel); plt.grid(alpha=.3); plt.legend(fontsize=8)
    plt.tight_layout(); plt.savefig(os.path.join(d, out), dpi=110); plt.close()

plot("wireless.csv", "rate", "goodput_mbps", "random loss rate (both ways)", "goodput Mbit/s", "wireless.png", logx=True)
plot("satellite.csv", "delay", "goodput_mbps", "satellite one-way delay (ms)", "goodput Mbit/s", "satellite.png")
if os.path.exists(os.path.join(d, "satellite_http.csv")):
    plot("satellite_http.csv", "delay", "goodput_mbps", "satellite one-way delay (ms), HTTP-like background", "goodput Mbit/s", "satellite_http.png")
plot("power.csv", "mean", "mh_energy_j", "mean bad-state duration (s)", "mobile host energy J", "power_energy.png")
plot("power.csv", "mean", "goodput_mbps", "mean bad-state duration (s)", "goodput Mbit/s", "power_goodput.png")
plot("aggregation_bw.csv", "rate", "goodput_mbps", "second path bandwidth (Mbit/s)", "goodput Mbit/s", "aggregation_bw.png", ideal=lambda x: 4 + x)
plot("aggregation_p2p.csv", "rate", "goodput_mbps", "second path bandwidth (Mbit/s)", "goodput Mbit/s", "aggregation_p2p.png", ideal=lambda x: 4 + x)
plot("aggregation_rtt.csv", "delay", "goodput_mbps", "second path backbone delay (ms)", "goodput Mbit/s", "aggregation_rtt.png", ideal=lambda x: 8)
plot("aggregation_rtt.csv", "delay", "buffer_75_pct", "second path backbone delay (ms)", "% arrivals finding the buffer ≥ 75 % full", "aggregation_buffer.png")
# Figure 4c: every flow's bytes over its life (seed 1), by group.
MICRO_LABELS = ["TCP-SACK 0–200 s", "RCP 0–200 s", "TCP-SACK 50–150 s", "RCP 100–200 s"]
micro = [r for r in rows("microscopic.csv") if r["seed"] == "1"]
plt.figure(figsize=(5, 3.5))
colors = {"sack": "tab:blue", "rcp": "tab:orange"}
for r in micro:
    i = int(r["flow"])
    plt.bar(i, float(r["delivered_mb"]), color=colors.get(r["protocol"], "gray"))
plt.xticks([2, 7, 12, 17], ["TCP 0–200", "RCP 0–200", "TCP 50–150", "RCP 100–200"], fontsize=7)
plt.ylabel("MB delivered per flow"); plt.grid(alpha=.3, axis="y"); plt.tight_layout()
plt.savefig(os.path.join(d, "microscopic.png"), dpi=110); plt.close()
# Figure 4c as the paper draws it: every flow's bytes delivered over time.
if os.path.exists(os.path.join(d, "microscopic_series.csv")):
    prog = defaultdict(list)
    protos = {}
    for r in rows("microscopic_series.csv"):
        prog[int(r["flow"])].append((float(r["time_s"]), float(r["delivered_mb"])))
        protos[int(r["flow"])] = r["protocol"]
    plt.figure(figsize=(5.5, 4))
    styles = {0: "-", 1: "-", 2: "--", 3: "--"}
    for f, pts in sorted(prog.items()):
        label = MICRO_LABELS[f // 5] if f % 5 == 0 else None
        plt.plot([t for t, _ in pts], [v for _, v in pts], styles[f // 5],
                 color=colors.get(protos[f], "gray"), lw=1, label=label)
    plt.xlabel("time (s)"); plt.ylabel("MB delivered (sequence progression)")
    plt.grid(alpha=.3); plt.legend(fontsize=7); plt.tight_layout()
    plt.savefig(os.path.join(d, "microscopic_curves.png"), dpi=110); plt.close()
fr = rows("friendliness.csv")
plt.figure(figsize=(5, 3.5))
k = [int(r["rcp_flows"]) for r in fr]
plt.plot(k, [float(r["mean_mbps"]) for r in fr], marker="o", label="mean per-flow Mbit/s")
plt.plot(k, [float(r["cov"]) for r in fr], marker="s", label="CoV")
plt.xlabel("RCP flows of 20"); plt.grid(alpha=.3); plt.legend(fontsize=8); plt.tight_layout()
plt.savefig(os.path.join(d, "friendliness.png"), dpi=110)
print("figures in", d)

def by_protocol(name, xkey, ykey):
    out = {}
    for r in rows(name):
        out.setdefault(r["protocol"], []).append((float(r[xkey]), float(r[ykey])))
    return out

for name, xkey, ykey, xlabel, out in [
    ("reverse.csv", "sources", "mean_mbps", "reverse-path Pareto on/off sources", "reverse.png"),
    ("fluctuation.csv", "fluctuation", "goodput_mbps", "fluctuation index c", "fluctuation.png"),
]:
    plt.figure(figsize=(5, 3.5))
    for p, pts in by_protocol(name, xkey, ykey).items():
        plt.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=p)
    plt.xlabel(xlabel); plt.ylabel("goodput Mbit/s"); plt.grid(alpha=.3); plt.legend(fontsize=8)
    plt.tight_layout(); plt.savefig(os.path.join(d, out), dpi=110); plt.close()

# Figure 5b: recovery time from the seven wireless losses, ours beside the paper's.
sl = rows("seven_losses.csv")
plt.figure(figsize=(5.5, 3.5))
names = [r["protocol"] for r in sl]
xs = range(len(names))
w = 0.27
plt.bar([x - w for x in xs], [float(r["recovery_s"]) for r in sl], w, label="ours: first loss → all filled")
plt.bar(list(xs), [float(r["after_last_loss_s"]) if r["after_last_loss_s"] != "–" else 0 for r in sl], w,
        label="ours: last loss → all filled")
plt.bar([x + w for x in xs], [float(r["paper_s"]) if r["paper_s"] != "–" else 0 for r in sl], w, label="paper")
plt.xticks(list(xs), names); plt.ylabel("recovery time s"); plt.grid(alpha=.3, axis="y")
plt.legend(fontsize=8); plt.tight_layout()
plt.savefig(os.path.join(d, "seven_losses.png"), dpi=110); plt.close()

# Figure 11d: 1 s throughput of each pipe and their sum (seed 1).
if os.path.exists(os.path.join(d, "policy.csv")):
    pol = rows("policy.csv")
    plt.figure(figsize=(5, 3.5))
    t = [int(r["second"]) for r in pol]
    for key, label in [("pipe0_kbps", "RCP-1 (loaded)"), ("pipe1_kbps", "RCP-2"), ("aggregate_kbps", "aggregate")]:
        plt.plot(t, [float(r[key]) for r in pol], label=label)
    plt.axhline(720, color="k", ls="--", lw=0.8)
    plt.xlabel("time (s)"); plt.ylabel("kbit/s (1 s bins)"); plt.grid(alpha=.3); plt.legend(fontsize=8)
    plt.tight_layout(); plt.savefig(os.path.join(d, "policy.png"), dpi=110); plt.close()
