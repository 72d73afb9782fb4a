//! Hop-by-hop TCP (`hbh-tcp`), a baseline of the Hop paper: NewReno at the
//! ends, and every node between terminates the connection and opens the
//! next hop through a relay buffer the size of a socket buffer
//! (`joulenet_proto::tcp::hop_by_hop_relay`). Options under `[flow.tcp]`,
//! which every hop's connections share.

use std::any::Any;

use joulenet_proto::tcp::{hop_by_hop_relay, TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::{Addr, Agent, ConfigError};

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, RelayNodes, RelaySpec, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "hbh-tcp",
    about: "hop-by-hop TCP (NewReno): every node on the path terminates the connection and opens the next hop, relay buffers sized like socket buffers (a Hop paper baseline)",
    options: Some("tcp"),
    wire: Wire::Code(21),
    make: || Box::new(HopByHopTcp(TcpConfig::new(TcpVariant::NewReno))),
}];

#[derive(Clone, Debug)]
pub struct HopByHopTcp(pub TcpConfig);

impl Protocol for HopByHopTcp {
    fn name(&self) -> &'static str {
        "hbh-tcp"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Tcp
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        crate::tcp::configure(flow, &mut self.0)
    }

    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        crate::tcp::on_hosts(&mut self.0, s)
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(TcpAgent::client(self.0.clone(), server)),
            Box::new(TcpAgent::server(self.0.clone())),
        )
    }

    fn relay(&self) -> Option<RelaySpec> {
        let c = self.0.clone();
        Some(RelaySpec {
            nodes: RelayNodes::Every,
            make: Box::new(move || Box::new(hop_by_hop_relay(c.clone()))),
        })
    }
}
