//! The protocols a scenario can name, how their options are read, and how
//! their agents are made.

use joulenet_proto::tcp::{DelayedAck, TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::udp::{UdpReceiver, UdpSender};
use joulenet_proto::{Addr, Agent};
use toml::Value;

use crate::scenario::reader::{Reader, Result};

/// A protocol with its configuration, as a flow in a scenario uses it.
#[derive(Clone, Debug)]
pub enum ProtocolSpec {
    Tcp(TcpConfig),
    Udp,
    Rcp(joulenet_proto::rcp::RcpConfig),
    R2cp(crate::protocols_r2cp::R2cpSpec),
}

/// Every protocol name a scenario accepts, with a one-line description.
pub const PROTOCOLS: &[(&str, &str)] = &[
    (
        "tahoe",
        "TCP Tahoe: fast retransmit, then slow start from one segment",
    ),
    (
        "reno",
        "TCP Reno: fast retransmit and fast recovery (RFC 5681)",
    ),
    (
        "newreno",
        "TCP NewReno: Reno with partial-ACK recovery (RFC 6582)",
    ),
    (
        "sack",
        "TCP SACK: scoreboard-based loss recovery (RFC 6675)",
    ),
    (
        "cubic",
        "TCP CUBIC: RFC 9438 window growth with SACK recovery",
    ),
    (
        "udp",
        "UDP: unreliable datagrams (cross traffic, constant rate)",
    ),
    (
        "rcp",
        "RCP: receiver-centric TCP clone (REQ-DATA), NewReno at the receiver",
    ),
    (
        "rcp-stp",
        "RCP-STP: STP-like controller and batched requests at the receiver; same sender",
    ),
    (
        "rcp-eln",
        "RCP with explicit loss notification from the receiver's link layer",
    ),
    (
        "r2cp",
        "R²CP: multi-homed receiver, one RCP pipe per path, rank scheduling",
    ),
    (
        "r2cp-s",
        "R²CP-s: R²CP with first-come-first-served binding",
    ),
    (
        "r2cp-stripe",
        "application-level striping over one RCP pipe per path",
    ),
];

impl ProtocolSpec {
    /// The default configuration of a named protocol, or `None` if unknown.
    pub fn named(name: &str) -> Option<ProtocolSpec> {
        if name == "udp" {
            return Some(ProtocolSpec::Udp);
        }
        if let Some(c) = crate::protocols_rcp::named(name) {
            return Some(ProtocolSpec::Rcp(c));
        }
        if let Some(s) = crate::protocols_r2cp::named(name) {
            return Some(ProtocolSpec::R2cp(s));
        }
        let variant: TcpVariant = name.parse().ok()?;
        Some(ProtocolSpec::Tcp(TcpConfig::new(variant)))
    }

    pub fn name(&self) -> &'static str {
        match self {
            ProtocolSpec::Tcp(c) => c.variant.name(),
            ProtocolSpec::Udp => "udp",
            ProtocolSpec::Rcp(c) => crate::protocols_rcp::name(c),
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::name(s),
        }
    }

    /// Agents beyond the flow's client and server (R²CP's other senders),
    /// each with the address it is bound at.
    pub fn extra_agents(&self, client: Addr) -> Vec<(Addr, Box<dyn Agent>)> {
        match self {
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::extra_agents(s, client),
            _ => Vec::new(),
        }
    }

    /// Options that name nodes, read once the topology is known.
    pub fn resolve_nodes(&mut self, flow: &Reader, names: &[String]) -> Result<()> {
        match self {
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::resolve(flow, s, names),
            _ => Ok(()),
        }
    }

    /// Link-layer services the flow's receiving agent subscribes to.
    pub fn link_hooks(&self) -> crate::link_hooks::LinkHooks {
        match self {
            ProtocolSpec::Rcp(c) => crate::protocols_rcp::link_hooks(c),
            _ => Default::default(),
        }
    }

    /// Messages stay whole (one per datagram) rather than forming a stream.
    pub fn is_datagram(&self) -> bool {
        matches!(self, ProtocolSpec::Udp)
    }

    /// Read the protocol's own options from a flow's table (`[flow.tcp]`).
    pub fn configure(&mut self, flow: &Reader) -> Result<()> {
        match self {
            ProtocolSpec::Tcp(c) => {
                if let Some(t) = flow.table("tcp")? {
                    tcp_options(&t, c)?;
                    t.finish()?;
                }
            }
            ProtocolSpec::Udp => {
                if flow.has("tcp") && flow.table("tcp")?.is_some() {
                    return Err(flow.error("tcp", "TCP options given for a UDP flow"));
                }
            }
            ProtocolSpec::Rcp(c) => crate::protocols_rcp::configure(flow, c)?,
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::configure(flow, s)?,
        }
        Ok(())
    }

    /// Make the client (sending) and server (receiving) agents of a flow.
    pub fn agents(&self, client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let _ = client;
        match self {
            ProtocolSpec::Tcp(config) => (
                Box::new(TcpAgent::client(config.clone(), server)),
                Box::new(TcpAgent::server(config.clone())),
            ),
            ProtocolSpec::Udp => (
                Box::new(UdpSender::new(server)),
                Box::new(UdpReceiver::new()),
            ),
            ProtocolSpec::Rcp(c) => crate::protocols_rcp::agents(c, server),
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::agents(s, client),
        }
    }
}

fn tcp_options(t: &Reader, c: &mut TcpConfig) -> Result<()> {
    if let Some(mss) = t.int_in("mss", 64, 65_000)? {
        c.mss = mss as u16;
    }
    if let Some(iw) = t.int_in("initial_window", 1, 10_000)? {
        c.initial_window = iw as u32;
    }
    if let Some(ss) = t.size("initial_ssthresh")? {
        c.initial_ssthresh = ss.max(2 * c.mss as u64);
    }
    if let Some(d) = t.duration("min_rto")? {
        c.min_rto = d;
    }
    if let Some(d) = t.duration("initial_rto")? {
        c.initial_rto = d.max(joulenet_proto::Duration::from_millis(1));
    }
    if let Some(d) = t.duration("max_rto")? {
        c.max_rto = d;
    }
    if c.max_rto < c.min_rto {
        return Err(t.error(
            "max_rto",
            format!("must be at least min_rto ({})", c.min_rto),
        ));
    }
    if let Some(n) = t.int_in("max_consecutive_rtos", 1, 1_000)? {
        c.max_consecutive_rtos = n as u32;
    }
    match t.get("delayed_ack") {
        None => {}
        Some(Value::Boolean(false)) => c.delayed_ack = None,
        Some(Value::Boolean(true)) => c.delayed_ack = Some(DelayedAck::default()),
        Some(Value::Table(_)) => {
            let d = t.table("delayed_ack")?.expect("checked to be a table");
            let mut ack = DelayedAck::default();
            if let Some(every) = d.int_in("every", 1, 64)? {
                ack.every = every as u8;
            }
            if let Some(timeout) = d.duration("timeout")? {
                ack.timeout = timeout;
            }
            d.finish()?;
            c.delayed_ack = Some(ack);
        }
        Some(_) => return Err(t.error("delayed_ack", "expected true, false or { every, timeout }")),
    }
    if let Some(sack) = t.bool("sack")? {
        if !sack && c.variant.uses_sack() {
            return Err(t.error(
                "sack",
                format!(
                    "{} recovers with SACK and cannot turn it off",
                    c.variant.name()
                ),
            ));
        }
        c.sack = sack;
    }
    if let Some(ts) = t.bool("timestamps")? {
        c.timestamps = ts;
    }
    if let Some(b) = t.size("send_buffer")? {
        c.send_buffer = b.clamp(c.mss as u64, 1 << 30) as usize;
    }
    if let Some(b) = t.size("recv_buffer")? {
        c.recv_buffer = b.clamp(c.mss as u64, 1 << 30) as usize;
    }
    if let Some(n) = t.int_in("dupack_threshold", 1, 100)? {
        c.dupack_threshold = n as u32;
    }
    Ok(())
}
