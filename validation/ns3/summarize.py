#!/usr/bin/env python3
"""Tables of docs/validation.md § ns-3 from validation/ns3/results/*.csv:
mean completion time over the seeds, ns-3 against joulenet's `ns3` (and
`rfc`) profile, and the gap. Usage: summarize.py RESULTS_DIR"""
import csv
import statistics
import sys
from pathlib import Path


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def mean_time(rs, key="completion_s"):
    """Mean completion time of the runs that finished, and how many did."""
    done = [float(r[key]) for r in rs if r[key] not in ("", None)]
    return (statistics.mean(done) if done else float("nan")), len(done), len(rs)


def joulenet_done(rs):
    return mean_time([dict(r, t=r["completion_time_s"] if r["completed"] == "true" else "") for r in rs], "t")


def fmt(m):
    t, n, of = m
    s = f"{t:.2f}"
    return s if n == of else f"{s} ({n}/{of} done)"


def gap(ours, ref):
    return f"{(ours[0] / ref[0] - 1) * 100:+.0f} %"


def p2p(res, name):
    ns = rows(res / f"ns3-{name}.csv")
    jn = rows(res / f"joulenet-{name}.csv")
    print(f"\n{name}: mean completion time, s (timeouts, fast recoveries, retransmissions per run)")
    print("| TCP | loss | ns-3 | ours, `ns3` | gap | ours, `rfc` |")
    print("|---|---|---|---|---|---|")
    losses = sorted({r["loss"] for r in ns}, key=float)
    for tcp, proto in (("NewReno", "newreno"), ("Cubic", "cubic")):
        for p in losses:
            ref_rs = [r for r in ns if r["tcp"] == tcp and r["loss"] == p]
            ref = mean_time(ref_rs)
            rtos = statistics.mean(int(r["timeouts"]) for r in ref_rs)
            frs = statistics.mean(int(r["fast_recoveries"]) for r in ref_rs)
            retx = statistics.mean(int(r["retransmissions"]) for r in ref_rs)

            def ours(profile):
                return joulenet_done([
                    r for r in jn
                    if r["protocol"] == proto
                    and r["param:flow.tcp.profile"] == profile
                    and float(r.get("param:link.loss.rate", p) or p) == float(p)
                ])

            o, rfc = ours("ns3"), ours("rfc")
            o_rs = [r for r in jn
                    if r["protocol"] == proto and r["param:flow.tcp.profile"] == "ns3"
                    and float(r.get("param:link.loss.rate", p) or p) == float(p)]
            o_retx = statistics.mean(int(r["retransmitted_packets"]) for r in o_rs)
            o_rtos = statistics.mean(int(r["timeouts"]) for r in o_rs)
            o_frs = statistics.mean(int(r["fast_recoveries"]) for r in o_rs)
            label = f"{float(p) * 100:g} %" if name.endswith("lossy") else "20 % in 1 s On phases"
            print(f"| {tcp} | {label} | {fmt(ref)} ({rtos:.1f}, {frs:.1f}, {retx:.0f}) | {fmt(o)} ({o_rtos:.1f}, {o_frs:.1f}, {o_retx:.0f}) | {gap(o, ref)} | {fmt(rfc)} |")


def chain(res):
    ns = rows(res / "ns3-wifi-chain.csv")
    jn = rows(res / "joulenet-wifi-chain.csv")
    print("\nwifi-chain: mean completion time of 1 MB, s (retransmissions per run)")
    print("| hops | ns-3 | ours, `ns3` | gap |")
    print("|---|---|---|---|")
    for h in sorted({int(r["hops"]) for r in ns}):
        ref_rs = [r for r in ns if int(r["hops"]) == h]
        ref = mean_time(ref_rs)
        retx = statistics.mean(int(r["retransmissions"]) for r in ref_rs)
        o_rs = [r for r in jn if int(r["param:topology.hops"]) == h]
        o = joulenet_done(o_rs)
        o_retx = statistics.mean(int(r["retransmitted_packets"]) for r in o_rs)
        print(f"| {h} | {fmt(ref)} ({retx:.0f}) | {fmt(o)} ({o_retx:.0f}) | {gap(o, ref)} |")


def main():
    res = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results")
    for name in ("p2p-lossy", "p2p-onoff"):
        if (res / f"ns3-{name}.csv").exists() and (res / f"joulenet-{name}.csv").exists():
            p2p(res, name)
    if (res / "ns3-wifi-chain.csv").exists() and (res / "joulenet-wifi-chain.csv").exists():
        chain(res)


if __name__ == "__main__":
    main()
