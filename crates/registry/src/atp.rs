//! The ATP-like baseline of the JTP paper (`atp`, §6.1): a source sending
//! at the rate its receiver reports back at a constant period, from
//! available rates every node stamps into passing packets; end-to-end
//! recovery only (`joulenet_proto::atp`, docs/jtp.md § The baselines).
//! Options under `[flow.atp]`, named as `AtpConfig`'s fields
//! (`initial_rate` is `initial_rate_bps`, with units).

use std::any::Any;

use joulenet_proto::atp::{AtpConfig, AtpReceiver, AtpRelay, AtpSender};
use joulenet_proto::{Addr, Agent, ConfigError};

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, RelayNodes, RelaySpec, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "atp",
    about: "ATP-like (the JTP paper's baseline): rate set by the receiver's constant-period feedback from the path's stamped available rate, end-to-end recovery only, a stateless stamping relay on every hop",
    options: Some("atp"),
    wire: Wire::Code(27),
    make: || Box::new(Atp(AtpConfig::default())),
}];

#[derive(Clone, Debug)]
pub struct Atp(pub AtpConfig);

impl Protocol for Atp {
    fn name(&self) -> &'static str {
        "atp"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Jtp
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        let Some(t) = flow.table("atp")? else {
            return Ok(());
        };
        options(&t, &mut self.0)?;
        t.finish()
    }

    /// On real hosts a packet's payload is the runtime's segment; the
    /// feedback period stays the configured constant (§6.1: longer than
    /// the round trip).
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        self.0.packet_size = s.segment as usize;
        self.0.validate()
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(AtpSender::new(self.0.clone(), server).expect("validated by configure")),
            Box::new(AtpReceiver::new(self.0.clone()).expect("validated by configure")),
        )
    }

    /// A stateless relay per node: it only stamps the minimum available
    /// rate, so one serves every ATP flow with the same attempt limit.
    fn relay(&self) -> Option<RelaySpec> {
        let c = self.0.clone();
        Some(RelaySpec {
            nodes: RelayNodes::Every,
            make: Box::new(move || {
                Box::new(AtpRelay::new(c.clone()).expect("validated by configure"))
            }),
        })
    }

    fn relay_key(&self) -> String {
        format!("atp relay: max_attempts {}", self.0.max_attempts)
    }
}

fn options(t: &Reader, c: &mut AtpConfig) -> Result<()> {
    if let Some(f) = crate::jtp::format(t)? {
        c.format = f;
    }
    if let Some(v) = t.int_in("packet_size", 1, 65_000)? {
        c.packet_size = v as usize;
    }
    if let Some(v) = t.rate("initial_rate")? {
        c.initial_rate_bps = v as f64;
    }
    if let Some(d) = t.duration("feedback_period")? {
        c.feedback_period = d;
    }
    if let Some(v) = t.int_in("max_attempts", 1, 255)? {
        c.max_attempts = v as u8;
    }
    for (key, field) in [
        ("increase_threshold", &mut c.increase_threshold),
        ("increase_gain", &mut c.increase_gain),
        ("min_rate_pps", &mut c.min_rate_pps),
        ("late_backoff", &mut c.late_backoff),
    ] {
        if let Some(v) = t.f64(key)? {
            *field = v;
        }
    }
    if let Some(d) = t.duration("ack_grace")? {
        c.ack_grace = d;
    }
    if let Some(v) = t.int_in("max_snack", 1, 1_000_000)? {
        c.max_snack = v as usize;
    }
    c.validate().map_err(|e| {
        let key = match e.key {
            "initial_rate_bps" => "initial_rate",
            k => k,
        };
        t.error(key, e.reason)
    })
}
