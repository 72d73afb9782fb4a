//! nackrate: joulenet's own transport for links with heavy random loss
//! (issue 18; not from the papers). The sender is paced at a rate measured
//! from what arrives (BBR-like, [`model`]), never clocked by ACKs and never
//! slowed by random loss; the receiver repeats its whole state in every
//! ACK — cumulative offset and every missing range — so a lost ACK costs
//! nothing; repairs are exactly the missing ranges. Design and figures:
//! docs/nackrate.md.
//!
//! Files: [`config`], [`model`] (rate and round trip from deliveries),
//! [`late_wake`] (the host's late wakes and the allowance made for them),
//! [`sender`], [`receiver`].

pub mod config;
pub mod late_wake;
pub mod model;
pub mod receiver;
pub mod sender;
#[cfg(test)]
mod tests;

pub use config::NackrateConfig;
pub use receiver::NackrateReceiver;
pub use sender::NackrateSender;

use joulenet_wire::nackrate::{NackratePacket, Repr};

use crate::net::{TimerId, TxOpts};
use crate::stats::TransportStats;

pub const PROTOCOL: &str = "nackrate";

pub mod timers {
    use super::TimerId;
    /// Sender: the next paced transmission is due.
    pub const PACE: TimerId = TimerId(0);
    /// Sender: no ACK for a probe timeout; send a probe.
    pub const PTO: TimerId = TimerId(1);
    /// Receiver: a delayed ACK is due.
    pub const ACK: TimerId = TimerId(0);
}

/// Behind a 20-byte IPv4 header, experimental protocol 253.
pub(crate) const TX: TxOpts = TxOpts::ipv4(joulenet_wire::nackrate::PROTOCOL);

/// Parse an arriving packet: a malformed one is counted and dropped.
pub(crate) fn accept<'a>(
    stats: &mut TransportStats,
    packet: &'a [u8],
) -> Option<(NackratePacket<&'a [u8]>, Repr)> {
    let parsed = NackratePacket::new_checked(packet).and_then(|p| Repr::parse(&p).map(|r| (p, r)));
    stats.count_arrival(packet.len(), parsed)
}

/// Unwrap a 32-bit number on the wire into the 64-bit count nearest `near`.
pub(crate) fn unwrap32(near: u64, wire: u32) -> u64 {
    let diff = wire.wrapping_sub(near as u32) as i32 as i64;
    (near as i64 + diff).max(0) as u64
}
