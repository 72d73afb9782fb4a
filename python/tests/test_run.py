"""run(): DataFrames, series, TOML = dict, determinism across processes, GIL."""

import json
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

import joulenet
from conftest import small


def test_run_returns_dataframes_with_context(scenario):
    r = joulenet.run(scenario, seed=3, params={"flow.protocol": "sack"})
    for df in (r.flows, r.nodes, r.links, r.summary):
        assert isinstance(df, pd.DataFrame) and len(df) >= 1
        assert (df["seed"] == 3).all()
        assert (df["scenario"] == "small").all()
        assert (df["flow.protocol"] == "sack").all()
        assert (df["joulenet_version"] == joulenet.version()).all()
    assert r.flows["protocol"].iloc[0] == "sack"
    assert bool(r.flows["completed"].iloc[0])
    assert r.summary["energy_j"].iloc[0] > 0
    assert set(r.series_names) == {"cwnd", "channel", "rate"}
    cwnd = r.series("cwnd")
    assert list(cwnd.columns[-4:]) == ["time_s", "series", "entity", "value"]
    assert (cwnd["series"] == "cwnd").all() and len(cwnd) > 3
    assert not r.series("cwnd", wide=True).empty


def test_toml_file_and_dict_give_the_same_result(tmp_path, demo_path):
    import tomllib

    as_dict = tomllib.loads(demo_path.read_text())
    as_dict["name"] = "demo"
    a = joulenet.run(demo_path, seed=2, params={"flow.protocol": "reno"})
    b = joulenet.run(as_dict, seed=2, params={"flow.protocol": "reno"})
    assert a.raw == b.raw


def test_default_seed_is_the_scenarios(scenario):
    scenario["seed"] = 7
    assert joulenet.run(scenario).context["seed"] == 7


_CHILD = """
import json, sys, joulenet
sys.path.insert(0, {tests!r})
from conftest import small
r = joulenet.run(small(), seed=5, params={{"flow.protocol": "cubic"}})
print(json.dumps(r.raw, sort_keys=True))
"""


def test_determinism_across_processes():
    import os

    code = _CHILD.format(tests=os.path.dirname(__file__))
    outs = [
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                       env={**os.environ, "PYTHONHASHSEED": str(i)}).stdout
        for i in (1, 2)
    ]
    assert outs[0] == outs[1]
    here = joulenet.run(small(), seed=5, params={"flow.protocol": "cubic"})
    assert json.loads(outs[0]) == json.loads(json.dumps(here.raw, sort_keys=True))


def test_runs_release_the_gil():
    # A run holding the GIL freezes this ticker from the run's start to its
    # end: not one tick inside the run. Released, the ticker keeps ticking
    # through it; a loaded machine can stall it for a few tenths of a second
    # (0.5 s of a 0.85 s stretch was seen at load 15), so the test asks only
    # for ticks in each half of one run that lasts about a second, which a
    # GIL-holding run can never give.
    big = small(bytes="3GB")  # about 1.4 s on this 2-core machine
    big["output"] = {}  # no series: the run's memory stays small
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    th = threading.Thread(target=ticker)
    th.start()
    try:
        time.sleep(0.05)
        start = time.perf_counter()
        joulenet.run(big, seed=1)
        end = time.perf_counter()
    finally:
        stop.set()
        th.join()
    middle = (start + end) / 2
    first = [t for t in ticks if start < t < middle]
    second = [t for t in ticks if middle <= t < end]
    assert first and second, (
        f"{len(first)} + {len(second)} ticks in the two halves of a {end - start:.2f} s run"
    )


def test_a_series_not_recorded_is_an_error_that_says_how_to_ask_for_it(demo_path):
    r = joulenet.run(str(demo_path), seed=1)
    with pytest.raises(KeyError, match="output.series"):
        r.series("cwnd")


def test_the_readme_snippet_runs(tmp_path, demo_path):
    # README.md's Python example, as written there (plot loads lazily).
    DEMO = str(demo_path)
    r = joulenet.run(DEMO, seed=1, params={"flow.protocol": "sack", "output.series": ["cwnd"]})
    assert not r.series("cwnd").empty
    res = joulenet.sweep(DEMO, grid={"link.loss.bad.loss": [0.1, 0.5]}, seeds=range(2),
                         store=str(tmp_path / "campaign.db"), workers=1)
    ci = res.mean_ci("energy_per_bit_j")
    assert set(ci["link.loss.bad.loss"]) == {0.1, 0.5}
    # Read at a glance: microjoules per bit, not 0.000002 J.
    assert set(ci["unit"]) == {"µJ"}
    assert ((ci["mean"] >= 1) & (ci["mean"] < 1000)).all()
    raw = res.mean_ci("energy_per_bit_j", si=False)
    assert set(raw["unit"]) == {"J"}
    assert (abs(raw["mean"] * 1e6 - ci["mean"]) < 1e-9 * ci["mean"]).all()
    fig = joulenet.plot.metric_vs_param(res, "link.loss.bad.loss", "energy_per_bit_j",
                                        hue="flow.protocol")
    assert fig is not None
