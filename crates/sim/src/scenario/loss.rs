//! `[link.loss]` tables: which loss model a link direction uses.
//!
//! ```toml
//! loss = "none"
//! loss = { model = "bernoulli", rate = 0.01 }
//! loss = { model = "ber", ber = 1e-5 }
//! loss = { model = "gilbert_elliott", start = "good",
//!          good = { mean = "10s", loss = 0.0001 },          # exponential sojourns
//!          bad  = { min = "1s", max = "3s", loss = 0.1 } }  # uniform sojourns
//! loss = { model = "on_off", on = "10s", off = "10s", rate = 0.2, start = "off" }
//! loss = { model = "trace", file = "traces/walk.txt" }
//! ```

use std::path::Path;
use std::sync::Arc;

use joulenet_channel::loss::{FrameError, GeState, LossSpec, LossTrace, Sojourn};
use joulenet_proto::Duration;
use toml::Value;

use super::reader::{Reader, Result};
use super::ScenarioError;
use crate::spec::ReverseLoss;

pub const MODELS: &[(&str, &str)] = &[
    ("none", "no loss"),
    ("bernoulli", "independent frame loss with probability `rate`"),
    ("ber", "independent bit errors with rate `ber`: longer frames fail more often"),
    ("gilbert_elliott", "two-state channel in continuous time; exponential (`mean`) or uniform (`min`, `max`) sojourns; per-state `loss` or `ber`"),
    ("on_off", "alternating error phases of fixed length (`on`, `off`), frames dropped with `rate` during On (PHASE_DROP)"),
    ("trace", "replay a loss trace file (`file`): per-frame 0/1 lines or `start end probability` intervals"),
];

/// The loss model under `key` of `r`, if any.
pub fn loss(r: &Reader, key: &str, dir: &Path) -> Result<Option<LossSpec>> {
    let spec = match r.get(key) {
        None => return Ok(None),
        Some(Value::String(s)) if s == "none" => LossSpec::None,
        Some(Value::String(s)) => {
            return Err(r.error(
                key,
                format!("expected \"none\" or a table with a `model`, got \"{s}\""),
            ))
        }
        Some(Value::Table(_)) => {
            let t = r.table(key)?.expect("checked to be a table");
            let spec = model(&t, dir)?;
            t.finish()?;
            spec
        }
        Some(_) => return Err(r.error(key, "expected \"none\" or a table with a `model`")),
    };
    spec.validate()
        .map_err(|e| ScenarioError::new(r.key(key), e.to_string()))?;
    Ok(Some(spec))
}

/// The reverse-direction loss under `key`: "shared" (default), "none", or a table.
pub fn reverse(r: &Reader, key: &str, dir: &Path) -> Result<ReverseLoss> {
    match r.get(key) {
        None => Ok(ReverseLoss::SharedChannel),
        Some(Value::String(s)) if s == "shared" => Ok(ReverseLoss::SharedChannel),
        _ => Ok(ReverseLoss::Independent(
            loss(r, key, dir)?.unwrap_or(LossSpec::None),
        )),
    }
}

fn model(t: &Reader, dir: &Path) -> Result<LossSpec> {
    let name = t.req("model", t.str("model"))?;
    let required = |v: Result<Option<f64>>, key: &str| t.req(key, v);
    match name {
        "none" => Ok(LossSpec::None),
        "bernoulli" => Ok(LossSpec::Bernoulli {
            loss: required(t.probability("rate"), "rate")?,
        }),
        "ber" => Ok(LossSpec::BitError {
            ber: required(t.probability("ber"), "ber")?,
        }),
        "gilbert_elliott" => {
            let good = state(t, "good")?;
            let bad = state(t, "bad")?;
            let start_bad = match t.str("start")? {
                None | Some("good") => false,
                Some("bad") => true,
                Some(other) => {
                    return Err(t.error(
                        "start",
                        format!("expected \"good\" or \"bad\", got \"{other}\""),
                    ))
                }
            };
            Ok(LossSpec::GilbertElliott {
                good,
                bad,
                start_bad,
            })
        }
        "on_off" => {
            let on = t.req("on", t.duration("on"))?;
            let off = t.req("off", t.duration("off"))?;
            let drop_rate = required(t.probability("rate"), "rate")?;
            let start_on = match t.str("start")? {
                None | Some("off") => false,
                Some("on") => true,
                Some(other) => {
                    return Err(t.error(
                        "start",
                        format!("expected \"on\" or \"off\", got \"{other}\""),
                    ))
                }
            };
            let offset = t.duration("offset")?.unwrap_or(Duration::ZERO);
            if on.0 == 0 && off.0 == 0 {
                return Err(t.error("on", "on and off phases cannot both be zero"));
            }
            Ok(LossSpec::OnOffPhases {
                on,
                off,
                drop_rate,
                start_on,
                offset,
            })
        }
        "trace" => {
            let file = t.req("file", t.str("file"))?;
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| t.error("file", format!("cannot read {}: {e}", path.display())))?;
            let trace = LossTrace::parse(&text)
                .map_err(|e| t.error("file", format!("{}: {e}", path.display())))?;
            Ok(LossSpec::Trace(Arc::new(trace)))
        }
        other => {
            let known: Vec<&str> = MODELS.iter().map(|m| m.0).collect();
            Err(t.error(
                "model",
                format!(
                    "unknown loss model \"{other}\" (known: {})",
                    known.join(", ")
                ),
            ))
        }
    }
}

fn state(t: &Reader, key: &str) -> Result<GeState> {
    let s = t.table(key)?.ok_or_else(|| {
        t.error(
            key,
            "required table is missing (e.g. { mean = \"10s\", loss = 0.01 })",
        )
    })?;
    let sojourn = match (s.duration("mean")?, s.duration("min")?, s.duration("max")?) {
        (Some(mean), None, None) => {
            if mean.0 == 0 {
                return Err(s.error("mean", "must be positive"));
            }
            Sojourn::Exponential { mean }
        }
        (None, Some(min), Some(max)) => {
            if max < min {
                return Err(s.error("max", format!("must be at least min ({min})")));
            }
            if max.0 == 0 {
                return Err(s.error("max", "must be positive"));
            }
            Sojourn::Uniform { min, max }
        }
        (None, None, None) => {
            return Err(s.error(
                "mean",
                "give `mean` (exponential sojourns) or `min` and `max` (uniform)",
            ))
        }
        _ => {
            return Err(s.error(
                "mean",
                "give either `mean`, or both `min` and `max`, not a mix",
            ))
        }
    };
    let loss = match (s.probability("loss")?, s.probability("ber")?) {
        (Some(p), None) => FrameError::Packet(p),
        (None, Some(b)) => FrameError::Bit(b),
        (None, None) => {
            return Err(s.error("loss", "give the state's frame `loss` rate or its `ber`"))
        }
        (Some(_), Some(_)) => return Err(s.error("ber", "give `loss` or `ber`, not both")),
    };
    s.finish()?;
    Ok(GeState { sojourn, loss })
}
