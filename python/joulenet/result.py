"""One run's result as pandas DataFrames."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional

import pandas as pd

CONTEXT_COLUMNS = ["scenario", "scenario_hash", "seed", "joulenet_version"]


def context_columns(context: Mapping[str, Any], params: Mapping[str, Any]) -> Dict[str, Any]:
    """The run context as columns: scenario, hash, seed, version and one
    column per parameter (its dotted key)."""
    cols = {k: context.get(k) for k in CONTEXT_COLUMNS}
    cols.update(params)
    return cols


def with_context(rows: List[Dict[str, Any]], ctx: Mapping[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for i, (k, v) in enumerate(ctx.items()):
        df.insert(i, k, [v] * len(df))
    return df


class RunResult:
    """The result of one run (one parameter point, one seed).

    Every DataFrame carries the run context in every row: ``scenario``,
    ``scenario_hash``, ``seed``, ``joulenet_version`` and one column per
    parameter override (named by its dotted key).

    Attributes:
        raw: the result as parsed JSON (``context``, ``flows``, ``nodes``,
            ``links``, ``summary``, ``series``).
        context: the run context (scenario, hash, seed, params, version).
        params: the parameter point, with typed values.
    """

    def __init__(self, raw: Dict[str, Any], params: Optional[Mapping[str, Any]] = None) -> None:
        self.raw = raw
        self.context: Dict[str, Any] = raw["context"]
        self.params: Dict[str, Any] = dict(params or {})

    @classmethod
    def from_json(cls, text: str, params: Optional[Mapping[str, Any]] = None) -> "RunResult":
        return cls(json.loads(text), params)

    @property
    def _ctx(self) -> Dict[str, Any]:
        return context_columns(self.context, self.params)

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow: bytes, goodput, packets, retransmissions, delay, RTT..."""
        return with_context(self.raw["flows"], self._ctx)

    @property
    def nodes(self) -> pd.DataFrame:
        """One row per node: energy per radio state (J and s), frames, battery."""
        return with_context(self.raw["nodes"], self._ctx)

    @property
    def links(self) -> pd.DataFrame:
        """One row per link direction: attempts, losses, drops, utilisation."""
        return with_context(self.raw["links"], self._ctx)

    @property
    def summary(self) -> pd.DataFrame:
        """One row: duration, energy, energy per bit, efficiency, goodput, fairness."""
        return with_context([self.raw["summary"]], self._ctx)

    @property
    def series_names(self) -> List[str]:
        """Names of the recorded time series (``[output] series = [...]``)."""
        return sorted({r["series"] for r in self.raw["series"]})

    def series(self, name: Optional[str] = None, wide: bool = False) -> pd.DataFrame:
        """A time series (``cwnd``, ``rate``, ``goodput``, ``queue``,
        ``channel`` ...) in long format: ``time_s``, ``series``, ``entity``,
        ``value`` (plus context), or, with ``wide=True``, one column per
        entity indexed by ``time_s``. All series without ``name``.

        A name the run did not record is an error, not an empty frame: the
        scenario must ask for it (``[output] series = ["cwnd"]``, or
        ``params={"output.series": ["cwnd"]}``)."""
        rows = self.raw["series"]
        if name is not None:
            rows = [r for r in rows if r["series"] == name]
            if not rows:
                raise KeyError(
                    f"series {name!r} was not recorded (recorded: {self.series_names or 'none'}); "
                    f"ask for it with [output] series = [{name!r}] in the scenario or "
                    f"params={{'output.series': [{name!r}]}}"
                )
        df = pd.DataFrame(rows, columns=["time_s", "series", "entity", "value"])
        if wide:
            return df.pivot_table(index="time_s", columns="entity", values="value")
        return with_context(df.to_dict("records"), self._ctx)

    def __repr__(self) -> str:
        s = self.raw["summary"]
        return (
            f"<RunResult {self.context['scenario']} seed={self.context['seed']} "
            f"flows={s['flows']} completed={s['flows_completed']} "
            f"energy={s['energy_j']:.3f} J duration={s['duration_s']:.3f} s>"
        )
