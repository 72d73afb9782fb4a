"""``python -m joulenet report DB -o report.html`` and ``python -m joulenet
sweep`` / ``run`` for quick use from a shell."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "report":
        from .reporting import main as report_main

        return report_main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m joulenet")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("report", help="HTML report of a sweep store (report DB -o out.html)")
    sw = sub.add_parser("sweep", help="run a scenario's sweep into a store")
    sw.add_argument("scenario")
    sw.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1")
    sw.add_argument("--store", default="joulenet-sweep.db")
    sw.add_argument("--workers", type=int, default=None)
    sw.add_argument("--grid", default="{}", help='JSON, e.g. {"flow.protocol": ["reno", "sack"]}')
    sw.add_argument("--quiet", action="store_true")
    rn = sub.add_parser("run", help="run one seed and print the summary")
    rn.add_argument("scenario")
    rn.add_argument("--seed", type=int, default=None)
    args = ap.parse_args(argv)
    import joulenet

    if args.cmd == "sweep":
        res = joulenet.sweep(args.scenario, grid=json.loads(args.grid), seeds=range(args.seeds),
                             store=args.store, workers=args.workers, progress=not args.quiet)
        print(res.aggregate(["aggregate_goodput_bps", "energy_j"]).to_string(index=False))
        return 0
    if args.cmd == "run":
        r = joulenet.run(args.scenario, seed=args.seed)
        print(r.summary.T.to_string(header=False))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
