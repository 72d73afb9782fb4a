//! Scenarios: TOML files (or equivalent values) describing a network, its
//! flows and what to record; parameter overrides; sweeps.
//!
//! A scenario is kept as a TOML value until it is run, so a parameter point
//! (a sweep point, a `--set key=value`) is applied as an override of the
//! value and then the whole thing is validated: every key is checked and an
//! error names the key and the reason.

mod energy;
mod loss;
mod medium;
mod parse;
pub(crate) use joulenet_registry::options as reader;
pub(crate) mod topology;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toml::{Table, Value};

use crate::spec::Spec;

pub use energy::MODELS as ENERGY_MODELS;
pub use loss::MODELS as LOSS_MODELS;
pub use medium::KINDS as MEDIUM_TOPOLOGIES;
pub use topology::KINDS as TOPOLOGIES;

/// A scenario key and what is wrong with it (the protocol registry reads
/// protocol options with the same errors).
pub use joulenet_registry::OptionError as ScenarioError;

/// One point of a parameter sweep: dotted keys and the values they take.
pub type ParamPoint = BTreeMap<String, Value>;

/// A loaded scenario, not yet bound to parameter values.
#[derive(Clone, Debug)]
pub struct Scenario {
    base: Table,
    sweep: Vec<(String, Vec<Value>)>,
    name: String,
    hash: String,
    /// Directory relative paths (trace files) are resolved against.
    dir: PathBuf,
}

impl Scenario {
    pub fn from_file(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError::new("", format!("cannot read {}: {e}", path.display())))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Scenario::parse_str(&text, &stem, dir)
    }

    /// Parse TOML text. `default_name` names the scenario if it has no `name`.
    pub fn parse_str(
        text: &str,
        default_name: &str,
        dir: PathBuf,
    ) -> Result<Scenario, ScenarioError> {
        let table: Table = text.parse().map_err(|e: toml::de::Error| {
            ScenarioError::new("", format!("not valid TOML: {}", e.message().trim()))
                .at_line_of(text, e.span())
        })?;
        if table.is_empty() {
            // An empty file (or one of comments only) would otherwise run
            // the built-in defaults as if they had been asked for.
            return Err(ScenarioError::new(
                "",
                "the scenario is empty: it sets no key (write at least one section, e.g. [link] or [flow]; see docs/scenarios.md)",
            ));
        }
        Scenario::from_table(table, default_name, dir)
    }

    /// A scenario from an already parsed table (the Python API's dicts).
    pub fn from_table(
        mut base: Table,
        default_name: &str,
        dir: PathBuf,
    ) -> Result<Scenario, ScenarioError> {
        let sweep = match base.remove("sweep") {
            None => Vec::new(),
            Some(Value::Table(t)) => t
                .into_iter()
                .map(|(k, v)| match v {
                    Value::Array(values) if !values.is_empty() => Ok((k, values)),
                    _ => Err(ScenarioError::new(
                        format!("sweep.{k}"),
                        "expected a non-empty array of values",
                    )),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(ScenarioError::new(
                    "sweep",
                    "expected a table of key = [values]",
                ))
            }
        };
        let name = match base.get("name") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(ScenarioError::new("name", "expected a string")),
            None => default_name.to_string(),
        };
        let hash = hash_table(&base);
        let scenario = Scenario {
            base,
            sweep,
            name,
            hash,
            dir,
        };
        // Validate every point now, so a bad file fails before any run.
        for point in scenario.points() {
            scenario.spec(&point)?;
        }
        Ok(scenario)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A stable hash of the scenario's content (without its sweep).
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The scenario as a TOML table (without its sweep).
    pub fn table(&self) -> &Table {
        &self.base
    }

    pub fn sweep(&self) -> &[(String, Vec<Value>)] {
        &self.sweep
    }

    /// Replace the scenario's own sweep.
    pub fn set_sweep(&mut self, sweep: Vec<(String, Vec<Value>)>) {
        self.sweep = sweep;
    }

    /// Every parameter point of the sweep (one empty point without a sweep),
    /// in a fixed order: the cartesian product, last key varying fastest.
    pub fn points(&self) -> Vec<ParamPoint> {
        let mut points = vec![ParamPoint::new()];
        for (key, values) in &self.sweep {
            points = points
                .into_iter()
                .flat_map(|p| {
                    values.iter().map(move |v| {
                        let mut p = p.clone();
                        p.insert(key.clone(), v.clone());
                        p
                    })
                })
                .collect();
        }
        points
    }

    /// The validated spec at a parameter point.
    pub fn spec(&self, point: &ParamPoint) -> Result<Spec, ScenarioError> {
        let mut table = self.base.clone();
        for (key, value) in point {
            set_path(&mut table, key, value.clone())?;
        }
        parse::spec(&table, &self.name, &self.dir)
    }

    /// The default seed of the scenario (`seed = N`, else 1).
    pub fn default_seed(&self) -> u64 {
        match self.base.get("seed") {
            Some(Value::Integer(i)) if *i >= 0 => *i as u64,
            _ => 1,
        }
    }
}

/// Set `key` (dotted, e.g. `link.loss.rate` or `flows.1.protocol`) to `value`,
/// creating tables on the way.
pub fn set_path(table: &mut Table, key: &str, value: Value) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ScenarioError::new(key, "not a valid dotted key"));
    }
    let mut cur: &mut Value = &mut Value::Table(std::mem::take(table));
    let root: *mut Value = cur;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let next: &mut Value = match cur {
            Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    break;
                }
                t.entry(part.to_string())
                    .or_insert_with(|| Value::Table(Table::new()))
            }
            Value::Array(items) => {
                let idx: usize = part.parse().map_err(|_| {
                    ScenarioError::new(key, format!("`{part}` is not an array index"))
                })?;
                let len = items.len();
                let item = items.get_mut(idx).ok_or_else(|| {
                    ScenarioError::new(key, format!("index {idx} is out of range (length {len})"))
                })?;
                if last {
                    *item = value;
                    break;
                }
                item
            }
            _ => {
                return Err(ScenarioError::new(
                    key,
                    format!("`{}` is not a table", parts[..i].join(".")),
                ))
            }
        };
        cur = next;
    }
    // SAFETY: `root` points at the temporary root value created above, which
    // is still alive; `cur` borrows derived from it are no longer used.
    let root = unsafe { &mut *root };
    if let Value::Table(t) = std::mem::replace(root, Value::Boolean(false)) {
        *table = t;
    }
    Ok(())
}

/// Parse a `key=value` override from a command line. The value is read as a
/// TOML value if it is one (`0.01`, `true`, `"x"`, `[1, 2]`), else as a string.
pub fn parse_override(s: &str) -> Result<(String, Value), ScenarioError> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| ScenarioError::new(s, "expected key=value"))?;
    Ok((key.trim().to_string(), parse_value(value.trim())))
}

/// A command-line value as TOML, falling back to a plain string.
pub fn parse_value(text: &str) -> Value {
    format!("v = {text}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(text.to_string()))
}

/// Render a parameter value for reports (strings without quotes).
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn hash_table(t: &Table) -> String {
    // toml::Table is ordered by key, so this text is canonical.
    let text = toml::to_string(t).unwrap_or_default();
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_path_creates_and_replaces() {
        let mut t: Table = "[link]\nrate = \"1Mbps\"".parse().unwrap();
        set_path(&mut t, "link.loss.rate", Value::Float(0.01)).unwrap();
        set_path(&mut t, "link.rate", Value::String("2Mbps".into())).unwrap();
        assert_eq!(t["link"]["loss"]["rate"], Value::Float(0.01));
        assert_eq!(t["link"]["rate"], Value::String("2Mbps".into()));
        let mut t: Table = "[[flows]]\nprotocol = \"reno\"".parse().unwrap();
        set_path(&mut t, "flows.0.protocol", Value::String("sack".into())).unwrap();
        assert_eq!(t["flows"][0]["protocol"], Value::String("sack".into()));
        assert!(set_path(&mut t, "flows.3.protocol", Value::Integer(1)).is_err());
        assert!(set_path(&mut t, "flows..x", Value::Integer(1)).is_err());
    }

    #[test]
    fn override_values_parse_as_toml_or_string() {
        assert_eq!(
            parse_override("a.b=0.5").unwrap(),
            ("a.b".to_string(), Value::Float(0.5))
        );
        assert_eq!(
            parse_override("p=reno").unwrap().1,
            Value::String("reno".into())
        );
        assert_eq!(parse_override("x=true").unwrap().1, Value::Boolean(true));
        assert!(parse_override("nonsense").is_err());
    }
}
