//! UDP (`udp`): unreliable datagrams, for cross traffic and constant-rate
//! streams. It has no options; a `[flow.tcp]` table on a UDP flow is an
//! error rather than silently ignored.

use std::any::Any;

use joulenet_proto::udp::{UdpReceiver, UdpSender};
use joulenet_proto::{Addr, Agent, ConfigError};

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "udp",
    about: "UDP: unreliable datagrams (cross traffic, constant rate)",
    options: None,
    wire: Wire::Code(16),
    make: || Box::new(Udp),
}];

#[derive(Clone, Debug)]
pub struct Udp;

impl Protocol for Udp {
    fn name(&self) -> &'static str {
        "udp"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Udp
    }

    fn config(&self) -> &dyn Any {
        self
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        if flow.has("tcp") && flow.table("tcp")?.is_some() {
            return Err(flow.error("tcp", "TCP options given for a UDP flow"));
        }
        Ok(())
    }

    fn on_hosts(&mut self, _: &HostSettings) -> std::result::Result<(), ConfigError> {
        Ok(())
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(UdpSender::new(server)),
            Box::new(UdpReceiver::new()),
        )
    }

    fn is_datagram(&self) -> bool {
        true
    }
}
