//! The RCP family: `rcp` (NewReno at the receiver), `rcp-stp` (the STP-like
//! controller with batched requests), `rcp-eln` (explicit loss
//! notification on). Options under `[flow.rcp]`: mss, initial_window,
//! recv_buffer, send_buffer, min_rto, max_rto, dupthresh, request_every,
//! eln, power_save (true or { beacon_interval, beacon_duration }).

use std::any::Any;

use joulenet_proto::rcp::{PowerSave, RcpConfig, RcpController, RcpReceiver, RcpSender};
use joulenet_proto::{Addr, Agent, ConfigError, Duration};

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, Services, Wire, WireFormat};

/// ELN is the receiver's link layer handing RCP the header of a frame it
/// received corrupted; a UDP socket never sees such a frame.
const NO_ELN_ON_HOSTS: &str = "rcp-eln needs explicit loss notification from the receiver's \
    link layer, which a UDP socket cannot provide; use rcp or rcp-stp";

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "rcp",
        about: "RCP: receiver-centric TCP clone (REQ-DATA), NewReno at the receiver",
        options: Some("rcp"),
        wire: Wire::Code(19),
        make: || Box::new(Rcp(RcpConfig::default())),
    },
    Entry {
        name: "rcp-stp",
        about: "RCP-STP: STP-like controller and batched requests at the receiver; same sender",
        options: Some("rcp"),
        wire: Wire::Code(20),
        make: || Box::new(Rcp(RcpConfig::stp())),
    },
    Entry {
        name: "rcp-eln",
        about: "RCP with explicit loss notification from the receiver's link layer",
        options: Some("rcp"),
        wire: Wire::Unavailable(NO_ELN_ON_HOSTS),
        make: || {
            Box::new(Rcp(RcpConfig {
                eln: true,
                ..RcpConfig::default()
            }))
        },
    },
];

#[derive(Clone, Debug)]
pub struct Rcp(pub RcpConfig);

impl Protocol for Rcp {
    fn name(&self) -> &'static str {
        match (self.0.controller, self.0.eln) {
            (RcpController::Stp, _) => "rcp-stp",
            (_, true) => "rcp-eln",
            _ => "rcp",
        }
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Rcp
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        let Some(t) = flow.table("rcp")? else {
            return Ok(());
        };
        options(&t, &mut self.0)?;
        self.0.validate().map_err(|e| t.error(e.key, e.reason))?;
        t.finish()
    }

    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        if self.0.eln {
            return Err(ConfigError::new("protocol", NO_ELN_ON_HOSTS));
        }
        on_hosts(&mut self.0, s)
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(RcpSender::new(self.0.clone(), server)),
            Box::new(RcpReceiver::new(self.0.clone())),
        )
    }

    fn services(&self) -> Services {
        Services {
            eln: self.0.eln,
            channel_state: self.0.power_save.is_some(),
        }
    }
}

/// The runtime's RTO floor, MSS and buffers as RCP's (R²CP's pipes too).
pub(crate) fn on_hosts(
    c: &mut RcpConfig,
    s: &HostSettings,
) -> std::result::Result<(), ConfigError> {
    c.min_rto = s.min_rto;
    c.initial_rto = Duration::from_secs(1).max(s.min_rto);
    c.mss = s.segment;
    c.send_buffer = s.send_buffer;
    c.recv_buffer = s.recv_buffer;
    c.validate()
}

fn options(t: &Reader, c: &mut RcpConfig) -> Result<()> {
    if let Some(mss) = t.int_in("mss", 64, 65_000)? {
        c.mss = mss as u16;
    }
    if let Some(iw) = t.int_in("initial_window", 1, 10_000)? {
        c.initial_window = iw as u32;
    }
    if let Some(b) = t.size("recv_buffer")? {
        c.recv_buffer = b.clamp(c.mss as u64, 1 << 30) as usize;
    }
    if let Some(b) = t.size("send_buffer")? {
        c.send_buffer = b.clamp(c.mss as u64, 1 << 30) as usize;
    }
    if let Some(d) = t.duration("min_rto")? {
        c.min_rto = d;
    }
    if let Some(d) = t.duration("max_rto")? {
        c.max_rto = d;
    }
    if let Some(n) = t.int_in("dupthresh", 1, 100)? {
        c.dupthresh = n as u32;
    }
    if let Some(n) = t.int_in("request_every", 1, 64)? {
        c.request_every = n as u32;
    }
    if let Some(e) = t.bool("eln")? {
        c.eln = e;
    }
    power_save(t, c)
}

/// `power_save = true | false | { beacon_interval, beacon_duration }`.
fn power_save(t: &Reader, c: &mut RcpConfig) -> Result<()> {
    if !t.has("power_save") {
        return Ok(());
    }
    if let Ok(Some(on)) = t.bool("power_save") {
        c.power_save = on.then(PowerSave::default);
        return Ok(());
    }
    let p = t
        .table("power_save")?
        .ok_or_else(|| t.error("power_save", "expected true, false or a table"))?;
    let mut ps = PowerSave::default();
    if let Some(d) = p.duration("beacon_interval")? {
        ps.beacon_interval = d.max(Duration::from_millis(1));
    }
    if let Some(d) = p.duration("beacon_duration")? {
        ps.beacon_duration = d;
    }
    p.finish()?;
    c.power_save = Some(ps);
    Ok(())
}
