"""The function worker processes (and Dask workers) run: one simulation.
Kept free of heavy imports so workers start fast."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, List, Tuple

from ._metrics import long_metrics, metrics_json
from ._source import Source


def run_task(task: Tuple[Source, str, int]) -> Dict[str, Any]:
    """Run (source, point JSON, seed); never raises for a failed run: the
    outcome says ``ok`` or ``error``."""
    from . import _joulenet

    source, point, seed = task
    t0 = time.perf_counter()
    try:
        out = _joulenet.run_json(source.text, point, seed, **source.kwargs)
        outcome, error = "ok", None
    except BaseException as e:  # a ScenarioError or a Rust panic
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        out, outcome, error = None, "error", f"{type(e).__name__}: {e}"
    elapsed = time.perf_counter() - t0
    return {
        "point": point,
        "seed": seed,
        "elapsed_s": elapsed,
        "outcome": outcome,
        "error": error,
        "result": out,
        # The store's rows, computed here in parallel rather than in the
        # sweep's parent, whose writes would otherwise pace a campaign of
        # short runs; as the JSON text the store keeps.
        "metric_rows": metrics_json(long_metrics(json.loads(out))) if out is not None else None,
    }


def run_tasks(tasks: List[Tuple[Source, str, int]]) -> List[Dict[str, Any]]:
    """Several tasks in one: a cluster's per-task cost (scheduling, one
    round trip per result) is paid once per batch rather than per run."""
    return [run_task(t) for t in tasks]
