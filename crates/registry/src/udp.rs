//! UDP (`udp`): unreliable datagrams, for cross traffic and constant-rate
//! streams. One option, `[flow.udp] link_arq`: with the link's retry limit
//! (the default; the Hop paper's UDP/max-ARQ when that limit is the
//! MAC's maximum) or without link ARQ (`false`: UDP/no-ARQ). A `[flow.tcp]`
//! table on a UDP flow is an error rather than silently ignored.

use std::any::Any;

use joulenet_proto::udp::{UdpReceiver, UdpSender};
use joulenet_proto::{Addr, Agent, ConfigError};

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "udp",
    about: "UDP: unreliable datagrams (cross traffic, constant rate)",
    options: Some("udp"),
    wire: Wire::Code(16),
    make: || Box::new(Udp::default()),
}];

#[derive(Clone, Debug, Default)]
pub struct Udp {
    /// Link-layer attempts per datagram; `None`: the link's retry limit.
    pub link_attempts: Option<u8>,
    /// Application bytes per datagram on hosts (the runtime's segment, so
    /// that no datagram is fragmented); `None`: the agent's maximum.
    pub payload: Option<u16>,
}

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
        let Some(t) = flow.table("udp")? else {
            return Ok(());
        };
        if let Some(arq) = t.bool("link_arq")? {
            self.link_attempts = (!arq).then_some(1);
        }
        t.finish()
    }

    fn on_hosts(&mut self, host: &HostSettings) -> std::result::Result<(), ConfigError> {
        self.payload = Some(host.segment);
        Ok(())
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let sender = UdpSender::new(server).with_link_attempts(self.link_attempts);
        (
            Box::new(match self.payload {
                Some(bytes) => sender.with_payload(bytes),
                None => sender,
            }),
            Box::new(UdpReceiver::new()),
        )
    }

    fn is_datagram(&self) -> bool {
        true
    }
}
