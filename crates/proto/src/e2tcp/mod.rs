//! E2TCP (Donckers, Havinga, Smit & Smit): an energy-efficient TCP variant
//! for the wireless hop of a split connection. Compact header (addresses only
//! at set-up, then a one-byte connection id), 2×16-bit SACK blocks, immediate
//! retransmission of reported holes, burst-aware window rules and separate
//! transmission and retransmission timers.
//!
//! Files: [`config`] (parameters and dissection switches), [`window`] (the
//! window rules), [`sender`], [`receiver`], [`proxy`] (the base-station agent
//! that splits a connection into wired TCP and wireless E2TCP).

pub mod config;
pub mod proxy;
pub mod receiver;
pub mod sender;
#[cfg(test)]
mod tests;
pub mod window;

pub use config::E2tcpConfig;
pub use proxy::{split_proxy, WiredSide};
pub use receiver::E2tcpReceiver;
pub use sender::{E2tcpSender, E2tcpState};

use joulenet_wire::e2tcp::{E2tcpAddrs, E2tcpPacket, E2tcpRepr};

use crate::net::{Addr, NetworkHeader, TimerId, TxOpts};
use crate::stats::TransportStats;

pub const PROTOCOL: &str = "e2tcp";

pub mod timers {
    use super::TimerId;
    /// Sender: the newest first transmission is overdue.
    pub const TRANSMIT: TimerId = TimerId(0);
    /// Sender: the newest retransmission is overdue.
    pub const RETRANSMIT: TimerId = TimerId(1);
    /// Sender: the receiver's window has been closed with nothing in flight
    /// for a while; probe it (TCP's persist timer, RFC 9293 §3.8.6.1).
    pub const PERSIST: TimerId = TimerId(2);
}

/// How a segment travels: no network header when compressed (the E2TCP
/// header replaces IP+TCP on the hop), else a 20-byte IPv4 header.
pub(crate) fn tx_opts(cfg: &E2tcpConfig) -> TxOpts {
    if cfg.compression {
        TxOpts {
            network_header: NetworkHeader::None,
            ..TxOpts::ipv4(254)
        }
    } else {
        TxOpts::ipv4(254)
    }
}

/// Fill in what compression leaves out: without compression every segment
/// carries addresses, sequence, acknowledgement and window.
pub(crate) fn finish_header(
    cfg: &E2tcpConfig,
    r: &mut E2tcpRepr,
    local: Addr,
    peer: Addr,
    snd_nxt: u32,
    rcv_nxt: u32,
) {
    if r.syn || !cfg.compression {
        r.addrs = Some(E2tcpAddrs {
            src_node: local.node,
            src_port: local.port,
            dst_node: peer.node,
            dst_port: peer.port,
        });
    }
    if !cfg.compression {
        r.seq.get_or_insert(snd_nxt);
        r.ack.get_or_insert(rcv_nxt);
        r.window.get_or_insert(u16::MAX);
    }
}

/// Parse an arriving packet for either end: a malformed one is counted and
/// dropped, a well-formed one counted as received. The view is returned
/// for its payload.
pub(crate) fn accept<'a>(
    stats: &mut TransportStats,
    packet: &'a [u8],
) -> Option<(E2tcpPacket<&'a [u8]>, E2tcpRepr)> {
    let parsed =
        E2tcpPacket::new_checked(packet).and_then(|p| E2tcpRepr::parse(&p).map(|r| (p, r)));
    stats.count_arrival(packet.len(), parsed)
}

/// Unwrap a 32-bit sequence number near `base` into a stream offset.
pub(crate) fn unwrap(base: u64, wire: u32) -> Option<u64> {
    let diff = wire.wrapping_sub(base as u32) as i32 as i64;
    let off = base as i64 + diff;
    (off >= 0).then_some(off as u64)
}
