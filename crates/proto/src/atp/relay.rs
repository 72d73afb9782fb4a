//! The ATP-like protocol on an intermediate node: it stamps the minimum
//! effective available rate into each data packet in transit
//! ([`super::stamp`]) and passes everything on. It keeps no state — no
//! cache, no per-flow record, no timers — and never sends a packet of its
//! own: recovery is end to end only. Having nothing to remember, it is
//! always closed, so a driver may drop and recreate it at will.

use joulenet_wire::jtp::{JtpPacket, Kind};

use super::config::AtpConfig;
use super::stamp::stamp;
use crate::config_error::ConfigError;
use crate::net::{Addr, Agent, Net, Transit, TransitVerdict};
use crate::stats::TransportStats;
use crate::time::Time;

pub struct AtpRelay {
    cfg: AtpConfig,
    stats: TransportStats,
    /// Data packets stamped and passed on.
    pub stamped: u64,
}

impl AtpRelay {
    pub fn new(cfg: AtpConfig) -> Result<AtpRelay, ConfigError> {
        cfg.validate()?;
        Ok(AtpRelay {
            cfg,
            stats: TransportStats::default(),
            stamped: 0,
        })
    }
}

impl Agent for AtpRelay {
    fn protocol(&self) -> &'static str {
        "atp"
    }

    fn start(&mut self, _net: &mut dyn Net) {}

    /// Nothing is addressed to a relay.
    fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {
        self.stats.unexpected_dropped += 1;
    }

    fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
        let Ok(kind) = JtpPacket::new_checked(&t.packet[..]).map(|p| p.kind()) else {
            // Not ours to judge: pass it on untouched.
            self.stats.malformed_dropped += 1;
            return TransitVerdict::Forward;
        };
        self.stats.packets_received += 1;
        self.stats.bytes_received += t.packet.len() as u64;
        if kind == Some(Kind::Data) {
            stamp(net, t.dst.node, t.packet, self.cfg.max_attempts);
            self.stamped += 1;
        }
        TransitVerdict::Forward
    }

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn on_timeout(&mut self, _net: &mut dyn Net) {}

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        (name == "atp_stamped").then_some(self.stamped as f64)
    }

    fn is_closed(&self) -> bool {
        true
    }
}
