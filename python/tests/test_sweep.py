"""sweep(): the store, resume after a kill, tidy frames, exports, Dask."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pandas as pd
import pytest

import joulenet
from conftest import small

GRID = {"link.loss.rate": [0.0, 0.02], "flow.protocol": ["reno", "sack"]}
VOLATILE = ["run_id", "elapsed_s", "finished_at"]


def stable(df: pd.DataFrame) -> pd.DataFrame:
    df = df.drop(columns=[c for c in VOLATILE if c in df.columns])
    return df.sort_values(list(df.columns[:8])).reset_index(drop=True)


def test_sweep_store_and_frames(tmp_path, scenario):
    db = tmp_path / "c.db"
    res = joulenet.sweep(scenario, grid=GRID, seeds=range(3), store=db, workers=2, progress=False)
    assert len(res) == 2 * 2 * 3
    runs = res.runs
    assert set(runs["outcome"]) == {"ok"}
    assert res.params == ["link.loss.rate", "flow.protocol"]
    df = res.df
    for col in ["scenario", "scenario_hash", "seed", "joulenet_version", "git_commit",
                "link.loss.rate", "flow.protocol", "kind", "entity", "metric", "value"]:
        assert col in df.columns
    assert set(df["kind"]) == {"flow", "node", "link", "summary"}
    ci = res.mean_ci("energy_j")
    assert len(ci) == 4 and (ci["n"] == 3).all()
    assert (ci["lo"] <= ci["mean"]).all() and (ci["mean"] <= ci["hi"]).all()
    assert len(res.summary) == 12 and len(res.flows) == 12
    assert len(res.series("cwnd")) > 0
    agg = res.aggregate(["energy_j", "aggregate_goodput_bps"])
    assert len(agg) == 8
    # The manifest names the version and the commit.
    with joulenet.Store(db) as st:
        m = st.manifest()
        assert m["joulenet_version"] == joulenet.version()
        assert m["git_commit"] == joulenet.git_commit()
        n_metrics = st.conn.execute("SELECT COUNT(*) FROM metrics").fetchone()[0]
        assert n_metrics == len(df)


def test_rerun_computes_nothing(tmp_path, scenario):
    db = tmp_path / "c.db"
    joulenet.sweep(scenario, grid=GRID, seeds=2, store=db, workers=1, progress=False)
    con = sqlite3.connect(db)
    before = con.execute("SELECT id, finished_at FROM runs ORDER BY id").fetchall()
    # More seeds: only the new ones run.
    res = joulenet.sweep(scenario, grid=GRID, seeds=3, store=db, workers=1, progress=False)
    after = con.execute("SELECT id, finished_at FROM runs ORDER BY id").fetchall()
    assert after[: len(before)] == before and len(after) == 12 and len(res) == 12
    joulenet.sweep(scenario, grid=GRID, seeds=3, store=db, workers=1, progress=False)
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 12
    # A different scenario (other hash) is a different key.
    joulenet.sweep(small(bytes="100kB"), grid=GRID, seeds=1, store=db, workers=1, progress=False)
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 16


_KILLED = """
import sys
sys.path.insert(0, {tests!r})
import joulenet
from conftest import small
joulenet.sweep(small(bytes="20MB"), grid={grid}, seeds=range(8), store={db!r}, workers=2,
               progress=False)
"""


def test_killed_sweep_resumes_without_duplicates_or_gaps(tmp_path):
    grid = {"link.loss.rate": [0.0, 0.01, 0.02], "flow.protocol": ["reno", "sack", "cubic"]}
    total = 3 * 3 * 8
    db = tmp_path / "killed.db"
    code = _KILLED.format(tests=os.path.dirname(__file__), grid=repr(grid), db=str(db))
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    n = 0
    deadline = time.time() + 60
    while time.time() < deadline:
        if db.exists():
            try:
                n = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            except sqlite3.OperationalError:
                n = 0
        if n >= 5 or proc.poll() is not None:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes
    proc.wait()
    done = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert 0 < done < total, f"kill landed at {done}/{total}; the runs were too fast"
    resumed = joulenet.sweep(small(bytes="20MB"), grid=grid, seeds=range(8), store=db,
                             workers=2, progress=False)
    con = sqlite3.connect(db)
    keys = con.execute("SELECT point, seed FROM runs").fetchall()
    assert len(keys) == total == len(set(keys))
    # Every run's metrics stored exactly once.
    per_run = con.execute("SELECT COUNT(DISTINCT run_id), COUNT(*) FROM metrics").fetchone()
    assert per_run[0] == total
    fresh = joulenet.sweep(small(bytes="20MB"), grid=grid, seeds=range(8),
                           store=tmp_path / "fresh.db", workers=2, progress=False)
    pd.testing.assert_frame_equal(stable(resumed.summary), stable(fresh.summary))
    assert per_run[1] == len(fresh.df)


def test_exports_carry_context(tmp_path, scenario):
    res = joulenet.sweep(scenario, grid=GRID, seeds=2, store=tmp_path / "e.db", workers=1,
                         progress=False)
    res.to_csv(tmp_path / "tidy.csv")
    res.to_csv(tmp_path / "flows.csv", table="flows")
    tidy = pd.read_csv(tmp_path / "tidy.csv")
    assert len(tidy) == len(res.df)
    for col in ["scenario", "scenario_hash", "seed", "joulenet_version", "flow.protocol"]:
        assert tidy[col].notna().all()
    pytest.importorskip("pyarrow")
    res.to_parquet(tmp_path / "tidy.parquet")
    back = pd.read_parquet(tmp_path / "tidy.parquet")
    assert len(back) == len(tidy) and "link.loss.rate" in back.columns


def test_dask_local_cluster_equals_local(tmp_path, scenario):
    distributed = pytest.importorskip("distributed")
    local = joulenet.sweep(scenario, grid=GRID, seeds=3, store=tmp_path / "local.db", workers=2,
                           progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = joulenet.sweep(scenario, grid=GRID, seeds=3, store=tmp_path / "dask.db",
                                executor=client, progress=False)
    pd.testing.assert_frame_equal(stable(local.df), stable(remote.df))
    pd.testing.assert_frame_equal(stable(local.flows), stable(remote.flows))


def test_concurrent_futures_executor(tmp_path, scenario):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as ex:
        res = joulenet.sweep(scenario, grid=GRID, seeds=2, store=tmp_path / "t.db", executor=ex,
                             progress=False)
    assert len(res) == 8


def test_metric_rows_from_workers_equal_the_stores_own(tmp_path, scenario):
    """A sweep stores the rows its workers computed; the store computing
    them from the result JSON gives the same rows, and a batch written
    twice is written once."""
    from joulenet._metrics import long_metrics
    from joulenet.store import Store

    db = tmp_path / "w.db"
    joulenet.sweep(scenario, grid=GRID, seeds=2, store=db, workers=2, progress=False)
    con = sqlite3.connect(db)
    runs = con.execute("SELECT id, scenario_hash, point, seed, joulenet_version, scenario,"
                       " elapsed_s, outcome, error, result FROM runs ORDER BY id").fetchall()
    assert len(runs) == 8
    for run_id, *_, result in runs:
        stored = con.execute("SELECT kind, entity, label, metric, value FROM metrics"
                             " WHERE run_id = ?", (run_id,)).fetchall()
        # (kind, entity, metric) is unique in a run, so sorting compares rows one to one.
        assert sorted(stored) == sorted(tuple(r) for r in long_metrics(json.loads(result)))
    con.close()
    again = Store(tmp_path / "again.db")
    batch = [dict(scenario_hash=h, point=p, seed=s, version=v, scenario=n, elapsed_s=e,
                  outcome=o, error=err, result_json=r) for _, h, p, s, v, n, e, o, err, r in runs]
    assert again.add_runs(batch) == 8
    assert again.add_runs(batch) == 0
    n = again.conn.execute("SELECT COUNT(*) FROM metrics").fetchone()[0]
    assert n == sum(len(long_metrics(json.loads(r[-1]))) for r in runs)
    again.close()


def test_a_store_with_the_old_metrics_table_is_written_as_before(tmp_path, scenario):
    """Stores made before the metrics view keep their long table: a sweep
    into one adds its rows there, and reads them back like a new store."""
    from joulenet.store import Store

    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE metrics (run_id INTEGER NOT NULL, kind TEXT NOT NULL,
            entity TEXT NOT NULL, label TEXT NOT NULL, metric TEXT NOT NULL, value REAL);
        CREATE INDEX metrics_run ON metrics(run_id);""")
    con.close()
    old = joulenet.sweep(scenario, grid=GRID, seeds=2, store=db, workers=2, progress=False)
    new = joulenet.sweep(scenario, grid=GRID, seeds=2, store=tmp_path / "new.db", workers=2,
                         progress=False)
    with Store(db) as st:
        assert not st.compact
        assert st.conn.execute("SELECT type FROM sqlite_master WHERE name = 'metrics'"
                               ).fetchone() == ("table",)
        n = st.conn.execute("SELECT COUNT(*) FROM metrics").fetchone()[0]
    assert n == len(new._metrics) > 0
    pd.testing.assert_frame_equal(old.summary, new.summary)
