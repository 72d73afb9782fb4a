//! Wave & Wait Protocol (Tsaoussidis, Badr, Verma): the receiver times each
//! wave of fixed-size segments against a baseline and sets the next wave
//! level; on trouble the sender pauses and runs a probe cycle
//! (PROBE1 → PR1 ACK → PROBE2 → PR2 ACK → PROBE3 → N-S ACK) whose two RTTs
//! and their jitter decide how to resume. Runs over IPv4 (protocol 253).
//!
//! One concept per file: [`config`] (parameters, behaviours), [`level`]
//! (the receiver's level rules), [`sender`], [`receiver`].

pub mod config;
pub mod level;
pub mod receiver;
pub mod sender;
pub mod serial;
#[cfg(test)]
mod tests;

pub use config::{Behaviour, WwpConfig};
pub use receiver::{ReceiverState, WwpReceiver};
pub use sender::{SenderState, WwpSender};

use crate::net::{TimerId, TxOpts};

pub const PROTOCOL: &str = "wwp";
pub(crate) const TX_OPTS: TxOpts = TxOpts::ipv4(253);

pub mod timers {
    use super::TimerId;
    /// Sender: the N-S ACK of the wave just sent is overdue.
    pub const SEND_T: TimerId = TimerId(0);
    /// Sender: a probe (or SYN/FIN) went unanswered.
    pub const PROBE_T: TimerId = TimerId(1);
    /// Receiver: an incomplete wave stopped arriving.
    pub const WAVE_T: TimerId = TimerId(0);
}
