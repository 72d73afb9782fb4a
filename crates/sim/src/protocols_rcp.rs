//! The RCP family as scenarios name it: `rcp` (NewReno at the receiver),
//! `rcp-stp` (the STP-like controller with batched requests), `rcp-eln`
//! (explicit loss notification on). Options under `[flow.rcp]`. Their
//! names and descriptions are listed in `protocols::PROTOCOLS`.

use joulenet_proto::rcp::{PowerSave, RcpConfig, RcpReceiver, RcpSender};
use joulenet_proto::{Addr, Agent};

use crate::link_hooks::LinkHooks;
use crate::scenario::reader::{Reader, Result};

pub fn named(name: &str) -> Option<RcpConfig> {
    match name {
        "rcp" => Some(RcpConfig::default()),
        "rcp-stp" => Some(RcpConfig::stp()),
        "rcp-eln" => Some(RcpConfig {
            eln: true,
            ..RcpConfig::default()
        }),
        _ => None,
    }
}

pub fn name(c: &RcpConfig) -> &'static str {
    match (c.controller, c.eln) {
        (joulenet_proto::rcp::RcpController::Stp, _) => "rcp-stp",
        (_, true) => "rcp-eln",
        _ => "rcp",
    }
}

/// `[flow.rcp]`: mss, initial_window, recv_buffer, send_buffer, min_rto, max_rto,
/// dupthresh, request_every, eln, power_save (true or { beacon_interval,
/// beacon_duration }).
pub fn configure(flow: &Reader, c: &mut RcpConfig) -> Result<()> {
    let Some(t) = flow.table("rcp")? else {
        return Ok(());
    };
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
    if t.has("power_save") {
        match t.bool("power_save") {
            Ok(Some(on)) => c.power_save = on.then(PowerSave::default),
            _ => {
                let p = t
                    .table("power_save")?
                    .ok_or_else(|| t.error("power_save", "expected true, false or a table"))?;
                let mut ps = PowerSave::default();
                if let Some(d) = p.duration("beacon_interval")? {
                    ps.beacon_interval = d.max(joulenet_proto::Duration::from_millis(1));
                }
                if let Some(d) = p.duration("beacon_duration")? {
                    ps.beacon_duration = d;
                }
                p.finish()?;
                c.power_save = Some(ps);
            }
        }
    }
    c.validate().map_err(|e| t.error(e.key, e.reason))?;
    t.finish()
}

pub fn agents(c: &RcpConfig, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
    (
        Box::new(RcpSender::new(c.clone(), server)),
        Box::new(RcpReceiver::new(c.clone())),
    )
}

pub fn link_hooks(c: &RcpConfig) -> LinkHooks {
    LinkHooks {
        eln: c.eln,
        channel_state: c.power_save.is_some(),
        channel_loss: None,
    }
}
