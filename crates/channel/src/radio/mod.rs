//! Radio energy: what a radio draws in each state ([`RadioProfile`]), how
//! idle time is charged ([`RadioPolicy`]), and the exact integration of one
//! radio's power over time ([`RadioLedger`], reporting an [`EnergyReport`]),
//! plus what each frame costs on top ([`FrameModel`]), and the devices
//! Serrano et al. measured ([`serrano`]).

mod activity;
mod frame;
mod ledger;
mod policy;
mod profile;
mod report;
pub mod serrano;

pub use frame::{FrameModel, FrameRole, Linear};
pub use ledger::RadioLedger;
pub use policy::RadioPolicy;
pub use profile::RadioProfile;
pub use report::{EnergyReport, StateEnergy};

/// Validation errors of radio parameters name the parameter.
pub type RadioError = crate::error::ParamError;
