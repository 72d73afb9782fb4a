//! R²CP, Radial RCP: a receiver-only extension of RCP for multi-homed
//! mobile hosts (§4 of the RCP paper). Senders are unchanged RCP senders
//! (opened passively, [`crate::rcp::RcpSender::listen`]).
//!
//! One [`R2cpReceiver`] owns reliability and the receive buffer of the
//! connection and runs one RCP *pipe* per path (interface → sender), each
//! with its own congestion control, RTT estimate and loss detection over a
//! pipe-local sequence space. The engine binds global segments to pipe
//! requests (always pull mode) and maps local sequence numbers to global
//! ones (`binding`); unbound data waits in `pending` (the never-requested
//! frontier plus segments skipped by rank scheduling) and `holes`
//! (segments whose request was lost or whose pipe died).
//!
//! Scheduling ([`Scheduler`]): `Rank` gives a request the unbound segment
//! that will arrive in order given every pipe's RTT and window; `Fcfs`
//! (R²CP-s) gives the next unbound segment; `Stripe` is application-level
//! striping (fixed blocks per pipe, round robin) for comparison.
//!
//! Paths come up and go down with their first link (`LinkInfo::up`,
//! polled every 50 ms): a path that comes up gets a new pipe (handoff,
//! server migration when its sender differs); a pipe whose link goes down
//! dies and its outstanding requests go back to `holes`. Without
//! aggregation only the newest pipe takes new bindings and older ones are
//! retired once their requests are answered. A token bucket can cap the
//! aggregate rate, the first path taking tokens first.

mod engine;
mod pipe;

pub use engine::{PathSpec, R2cpConfig, R2cpReceiver, Scheduler, TokenBucket};
