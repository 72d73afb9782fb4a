//! Sans-IO transport protocols for joulenet.
//!
//! Every protocol here is a set of [`Agent`]s: pure state machines that see the
//! world only through the [`Net`] context. Two drivers implement `Net`: the
//! discrete-event simulator (`joulenet-sim`) and the real-network runtime. An
//! agent never reads a clock, a socket or an RNG it was not handed.
//!
//! This crate must not depend on the simulator, on any socket or async runtime,
//! or on anything that reads the wall clock. It depends only on `joulenet-wire`
//! (byte formats) and `rand_core` (the RNG trait a driver hands in).

pub mod config_error;
pub mod net;
pub mod stats;
pub mod time;
pub mod timer;

pub use config_error::ConfigError;
pub use net::{
    AccessClass, Addr, Agent, AppRead, LinkInfo, Net, NetworkHeader, NodeId, RadioControl,
    RadioMode, Route, Transit, TransitVerdict, TransportEvent, TxOpts,
};
pub use stats::{RttStats, TransportStats};
pub use time::{Duration, Time};
pub use timer::{TimerId, TimerTable};
pub mod atp;
pub mod cc;
pub mod dtn;
pub mod e2tcp;
pub mod hop;
pub mod jtp;
pub mod nackrate;
pub mod r2cp;
pub mod rcp;
pub mod relay;
pub mod tcp;
#[cfg(test)]
pub(crate) mod testnet;
pub mod udp;
pub mod wwp;
