//! The protocols a scenario can name, and how their agents are made.

use joulenet_proto::tcp::{TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::udp::{UdpReceiver, UdpSender};
use joulenet_proto::{Addr, Agent};

/// A protocol with its configuration, as a flow in a scenario uses it.
#[derive(Clone, Debug)]
pub enum ProtocolSpec {
    Tcp(TcpConfig),
    Udp,
}

/// Every protocol name a scenario accepts, with a one-line description.
pub const PROTOCOLS: &[(&str, &str)] = &[
    ("tahoe", "TCP Tahoe: fast retransmit, then slow start from one segment"),
    ("reno", "TCP Reno: fast retransmit and fast recovery (RFC 5681)"),
    ("newreno", "TCP NewReno: Reno with partial-ACK recovery (RFC 6582)"),
    ("sack", "TCP SACK: scoreboard-based loss recovery (RFC 6675)"),
    ("cubic", "TCP CUBIC: RFC 9438 window growth with SACK recovery"),
    ("udp", "UDP: unreliable datagrams (cross traffic, constant rate)"),
];

impl ProtocolSpec {
    /// The default configuration of a named protocol, or `None` if unknown.
    pub fn named(name: &str) -> Option<ProtocolSpec> {
        if name == "udp" {
            return Some(ProtocolSpec::Udp);
        }
        let variant = TcpVariant::from_name(name)?;
        Some(ProtocolSpec::Tcp(TcpConfig::for_variant(variant)))
    }

    pub fn name(&self) -> &'static str {
        match self {
            ProtocolSpec::Tcp(c) => c.variant.name(),
            ProtocolSpec::Udp => "udp",
        }
    }

    /// Messages stay whole (one per datagram) rather than forming a stream.
    pub fn is_datagram(&self) -> bool {
        matches!(self, ProtocolSpec::Udp)
    }

    /// Make the client (sending) and server (receiving) agents of a flow.
    pub fn agents(&self, client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        match self {
            ProtocolSpec::Tcp(config) => {
                let mut c = config.clone();
                c.local_port = client.port;
                let mut s = config.clone();
                s.local_port = server.port;
                (Box::new(TcpAgent::client(c, server)), Box::new(TcpAgent::server(s)))
            }
            ProtocolSpec::Udp => (Box::new(UdpSender::new(server)), Box::new(UdpReceiver::new())),
        }
    }
}
