"""Resolving the ways a user can give a scenario into what the Rust side reads."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Union

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any], "Source"]


@dataclass(frozen=True)
class Source:
    """A scenario as text, ready for the extension: TOML or JSON text, the
    name it takes when it has no ``name`` key, and the directory relative
    paths (trace files) resolve against. Picklable, so it travels to worker
    processes and Dask workers."""

    text: str
    format: str  # "toml" or "json"
    name: str
    dir: str

    @property
    def kwargs(self) -> Dict[str, str]:
        return {"format": self.format, "name": self.name, "dir": self.dir}


def resolve(scenario: ScenarioLike) -> Source:
    """A :class:`Source` from a path to a TOML file, TOML text, or a dict with
    the TOML schema."""
    if isinstance(scenario, Source):
        return scenario
    if isinstance(scenario, Mapping):
        text = json.dumps(_plain(scenario), allow_nan=False)
        return Source(text, "json", "scenario", os.getcwd())
    if isinstance(scenario, os.PathLike) or (
        isinstance(scenario, str) and "\n" not in scenario and "=" not in scenario
    ):
        path = Path(scenario)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            from .errors import ScenarioError

            raise ScenarioError("", f"cannot read {path}: {e.strerror or e}") from None
        return Source(text, "toml", path.stem, str(path.resolve().parent))
    if isinstance(scenario, str):
        return Source(scenario, "toml", "scenario", os.getcwd())
    raise TypeError(
        f"a scenario is a TOML path, TOML text or a dict, not {type(scenario).__name__}"
    )


def _plain(v: Any) -> Any:
    """Mappings, sequences and paths as JSON-ready values."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, range)):
        return [_plain(x) for x in v]
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if hasattr(v, "item") and callable(v.item):  # numpy scalars
        return v.item()
    return v


def plain(v: Any) -> Any:
    return _plain(v)
