"""The embedded result store: one SQLite file per campaign.

Tables:

``manifest`` (key, value)
    ``joulenet_version``, ``git_commit``, ``created_at``, ``python`` ...
    of the campaign (the first writer), plus ``last_*`` of the latest.
``scenarios`` (hash, name, format, text, dir)
    every scenario run into the store, so a store is self-describing.
``sweeps`` (id, started_at, scenario_hash, grid, seeds, joulenet_version, git_commit)
    one row per :func:`joulenet.sweep` call.
``runs`` (id, scenario_hash, point, seed, joulenet_version, ... elapsed_s, outcome, error, result)
    one row per finished run, unique on (scenario_hash, point, seed,
    joulenet_version); ``point`` is the canonical JSON of the parameter
    point; ``result`` the full result JSON (time series included).
``metrics`` (run_id, kind, entity, label, metric, value)
    every numeric result in long format; ``kind`` is ``flow``, ``node``,
    ``link`` or ``summary``.

The database runs in WAL mode and every finished run is committed in its own
transaction, so killing a sweep loses nothing that finished, and a re-run
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
    UNIQUE (scenario_hash, point, seed, joulenet_version));
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    kind TEXT NOT NULL, entity TEXT NOT NULL, label TEXT NOT NULL,
    metric TEXT NOT NULL, value REAL);
CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id);
"""

Key = Tuple[str, str, int, str]


def canonical_point(point: Mapping[str, Any]) -> str:
    """The stored form of a parameter point: JSON with sorted keys."""
    return json.dumps(point, sort_keys=True, separators=(",", ":"))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _num(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    return None


def long_metrics(result: Mapping[str, Any]) -> List[Tuple[str, str, str, str, Optional[float]]]:
    """(kind, entity, label, metric, value) rows of a result's numbers.
    ``None`` (a metric that does not apply, e.g. completion time of an
    unfinished flow) is kept as NULL."""
    rows: List[Tuple[str, str, str, str, Optional[float]]] = []
    for f in result["flows"]:
        for k, v in f.items():
            if k in ("flow", "label", "protocol", "app"):
                continue
            if v is None or _num(v) is not None:
                rows.append(("flow", str(f["flow"]), f["label"], k, _num(v)))
    for n in result["nodes"]:
        for k, v in n.items():
            if k in ("node", "name"):
                continue
            if v is None or _num(v) is not None:
                rows.append(("node", str(n["node"]), n["name"], k, _num(v)))
    for link in result["links"]:
        label = f"{link['from']}->{link['to']}"
        for k, v in link.items():
            if k == "link":
                continue
            if v is None or _num(v) is not None:
                rows.append(("link", str(link["link"]), label, k, _num(v)))
    for k, v in result["summary"].items():
        if v is None or _num(v) is not None:
            rows.append(("summary", "", "", k, _num(v)))
    return rows


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
    ) -> bool:
        """Store one finished run and its metrics in one transaction.
        Returns False if the key was already there (nothing written)."""
        with self.conn:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO runs (scenario_hash, point, seed, joulenet_version,"
                " scenario, git_commit, elapsed_s, outcome, error, result, finished_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scenario_hash, point, seed, version, scenario, _joulenet.git_commit(),
                 elapsed_s, outcome, error, result_json, _now()),
            )
            if cur.rowcount != 1:
                return False
            run_id = cur.lastrowid
            if result_json is not None:
                rows = long_metrics(json.loads(result_json))
                self.conn.executemany(
                    "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)",
                    [(run_id, *r) for r in rows],
                )
        return True

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
