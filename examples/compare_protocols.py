#!/usr/bin/env python3
"""Compare TCP variants over a bursty wireless hop: energy per delivered bit
and goodput against the bad-state loss rate, with 95% confidence bands.

    python examples/compare_protocols.py            # after `pip install .`
    target/pyenv/bin/python examples/compare_protocols.py   # after ./scripts/test

Writes compare.db (the sweep store: re-running computes nothing new),
compare-energy.png/.svg, compare-goodput.png, compare-cdf.png and
compare-report.html into the current directory (or --out DIR).
"""

import argparse
from pathlib import Path

import joulenet
from joulenet import plot

SCENARIO = {
    "name": "compare-protocols",
    "link": {
        "rate": "2Mbps", "delay": "20ms", "queue": 50, "radio": "wavelan",
        "loss": {"model": "gilbert_elliott",
                 "good": {"mean": "2s", "loss": 0.002},
                 "bad": {"mean": "200ms", "loss": 0.5}},
    },
    "energy": {"policy": "intermediate", "active_weight": 0.5},
    "flow": {"app": "bulk", "bytes": "1MB"},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".", help="output directory")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    res = joulenet.sweep(
        SCENARIO,
        grid={"link.loss.bad.loss": [0.1, 0.3, 0.5, 0.7, 0.9],
              "flow.protocol": ["tahoe", "reno", "newreno", "sack", "cubic"]},
        seeds=range(args.seeds),
        store=out / "compare.db",
        workers=args.workers,
    )
    print(res.mean_ci("energy_per_bit_j").to_string(index=False))
    plot.save(plot.metric_vs_param(res, "link.loss.bad.loss", "energy_per_bit_j",
                                   hue="flow.protocol"),
              out / "compare-energy.png", out / "compare-energy.svg")
    plot.save(plot.metric_vs_param(res, "link.loss.bad.loss", "aggregate_goodput_bps",
                                   hue="flow.protocol"), out / "compare-goodput.png")
    plot.save(plot.goodput_cdf(res.flows), out / "compare-cdf.png")
    joulenet.report(out / "compare.db", out / "compare-report.html")
    print(f"wrote {out / 'compare-energy.png'} and {out / 'compare-report.html'}")


if __name__ == "__main__":
    main()
