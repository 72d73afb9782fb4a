"""Schema errors: the same key and message from a dict as from a TOML file."""

import pytest

import joulenet
from joulenet import ScenarioError

CASES = [
    ("[link]\nrat = 1\n", {"link": {"rat": 1}}, "link.rat"),
    ("[link]\nrate = \"fast\"\n", {"link": {"rate": "fast"}}, "link.rate"),
    ("[flow]\nprotocol = \"tcp-nope\"\n", {"flow": {"protocol": "tcp-nope"}}, "flow.protocol"),
    ("[link.loss]\nmodel = \"bernoulli\"\nrate = 2.0\n",
     {"link": {"loss": {"model": "bernoulli", "rate": 2.0}}}, "link.loss.rate"),
    ("bogus = 1\n", {"bogus": 1}, "bogus"),
    ("[sweep]\n\"flow.protocol\" = []\n", {"sweep": {"flow.protocol": []}}, "sweep.flow.protocol"),
]


@pytest.mark.parametrize("toml_text,as_dict,key", CASES)
def test_dict_and_toml_errors_are_identical(tmp_path, toml_text, as_dict, key):
    path = tmp_path / "bad.toml"
    path.write_text(toml_text)
    with pytest.raises(ScenarioError) as from_file:
        joulenet.run(path)
    with pytest.raises(ScenarioError) as from_dict:
        joulenet.run(as_dict)
    assert from_file.value.key == key
    assert from_dict.value.key == from_file.value.key
    assert from_dict.value.message == from_file.value.message
    assert str(from_dict.value).startswith(key)


def test_scenario_error_is_a_value_error_with_key():
    with pytest.raises(ValueError) as e:
        joulenet.check({"link": {"delay": []}})
    assert isinstance(e.value, ScenarioError)
    assert e.value.key == "link.delay"


def test_null_is_rejected_with_its_key():
    with pytest.raises(ScenarioError) as e:
        joulenet.run({"flow": {"bytes": None}})
    assert e.value.key == "flow.bytes"


def test_bad_grid_fails_before_any_run(tmp_path, scenario):
    db = tmp_path / "s.db"
    with pytest.raises(ScenarioError) as e:
        joulenet.sweep(scenario, grid={"link.loss.rate": [0.01, 7.0]}, seeds=2, store=db, progress=False)
    assert e.value.key == "link.loss.rate"
    with joulenet.Store(db) as st:
        assert st.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_bad_params_of_run(scenario):
    with pytest.raises(ScenarioError) as e:
        joulenet.run(scenario, params={"link.rat": 1})
    assert e.value.key == "link.rat"


def test_missing_file():
    with pytest.raises(ScenarioError):
        joulenet.run("/nonexistent/scenario.toml")
