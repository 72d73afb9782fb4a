//! The TCP family (Tahoe, Reno, NewReno, SACK, CUBIC) as one sans-IO agent.
//!
//! A variant is a choice of loss recovery (how holes are found and resent)
//! and of window growth (a [`crate::cc`] controller):
//!
//! | variant   | recovery                               | growth  |
//! |-----------|----------------------------------------|---------|
//! | `tahoe`   | fast retransmit, then slow start       | NewReno |
//! | `reno`    | fast recovery, any new ACK ends it     | NewReno |
//! | `newreno` | RFC 6582 partial-ACK recovery          | NewReno |
//! | `sack`    | RFC 6675 scoreboard and pipe           | NewReno |
//! | `cubic`   | RFC 6675 scoreboard and pipe           | CUBIC   |

mod agent;
mod config;
pub(crate) mod reassembly;
mod receiver;
pub(crate) mod rtt;
mod scoreboard;
mod send_buffer;
mod sender;
mod seq;

pub use agent::{TcpAgent, TcpState};
pub use config::{DelayedAck, ParseVariantError, TcpConfig, TcpVariant};
