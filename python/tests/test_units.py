"""Units, intervals and the report's summary, on numbers with known answers."""

import math

import pandas as pd

from joulenet import units
from joulenet.reporting import _cells, _summary
from joulenet.stats import interval95, mean_ci


def test_si_prefix_reads_the_largest_value_between_1_and_1000():
    assert units.si_prefix([1.7e-6, 2.1e-6], "J") == (1e-6, "µJ")
    assert units.si_prefix([250e3, 900e3], "bit/s") == (1e3, "kbit/s")
    assert units.si_prefix([0.012], "s") == (1e-3, "ms")
    assert units.si_prefix([4000.0], "s") == (1.0, "s")  # never ks
    assert units.si_prefix([204.0], "") == (1.0, "")  # counts take no prefix


def test_labels_are_human():
    assert units.parameter_label("link.loss.rate") == "loss rate"
    assert units.parameter_label("medium.something_new") == "something new"
    assert units.parameter_label("flow.tcp.min_rto") == "tcp min rto"
    assert units.axis_label("efficiency", "") == "ε efficiency"
    assert units.axis_label("energy_per_bit_j", "µJ") == "energy per bit (µJ)"


def test_interval_is_student_t_inside_the_domain():
    lo, hi, how = interval95([1.0, 2.0, 3.0, 4.0], "nonnegative")
    assert how == "t"
    assert math.isclose(hi - 2.5, 3.182 * 1.2909944 / 2, rel_tol=1e-6)
    assert math.isclose(2.5 - lo, hi - 2.5)


def test_a_skewed_count_never_gets_a_negative_bound():
    lo, hi, how = interval95([0, 0, 2, 0, 400], "nonnegative")
    assert how == "bootstrap" and 0 <= lo <= 80.4 <= hi <= 400
    lo, hi, how = interval95([0.999, 1.0, 0.95, 1.0], "unit")
    assert how == "bootstrap" and hi <= 1.0
    # The same samples give the same interval.
    assert interval95([0, 0, 2, 0, 400], "nonnegative") == interval95([0, 0, 2, 0, 400], "nonnegative")


def test_mean_ci_takes_each_metrics_domain_when_grouped_by_metric():
    df = pd.DataFrame({"metric": ["timeouts"] * 5 + ["x"] * 5,
                       "value": [0, 0, 2, 0, 400] + [0, 0, 2, 0, 400]})
    out = mean_ci(df, "metric").set_index("metric")
    assert out.loc["timeouts", "method"] == "bootstrap" and out.loc["timeouts", "lo"] >= 0
    assert out.loc["x", "method"] == "t" and out.loc["x", "lo"] < 0  # unknown: the reals


def _agg(rows):
    df = pd.DataFrame(rows, columns=["flow.protocol", "link.loss.rate", "metric", "value"])
    return _cells(mean_ci(df, ["flow.protocol", "link.loss.rate", "metric"]))


def test_summary_names_the_winner_with_margin_and_overlap():
    clear = [("sack", 0.0, "aggregate_goodput_bps", v) for v in (2.0e6, 2.1e6, 2.05e6)] + \
            [("reno", 0.0, "aggregate_goodput_bps", v) for v in (1.0e6, 1.1e6, 1.05e6)]
    s = _summary(_agg(clear), ["flow.protocol", "link.loss.rate"])
    assert len(s) == 1 and s[0]["winner"] == "protocol sack"
    assert math.isclose(s[0]["margins"][0], 2.05 / 1.05 - 1)
    assert s[0]["separate"] == 1
    close = [("sack", 0.0, "energy_j", v) for v in (10.0, 14.0, 12.0)] + \
            [("reno", 0.0, "energy_j", v) for v in (11.0, 15.0, 13.0)]
    s = _summary(_agg(close), ["flow.protocol", "link.loss.rate"])
    assert s[0]["winner"] == "protocol sack" and s[0]["separate"] == 0  # lower is better


def test_cells_use_one_unit_per_metric():
    agg = _agg([("sack", 0.0, "energy_per_bit_j", v) for v in (1.6e-6, 1.7e-6, 1.8e-6)])
    assert set(agg["column"]) == {"energy per bit (µJ)"}
    assert agg["cell"].iloc[0] == "1.70 (1.45–1.95)"
