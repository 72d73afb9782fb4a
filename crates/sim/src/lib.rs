//! The joulenet discrete-event simulator.
//!
//! A deterministic simulator of lossy wireless networks in which transport
//! protocols, written once as sans-IO agents exchanging real bytes
//! (`joulenet-proto`), run over point-to-point links whose loss processes and
//! radios come from `joulenet-channel`, while every radio's energy is
//! integrated exactly. A run is a pure function of (scenario, seed).
//!
//! Entry points: [`Scenario`] (load and validate TOML), [`run`] (one seed of
//! one parameter point), [`RunResult`] (what comes out), [`output`]
//! (tables, JSON, CSV), [`present`] (units and intervals people read).
//!
//! This crate must not depend on sockets, threads, the wall clock (except to
//! report how long a run took) or the command-line interface.

pub mod app;
pub mod core;
pub mod ctx;
pub mod endpoint;
pub mod event;
pub mod fates;
pub mod frame;
pub mod interval;
mod lifetime;
pub mod link;
pub mod link_hooks;
pub mod link_schedule;
pub mod medium;
pub mod metrics;
pub mod output;
pub mod pattern;
pub mod pcap;
pub mod present;
pub mod protocols;
pub mod relays;
pub mod result;
pub mod rng;
pub mod scenario;
pub mod series;
pub mod simulation;
pub mod spec;

pub use medium::tx_kind::TxByKind;
pub use result::{FlowResult, LinkResult, NodeResult, RunContext, RunResult, Summary};
pub use scenario::{ParamPoint, Scenario, ScenarioError};
pub use simulation::{Progress, Simulation};
pub use spec::Spec;

/// joulenet's version, recorded beside every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Run one parameter point of a scenario with one seed.
pub fn run(
    scenario: &Scenario,
    point: &ParamPoint,
    seed: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunResult, ScenarioError> {
    let spec = scenario.spec(point)?;
    let mut result = Simulation::new(&spec, seed).run(progress);
    result.context = RunContext {
        scenario: scenario.name().to_string(),
        scenario_hash: scenario.hash().to_string(),
        seed,
        params: point
            .iter()
            .map(|(k, v)| (k.clone(), scenario::value_text(v)))
            .collect(),
        joulenet_version: VERSION.to_string(),
    };
    Ok(result)
}
