//! Channel loss models and radio energy models for joulenet.
//!
//! What it is for: deciding which frames a lossy wireless link drops
//! ([`loss`]), how many joules a radio spends doing what it did ([`radio`]),
//! when a battery runs dry ([`battery`]), and reading and writing the human
//! units ("10Mbps", "50ms", "2000mAh@3.7V") that scenarios are written in
//! ([`units`]).
//!
//! It is shared by the discrete-event simulator (which drives these models
//! with simulated time) and the real-network runtime (its user-space link
//! emulator and its energy estimate from measured airtime). So it must not
//! depend on the simulator, the runtime, any I/O, or the wall clock: every
//! model here is a pure function of the times it is handed and of the seeds
//! it was built with. From `joulenet-proto` it uses only `Time`, `Duration`
//! and `RadioMode`.

pub mod battery;
pub mod error;
pub mod loss;
pub mod radio;
pub mod units;

pub use battery::{Battery, BatteryModel};
pub use error::ParamError;
pub use loss::{
    FrameError, FrameInfo, GeState, LossError, LossProcess, LossSpec, LossTrace, Sojourn,
};
pub use radio::{
    EnergyReport, FrameModel, FrameRole, RadioLedger, RadioPolicy, RadioProfile, StateEnergy,
};
pub use units::UnitError;
