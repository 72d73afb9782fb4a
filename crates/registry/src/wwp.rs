//! Wave & Wait (`wwp`): receiver-timed waves of fixed segments, probe
//! cycles instead of backoff. Options under `[flow.wwp]`.

use std::any::Any;

use joulenet_proto::wwp::{WwpConfig, WwpReceiver, WwpSender};
use joulenet_proto::{Addr, Agent, ConfigError};
use joulenet_wire::wwp::SEQ_MAX;

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "wwp",
    about: "Wave & Wait: receiver-timed waves of fixed segments, probe cycles instead of backoff",
    options: Some("wwp"),
    wire: Wire::Code(17),
    make: || Box::new(Wwp(WwpConfig::default())),
}];

#[derive(Clone, Debug)]
pub struct Wwp(pub WwpConfig);

impl Protocol for Wwp {
    fn name(&self) -> &'static str {
        "wwp"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Wwp
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        let Some(t) = flow.table("wwp")? else {
            return Ok(());
        };
        options(&t, &mut self.0)?;
        t.finish()
    }

    /// The segment is the MTU-sized one (the paper's 1000 bytes are a
    /// simulation parameter); both ends must agree, as the receiver times
    /// waves by it.
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        self.0.payload = s.segment;
        self.0.validate()
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(WwpSender::new(self.0.clone(), server)),
            Box::new(WwpReceiver::new(self.0.clone())),
        )
    }
}

fn options(t: &Reader, c: &mut WwpConfig) -> Result<()> {
    waves(t, c)?;
    if let Some(p) = t.int_in("payload", 1, 65_000)? {
        c.payload = p as u16;
    }
    if let Some(bt) = t.f64("baseline_kbytes")? {
        if bt <= 0.0 {
            return Err(t.error(
                "baseline_kbytes",
                "must be positive (KB/s, 1 KB = 1024 bytes)",
            ));
        }
        c.baseline_bytes_per_sec = bt * 1024.0;
    }
    if let Some(b) = t.str("behaviour")? {
        c.behaviour = b.parse().map_err(|e: String| t.error("behaviour", e))?;
    }
    if let Some(l) = t.int_in("initial_level", 1, 15)? {
        c.initial_level = l as u8;
    }
    if let Some(d) = t.duration("initial_timeout")? {
        c.initial_timeout = d;
    }
    if let Some(d) = t.duration("min_probe_t")? {
        c.min_probe_t = d;
    }
    if let Some(d) = t.duration("min_send_t")? {
        c.min_send_t = d;
    }
    if let Some(n) = t.int_in("max_retries", 1, 1_000_000)? {
        c.max_retries = n as u32;
    }
    if let Some(d) = t.duration("rtt_granularity")? {
        c.rtt_granularity = d;
    }
    if let Some(g) = t.bool("gradual_resume")? {
        c.gradual_resume = g;
    }
    if let Some(n) = t.int_in("initial_segment", 0, SEQ_MAX as u64)? {
        c.initial_segment = n as u32;
    }
    c.validate().map_err(|e| t.error(e.key, e.reason))
}

/// `levels` and `segments_per_level` reshape the wave table together.
fn waves(t: &Reader, c: &mut WwpConfig) -> Result<()> {
    let levels = t.int_in("levels", 1, 15)?;
    let per = t.int_in("segments_per_level", 1, 255)?;
    if levels.is_none() && per.is_none() {
        return Ok(());
    }
    let levels = levels.unwrap_or(c.top() as u64) as u8;
    let per = per.unwrap_or(c.wave(1) as u64) as u8;
    if levels as u32 * per as u32 > 255 {
        return Err(t.error("segments_per_level", "a wave holds at most 255 segments"));
    }
    let fresh = WwpConfig::with_levels(levels, per);
    c.wave_sizes = fresh.wave_sizes;
    c.initial_level = levels;
    Ok(())
}
