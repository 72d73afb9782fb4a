//! The protocols a scenario can name, how their options are read, and how
//! their agents are made.

use joulenet_proto::e2tcp::{split_proxy, E2tcpConfig, E2tcpReceiver, E2tcpSender, WiredSide};
use joulenet_proto::tcp::{hop_by_hop_relay, DelayedAck, TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::udp::{UdpReceiver, UdpSender};
use joulenet_proto::wwp::{WwpConfig, WwpReceiver, WwpSender};
use joulenet_proto::{Addr, Agent, NodeId};
use toml::Value;

use crate::scenario::reader::{Reader, Result};
use crate::scenario::topology::node_ref;

/// A split connection: a proxy on node `at` joins wired TCP and E2TCP
/// through a relay buffer of `buffer` bytes.
#[derive(Clone, Debug)]
pub struct Split {
    pub at: NodeId,
    pub wired: TcpConfig,
    pub wired_side: WiredSide,
    pub buffer: usize,
}

/// The split proxy's relay buffer unless `[flow.e2tcp] relay_buffer` says
/// otherwise: a socket buffer's worth, as a base station's TCP would have.
pub const DEFAULT_SPLIT_BUFFER: usize = 256 * 1024;

/// A protocol with its configuration, as a flow in a scenario uses it.
#[derive(Clone, Debug)]
pub enum ProtocolSpec {
    Tcp(TcpConfig),
    /// Hop-by-hop TCP: every node on the path terminates the connection.
    HopByHopTcp(TcpConfig),
    Udp,
    Wwp(WwpConfig),
    E2tcp(E2tcpConfig, Option<Split>),
    Rcp(joulenet_proto::rcp::RcpConfig),
    R2cp(crate::protocols_r2cp::R2cpSpec),
    /// JTP: eJTP at the ends, iJTP on every node between (`protocols_jtp`).
    Jtp(joulenet_proto::jtp::JtpConfig),
    /// Hop: per-hop block transfer, a Hop agent relaying on every node.
    Hop(joulenet_proto::hop::HopConfig),
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
        "tcp-eln",
        "TCP-ELN: NewReno whose receiver marks ACKs of holes its link layer saw lost on the wireless hop; the sender resends those without a window cut",
    ),
    (
        "hbh-tcp",
        "hop-by-hop TCP (NewReno): every node on the path terminates the connection and opens the next hop, relay buffers sized like socket buffers (a Hop paper baseline)",
    ),
    (
        "udp",
        "UDP: unreliable datagrams (cross traffic, constant rate)",
    ),
    (
        "wwp",
        "Wave & Wait: receiver-timed waves of fixed segments, probe cycles instead of backoff",
    ),
    (
        "e2tcp",
        "E2TCP: compact headers, 2-byte SACK, burst-aware window, two timers; `split_at` for a base-station proxy",
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
    (
        "jtp",
        "JTP: receiver-set rate (flip-flop monitor, PI²/MD), per-packet link attempts from the loss tolerance, iJTP packet cache on every hop answering SNACKs; full reliability unless [flow.jtp] loss_tolerance says otherwise",
    ),
    (
        "jtp0",
        "JTP with loss tolerance 0: every packet delivered (the paper's jtp0)",
    ),
    (
        "jtp10",
        "JTP with 10% end-to-end loss tolerance: fewer link attempts per hop, holes within 10% given up (the paper's jtp10)",
    ),
    (
        "jtp20",
        "JTP with 20% end-to-end loss tolerance (the paper's jtp20)",
    ),
    (
        "hop",
        "Hop: reliable per-hop transfer of blocks (TXOP bursts, BSYN/BACK bitmaps), backpressure, ack withholding, micro-blocks, virtual retransmission; a Hop relay on every node (NSDI 2009)",
    ),
];

impl ProtocolSpec {
    /// The default configuration of a named protocol, or `None` if unknown.
    pub fn named(name: &str) -> Option<ProtocolSpec> {
        match name {
            "udp" => return Some(ProtocolSpec::Udp),
            "wwp" => return Some(ProtocolSpec::Wwp(WwpConfig::default())),
            "e2tcp" => return Some(ProtocolSpec::E2tcp(E2tcpConfig::default(), None)),
            "hbh-tcp" => {
                return Some(ProtocolSpec::HopByHopTcp(TcpConfig::new(
                    TcpVariant::NewReno,
                )))
            }
            "tcp-eln" => {
                return Some(ProtocolSpec::Tcp(TcpConfig {
                    eln: true,
                    ..TcpConfig::new(TcpVariant::NewReno)
                }))
            }
            _ => {}
        }
        if let Some(c) = crate::protocols_rcp::named(name) {
            return Some(ProtocolSpec::Rcp(c));
        }
        if let Some(s) = crate::protocols_r2cp::named(name) {
            return Some(ProtocolSpec::R2cp(s));
        }
        if let Some(c) = crate::protocols_jtp::named(name) {
            return Some(ProtocolSpec::Jtp(c));
        }
        if let Some(c) = crate::protocols_hop::named(name) {
            return Some(ProtocolSpec::Hop(c));
        }
        let variant: TcpVariant = name.parse().ok()?;
        Some(ProtocolSpec::Tcp(TcpConfig::new(variant)))
    }

    pub fn name(&self) -> &'static str {
        match self {
            ProtocolSpec::Tcp(c) if c.eln => "tcp-eln",
            ProtocolSpec::Tcp(c) => c.variant.name(),
            ProtocolSpec::HopByHopTcp(_) => "hbh-tcp",
            ProtocolSpec::Udp => "udp",
            ProtocolSpec::Wwp(_) => "wwp",
            ProtocolSpec::E2tcp(..) => "e2tcp",
            ProtocolSpec::Rcp(c) => crate::protocols_rcp::name(c),
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::name(s),
            ProtocolSpec::Jtp(c) => crate::protocols_jtp::name(c),
            ProtocolSpec::Hop(_) => "hop",
        }
    }

    /// The relays the protocol runs on intermediate nodes, if any
    /// (`crate::relays`).
    pub fn relay(&self) -> Option<crate::relays::RelaySpec> {
        use crate::relays::{RelayNodes, RelaySpec};
        match self {
            ProtocolSpec::E2tcp(c, Some(split)) => {
                let (c, split) = (c.clone(), split.clone());
                Some(RelaySpec {
                    nodes: RelayNodes::Only(vec![split.at]),
                    make: Box::new(move || {
                        Box::new(split_proxy(
                            c.clone(),
                            split.wired.clone(),
                            split.wired_side,
                            split.buffer,
                        ))
                    }),
                })
            }
            ProtocolSpec::HopByHopTcp(c) => {
                let c = c.clone();
                Some(RelaySpec {
                    nodes: RelayNodes::Every,
                    make: Box::new(move || Box::new(hop_by_hop_relay(c.clone()))),
                })
            }
            // iJTP runs on every hop (§2.2.2), one agent per node.
            ProtocolSpec::Jtp(c) => {
                let c = c.clone();
                Some(RelaySpec {
                    nodes: RelayNodes::Every,
                    make: Box::new(move || crate::protocols_jtp::relay(&c)),
                })
            }
            ProtocolSpec::Hop(c) => Some(crate::protocols_hop::relay(c)),
            _ => None,
        }
    }

    /// Flows whose keys are equal share one relay agent per node
    /// (`crate::relays`): the whole configuration, except for JTP, whose
    /// node-wide cache serves every JTP flow the relay options agree on.
    pub fn relay_key(&self) -> String {
        match self {
            ProtocolSpec::Jtp(c) => crate::protocols_jtp::relay_key(c),
            other => format!("{other:?}"),
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

    /// Where [`Self::extra_agents`] bind, without making them.
    pub fn extra_addrs(&self, client: Addr) -> Vec<Addr> {
        match self {
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::extra_addrs(s, client),
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

    /// Checks that need the flow's ends and the links (R²CP's `paths`).
    pub fn check_paths(
        &self,
        flow: &Reader,
        ends: (NodeId, NodeId, u16),
        links: &[crate::spec::LinkSpec],
        names: &[String],
    ) -> Result<()> {
        match self {
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::check(flow, s, ends, links, names),
            _ => Ok(()),
        }
    }

    /// Connections to pin to an interface with policy routes: (remote
    /// agent's address, the flow server's neighbour its traffic goes
    /// through), both directions.
    pub fn pinned(&self, client: Addr) -> Vec<(Addr, NodeId)> {
        match self {
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::pinned(s, client),
            _ => Vec::new(),
        }
    }

    /// Link-layer services the flow's receiving agent subscribes to.
    pub fn link_hooks(&self) -> crate::link_hooks::LinkHooks {
        match self {
            ProtocolSpec::Rcp(c) => crate::protocols_rcp::link_hooks(c),
            ProtocolSpec::Tcp(c) => crate::link_hooks::LinkHooks {
                eln: c.eln,
                ..Default::default()
            },
            _ => Default::default(),
        }
    }

    /// Messages stay whole (one per datagram) rather than forming a stream.
    pub fn is_datagram(&self) -> bool {
        matches!(self, ProtocolSpec::Udp)
    }

    /// The receiver may deliver the stream with holes it gave up on (JTP
    /// with a loss tolerance above 0): its sink counts what arrives but
    /// cannot match content by stream offset, as for datagrams.
    pub fn delivers_with_gaps(&self) -> bool {
        matches!(self, ProtocolSpec::Jtp(c) if c.loss_tolerance > 0.0)
    }

    /// Read the protocol's own options from a flow's table (`[flow.tcp]`).
    /// `names` are the topology's node names (for `split_at`).
    pub fn configure(&mut self, flow: &Reader, names: &[String]) -> Result<()> {
        match self {
            ProtocolSpec::Wwp(c) => {
                if let Some(t) = flow.table("wwp")? {
                    wwp_options(&t, c)?;
                    t.finish()?;
                }
            }
            ProtocolSpec::E2tcp(c, split) => {
                if let Some(t) = flow.table("e2tcp")? {
                    *split = e2tcp_options(&t, c, names)?;
                    t.finish()?;
                }
            }
            ProtocolSpec::Tcp(c) | ProtocolSpec::HopByHopTcp(c) => {
                if let Some(t) = flow.table("tcp")? {
                    tcp_options(&t, c)?;
                    c.validate().map_err(|e| t.error(e.key, e.reason))?;
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
            ProtocolSpec::Jtp(c) => crate::protocols_jtp::configure(flow, c)?,
            ProtocolSpec::Hop(c) => crate::protocols_hop::configure(flow, c)?,
        }
        Ok(())
    }

    /// Make the client (sending) and server (receiving) agents of a flow.
    /// A split flow's ends address each other; its proxy is a relay
    /// ([`Self::relay`]).
    pub fn agents(&self, client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let _ = client;
        match self {
            ProtocolSpec::Wwp(c) => (
                Box::new(WwpSender::new(c.clone(), server)),
                Box::new(WwpReceiver::new(c.clone())),
            ),
            ProtocolSpec::E2tcp(c, None) => (
                Box::new(E2tcpSender::new(c.clone(), server)),
                Box::new(E2tcpReceiver::new(c.clone())),
            ),
            // The ends address each other; the base station's relay takes
            // the flow over as it crosses (`Self::relay`).
            ProtocolSpec::E2tcp(c, Some(split)) => match split.wired_side {
                WiredSide::Client => (
                    Box::new(TcpAgent::client(split.wired.clone(), server)),
                    Box::new(E2tcpReceiver::new(c.clone())),
                ),
                WiredSide::Server => (
                    Box::new(E2tcpSender::new(c.clone(), server)),
                    Box::new(TcpAgent::server(split.wired.clone())),
                ),
            },
            ProtocolSpec::Tcp(config) | ProtocolSpec::HopByHopTcp(config) => (
                Box::new(TcpAgent::client(config.clone(), server)),
                Box::new(TcpAgent::server(config.clone())),
            ),
            ProtocolSpec::Udp => (
                Box::new(UdpSender::new(server)),
                Box::new(UdpReceiver::new()),
            ),
            ProtocolSpec::Rcp(c) => crate::protocols_rcp::agents(c, server),
            ProtocolSpec::R2cp(s) => crate::protocols_r2cp::agents(s, client),
            ProtocolSpec::Jtp(c) => crate::protocols_jtp::agents(c, server),
            ProtocolSpec::Hop(c) => crate::protocols_hop::agents(c, server),
        }
    }
}

fn wwp_options(t: &Reader, c: &mut WwpConfig) -> Result<()> {
    let levels = t.int_in("levels", 1, 15)?;
    let per = t.int_in("segments_per_level", 1, 255)?;
    if levels.is_some() || per.is_some() {
        let levels = levels.unwrap_or(c.top() as u64) as u8;
        let per = per.unwrap_or(c.wave(1) as u64) as u8;
        if levels as u32 * per as u32 > 255 {
            return Err(t.error("segments_per_level", "a wave holds at most 255 segments"));
        }
        let fresh = WwpConfig::with_levels(levels, per);
        c.wave_sizes = fresh.wave_sizes;
        c.initial_level = levels;
    }
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
    c.validate().map_err(|e| t.error(e.key, e.reason))
}

fn e2tcp_options(t: &Reader, c: &mut E2tcpConfig, names: &[String]) -> Result<Option<Split>> {
    if let Some(v) = t.int_in("mss", 16, 60_000)? {
        c.mss = v as u16;
    }
    if let Some(v) = t.int_in("max_window", 1, 10_000)? {
        c.max_window = v as u32;
    }
    if let Some(v) = t.int_in("min_window", 1, 10_000)? {
        c.min_window = v as u32;
    }
    if let Some(v) = t.int_in("burst_window", 1, 10_000)? {
        c.burst_window = v as u32;
    }
    if let Some(v) = t.int_in("error_limit", 1, 10_000)? {
        c.error_limit = v as u32;
    }
    if let Some(v) = t.bool("compression")? {
        c.compression = v;
    }
    if let Some(v) = t.bool("window_management")? {
        c.window_management = v;
    }
    if let Some(d) = t.duration("initial_rto")? {
        c.initial_rto = d;
    }
    if let Some(d) = t.duration("min_rto")? {
        c.min_rto = d;
    }
    if let Some(d) = t.duration("max_rto")? {
        c.max_rto = d;
    }
    if let Some(n) = t.int_in("max_timeouts", 1, 1_000_000)? {
        c.max_timeouts = n as u32;
    }
    c.validate().map_err(|e| t.error(e.key, e.reason))?;
    if !t.has("split_at") {
        for k in ["wired", "wired_side", "relay_buffer"] {
            if t.has(k) {
                return Err(t.error(k, "only meaningful with `split_at`"));
            }
        }
        return Ok(None);
    }
    let at = node_ref(t, "split_at", names)?;
    let variant: TcpVariant = t.str("wired")?.unwrap_or("newreno").parse().map_err(|_| {
        t.error(
            "wired",
            "expected a TCP variant (tahoe, reno, newreno, sack, cubic)",
        )
    })?;
    let wired_side = match t.str("wired_side")?.unwrap_or("client") {
        "client" => WiredSide::Client,
        "server" => WiredSide::Server,
        other => {
            return Err(t.error(
                "wired_side",
                format!("expected \"client\" or \"server\", got \"{other}\""),
            ))
        }
    };
    let buffer = t
        .size("relay_buffer")?
        .map_or(Ok(DEFAULT_SPLIT_BUFFER), |b| {
            if (1024..=1 << 30).contains(&b) {
                Ok(b as usize)
            } else {
                Err(t.error("relay_buffer", "must be between 1 KB and 1 GB"))
            }
        })?;
    Ok(Some(Split {
        at,
        wired: TcpConfig::new(variant),
        wired_side,
        buffer,
    }))
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
    if let Some(eln) = t.bool("eln")? {
        if eln && c.variant != TcpVariant::NewReno {
            return Err(t.error(
                "eln",
                format!(
                    "ELN is the paper's TCP-ELN, built on newreno (protocol \"tcp-eln\"), not {}",
                    c.variant.name()
                ),
            ));
        }
        c.eln = eln;
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
    if let Some(r) = t.str("rtt_sampling")? {
        c.rtt_sampling = r.parse().map_err(|e: String| t.error("rtt_sampling", e))?;
    }
    Ok(())
}
