//! R²CP, Radial RCP: a receiver-only extension of RCP for multi-homed
//! mobile hosts (§4 of the RCP paper). Senders are unchanged RCP senders
//! (opened passively, [`crate::rcp::RcpSender::listen`]).
//!
//! One [`R2cpReceiver`] owns reliability and the receive buffer of the
//! connection and runs one RCP *pipe* per path (interface → sender), each
//! with its own congestion controller (per path: [`PathSpec::controller`],
//! §4.1.1's interface-specific congestion control), RTT estimate (first
//! sample: the pipe's SYN → SYN+ACK exchange) and loss detection over a
//! pipe-local sequence space, under the RCP receiver's window rules. The
//! engine binds global ranges to pipe requests (always pull mode) and maps
//! local sequence numbers to global ones (`binding`); unbound data waits
//! in `pending` (the never-requested frontier, ranges skipped by rank
//! scheduling, and holes: ranges whose request was lost or whose pipe
//! died).
//!
//! Scheduling ([`Scheduler`]): `Rank` gives a request the unbound range
//! that will arrive in order given every pipe's RTT and window; `Fcfs`
//! (R²CP-s) gives the next unbound range; `Stripe` is application-level
//! striping (fixed blocks per pipe, round robin) for comparison. Ranges
//! are whole segments (cut at multiples of the MSS), except that a range
//! may stop at a sender's request limit when that is all the sender has
//! (a slow source); a pipe blocked by its sender's limit probes it with
//! TCP's persist back-off.
//!
//! Paths come up and go down with their first link (`LinkInfo::up`,
//! polled every 50 ms): a path that comes up gets a new pipe (handoff,
//! server migration when its sender differs); a pipe whose link goes down
//! dies and its outstanding requests go back to `pending`. A dead pipe's
//! slot (and timers) take the next pipe, so a connection outlives any
//! number of outages. Without aggregation only the newest pipe takes new
//! bindings and older ones are retired once their requests are answered. A
//! token bucket can cap the aggregate rate, the first path taking tokens
//! first.

mod config;
mod engine;
mod pending;
mod pipe;

pub use config::{PathSpec, R2cpConfig, Scheduler, TokenBucket};
pub use engine::R2cpReceiver;
