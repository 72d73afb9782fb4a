//! The `_joulenet` Python module (feature `python`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{info_json, run_to_json, ScenarioError, GIT_COMMIT};

/// A `joulenet.errors.ScenarioError(key, message)`, the class users catch.
fn scenario_err(py: Python<'_>, e: ScenarioError) -> PyErr {
    match py
        .import("joulenet.errors")
        .and_then(|m| m.getattr("ScenarioError"))
        .and_then(|cls| cls.call1((e.key.clone(), e.message.clone())))
    {
        Ok(obj) => PyErr::from_value(obj),
        Err(_) => PyValueError::new_err(e.to_string()),
    }
}

/// Run one seed of one parameter point; the RunResult as JSON.
///
/// The GIL is released while the simulation runs.
#[pyfunction]
#[pyo3(signature = (scenario, params_json, seed, format="toml", name="scenario", dir="."))]
fn run_json(
    py: Python<'_>,
    scenario: &str,
    params_json: &str,
    seed: u64,
    format: &str,
    name: &str,
    dir: &str,
) -> PyResult<String> {
    let args = (
        scenario.to_string(),
        format.to_string(),
        name.to_string(),
        dir.to_string(),
        params_json.to_string(),
    );
    let out = py.allow_threads(move || {
        let (scenario, format, name, dir, params) = args;
        run_to_json(&scenario, &format, &name, &dir, &params, seed)
    });
    out.map_err(|e| scenario_err(py, e))
}

/// Validate a scenario and expand its sweep with `grid_json` (a JSON list of
/// `[key, [values...]]` pairs). Returns JSON: `name`, `hash`,
/// `default_seed`, `sweep` (the effective grid), `points`.
#[pyfunction]
#[pyo3(signature = (scenario, format="toml", name="scenario", dir=".", grid_json="[]"))]
fn scenario_info(
    py: Python<'_>,
    scenario: &str,
    format: &str,
    name: &str,
    dir: &str,
    grid_json: &str,
) -> PyResult<String> {
    info_json(scenario, format, name, dir, grid_json).map_err(|e| scenario_err(py, e))
}

/// joulenet's version.
#[pyfunction]
fn version() -> &'static str {
    joulenet_sim::VERSION
}

/// The git commit the extension was built from.
#[pyfunction]
fn git_commit() -> &'static str {
    GIT_COMMIT
}

/// Run a paper's experiments (`joulenet reproduce`): returns JSON with the
/// report text, the number of runs and the output directory. The GIL is
/// released while the simulations run.
#[pyfunction]
#[pyo3(signature = (paper, out, scenarios="scenarios", quick=true, seeds=None))]
fn reproduce_json(
    py: Python<'_>,
    paper: &str,
    out: &str,
    scenarios: &str,
    quick: bool,
    seeds: Option<u64>,
) -> PyResult<String> {
    let options = joulenet_experiments::Options {
        quick,
        seeds,
        scenarios: scenarios.into(),
        out: out.into(),
        echo: false,
        baseline: None,
    };
    let paper = paper.to_string();
    let outcome = py.allow_threads(move || joulenet_experiments::reproduce(&paper, &options));
    let outcome = outcome.map_err(pyo3::exceptions::PyValueError::new_err)?;
    Ok(serde_json::json!({
        "report": outcome.report,
        "runs": outcome.runs,
        "out": outcome.out.display().to_string(),
    })
    .to_string())
}

#[pymodule]
fn _joulenet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_info, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(git_commit, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    Ok(())
}
