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
//!
//! Using it from a driver: build a [`TcpConfig`] (`TcpConfig::new(variant)`
//! gives the defaults for that variant), then `TcpAgent::client(cfg, peer)`
//! on the sending host and `TcpAgent::server(cfg)` on the other. Both ends
//! send what their application gives (`Net::app_read`) and deliver what they
//! receive, so either direction, or both, may carry data. The agent uses
//! timers 0–6 (RTO, delayed ACK, persist, TIME_WAIT, pacing, and
//! RACK-TLP's loss probe and reordering timers), sends every segment
//! with `TxOpts::ipv4(6)` and leaves the TCP checksum 0. Gauges: `cwnd`,
//! `ssthresh`, `rwnd`, `flight` (bytes), `srtt_ms`, `rto_ms`.
//!
//! `TcpConfig::eln` adds explicit loss notification to Reno and NewReno
//! (`eln.rs`): the receiver's link layer reports wireless losses through
//! `Agent::on_overheard`, ACKs carry the ELN option, and the sender resends
//! such a hole without a window cut. The scenario name `tcp-eln` is
//! NewReno with it.
//!
//! `TcpConfig::rate_sack()` is the JTP paper's rate-based TCP-SACK
//! baseline (protocol `rate-sack`): SACK whose sender is paced at the PFTK
//! equation's rate (`pacing.rs`; timer 4), with delayed ACKs. Gauges:
//! `pacing_rate_pps`, `loss_event_rate`.
//!
//! `TcpConfig::stp()` is Henderson and Katz's Satellite Transport Protocol
//! (`stp.rs`; protocol `stp`, the RCP paper's Figure 5c baseline): the
//! receiver reports only when polled or on a new gap, the sender polls on
//! timer 5 and takes every reported gap as lost. Gauge: `stp_polls`.
//!
//! `TcpConfig::profile` chooses whose rules the connection follows where
//! stacks differ (`profile.rs`: `rfc`, `linux`, `ns3`, and the papers'
//! baselines `xkernel-1998` and `ns2`); PRR lives in `prr.rs`, RACK-TLP
//! (the `linux` profile's) in `rack.rs` and `tlp.rs`, F-RTO (also the
//! `linux` profile's; gauge `spurious_rtos`) in `frto.rs`, and the
//! `linux` receiver's quick-ACK mode in `quickack.rs`.
//!
//! Inside, sequence numbers are 64-bit offsets from the ISN (`seq.rs`) and
//! never wrap; only the wire sees 32-bit values.

mod agent;
mod config;
mod eln;
mod frto;
mod handshake;
pub mod hop_by_hop;
mod pacing;
#[cfg(test)]
mod pacing_tests;
mod profile;
mod prr;
mod quickack;
mod rack;
mod rack_tlp;
pub(crate) mod reassembly;
mod receiver;
mod reno_sack;
pub(crate) mod rtt;
mod scoreboard;
mod send_buffer;
mod sender;
pub(crate) mod seq;
mod stp;
mod tlp;

pub use agent::{TcpAgent, TcpState};
pub use config::{DelayedAck, Pacing, ParseVariantError, RttSampling, TcpConfig, TcpVariant};
pub use hop_by_hop::hop_by_hop_relay;
pub use profile::{Growth, RtoFormula, SsthreshBase, TcpProfile, TcpRules};
pub use stp::Stp;
