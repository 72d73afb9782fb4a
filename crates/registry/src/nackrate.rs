//! nackrate (`nackrate`): joulenet's own transport for links with heavy
//! random loss (issue 18; not from the papers). Paced at a rate measured
//! from deliveries, repaired by the NACK ranges every ACK repeats.
//! Options under `[flow.nackrate]` (docs/scenarios.md).

use std::any::Any;

use joulenet_proto::nackrate::{NackrateConfig, NackrateReceiver, NackrateSender};
use joulenet_proto::{Addr, Agent, ConfigError};

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "nackrate",
    about: "nackrate (ours): paced at the measured delivery rate, NACK-range repair, every ACK the receiver's whole state; for heavy random loss",
    options: Some("nackrate"),
    wire: Wire::Code(32),
    make: || Box::new(Nackrate::default()),
}];

#[derive(Clone, Debug, Default)]
pub struct Nackrate {
    pub config: NackrateConfig,
}

impl Protocol for Nackrate {
    fn name(&self) -> &'static str {
        "nackrate"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Nackrate
    }

    fn config(&self) -> &dyn Any {
        self
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        let Some(t) = flow.table("nackrate")? else {
            return Ok(());
        };
        let c = &mut self.config;
        if let Some(v) = t.int_in("mss", 16, 60_000)? {
            c.mss = v as u16;
        }
        if let Some(v) = t.int_in("initial_window", 2, 10_000)? {
            c.initial_window = v as u32;
        }
        if let Some(v) = t.int_in("ack_every", 1, 1000)? {
            c.ack_every = v as u32;
        }
        if let Some(v) = t.int_in("max_ranges", 1, u16::MAX as u64)? {
            c.max_ranges = v as usize;
        }
        if let Some(v) = t.int_in("reorder_threshold", 1, 1000)? {
            c.reorder_threshold = v as u32;
        }
        if let Some(v) = t.int_in("max_probes", 1, 10_000)? {
            c.max_probes = v as u32;
        }
        if let Some(r) = t.rate("initial_rate")? {
            c.initial_rate = (r / 8).max(1);
        }
        if let Some(v) = t.f64("max_loss_compensation")? {
            c.max_loss_compensation = v;
        }
        for (key, field) in [
            ("ack_delay", &mut c.ack_delay),
            ("min_pto", &mut c.min_pto),
            ("max_pto", &mut c.max_pto),
            ("min_rtt_window", &mut c.min_rtt_window),
            ("max_late_wake", &mut c.max_late_wake),
        ] {
            if let Some(d) = t.duration(key)? {
                *field = d;
            }
        }
        c.validate().map_err(|e| t.error(e.key, e.reason))?;
        t.finish()
    }

    /// The MTU-sized segment. The hosts' RTO floor (`--min-rto`, Linux's
    /// 200 ms) is TCP's and is not applied: nackrate's probe timeout keeps
    /// its own floor (`min_pto`), since at 30–40% loss a run of lost
    /// packets is frequent and each probe timeout is a stall (with a 200 ms
    /// floor the 10 Mbit/s namespace link lost a quarter of its goodput).
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        self.config.mss = s.segment;
        self.config.validate()
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(NackrateSender::new(self.config.clone(), server)),
            Box::new(NackrateReceiver::new(self.config.clone())),
        )
    }
}
