//! Hop-by-hop TCP: every relay on the path terminates the TCP connection and
//! opens a new one to the next hop, relaying through a socket-buffer-sized
//! buffer (a baseline of the Hop paper, §5: "each hop terminates the TCP
//! connection"). Losses are repaired per hop, and a slow hop pushes back
//! through the buffers (each relay advertises only the room its buffer has).
//!
//! The ends are ordinary TCP agents addressing each other; the relays are
//! transparent ([`crate::relay::split`]). The protocol name is `hbh-tcp`.

use super::{TcpAgent, TcpConfig};
use crate::e2tcp::proxy::opens_tcp;
use crate::net::Transit;
use crate::relay::split::SplitConnection;
use crate::relay::PerFlow;

/// Flows one relay node carries at once.
pub const MAX_HOP_BY_HOP_FLOWS: usize = 1024;

/// The relay agent of hop-by-hop TCP on one node: per flow, a TCP connection
/// accepted from the previous hop and one opened to the next, joined by a
/// buffer as large as the configured receive buffer (a socket buffer).
pub fn hop_by_hop_relay(cfg: TcpConfig) -> PerFlow<SplitConnection> {
    PerFlow::new(
        "hbh-tcp",
        MAX_HOP_BY_HOP_FLOWS,
        Box::new(move |t: &Transit<'_>| {
            if !opens_tcp(t.packet) {
                return None;
            }
            Some(SplitConnection::new(
                Box::new(TcpAgent::server(cfg.clone())),
                Box::new(TcpAgent::client(cfg.clone(), t.dst)),
                (t.src, t.dst),
                cfg.recv_buffer,
            ))
        }),
    )
    // Each relay is an end of two of the flow's connections: keep its
    // counters per flow so the flow's byte counts include every hop.
    .accounting_per_flow()
}
