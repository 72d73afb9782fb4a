//! `[energy]` and `[[batteries]]`: how radios are charged and what powers
//! the nodes.

use joulenet_channel::battery::cells::{self, Cell};
use joulenet_channel::battery::{Battery, BatteryModel, KibamParams, PeukertParams};
use joulenet_channel::radio::{serrano, FrameModel, FrameRole, Linear, RadioPolicy};
use toml::Value;

use super::reader::{Reader, Result};
use super::topology::node_ref;
use crate::spec::NodeSpec;

/// What `[energy]` says.
pub struct EnergySpec {
    pub policy: RadioPolicy,
    pub frames: FrameModel,
    pub dead_fraction: f64,
}

/// Energy models accepted by `energy.model`.
pub const MODELS: &[&str] = &["state", "per_packet"];

pub fn energy(root: &Reader) -> Result<EnergySpec> {
    let Some(e) = root.table("energy")? else {
        return Ok(EnergySpec {
            policy: RadioPolicy::AlwaysActive,
            frames: FrameModel::state(),
            dead_fraction: 0.5,
        });
    };
    let policy = policy(&e)?;
    let frames = frames(&e)?;
    let dead_fraction = match e.probability("dead_fraction")? {
        Some(f) if f > 0.0 => f,
        Some(_) => return Err(e.error("dead_fraction", "must be above 0")),
        None => 0.5,
    };
    e.finish()?;
    Ok(EnergySpec {
        policy,
        frames,
        dead_fraction,
    })
}

fn policy(e: &Reader) -> Result<RadioPolicy> {
    let policy = match e.str("policy")?.unwrap_or("always_active") {
        "always_active" => RadioPolicy::AlwaysActive,
        "ideal" => RadioPolicy::Ideal,
        "intermediate" => RadioPolicy::Intermediate {
            active_weight: e.probability("active_weight")?.unwrap_or(0.5),
        },
        other => {
            return Err(e.error(
                "policy",
                format!(
                    "expected \"always_active\", \"ideal\" or \"intermediate\", got \"{other}\""
                ),
            ))
        }
    };
    if !matches!(policy, RadioPolicy::Intermediate { .. }) && e.has("active_weight") {
        return Err(e.error(
            "active_weight",
            "only meaningful with policy = \"intermediate\"",
        ));
    }
    Ok(policy)
}

/// `model = "state"` (with an optional `cross_factor = { tx, rx }`) or
/// `model = "per_packet"` (a `per_packet` preset, lines overridable).
fn frames(e: &Reader) -> Result<FrameModel> {
    let model = e.str("model")?.unwrap_or("state");
    let mut frames = match model {
        "state" => cross_factor(e)?,
        "per_packet" => {
            let name = e.str("per_packet")?.unwrap_or("feeney-nilsson");
            FrameModel::preset(name).ok_or_else(|| {
                e.error(
                    "per_packet",
                    format!(
                        "unknown per-packet model \"{name}\" (expected one of {})",
                        FrameModel::preset_names().join(", ")
                    ),
                )
            })?
        }
        other => {
            return Err(e.error(
                "model",
                format!("expected one of {}, got \"{other}\"", MODELS.join(", ")),
            ))
        }
    };
    if model == "state" && e.has("per_packet") {
        return Err(e.error("per_packet", "only meaningful with model = \"per_packet\""));
    }
    if model == "per_packet" && e.has("cross_factor") {
        return Err(e.error(
            "cross_factor",
            "only meaningful with model = \"state\" (the per-packet lines hold every per-frame cost)",
        ));
    }
    for role in FrameRole::ALL {
        let Some(line) = e.table(role.key())? else {
            continue;
        };
        if model != "per_packet" {
            return Err(e.error(
                role.key(),
                "a line is only meaningful with model = \"per_packet\"",
            ));
        }
        let per_byte = line.req("per_byte_uj", line.f64("per_byte_uj"))?;
        let fixed = line.req("fixed_uj", line.f64("fixed_uj"))?;
        line.finish()?;
        frames.set_line(role, Linear::micro(per_byte, fixed));
        frames.name = "custom".into();
    }
    frames
        .validate()
        .map_err(|err| e.error(err.param.trim_start_matches("energy."), err.reason))?;
    Ok(frames)
}

/// `cross_factor = { tx, rx }`, a measured device's (`"serrano-linksys"`),
/// or a device's with the parts it lacks given (`{ preset, rx }`).
fn cross_factor(e: &Reader) -> Result<FrameModel> {
    let device = |r: &Reader, key: &str, name: &str| {
        serrano::device(name).ok_or_else(|| {
            r.error(
                key,
                format!(
                    "unknown device \"{name}\" (expected one of {})",
                    serrano::device_names().join(", ")
                ),
            )
        })
    };
    if let Some(Value::String(name)) = e.get("cross_factor") {
        let d = device(e, "cross_factor", name)?;
        return Ok(FrameModel::cross_factor(d.cross_factor_tx_j, 0.0).named(d.name));
    }
    let Some(x) = e.table("cross_factor")? else {
        return Ok(FrameModel::state());
    };
    let preset = match x.str("preset")? {
        Some(name) => Some(device(&x, "preset", name)?),
        None => None,
    };
    let own_tx = x.energy("tx")?;
    let tx = own_tx
        .or(preset.map(|d| d.cross_factor_tx_j))
        .unwrap_or(0.0);
    let rx = x.energy("rx")?.unwrap_or(0.0);
    x.finish()?;
    let model = FrameModel::cross_factor(tx, rx);
    // A device's name only while its measured γ_xg is what is charged.
    Ok(match (preset, own_tx) {
        (Some(d), None) => model.named(d.name),
        _ => model,
    })
}

/// `[[batteries]]`: `node` (index, name or `"*"` for every node) and a
/// `capacity`, a `cell` preset, or both (the capacity overrides the cell's).
pub fn batteries(root: &Reader, names: &[String], nodes: &mut [NodeSpec]) -> Result<()> {
    for (table, path) in root.tables("batteries")? {
        let r = Reader::new(table, &path);
        let targets: Vec<usize> = match r.get("node") {
            Some(Value::String(s)) if s == "*" => (0..names.len()).collect(),
            _ => vec![node_ref(&r, "node", names)? as usize],
        };
        let battery = battery(&r)?;
        r.finish()?;
        for n in targets {
            nodes[n].battery = Some(battery);
        }
    }
    Ok(())
}

fn battery(r: &Reader) -> Result<Battery> {
    let cell = match r.str("cell")? {
        Some(name) => Some(cells::cell(name).ok_or_else(|| {
            r.error(
                "cell",
                format!(
                    "unknown cell \"{name}\" (expected one of {})",
                    cells::cell_names().join(", ")
                ),
            )
        })?),
        None => None,
    };
    let capacity = match (r.energy("capacity")?, cell) {
        (Some(c), _) => c,
        (None, Some(cell)) => cell.capacity_j,
        (None, None) => return Err(r.error("capacity", "required unless a `cell` is given")),
    };
    let model = match r.str("model")?.unwrap_or("ideal") {
        "ideal" => BatteryModel::Ideal,
        "kibam" => {
            let preset = cell.and_then(|c| c.kibam);
            BatteryModel::Kibam(KibamParams {
                c: param(r, "c", cell, preset.map(|p| p.c))?,
                k: param(r, "k", cell, preset.map(|p| p.k))?,
            })
        }
        "peukert" => {
            let preset = cell.and_then(|c| c.peukert);
            let hours = param(r, "rated_hours", cell, preset.map(|p| p.rated_s / 3600.0))?;
            BatteryModel::Peukert(PeukertParams {
                exponent: param(r, "exponent", cell, preset.map(|p| p.exponent))?,
                rated_s: hours * 3600.0,
            })
        }
        other => {
            return Err(r.error(
                "model",
                format!("expected \"ideal\", \"kibam\" or \"peukert\", got \"{other}\""),
            ))
        }
    };
    for (key, model_name) in [
        ("c", "kibam"),
        ("k", "kibam"),
        ("exponent", "peukert"),
        ("rated_hours", "peukert"),
    ] {
        if r.has(key) && model.name() != model_name {
            return Err(r.error(
                key,
                format!("only meaningful with model = \"{model_name}\""),
            ));
        }
    }
    let mut battery = Battery::with_model(capacity, model).map_err(|e| {
        let key = e.param.trim_start_matches("battery.");
        let key = if key == "capacity_j" { "capacity" } else { key };
        r.error(key, e.reason)
    })?;
    battery.cell = cell.map(|c| c.name);
    Ok(battery)
}

/// A model parameter: given, else the cell's, else an error naming it (and
/// saying so when the cell has no cited value for it).
fn param(r: &Reader, key: &str, cell: Option<&Cell>, preset: Option<f64>) -> Result<f64> {
    match (r.f64(key)?, preset, cell) {
        (Some(v), _, _) | (None, Some(v), _) => Ok(v),
        (None, None, Some(cell)) => Err(r.error(
            key,
            format!(
                "required: cell \"{}\" has no cited parameters for this model ({})",
                cell.name, cell.source
            ),
        )),
        (None, None, None) => Err(r.error(key, "required for this model unless a `cell` gives it")),
    }
}
