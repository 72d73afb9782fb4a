//! The DTN bundle relay (`dtn`), the Hop paper's DTN2.5 baseline: whole
//! bundles stored and forwarded hop by hop over per-hop TCP (CUBIC), custody
//! handed on as each hop acknowledges a bundle (`joulenet_proto::dtn`).
//! Options under `[flow.dtn]` (`bundle`, `storage`) and `[flow.tcp]`, which
//! every hop's connections share. On real hosts every `joulenet relay` is a
//! custodian (docs/runtime.md), as hbh-tcp's relays terminate its hops.

use std::any::Any;

use joulenet_proto::dtn::{bundle_relay, DtnConfig};
use joulenet_proto::tcp::TcpAgent;
use joulenet_proto::{Addr, Agent, ConfigError};

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, RelayNodes, RelaySpec, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "dtn",
    about: "DTN bundle relay with custody transfer: every node stores whole bundles and forwards them over per-hop TCP (CUBIC), keeping each until the next hop has it (the Hop paper's DTN2.5 baseline)",
    options: Some("dtn"),
    wire: Wire::Code(33),
    make: || Box::new(Dtn(DtnConfig::default())),
}];

#[derive(Clone, Debug)]
pub struct Dtn(pub DtnConfig);

impl Protocol for Dtn {
    fn name(&self) -> &'static str {
        "dtn"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Tcp
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    /// `[flow.dtn]`: `bundle` (1 MiB), `storage` (64 MiB per flow and
    /// node); `[flow.tcp]` for every hop's TCP.
    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        crate::tcp::configure(flow, &mut self.0.tcp)?;
        let Some(t) = flow.table("dtn")? else {
            return Ok(());
        };
        if let Some(b) = t.size("bundle")? {
            if b == 0 || b > u32::MAX as u64 {
                return Err(t.error("bundle", "must be between 1 byte and 4 GB"));
            }
            self.0.bundle = b as usize;
        }
        if let Some(s) = t.size("storage")? {
            if s < self.0.bundle as u64 || s > u32::MAX as u64 {
                return Err(t.error(
                    "storage",
                    "must hold at least one bundle and be at most 4 GB",
                ));
            }
            self.0.storage = s as usize;
        }
        t.finish()
    }

    /// Every hop's TCP takes the host's segment, buffers and RTO floor,
    /// as hbh-tcp's do; custody still never gives a bundle up.
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        crate::tcp::on_hosts(&mut self.0.tcp, s)
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(TcpAgent::client(self.0.tcp.clone(), server)),
            Box::new(TcpAgent::server(self.0.tcp.clone())),
        )
    }

    fn relay(&self) -> Option<RelaySpec> {
        let c = self.0.clone();
        Some(RelaySpec {
            nodes: RelayNodes::Every,
            make: Box::new(move || Box::new(bundle_relay(c.clone()))),
        })
    }
}
