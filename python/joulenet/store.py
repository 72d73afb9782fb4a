"""The embedded result store: one SQLite file per campaign.

Tables:

``manifest`` (key, value)
    ``joulenet_version``, ``git_commit``, ``created_at``, ``python`` ...
    of the campaign (the first writer), plus ``last_*`` of the latest.
``scenarios`` (hash, name, format, text, dir)
    every scenario run into the store, so a store is self-describing.
``sweeps`` (id, started_at, scenario_hash, grid, seeds, joulenet_version, git_commit)
    one row per :func:`joulenet.sweep` call.
``runs`` (id, scenario_hash, point, seed, joulenet_version, ... elapsed_s, outcome, error, result, metric_rows)
    one row per finished run, unique on (scenario_hash, point, seed,
    joulenet_version); ``point`` is the canonical JSON of the parameter
    point; ``result`` the full result JSON (time series included);
    ``metric_rows`` the run's metrics as one JSON array (what ``metrics``
    shows).
``metrics`` (run_id, kind, entity, label, metric, value)
    every numeric result in long format; ``kind`` is ``flow``, ``node``,
    ``link`` or ``summary``. A view expanding ``runs.metric_rows``: a run's
    hundred-odd metrics cost the writer one column, not a hundred indexed
    rows, which paced campaigns of millisecond runs. Stores made before
    the view keep their ``metrics`` table, and are written as before.

The database runs in WAL mode. A sweep commits what has finished every
quarter of a second (one transaction for all of it), so killing a sweep
loses at most the runs of that last fraction of a second, and a re-run
computes only missing keys.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sqlite3
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple, Union

from . import _joulenet
from ._metrics import MetricRow, long_metrics, metrics_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scenarios (
    hash TEXT PRIMARY KEY, name TEXT NOT NULL, format TEXT NOT NULL,
    text TEXT NOT NULL, dir TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, scenario_hash TEXT NOT NULL,
    grid TEXT NOT NULL, seeds TEXT NOT NULL, joulenet_version TEXT NOT NULL,
    git_commit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    scenario_hash TEXT NOT NULL,
    point TEXT NOT NULL,
    seed INTEGER NOT NULL,
    joulenet_version TEXT NOT NULL,
    scenario TEXT NOT NULL,
    git_commit TEXT NOT NULL,
    elapsed_s REAL,
    outcome TEXT NOT NULL,
    error TEXT,
    result TEXT,
    finished_at TEXT NOT NULL,
    metric_rows TEXT,
    UNIQUE (scenario_hash, point, seed, joulenet_version));
"""

#: The long-format metrics of every run, expanded from ``runs.metric_rows``.
METRICS_VIEW = """
CREATE VIEW IF NOT EXISTS metrics AS
SELECT r.id AS run_id, j.value ->> 0 AS kind, j.value ->> 1 AS entity,
       j.value ->> 2 AS label, j.value ->> 3 AS metric, j.value ->> 4 AS value
FROM runs AS r, json_each(r.metric_rows) AS j;
"""

Key = Tuple[str, str, int, str]


def canonical_point(point: Mapping[str, Any]) -> str:
    """The stored form of a parameter point: JSON with sorted keys."""
    return json.dumps(point, sort_keys=True, separators=(",", ":"))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class Store:
    """A campaign's SQLite store (created if missing).

    >>> store = Store("campaign.db")
    >>> store.results().summary   # every run, as DataFrames
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = Path(path)
        self.conn = sqlite3.connect(str(self.path), timeout=60.0)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        kind = self.conn.execute(
            "SELECT type FROM sqlite_master WHERE name = 'metrics'").fetchone()
        #: Whether metrics live in ``runs.metric_rows`` (behind the view)
        #: rather than in the ``metrics`` table of stores made before it.
        self.compact = kind is None or kind[0] == "view"
        if self.compact:
            self.conn.executescript(METRICS_VIEW)
        self._write_manifest()

    def _write_manifest(self) -> None:
        info = {
            "joulenet_version": _joulenet.version(),
            "git_commit": _joulenet.git_commit(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        }
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO manifest VALUES ('created_at', ?)", (_now(),)
            )
            for k, v in info.items():
                self.conn.execute("INSERT OR IGNORE INTO manifest VALUES (?, ?)", (k, v))
                self.conn.execute(
                    "INSERT OR REPLACE INTO manifest VALUES (?, ?)", (f"last_{k}", v)
                )

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- writing -------------------------------------------------------

    def add_scenario(self, hash: str, name: str, fmt: str, text: str, dir: str) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO scenarios VALUES (?, ?, ?, ?, ?)",
                (hash, name, fmt, text, dir),
            )

    def add_sweep(self, scenario_hash: str, grid: Any, seeds: List[int]) -> int:
        with self.conn:
            cur = self.conn.execute(
                "INSERT INTO sweeps (started_at, scenario_hash, grid, seeds, joulenet_version,"
                " git_commit) VALUES (?, ?, ?, ?, ?, ?)",
                (_now(), scenario_hash, json.dumps(grid), json.dumps(seeds),
                 _joulenet.version(), _joulenet.git_commit()),
            )
            return int(cur.lastrowid)

    def existing_keys(self, scenario_hash: str, version: str) -> Set[Tuple[str, int]]:
        """(point, seed) pairs already stored for this scenario and version."""
        rows = self.conn.execute(
            "SELECT point, seed FROM runs WHERE scenario_hash = ? AND joulenet_version = ?",
            (scenario_hash, version),
        )
        return {(p, int(s)) for p, s in rows}

    def add_run(
        self,
        *,
        scenario_hash: str,
        scenario: str,
        point: str,
        seed: int,
        version: str,
        elapsed_s: float,
        outcome: str,
        error: Optional[str],
        result_json: Optional[str],
        metric_rows: Optional[List[MetricRow]] = None,
    ) -> bool:
        """Store one finished run and its metrics in one transaction.
        Returns False if the key was already there (nothing written).
        ``metric_rows`` are :func:`long_metrics` of the result, when the
        worker already computed them."""
        return self.add_runs([dict(
            scenario_hash=scenario_hash, scenario=scenario, point=point, seed=seed,
            version=version, elapsed_s=elapsed_s, outcome=outcome, error=error,
            result_json=result_json, metric_rows=metric_rows)]) == 1

    def add_runs(self, runs: List[Dict[str, Any]]) -> int:
        """Store several finished runs (each with :meth:`add_run`'s
        arguments) in one transaction; returns how many were new. A sweep
        writes what finished every fraction of a second this way, so that
        many short runs do not wait on one commit each."""
        commit = _joulenet.git_commit()
        finished = _now()
        if self.compact:
            return self._add_runs_compact(runs, commit, finished)
        added = 0
        with self.conn:
            for r in runs:
                cur = self.conn.execute(
                    "INSERT OR IGNORE INTO runs (scenario_hash, point, seed, joulenet_version,"
                    " scenario, git_commit, elapsed_s, outcome, error, result, finished_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (r["scenario_hash"], r["point"], r["seed"], r["version"], r["scenario"],
                     commit, r["elapsed_s"], r["outcome"], r["error"], r["result_json"],
                     finished),
                )
                if cur.rowcount != 1:
                    continue
                added += 1
                rows = r.get("metric_rows")
                if isinstance(rows, str):
                    rows = [tuple(row) for row in json.loads(rows)]
                if rows is None and r["result_json"] is not None:
                    rows = long_metrics(json.loads(r["result_json"]))
                if rows:
                    run_id = cur.lastrowid
                    self.conn.executemany(
                        "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)",
                        [(run_id, *row) for row in rows],
                    )
        return added

    def _add_runs_compact(self, runs: List[Dict[str, Any]], commit: str, finished: str) -> int:
        """:meth:`add_runs` for a store with the ``metrics`` view: one
        statement for the whole batch, a run's metrics one column of it."""
        values = []
        for r in runs:
            rows = r.get("metric_rows")
            if rows is None and r["result_json"] is not None:
                rows = long_metrics(json.loads(r["result_json"]))
            if rows is not None and not isinstance(rows, str):
                rows = metrics_json(rows)
            values.append((r["scenario_hash"], r["point"], r["seed"], r["version"],
                           r["scenario"], commit, r["elapsed_s"], r["outcome"], r["error"],
                           r["result_json"], finished, rows))
        with self.conn:
            before = self.conn.total_changes
            self.conn.executemany(
                "INSERT OR IGNORE INTO runs (scenario_hash, point, seed, joulenet_version,"
                " scenario, git_commit, elapsed_s, outcome, error, result, finished_at,"
                " metric_rows) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            return self.conn.total_changes - before

    def metrics_query(self, runs_where: str) -> str:
        """SQL for the metrics of the runs matching ``runs_where`` (a WHERE
        clause on ``runs``, or empty), in run order then each run's own."""
        if self.compact:
            return ("SELECT r.id AS run_id, j.value ->> 0 AS kind, j.value ->> 1 AS entity,"
                    " j.value ->> 2 AS label, j.value ->> 3 AS metric, j.value ->> 4 AS value"
                    " FROM runs AS r, json_each(r.metric_rows) AS j"
                    + (" WHERE " + runs_where if runs_where else "") + " ORDER BY r.id, j.id")
        return ("SELECT run_id, kind, entity, label, metric, value FROM metrics"
                " WHERE run_id IN (SELECT id FROM runs"
                + (" WHERE " + runs_where if runs_where else "") + ") ORDER BY rowid")

    # ---- reading -------------------------------------------------------

    def manifest(self) -> Dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM manifest ORDER BY key"))

    def scenario_hashes(self) -> List[str]:
        return [h for (h,) in self.conn.execute(
            "SELECT DISTINCT scenario_hash FROM runs ORDER BY scenario_hash")]

    def sweeps(self) -> List[Dict[str, Any]]:
        cur = self.conn.execute("SELECT * FROM sweeps ORDER BY id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]

    def results(
        self,
        scenario_hash: Optional[str] = None,
        version: Optional[str] = None,
        keys: Optional[Iterable[Tuple[str, int]]] = None,
    ) -> "SweepResult":
        """The stored runs (optionally of one scenario hash, one joulenet
        version, a set of (point, seed) keys) as a :class:`SweepResult`."""
        from .sweep import SweepResult

        return SweepResult(self, scenario_hash, version, None if keys is None else set(keys))
