//! The base-station relay of a split connection: it terminates the
//! client's connection and opens its own to the server, relaying every byte
//! in order through a bounded buffer ([`crate::relay::split`]). For E2TCP
//! one side is wired TCP and the other the wireless E2TCP hop; which is
//! which depends on where the wired host is ([`WiredSide`]).

use joulenet_wire::e2tcp::{E2tcpPacket, E2tcpRepr};
use joulenet_wire::tcp::{TcpPacket, TcpRepr};

use super::{E2tcpConfig, E2tcpReceiver, E2tcpSender};
use crate::net::{Agent, Transit};
use crate::relay::split::SplitConnection;
use crate::relay::PerFlow;
use crate::tcp::{TcpAgent, TcpConfig};

/// Where the wired host of a split flow is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WiredSide {
    /// The flow's client (the data source) is on the wired network: data goes
    /// wired → base station → mobile (a download).
    Client,
    /// The flow's server (the data sink) is wired: an upload.
    Server,
}

/// Flows one base station relays at once; a packet of a further flow is
/// refused (dropped, counted) until one ends.
pub const MAX_SPLIT_FLOWS: usize = 256;

/// The relay agent of split E2TCP flows at a base station: per flow, a
/// wired TCP connection on the wired side and E2TCP on the wireless one,
/// joined by a buffer of `buffer` bytes. It accounts per flow: a split
/// flow's byte counts include both halves the proxy terminates.
pub fn split_proxy(
    e2tcp: E2tcpConfig,
    wired: TcpConfig,
    side: WiredSide,
    buffer: usize,
) -> PerFlow<SplitConnection> {
    PerFlow::new(
        "split-proxy",
        MAX_SPLIT_FLOWS,
        Box::new(move |t: &Transit<'_>| {
            let (up, down): (Box<dyn Agent>, Box<dyn Agent>) = match side {
                WiredSide::Client => {
                    if !opens_tcp(t.packet) {
                        return None;
                    }
                    (
                        Box::new(TcpAgent::server(wired.clone())),
                        Box::new(E2tcpSender::new(e2tcp.clone(), t.dst)),
                    )
                }
                WiredSide::Server => {
                    if !opens_e2tcp(t.packet) {
                        return None;
                    }
                    (
                        Box::new(E2tcpReceiver::new(e2tcp.clone())),
                        Box::new(TcpAgent::client(wired.clone(), t.dst)),
                    )
                }
            };
            Some(SplitConnection::new(up, down, (t.src, t.dst), buffer))
        }),
    )
    .accounting_per_flow()
}

/// A TCP segment that opens a connection: SYN without ACK.
pub(crate) fn opens_tcp(packet: &[u8]) -> bool {
    TcpPacket::new_checked(packet)
        .and_then(|p| TcpRepr::parse(&p))
        .is_ok_and(|r| r.flags.syn && r.ack.is_none())
}

/// An E2TCP segment that opens a connection (its SYN).
fn opens_e2tcp(packet: &[u8]) -> bool {
    E2tcpPacket::new_checked(packet)
        .and_then(|p| E2tcpRepr::parse(&p))
        .is_ok_and(|r| r.syn)
}
