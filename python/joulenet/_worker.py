"""The function worker processes (and Dask workers) run: one simulation.
Kept free of heavy imports so workers start fast."""

from __future__ import annotations

import time
from typing import Any, Dict, Tuple

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
    return {
        "point": point,
        "seed": seed,
        "elapsed_s": time.perf_counter() - t0,
        "outcome": outcome,
        "error": error,
        "result": out,
    }
