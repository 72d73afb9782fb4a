//! What every ATP-like node, the source included, does to a data packet
//! about to cross a link: lower the packet's available-rate field to this
//! link's effective available rate if that is smaller, so the receiver
//! reads the path's bottleneck. The measure is JTP's (§2.2.2): the link's
//! available rate divided by the mean MAC attempts a packet takes on it
//! ([`crate::jtp::rate`]), so that ATP and JTP see the same path.
//!
//! A node whose link layer reports no available rate leaves the field as
//! it is; one with no loss estimate counts one attempt per packet.

use joulenet_wire::jtp::JtpPacket;

use crate::jtp::rate::{effective_available_rate, stamp_min};
use crate::net::{Net, NodeId};

/// Stamps the data packet in `bytes` for the link toward `dst` from this
/// node; returns the value now in the packet.
pub fn stamp(net: &dyn Net, dst: NodeId, bytes: &mut [u8], max_attempts: u8) -> u32 {
    let mut p = JtpPacket::new_unchecked(bytes);
    let link = net.route(dst).and_then(|r| net.link(r.next_hop));
    if let Some(avail) = link.and_then(|l| l.available_rate_bps) {
        let loss = link.and_then(|l| l.loss_estimate).unwrap_or(0.0);
        let own = effective_available_rate(avail, loss, max_attempts);
        p.set_available_rate(stamp_min(p.available_rate(), own));
    }
    p.set_hops(p.hops().saturating_add(1));
    p.available_rate()
}
