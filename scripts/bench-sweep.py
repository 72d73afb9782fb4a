#!/usr/bin/env python3
"""Sweeps at scale (issue 18): a campaign of many small runs through
``joulenet.sweep`` on a local process pool and on a Dask LocalCluster,
with the time the parent spends writing the SQLite store measured apart.

    target/pyenv/bin/python scripts/bench-sweep.py [--runs 10000] [--workers 2]
        [--executors pool,dask] [--out DIR]

Each run is a 20 kB NewReno or SACK transfer over a lossy 10 Mbit/s link
(about a millisecond of simulation), so the campaign measures the sweep
machinery — task dispatch, result transfer, the store — rather than the
simulator. Prints, per executor: runs, wall time, runs per second, the
parent's store-write time (total and per run) and its share of the wall
time; the store is "not the bottleneck" when that share is small, that is
when the workers, not the parent's writes, set the pace.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import joulenet
from joulenet.store import Store

SCENARIO = """
name = "bench-sweep"
seed = 1

[topology]
kind = "two_nodes"

[link]
rate = "10Mbps"
delay = "5ms"
loss = { model = "bernoulli", rate = 0.01 }

[flow]
protocol = "newreno"
app = "bulk"
bytes = "20kB"
"""


class TimedStore(Store):
    """A store that adds up the time spent in ``add_runs`` (the parent's
    write path: the inserts and one transaction per batch of runs)."""

    write_s = 0.0

    def add_runs(self, runs):  # type: ignore[override]
        t = time.perf_counter()
        try:
            return super().add_runs(runs)
        finally:
            TimedStore.write_s += time.perf_counter() - t


def grid_for(runs: int):
    """A grid of 2 protocols × 10 loss rates and enough seeds for ``runs``."""
    grid = {
        "flow.protocol": ["newreno", "sack"],
        "link.loss.rate": [round(0.002 * i, 3) for i in range(10)],
    }
    seeds = max(1, runs // 20)
    return grid, seeds


def campaign(executor_name: str, runs: int, workers: int, out: Path) -> dict:
    grid, seeds = grid_for(runs)
    db = out / f"sweep-{executor_name}.db"
    if db.exists():
        db.unlink()
    TimedStore.write_s = 0.0
    store = TimedStore(db)
    client = cluster = None
    try:
        if executor_name == "dask":
            import distributed

            cluster = distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                dashboard_address=None)
            client = distributed.Client(cluster)
        t0 = time.perf_counter()
        res = joulenet.sweep(SCENARIO, grid=grid, seeds=range(1, seeds + 1), store=store,
                             workers=workers, executor=client, progress=False)
        wall = time.perf_counter() - t0
        n = len(res.runs)
        failed = int((res.runs["outcome"] != "ok").sum())
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        store.close()
    return {
        "executor": executor_name,
        "runs": n,
        "failed": failed,
        "wall_s": wall,
        "runs_per_s": n / wall,
        "store_s": TimedStore.write_s,
        "store_ms_per_run": 1e3 * TimedStore.write_s / max(n, 1),
        "store_share": TimedStore.write_s / wall,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--executors", default="pool,dask")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"{args.runs} runs, {args.workers} workers, load average "
          f"{os.getloadavg()[0]:.1f}, stores in {out}")
    print(f"{'executor':8} {'runs':>6} {'failed':>6} {'wall s':>8} {'runs/s':>8} "
          f"{'store s':>8} {'ms/run':>7} {'store share':>11}")
    status = 0
    for name in args.executors.split(","):
        r = campaign(name, args.runs, args.workers, out)
        print(f"{r['executor']:8} {r['runs']:6d} {r['failed']:6d} {r['wall_s']:8.1f} "
              f"{r['runs_per_s']:8.1f} {r['store_s']:8.1f} {r['store_ms_per_run']:7.2f} "
              f"{100 * r['store_share']:10.1f}%")
        if r["failed"] or r["runs"] != 20 * max(1, args.runs // 20):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
