"""Named experiments: the scenario files shipped in the repository's
``scenarios/`` directory, runnable through the same API as any scenario. A
file at the top is named by its stem (``demo``); one in a paper's or
topic's folder by folder and stem (``jtp/linear``, ``wwp/onoff``).

>>> joulenet.experiments.names()[:3]
['demo', 'e2tcp/congested', 'e2tcp/gilbert']
>>> res = joulenet.experiments.reproduce("ge-tcp-variants", seeds=range(5), store="ge.db")

The directory is ``$JOULENET_SCENARIOS`` if set, else the ``scenarios/``
directory of the source checkout the package was installed from (editable
installs), else ``./scenarios``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional

from .sweep import SweepResult, sweep


def directory() -> Path:
    env = os.environ.get("JOULENET_SCENARIOS")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[2] / "scenarios"
    if here.is_dir():
        return here
    return Path.cwd() / "scenarios"


def paths() -> Dict[str, Path]:
    """Experiment name → TOML file: ``x.toml`` is ``x``, ``folder/x.toml``
    is ``folder/x``."""
    d = directory()
    found: Dict[str, Path] = {}
    if d.is_dir():
        for p in sorted(d.rglob("*.toml")):
            found[p.relative_to(d).with_suffix("").as_posix()] = p
    return dict(sorted(found.items()))


def names() -> List[str]:
    return list(paths())


def path(name: str) -> Path:
    try:
        return paths()[name]
    except KeyError:
        raise KeyError(f"no experiment `{name}` in {directory()} (have: {', '.join(names())})") from None


def reproduce(name: str, seeds: Any = 10, store: Optional[str] = None, **kwargs: Any) -> SweepResult:
    """Run a named experiment's own ``[sweep]`` over ``seeds`` into
    ``store`` (default ``<name>.db``); ``kwargs`` go to :func:`joulenet.sweep`
    (``grid``, ``workers``, ``executor``, ``progress``)."""
    return sweep(path(name), seeds=seeds, store=store or f"{name}.db", **kwargs)


class PaperReproduction:
    """What :func:`paper` produced: the report printed beside the paper's
    numbers, the number of simulation runs, the directory with the CSV tables
    and figure data (``fig_*.csv``), and the tables as DataFrames."""

    def __init__(self, report: str, runs: int, out: Path) -> None:
        self.report = report
        self.runs = runs
        self.out = out

    def tables(self) -> Dict[str, Any]:
        """Every CSV the experiment wrote, as pandas DataFrames by file stem."""
        import pandas as pd

        return {p.stem: pd.read_csv(p, comment="#") for p in sorted(self.out.glob("*.csv"))}

    def __repr__(self) -> str:
        return f"PaperReproduction(runs={self.runs}, out={str(self.out)!r})"


def paper(name: str, quick: bool = True, seeds: Optional[int] = None, out: Optional[str] = None) -> PaperReproduction:
    """Run a paper's experiments exactly as ``joulenet reproduce NAME``
    does (``"wwp"``, ``"e2tcp"`` or ``"rcp"``), without the PNG step (use
    :mod:`joulenet.plot` or ``scripts/plot_reproduction.py`` on ``.out``).
    The GIL is released while the simulations run."""
    import json

    from . import _joulenet

    target = Path(out) if out else Path("results/reproduce") / name
    doc = json.loads(
        _joulenet.reproduce_json(name, str(target), scenarios=str(directory()), quick=quick, seeds=seeds)
    )
    return PaperReproduction(doc["report"], int(doc["runs"]), Path(doc["out"]))
