"""Parameter sweeps: the cartesian product of a grid × seeds, run in parallel
processes (or on a Dask cluster), persisted in a :class:`~joulenet.store.Store`
and returned as tidy DataFrames."""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import sys
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

import pandas as pd

from . import _joulenet, units
from ._source import ScenarioLike, Source, plain, resolve
from ._worker import run_task, run_tasks
from .result import CONTEXT_COLUMNS, RunResult, context_columns, with_context
from .stats import mean_ci
from .store import Store, canonical_point

#: How often a sweep writes what has finished (seconds): killing a sweep
#: loses at most the runs of this last interval.
WRITE_INTERVAL_S = 0.25


def scenario_info(source: Source, grid: Optional[Mapping[str, Sequence[Any]]] = None) -> Dict[str, Any]:
    """Validate a scenario and expand its sweep (its own ``[sweep]`` with
    ``grid``'s keys replacing or added): name, hash, default seed, sweep,
    points."""
    g = [[k, plain(list(v))] for k, v in (grid or {}).items()]
    return json.loads(_joulenet.scenario_info(source.text, grid_json=json.dumps(g), **source.kwargs))


class _Progress:
    """A minimal progress bar on stderr (no extra dependency)."""

    def __init__(self, total: int, cached: int, enabled: bool) -> None:
        self.total, self.cached, self.done = total, cached, 0
        # As indicatif does for `joulenet run`: drawn on a terminal only, so
        # a log file gets no stream of carriage-return redraws.
        self.enabled = enabled and total > 0 and sys.stderr.isatty()
        self.t0 = time.monotonic()
        self._draw()

    def step(self) -> None:
        self.done += 1
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        width = 30
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(frac * width)
        elapsed = time.monotonic() - self.t0
        eta = (elapsed / self.done * (self.total - self.done)) if self.done else 0.0
        # Runs the store already held are not redone: say so only when
        # there are some ("0 stored" read as "nothing saved").
        reused = f" (+{self.cached} already in the store)" if self.cached else ""
        sys.stderr.write(
            f"\rjoulenet sweep [{bar:<{width}}] {self.done}/{self.total} runs{reused}"
            f" {elapsed:5.1f}s eta {eta:5.1f}s"
        )
        if self.done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _is_dask(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed"


def _completed(executor: Any, workers: int, tasks: List[Tuple[Source, str, int]]) -> Iterable[Dict[str, Any]]:
    """Run tasks, yielding each outcome as it finishes."""
    if not tasks:
        return
    if executor is not None and _is_dask(executor):
        from distributed import as_completed

        # Batches of runs, about eight per worker thread over the campaign
        # (at most 32 runs each): Dask's cost per task (scheduling, a round
        # trip per result) would otherwise dominate short runs.
        threads = max(1, sum(executor.nthreads().values()))
        size = max(1, min(32, len(tasks) // (8 * threads)))
        batches = [tasks[i:i + size] for i in range(0, len(tasks), size)]
        futures = executor.map(run_tasks, batches, pure=False)
        for fut in as_completed(futures):
            yield from fut.result()
            fut.release()
        return
    if executor is not None:
        futures = [executor.submit(run_task, t) for t in tasks]
        for fut in cf.as_completed(futures):
            yield fut.result()
        return
    if workers <= 1:
        for t in tasks:
            yield run_task(t)
        return
    with cf.ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_task, t) for t in tasks]
        try:
            for fut in cf.as_completed(futures):
                yield fut.result()
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def sweep(
    scenario: ScenarioLike,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Union[Iterable[int], int, None] = None,
    *,
    store: Union[str, "os.PathLike[str]", Store, None] = None,
    workers: Optional[int] = None,
    executor: Any = None,
    progress: bool = True,
) -> "SweepResult":
    """Run the cartesian product of ``grid`` (dotted scenario keys → lists of
    values; it replaces or extends the scenario's own ``[sweep]``) for every
    seed, and return the results as a :class:`SweepResult`.

    Args:
        scenario: TOML path, TOML text, or a dict with the same schema.
        grid: e.g. ``{"link.loss.rate": [0.0, 0.01], "flow.protocol": ["reno", "sack"]}``.
        seeds: an iterable of seeds (``range(10)``), a count (``10`` means
            0..9), or None for the scenario's default seed.
        store: path of the SQLite store (default ``joulenet-sweep.db`` in
            the current directory) or an open :class:`Store`. Runs already
            stored under the same (scenario hash, point, seed, joulenet
            version) are not run again.
        workers: local worker processes (default: CPU count; 1 runs in
            this process).
        executor: a ``dask.distributed.Client`` (or any
            ``concurrent.futures.Executor``) to run on instead.
        progress: draw a progress bar on stderr.

    Raises:
        ScenarioError: the scenario or a grid point is invalid (nothing runs).
    """
    source = resolve(scenario)
    info = scenario_info(source, grid)
    if seeds is None:
        seed_list = [int(info["default_seed"])]
    elif isinstance(seeds, int):
        seed_list = list(range(seeds))
    else:
        seed_list = [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("no seeds to run")
    own_store = not isinstance(store, Store)
    st = store if isinstance(store, Store) else Store(store or "joulenet-sweep.db")
    version = _joulenet.version()
    try:
        st.add_scenario(info["hash"], info["name"], source.format, source.text, source.dir)
        st.add_sweep(info["hash"], info["sweep"], seed_list)
        points = [canonical_point(p) for p in info["points"]]
        keys = [(p, s) for p in points for s in seed_list]
        have = st.existing_keys(info["hash"], version)
        todo = [(source, p, s) for (p, s) in keys if (p, s) not in have]
        bar = _Progress(len(todo), len(keys) - len(todo), progress)
        n_workers = workers if workers is not None else (os.cpu_count() or 1)
        pending: List[Dict[str, Any]] = []
        last_write = time.monotonic()
        try:
            for out in _completed(executor, n_workers, todo):
                pending.append(dict(
                    scenario_hash=info["hash"],
                    scenario=info["name"],
                    point=out["point"],
                    seed=out["seed"],
                    version=version,
                    elapsed_s=out["elapsed_s"],
                    outcome=out["outcome"],
                    error=out["error"],
                    result_json=out["result"],
                    metric_rows=out.get("metric_rows"),
                ))
                bar.step()
                # One transaction per WRITE_INTERVAL_S, not per run: a
                # campaign of millisecond runs would otherwise wait on the
                # parent's commits.
                if time.monotonic() - last_write >= WRITE_INTERVAL_S:
                    st.add_runs(pending)
                    pending.clear()
                    last_write = time.monotonic()
        finally:
            # Interrupted or not, what finished is kept.
            if pending:
                st.add_runs(pending)
        result = SweepResult(st, info["hash"], version, set(keys), grid_keys=[k for k, _ in info["sweep"]])
        if own_store:
            result._load()  # materialise before the connection closes
        return result
    finally:
        if own_store:
            st.close()


def _with_unit(stats: pd.DataFrame, metric: str, si: bool) -> pd.DataFrame:
    """``stats`` (mean_ci's columns, in ``metric``'s stored unit) with a
    ``unit`` column; with ``si``, rescaled to the SI prefix that puts the
    largest mean in [1, 1000)."""
    out = stats.copy()
    base = units.metric(metric).unit
    stored = units.to_base(metric)
    if not si:
        prefix = next((p for p, f in units._PREFIXES if f == stored), "")
        out["unit"] = prefix + base
        return out
    divisor, unit = units.si_prefix((m * stored for m in out["mean"]), base)
    for col in ("mean", "std", "ci95", "lo", "hi"):
        out[col] = out[col] * stored / divisor
    out["unit"] = unit
    return out


class SweepResult:
    """The runs of a sweep (or of a whole store), as DataFrames.

    Every frame carries the run context in every row (``scenario``,
    ``scenario_hash``, ``seed``, ``joulenet_version``, ``git_commit``) and
    one column per parameter, named by its dotted key.

    Attributes:
        df: the tidy long-format frame: context, parameters, ``kind``
            (flow/node/link/summary), ``entity``, ``label``, ``metric``,
            ``value``.
        runs: one row per run: context, parameters, ``elapsed_s``,
            ``outcome``, ``error``.
        params: the parameter column names.
    """

    def __init__(
        self,
        store: Store,
        scenario_hash: Optional[str],
        version: Optional[str],
        keys: Optional[Set[Tuple[str, int]]],
        grid_keys: Optional[List[str]] = None,
    ) -> None:
        self._store = store
        self._hash = scenario_hash
        self._version = version
        self._keys = keys
        self._grid_keys = grid_keys
        self._rows: Optional[List[Dict[str, Any]]] = None
        self._metrics: Optional[pd.DataFrame] = None

    # ---- loading -------------------------------------------------------

    def _load(self) -> None:
        if self._rows is not None:
            return
        where, args = [], []
        if self._hash is not None:
            where.append("scenario_hash = ?")
            args.append(self._hash)
        if self._version is not None:
            where.append("joulenet_version = ?")
            args.append(self._version)
        sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "")
        cur = self._store.conn.execute(sql + " ORDER BY id", args)
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur]
        if self._keys is not None:
            rows = [r for r in rows if (r["point"], int(r["seed"])) in self._keys]
        for r in rows:
            r["params"] = json.loads(r["point"])
            r.pop("metric_rows", None)  # read through the metrics query below
        # A stable order: parameter point, then seed.
        rows.sort(key=lambda r: (r["scenario_hash"], r["point"], r["seed"], r["joulenet_version"]))
        ids = [r["id"] for r in rows]
        # Only the selected scenario/version's metrics leave SQLite.
        msql = self._store.metrics_query(" AND ".join(where))
        metrics = pd.read_sql_query(msql, self._store.conn, params=args)
        metrics = metrics[metrics["run_id"].isin(ids)]
        self._rows = rows
        self._metrics = metrics
        if self._grid_keys is None:
            keys: List[str] = []
            for r in rows:
                for k in r["params"]:
                    if k not in keys:
                        keys.append(k)
            self._grid_keys = keys

    @property
    def params(self) -> List[str]:
        self._load()
        return list(self._grid_keys or [])

    def _ctx(self, r: Mapping[str, Any]) -> Dict[str, Any]:
        ctx = {
            "scenario": r["scenario"],
            "scenario_hash": r["scenario_hash"],
            "seed": int(r["seed"]),
            "joulenet_version": r["joulenet_version"],
            "git_commit": r["git_commit"],
        }
        for k in self.params:
            ctx[k] = r["params"].get(k)
        return ctx

    def __len__(self) -> int:
        self._load()
        return len(self._rows or [])

    # ---- frames --------------------------------------------------------

    @property
    def runs(self) -> pd.DataFrame:
        self._load()
        rows = []
        for r in self._rows or []:
            d = self._ctx(r)
            d.update(run_id=r["id"], elapsed_s=r["elapsed_s"], outcome=r["outcome"],
                     error=r["error"], finished_at=r["finished_at"])
            rows.append(d)
        return pd.DataFrame(rows)

    @property
    def df(self) -> pd.DataFrame:
        self._load()
        runs = self.runs
        if runs.empty:
            return pd.DataFrame(columns=list(runs.columns) + ["kind", "entity", "label", "metric", "value"])
        runs = runs.drop(columns=["error", "finished_at"])
        m = self._metrics.rename(columns={"run_id": "run_id"})
        out = runs.merge(m, on="run_id", how="inner", sort=False)
        return out.reset_index(drop=True)

    def results(self) -> List[RunResult]:
        """Every successful run as a :class:`RunResult`."""
        self._load()
        out = []
        for r in self._rows or []:
            if r["result"] is not None:
                out.append(RunResult.from_json(r["result"], {k: r["params"].get(k) for k in self.params}))
        return out

    def _table(self, name: str) -> pd.DataFrame:
        self._load()
        frames = []
        for r in self._rows or []:
            if r["result"] is None:
                continue
            raw = json.loads(r["result"])
            rows = [raw["summary"]] if name == "summary" else raw[name]
            frames.append(with_context(rows, self._ctx(r)))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @property
    def flows(self) -> pd.DataFrame:
        """One row per (run, flow), with context."""
        return self._table("flows")

    @property
    def nodes(self) -> pd.DataFrame:
        return self._table("nodes")

    @property
    def links(self) -> pd.DataFrame:
        return self._table("links")

    @property
    def summary(self) -> pd.DataFrame:
        """One row per run, with context."""
        return self._table("summary")

    def series(self, name: Optional[str] = None) -> pd.DataFrame:
        """Time series of every run (long format, with context)."""
        self._load()
        frames = []
        for r in self._rows or []:
            if r["result"] is None:
                continue
            raw = json.loads(r["result"])
            rows = [s for s in raw["series"] if name is None or s["series"] == name]
            if rows:
                frames.append(with_context(rows, self._ctx(r)))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
            columns=["time_s", "series", "entity", "value"])

    # ---- statistics ----------------------------------------------------

    def mean_ci(
        self,
        metric: str,
        kind: str = "summary",
        by: Optional[Sequence[str]] = None,
        entity: Optional[str] = None,
        si: bool = True,
    ) -> pd.DataFrame:
        """Mean and 95% interval (:func:`joulenet.stats.interval95`, inside
        the metric's domain) of ``metric`` (of ``kind``
        flow/node/link/summary) over seeds, per parameter point (or per the
        columns ``by``). For flows and nodes, values of every entity are
        pooled unless ``entity`` picks one (``"0"``).

        The ``unit`` column names the unit of ``mean``, ``std``, ``ci95``,
        ``lo`` and ``hi``: with ``si`` (the default) the metric's SI unit
        with the prefix that reads best (``energy_per_bit_j`` in µJ rather
        than 0.000002 J), else the unit it is stored in."""
        df = self.df
        df = df[(df["metric"] == metric) & (df["kind"] == kind)]
        if entity is not None:
            df = df[df["entity"] == str(entity)]
        out = mean_ci(df, list(by) if by is not None else self.params,
                      domain=units.metric(metric).domain)
        return _with_unit(out, metric, si)

    def aggregate(self, metrics: Optional[Sequence[str]] = None, kind: str = "summary") -> pd.DataFrame:
        """Mean and 95% interval of several metrics per parameter point, one
        row per (point, metric), each interval inside its metric's domain."""
        df = self.df
        df = df[df["kind"] == kind]
        if metrics is not None:
            df = df[df["metric"].isin(list(metrics))]
        return mean_ci(df, self.params + ["metric"])

    # ---- export --------------------------------------------------------

    def to_csv(self, path: Union[str, "os.PathLike[str]"], table: str = "df") -> None:
        """Write a frame (``df``, the tidy default, or ``runs``, ``flows``,
        ``nodes``, ``links``, ``summary``) as CSV; every row carries the run
        context."""
        getattr(self, table).to_csv(path, index=False)

    def to_parquet(self, path: Union[str, "os.PathLike[str]"], table: str = "df") -> None:
        """Like :meth:`to_csv`, as Parquet (needs ``pyarrow``)."""
        frame = getattr(self, table)
        # Parameter columns may mix types across points; Parquet needs one.
        for c in self.params:
            if c in frame.columns and frame[c].map(type).nunique() > 1:
                frame[c] = frame[c].astype(str)
        frame.to_parquet(path, index=False)

    def __repr__(self) -> str:
        self._load()
        return f"<SweepResult runs={len(self._rows or [])} params={self.params}>"
