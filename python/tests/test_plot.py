"""Figures and the report, without a display."""

import os
import subprocess
import sys

import pytest

import joulenet
from joulenet import plot

GRID = {"link.loss.rate": [0.0, 0.01, 0.03], "flow.protocol": ["reno", "sack"]}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    from conftest import small

    db = tmp_path_factory.mktemp("plots") / "p.db"
    return db, joulenet.sweep(small(), grid=GRID, seeds=3, store=db, workers=2, progress=False)


def _saved(fig, tmp_path, name):
    png, svg = tmp_path / f"{name}.png", tmp_path / f"{name}.svg"
    plot.save(fig, png, svg)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:2000]


def test_no_display():
    assert "DISPLAY" not in os.environ


def test_figures(tmp_path, swept):
    _, res = swept
    _saved(plot.metric_vs_param(res, "link.loss.rate", "energy_j", hue="flow.protocol"), tmp_path, "mvp")
    _saved(plot.goodput_cdf(res.flows), tmp_path, "cdf")
    _saved(plot.box(res, "aggregate_goodput_bps", by="flow.protocol"), tmp_path, "box")
    r = res.results()[0]
    _saved(plot.timeseries(r, ["cwnd", "rate", "channel"]), tmp_path, "ts")


def test_report_python_and_cli(tmp_path, swept):
    db, _ = swept
    out = tmp_path / "report.html"
    joulenet.report(db, out)
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 4
    assert "Means and 95% intervals over seeds" in page and joulenet.version() in page
    # The summary comes first, names a winner per metric and says whether
    # its interval is clear of the runner-up's.
    assert page.index("<h2>Summary</h2>") < page.index("<h2>Scenario")
    assert "ahead of the next" in page and "(higher is better)" in page
    assert "intervals separate at" in page
    # Units people read: SI-prefixed headers, no exponent notation, ε defined.
    assert "goodput (Mbit/s)" in page or "goodput (kbit/s)" in page
    assert "energy per bit (µJ)" in page and "e-0" not in page.split("<h2>Manifest")[0]
    assert "ε efficiency" in page and "M/S" in page
    assert "src=\"http" not in page  # self-contained
    # Calling it again works: importing the module must not shadow the function.
    joulenet.report(db, tmp_path / "again.html")
    out2 = tmp_path / "cli.html"
    subprocess.run([sys.executable, "-m", "joulenet", "report", str(db), "-o", str(out2)],
                   check=True, capture_output=True)
    assert out2.read_text().count("<svg") == page.count("<svg")


def test_example_script_runs(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, os.path.join(root, "examples", "compare_protocols.py"),
                    "--out", str(tmp_path), "--seeds", "2", "--workers", "2"],
                   check=True, capture_output=True)
    assert (tmp_path / "compare-energy.png").stat().st_size > 1000
    assert (tmp_path / "compare-report.html").exists()


def test_experiments_are_runnable(tmp_path):
    names = joulenet.experiments.names()
    assert "demo" in names and "jtp/linear" in names and "wwp/onoff" in names
    res = joulenet.experiments.reproduce("demo", seeds=2, store=str(tmp_path / "demo.db"),
                                         workers=2, progress=False)
    assert len(res) == 5 * 2  # the demo's own sweep: five protocols
    assert set(res.summary["flow.protocol"]) == {"tahoe", "reno", "newreno", "sack", "cubic"}


def test_report_console_script(tmp_path, swept):
    db, _ = swept
    script = os.path.join(os.path.dirname(sys.executable), "joulenet-report")
    if not os.path.exists(script):
        pytest.skip("package not installed with its console scripts")
    out = tmp_path / "script.html"
    subprocess.run([script, str(db), "-o", str(out)], check=True, capture_output=True)
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_paper_reproduction_runs_from_python(tmp_path):
    rep = joulenet.experiments.paper("wwp", quick=True, out=str(tmp_path / "wwp"))
    assert rep.runs > 0
    assert "Table 1" in rep.report and "paper" in rep.report
    assert (tmp_path / "wwp" / "report.txt").read_text() == rep.report
    tables = rep.tables()
    assert tables, "the experiment wrote CSV tables"
    with pytest.raises(ValueError, match="unknown experiment"):
        joulenet.experiments.paper("nope", out=str(tmp_path / "x"))


def test_residual_map_colours_nodes_by_what_their_battery_has_left(tmp_path):
    # Six nodes on a line, tiny batteries, one CBR flow across: the relays
    # drain, some die, and the map shows them where they stand.
    scenario = """
name = "residual-map"
stop = "60s"
[topology]
kind = "chain"
hops = 5
spacing = 150
[medium]
standard = "802.11b"
[energy]
policy = "ideal"
[[batteries]]
node = "*"
capacity = "3J"
[flow]
protocol = "udp"
app = "cbr"
background = false
rate = "500kbps"
message = 1000
from = 0
to = 5
"""
    r = joulenet.run(scenario, seed=1)
    nodes = r.nodes
    assert {"x_m", "y_m", "residual_j", "battery_j", "died_at_s"} <= set(nodes.columns)
    assert (nodes["residual_j"] <= nodes["battery_j"] + 1e-9).all()
    assert nodes["died_at_s"].notna().any(), "3 J cannot last a minute of relaying"
    fig = plot.residual_map(r, title="residual energy")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "x (m)" and ax.get_title() == "residual energy"
    assert any(t.get_text() == "dead" for t in ax.get_legend().get_texts())
    _saved(fig, tmp_path, "map")
