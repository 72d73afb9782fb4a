//! `joulenet._joulenet`: the small Rust side of the Python package.
//!
//! Everything crosses the boundary as text: a scenario as TOML text or as
//! JSON (a Python dict serialised by the package), parameter points as JSON
//! objects of dotted keys, results as the JSON of [`joulenet_sim::RunResult`]. DataFrames,
//! sweeps, the result store, plots and reports live in pure Python
//! (`python/joulenet/`).
//!
//! Scenario errors are raised as `joulenet.errors.ScenarioError(key,
//! message)`, the Python class users catch.

use std::path::PathBuf;

use joulenet_sim::scenario::ParamPoint;
use joulenet_sim::{Scenario, ScenarioError};
use serde_json::Value as Json;
use toml::Value as Toml;

/// The git commit the extension was built from (`unknown` outside git).
pub const GIT_COMMIT: &str = env!("JOULENET_GIT_COMMIT");

/// A JSON value as TOML. JSON `null` has no TOML equivalent: an error naming
/// the key.
pub fn json_to_toml(key: &str, v: &Json) -> Result<Toml, ScenarioError> {
    Ok(match v {
        Json::Null => return Err(ScenarioError::new(key, "null is not a valid value")),
        Json::Bool(b) => Toml::Boolean(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Toml::Integer(i)
            } else if let Some(f) = n.as_f64() {
                Toml::Float(f)
            } else {
                return Err(ScenarioError::new(key, "number out of range"));
            }
        }
        Json::String(s) => Toml::String(s.clone()),
        Json::Array(items) => Toml::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| json_to_toml(&join(key, &i.to_string()), x))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(map) => Toml::Table(
            map.iter()
                .map(|(k, x)| Ok((k.clone(), json_to_toml(&join(key, k), x)?)))
                .collect::<Result<_, ScenarioError>>()?,
        ),
    })
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

/// Load a scenario from TOML text (`format = "toml"`) or JSON text
/// (`format = "json"`).
pub fn load(text: &str, format: &str, name: &str, dir: &str) -> Result<Scenario, ScenarioError> {
    let dir = PathBuf::from(dir);
    match format {
        "toml" => Scenario::parse_str(text, name, dir),
        "json" => {
            let json: Json = serde_json::from_str(text)
                .map_err(|e| ScenarioError::new("", format!("not valid JSON: {e}")))?;
            match json_to_toml("", &json)? {
                Toml::Table(t) => Scenario::from_table(t, name, dir),
                _ => Err(ScenarioError::new("", "a scenario must be a table (dict)")),
            }
        }
        other => Err(ScenarioError::new(
            "",
            format!("unknown scenario format `{other}` (toml or json)"),
        )),
    }
}

/// A parameter point from a JSON object of dotted keys.
pub fn point(json: &str) -> Result<ParamPoint, ScenarioError> {
    let v: Json = serde_json::from_str(json)
        .map_err(|e| ScenarioError::new("", format!("parameters are not valid JSON: {e}")))?;
    let Json::Object(map) = v else {
        return Err(ScenarioError::new("", "parameters must be a dict"));
    };
    map.iter()
        .map(|(k, v)| Ok((k.clone(), json_to_toml(k, v)?)))
        .collect()
}

fn toml_to_json(v: &Toml) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

/// The sweep grid: the scenario's own `[sweep]`, with the keys of `grid`
/// replacing (or added after) its keys, and the fixed overrides in `set`
/// removed from the sweep. Returns the points (cartesian product, last key
/// fastest), each validated.
pub fn grid_points(
    scenario: &mut Scenario,
    grid: &[(String, Vec<Toml>)],
) -> Result<Vec<ParamPoint>, ScenarioError> {
    let mut sweep: Vec<(String, Vec<Toml>)> = scenario.sweep().to_vec();
    for (k, values) in grid {
        if values.is_empty() {
            return Err(ScenarioError::new(k.clone(), "the grid gives no values"));
        }
        match sweep.iter_mut().find(|(s, _)| s == k) {
            Some(entry) => entry.1 = values.clone(),
            None => sweep.push((k.clone(), values.clone())),
        }
    }
    scenario.set_sweep(sweep);
    let points = scenario.points();
    for p in &points {
        scenario.spec(p)?;
    }
    Ok(points)
}

#[cfg(feature = "python")]
mod python;

/// Validate a scenario and expand its sweep with `grid_json` (a JSON list of
/// `[key, [values...]]` pairs): JSON with `name`, `hash`, `default_seed`,
/// `sweep` (the effective grid) and `points`.
pub fn info_json(
    scenario: &str,
    format: &str,
    name: &str,
    dir: &str,
    grid_json: &str,
) -> Result<String, ScenarioError> {
    let mut s = load(scenario, format, name, dir)?;
    let grid_v: Json = serde_json::from_str(grid_json)
        .map_err(|e| ScenarioError::new("", format!("grid is not valid JSON: {e}")))?;
    let mut grid = Vec::new();
    for item in grid_v.as_array().into_iter().flatten() {
        let key = item[0].as_str().unwrap_or_default().to_string();
        let values = item[1]
            .as_array()
            .ok_or_else(|| ScenarioError::new(key.clone(), "grid values must be a list"))?
            .iter()
            .map(|v| json_to_toml(&key, v))
            .collect::<Result<Vec<_>, _>>()?;
        grid.push((key, values));
    }
    let points = grid_points(&mut s, &grid)?;
    let info = serde_json::json!({
        "name": s.name(),
        "hash": s.hash(),
        "default_seed": s.default_seed(),
        "sweep": s.sweep().iter()
            .map(|(k, vs)| serde_json::json!([k, vs.iter().map(toml_to_json).collect::<Vec<_>>()]))
            .collect::<Vec<_>>(),
        "points": points.iter()
            .map(|p| p.iter().map(|(k, v)| (k.clone(), toml_to_json(v))).collect::<serde_json::Map<_, _>>())
            .collect::<Vec<_>>(),
    });
    Ok(info.to_string())
}

/// Run one seed of one parameter point: the RunResult as JSON.
pub fn run_to_json(
    scenario: &str,
    format: &str,
    name: &str,
    dir: &str,
    params_json: &str,
    seed: u64,
) -> Result<String, ScenarioError> {
    let s = load(scenario, format, name, dir)?;
    let p = point(params_json)?;
    let result = joulenet_sim::run(&s, &p, seed, &mut |_| {})?;
    serde_json::to_string(&result).map_err(|e| ScenarioError::new("", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = "[link]\nrate = \"2Mbps\"\n[flow]\nbytes = \"100kB\"\n";

    #[test]
    fn json_and_toml_scenarios_hash_alike() {
        let a = load(TOML, "toml", "x", ".").unwrap();
        let b = load(
            r#"{"link": {"rate": "2Mbps"}, "flow": {"bytes": "100kB"}}"#,
            "json",
            "x",
            ".",
        )
        .unwrap();
        assert_eq!(a.hash(), b.hash());
    }

    #[test]
    fn json_errors_name_the_key_like_toml() {
        let a = load("[link]\nrat = 1\n", "toml", "x", ".").unwrap_err();
        let b = load(r#"{"link": {"rat": 1}}"#, "json", "x", ".").unwrap_err();
        assert_eq!(a, b);
        assert_eq!(a.key, "link.rat");
        let n = load(r#"{"link": {"rate": null}}"#, "json", "x", ".").unwrap_err();
        assert_eq!(n.key, "link.rate");
    }

    #[test]
    fn grid_replaces_and_extends_the_sweep() {
        let mut s = load(
            "[flow]\nbytes = \"10kB\"\n[sweep]\n\"flow.protocol\" = [\"reno\", \"sack\"]\n",
            "toml",
            "x",
            ".",
        )
        .unwrap();
        let grid = vec![
            (
                "flow.protocol".to_string(),
                vec![Toml::String("cubic".into())],
            ),
            ("link.rate".to_string(), vec![Toml::String("1Mbps".into())]),
        ];
        let points = grid_points(&mut s, &grid).unwrap();
        assert_eq!(points.len(), 1);
        assert_eq!(points[0]["flow.protocol"], Toml::String("cubic".into()));
    }

    #[test]
    fn info_lists_validated_points() {
        let text = std::fs::read_to_string("../../scenarios/demo.toml").unwrap();
        let info: Json =
            serde_json::from_str(&info_json(&text, "toml", "demo", ".", "[]").unwrap()).unwrap();
        assert_eq!(info["points"].as_array().unwrap().len(), 5);
        assert_eq!(info["points"][0]["flow.protocol"], "tahoe");
        let err = info_json(
            &text,
            "toml",
            "demo",
            ".",
            r#"[["flow.protocol", ["nope"]]]"#,
        )
        .unwrap_err();
        assert_eq!(err.key, "flow.protocol");
        let a = run_to_json(
            &text,
            "toml",
            "demo",
            ".",
            r#"{"flow.protocol": "reno"}"#,
            4,
        );
        let b = run_to_json(
            &text,
            "toml",
            "demo",
            ".",
            r#"{"flow.protocol": "reno"}"#,
            4,
        );
        assert_eq!(a.unwrap(), b.unwrap());
    }

    #[test]
    fn runs_a_point() {
        let s = load(TOML, "toml", "x", ".").unwrap();
        let p = point(r#"{"flow.protocol": "sack"}"#).unwrap();
        let r = joulenet_sim::run(&s, &p, 1, &mut |_| {}).unwrap();
        assert_eq!(r.flows[0].protocol, "sack");
        assert!(GIT_COMMIT.len() >= 7);
    }
}
