"""joulenet from Python: scenarios in, pandas DataFrames out.

>>> import joulenet
>>> r = joulenet.run("scenarios/demo.toml", seed=1, params={"flow.protocol": "sack"})
>>> r.flows[["protocol", "goodput_bps"]]
>>> res = joulenet.sweep("scenarios/demo.toml", grid={"link.loss.good.loss": [0.001, 0.01]},
...                      seeds=range(5), store="demo.db")
>>> res.mean_ci("energy_j")

See ``docs/python.md``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional

from . import _joulenet
from ._source import ScenarioLike, Source, plain, resolve
from .errors import ScenarioError
from .result import RunResult
from .stats import ci95, mean_ci, t975
from .store import Store
from .sweep import SweepResult, scenario_info, sweep
from . import experiments

__version__: str = _joulenet.version()

__all__ = [
    "run", "sweep", "check", "ScenarioError", "RunResult", "SweepResult", "Store",
    "mean_ci", "ci95", "t975", "version", "git_commit", "report", "Source", "experiments",
]


def __getattr__(name: str) -> Any:
    # ``joulenet.plot`` without importing matplotlib for every ``import
    # joulenet`` (PEP 562): the plotting module loads on first use.
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'joulenet' has no attribute {name!r}")


def version() -> str:
    """joulenet's version (recorded beside every result)."""
    return _joulenet.version()


def git_commit() -> str:
    """The git commit the extension was built from."""
    return _joulenet.git_commit()


def check(scenario: ScenarioLike, grid: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Validate a scenario (every sweep point); returns its ``name``,
    ``hash``, ``default_seed``, ``sweep`` and ``points``.

    Raises:
        ScenarioError: naming the bad key.
    """
    return scenario_info(resolve(scenario), grid)


def run(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    params: Optional[Mapping[str, Any]] = None,
) -> RunResult:
    """Run one seed of a scenario (its base values, with ``params``: dotted
    keys overriding scenario values, like the CLI's ``--set``). The
    scenario's own ``[sweep]`` is not expanded; use :func:`sweep` for that.

    Args:
        scenario: TOML path, TOML text, or a dict with the same schema.
        seed: the seed (default: the scenario's ``seed``, else 1).
        params: e.g. ``{"link.loss.rate": 0.01, "flow.protocol": "sack"}``.

    Returns:
        a :class:`RunResult` (``.flows``, ``.nodes``, ``.links``,
        ``.summary`` DataFrames and ``.series(name)``).

    Raises:
        ScenarioError: the scenario is invalid; ``.key`` names the key.

    The GIL is released while the simulation runs, so threads can run
    several at once.
    """
    source = resolve(scenario)
    point = plain(dict(params or {}))
    if seed is None:
        seed = int(scenario_info(source)["default_seed"])
    text = _joulenet.run_json(source.text, json.dumps(point), int(seed), **source.kwargs)
    return RunResult.from_json(text, point)


def report(store: Any, out: Any = "report.html", **kwargs: Any) -> str:
    """Write a self-contained HTML report of a sweep store; see
    :func:`joulenet.reporting.write_report`."""
    from .reporting import write_report

    return write_report(store, out, **kwargs)
