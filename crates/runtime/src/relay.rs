//! `joulenet relay`: an intermediate host that moves routed datagrams
//! ([`crate::route`]) toward their destination by a static route table
//! ([`crate::routes`]), running on the way the same relay agents the
//! simulator runs (`crates/sim/src/relays.rs`).
//!
//! One socket serves any number of neighbours and flows. For each routed
//! datagram not addressed to this node:
//!
//! * the hop limit is decremented; one that would leave as 0 is dropped and
//!   counted, so a routing loop cannot keep a datagram alive;
//! * if its protocol runs relays ([`Tuning::relay_agent`]), the node's relay
//!   agent for that protocol sees it through [`Agent::on_transit`] — made on
//!   the first such datagram, dropped once it holds nothing and waits for
//!   nothing — and decides: `Forward` (rewritten, to the next hop), or
//!   `Consumed`/`Drop`;
//! * otherwise it is forwarded as it is, but for the hop limit.
//!
//! A relay agent acts through [`RelayNet`]: `send_as(from, to, ..)` frames a
//! routed datagram from `from` to `to` and sends it to the next hop for
//! `to.node`. The runtime header it needs (protocol, connection id, and
//! `Hello` until the far side has been heard) comes from the flow table:
//! per (protocol, flow), the connection id of the flow's first datagram and
//! which ends have spoken.
//!
//! An endpoint's UDP port is usually ephemeral, so the table cannot name
//! it: a routed datagram that arrives from an address the table does not
//! list came straight from its source endpoint, and the relay learns that
//! address as the route back to that node (as a switch learns a MAC
//! address), ahead of the table's route for it. Addresses the table lists
//! are relays or servers, and teach nothing.
//!
//! `Close` datagrams of a protocol whose relays terminate the connection
//! are absorbed, not forwarded: the sender's `Close` says its hop is over,
//! while the relay may still hold data for the next hop, and a server that
//! heard it would retire the connection before the data arrived.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use joulenet_proto::relay::FlowKey;
use joulenet_proto::{
    Addr, Agent, AppRead, Duration, LinkInfo, Net, NodeId, RadioControl, RadioMode, Route, Time,
    Transit, TransitVerdict, TransportEvent, TxOpts,
};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use serde::Serialize;

use crate::client::flush;
use crate::conn::Tuning;
use crate::frame::{self, Header, Kind, Protocol, HEADER_LEN, TOKEN_LEN};
use crate::link_loss::Links;
use crate::net::{RecordedRadio, MAX_OUTBOX};
use crate::pace::Pacer;
use crate::route::{self, RoutePacket, RouteRepr};
use crate::routes::RouteTable;
use crate::seal;
use crate::sock::{self, RecvBatch};

/// Flows the relay keeps in its table at once; datagrams of further flows
/// whose protocol runs relay agents are dropped (forwarded ones still pass).
pub const MAX_FLOWS: usize = 65_536;

/// A forwarded flow silent this long is forgotten (it needs no state to be
/// forwarded; the entry only counts it).
pub const FLOW_IDLE: Duration = Duration::from_secs(10);

/// How often the loop looks at the stop flag when otherwise idle.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(100);

#[derive(Clone, Debug)]
pub struct RelayOptions {
    pub bind: SocketAddr,
    /// This node's id: datagrams addressed to it are not relayed.
    pub node: NodeId,
    pub routes: RouteTable,
    /// Knobs of the relay agents (buffers, RTO floor, MSS).
    pub tuning: Tuning,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Set to make the relay return (checked at least every 100 ms).
    pub stop: Option<Arc<AtomicBool>>,
}

impl RelayOptions {
    pub fn new(bind: SocketAddr, node: NodeId, routes: RouteTable) -> RelayOptions {
        RelayOptions {
            bind,
            node,
            routes,
            tuning: Tuning::default(),
            duration: None,
            stop: None,
        }
    }
}

/// What a relay did, for its report (`-J` prints it as JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RelayReport {
    pub node: NodeId,
    /// Datagrams passed on toward their destination (by a relay agent's
    /// `Forward`, or with no agent).
    pub forwarded: u64,
    /// Datagrams a relay agent took (a terminating relay ends the hop).
    pub consumed: u64,
    /// Datagrams a relay agent dropped, or that found its flow table full.
    pub dropped: u64,
    /// Datagrams whose hop limit ran out here.
    pub hop_limit_drops: u64,
    /// Datagrams that did not parse, and two-party (version 2) datagrams,
    /// which carry no route.
    pub malformed: u64,
    /// Datagrams (received or originated) for a node with no route.
    pub no_route: u64,
    /// Datagrams addressed to this node (a relay is no endpoint).
    pub addressed_here: u64,
    /// `Close` datagrams of terminated flows, not forwarded (module doc).
    pub closes_absorbed: u64,
    /// Datagrams the relay agents sent themselves (`send_as`).
    pub originated: u64,
    /// Flows seen for the first time here, and flows forgotten.
    pub flows_opened: u64,
    pub flows_forgotten: u64,
    /// Relay agents made (on a protocol's first datagram) and dropped (once
    /// they held nothing).
    pub agents_made: u64,
    pub agents_forgotten: u64,
    /// Relay agents alive when the report was taken.
    pub agents_alive: u64,
    /// Datagrams dropped because a neighbour's interface queue was full
    /// (only with `--link-rate`: `crate::pace`).
    pub queue_drops: u64,
    /// Sealed datagrams (authenticated mode) of a protocol whose relays
    /// terminate connections: their agent cannot read them.
    pub sealed_dropped: u64,
    /// Link frames that did not parse, or reports on no mark of ours
    /// (`crate::link_loss`).
    pub link_malformed: u64,
    /// Per neighbour: the link's measured loss and the link attempts the
    /// relay agents asked for on it.
    pub links: Vec<LinkStats>,
}

/// What a relay measured of its link to one neighbour, and what its agents
/// made of it (issue 14: iJTP's attempts *Mᵢ* follow the loss *pᵢ*).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkStats {
    /// The neighbour's node id (from the route table), or `None` for a
    /// learned endpoint.
    pub node: Option<NodeId>,
    pub addr: String,
    /// Marks sent on the link, and the datagrams and heard ones the
    /// neighbour's reports covered.
    pub marks: u64,
    pub measured_sent: u64,
    pub measured_heard: u64,
    /// The loss over the run (`measured_sent` less `measured_heard`, over
    /// `measured_sent`) and the last window's (what `Net::link` gave).
    pub loss_run: Option<f64>,
    pub loss_now: Option<f64>,
    /// Packets the relay agents sent on the link with 1, 2, ... link
    /// attempts (`TxOpts::link_attempts`; index 0: not set).
    pub attempts: Vec<u64>,
}

impl RelayReport {
    /// A two-column table for people.
    pub fn table(&self) -> String {
        let rows: [(&str, u64); 17] = [
            ("forwarded", self.forwarded),
            ("consumed", self.consumed),
            ("dropped", self.dropped),
            ("hop-limit drops", self.hop_limit_drops),
            ("malformed", self.malformed),
            ("no route", self.no_route),
            ("addressed here", self.addressed_here),
            ("closes absorbed", self.closes_absorbed),
            ("originated", self.originated),
            ("flows opened", self.flows_opened),
            ("flows forgotten", self.flows_forgotten),
            ("agents made", self.agents_made),
            ("agents forgotten", self.agents_forgotten),
            ("agents alive", self.agents_alive),
            ("queue drops", self.queue_drops),
            ("sealed dropped", self.sealed_dropped),
            ("link malformed", self.link_malformed),
        ];
        let mut s = format!("relay node {}\n", self.node);
        for (k, v) in rows {
            s.push_str(&format!("  {k:<18}{v:>12}\n"));
        }
        let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{:.1}%", p * 100.0));
        for l in &self.links {
            s.push_str(&format!(
                "  link to {}: loss {} (now {}) over {} datagrams, {} marks; attempts {:?}\n",
                l.addr,
                pct(l.loss_run),
                pct(l.loss_now),
                l.measured_sent,
                l.marks,
                l.attempts
            ));
        }
        s
    }
}

/// A packet a relay agent sent, waiting for the callback to end.
struct Outgoing {
    from: Addr,
    to: Addr,
    packet: Vec<u8>,
    attempts: Option<u8>,
    /// The neighbour it goes to, whatever the route toward `to`
    /// ([`Net::send_link_local`]).
    via: Option<NodeId>,
}

/// The `Net` of the relay agents of one node.
pub struct RelayNet {
    start: Instant,
    now: Time,
    local: Addr,
    routes: RouteTable,
    /// What the agents sent in the current callback.
    outbox: Vec<Outgoing>,
    outbox_dropped: u64,
    previous_hop: Option<NodeId>,
    rng: Pcg64Mcg,
    radio: RecordedRadio,
    /// The links toward the neighbours as the pacer saw them when the
    /// callback began ([`Relay::refresh_links`]); empty without a link rate.
    links: HashMap<NodeId, LinkInfo>,
    /// Hops to each node heard from, by the hop limits of its datagrams
    /// ([`route::hops_travelled`]; routes are symmetric).
    hops: HashMap<NodeId, u32>,
}

impl RelayNet {
    fn new(node: NodeId, routes: RouteTable, start: Instant) -> RelayNet {
        RelayNet {
            start,
            now: Time::ZERO,
            local: Addr::new(node, 0),
            routes,
            outbox: Vec::new(),
            outbox_dropped: 0,
            previous_hop: None,
            rng: Pcg64Mcg::from_os_rng(),
            radio: RecordedRadio {
                mode: RadioMode::Awake,
                changes: 0,
            },
            links: HashMap::new(),
            hops: HashMap::new(),
        }
    }

    fn push_out(
        &mut self,
        from: Addr,
        to: Addr,
        packet: Vec<u8>,
        opts: TxOpts,
        via: Option<NodeId>,
    ) {
        if self.outbox.len() >= MAX_OUTBOX {
            self.outbox_dropped += 1;
            return;
        }
        self.outbox.push(Outgoing {
            from,
            to,
            packet,
            attempts: opts.link_attempts,
            via,
        });
    }

    /// Learns the hops to `node` from a datagram it sent.
    fn saw(&mut self, node: NodeId, hop_limit: u8) {
        let h = route::hops_travelled(hop_limit);
        if let Some(v) = self.hops.get_mut(&node) {
            // The most seen: a relay sending on the node's behalf (a local
            // recovery) starts a fresh hop limit, nearer than the node.
            *v = (*v).max(h);
        } else if self.hops.len() < MAX_FLOWS {
            self.hops.insert(node, h);
        }
    }

    fn clock(&self) -> Time {
        Time(self.start.elapsed().as_nanos() as u64)
    }

    /// Reads the clock once per callback, as [`crate::net::RuntimeNet`] does.
    fn begin_callback(&mut self, previous_hop: Option<NodeId>) {
        self.now = self.clock().max(self.now);
        self.previous_hop = previous_hop;
    }
}

impl Net for RelayNet {
    fn now(&self) -> Time {
        self.now
    }
    fn local(&self) -> Addr {
        self.local
    }
    fn send(&mut self, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        let from = self.local;
        self.send_as(from, to, packet, opts)
    }
    fn send_as(&mut self, from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.push_out(from, to, packet, opts, None);
    }
    /// To the neighbour's UDP address: the route table's for a relay, the
    /// learned one for an endpoint (`Relay::neighbour_addr`).
    fn send_link_local(
        &mut self,
        via: NodeId,
        from: Addr,
        to: Addr,
        packet: Vec<u8>,
        opts: TxOpts,
    ) {
        self.push_out(from, to, packet, opts, Some(via));
    }
    fn previous_hop(&self) -> Option<NodeId> {
        self.previous_hop
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        &mut self.rng
    }
    /// A relay agent has no application: its terminating relays relay
    /// through their own buffers.
    fn app_read(&mut self, _buf: &mut [u8]) -> AppRead {
        AppRead::Finished
    }
    fn deliver(&mut self, _data: &[u8]) {}
    fn deliver_finished(&mut self) {}
    fn event(&mut self, _event: TransportEvent) {}
    fn route(&self, dst: NodeId) -> Option<Route> {
        let next = self.routes.next_hop(dst)?;
        Some(Route {
            next_hop: self.routes.neighbour(next).unwrap_or(dst),
            hops: self.hops.get(&dst).copied().unwrap_or(1),
        })
    }
    /// With a link rate (`--link-rate`): the neighbour's interface queue
    /// (what waits in the pacer and what this callback sent), the rate, and
    /// the rate left after what this relay sent (`crate::pace`).
    fn link(&self, neighbour: NodeId) -> Option<LinkInfo> {
        if let Some(l) = self.links.get(&neighbour) {
            let mut l = *l;
            l.queue_len += self.outbox.len();
            return Some(l);
        }
        Some(LinkInfo {
            rate_bps: 1_000_000_000,
            up: true,
            queue_len: self.outbox.len(),
            loss_estimate: None,
            available_rate_bps: None,
            etx: None,
        })
    }
    fn radio(&mut self) -> &mut dyn RadioControl {
        &mut self.radio
    }
}

/// What the relay knows of one flow crossing it.
struct FlowMeta {
    conn_id: u64,
    /// The ends heard from (at most two): a relay's datagram toward an end
    /// not yet heard is a `Hello`, as a client's first ones are.
    heard: Vec<Addr>,
    last: Time,
    /// The flow's address-validation token (module doc): the latest seen
    /// in a `Hello` from upstream or a `Retry` from downstream; zero until
    /// then. Every `Hello` the relay frames for the flow carries it.
    token: [u8; TOKEN_LEN],
    /// `Hello`s the relay sent, (from, to, packet), until the far end is
    /// heard: repeated at once when a `Retry` brings a new token, as a
    /// client does.
    hellos: Vec<(Addr, Addr, Vec<u8>)>,
}

/// `Hello`s a relay keeps per flow to repeat with a `Retry`'s token (a
/// terminating TCP relay sends one SYN, and its retransmissions).
const MAX_RELAY_HELLOS: usize = 8;

/// One relay node's state.
/// Makes the relay agent of a protocol, or `None` to forward it.
pub type MakeRelayAgent = Box<dyn Fn(Protocol) -> Option<Box<dyn Agent>>>;

pub struct Relay {
    node: NodeId,
    routes: RouteTable,
    make: MakeRelayAgent,
    net: RelayNet,
    agents: HashMap<Protocol, Box<dyn Agent>>,
    flows: HashMap<(Protocol, FlowKey), FlowMeta>,
    /// Endpoints heard from directly: node → its UDP address (module doc).
    learned: HashMap<NodeId, SocketAddr>,
    /// When silent flows were last looked for.
    last_sweep: Time,
    report: RelayReport,
    sendq: Vec<(Vec<u8>, SocketAddr)>,
    /// Each neighbour's interface queue, served at the link rate.
    pacer: Pacer,
    /// Each link's loss, measured (`crate::link_loss`).
    links: Links,
    /// Link frames to send at once (reports answering marks).
    link_frames: Vec<(Vec<u8>, SocketAddr)>,
    /// Per next hop: packets the agents sent with 1, 2, ... link attempts.
    attempts: HashMap<SocketAddr, Vec<u64>>,
    pool: Vec<Vec<u8>>,
}

impl Relay {
    /// A relay running the protocols' own relay agents
    /// ([`Tuning::relay_agent`]).
    pub fn new(opts: &RelayOptions) -> Relay {
        let tuning = opts.tuning.clone();
        Relay::with_agents(opts, Box::new(move |p| tuning.relay_agent(p)))
    }

    /// A relay running `make`'s agents instead: a way to try relay code (a
    /// research prototype, a test) on any protocol, as the simulator's
    /// `register_relay` does.
    pub fn with_agents(opts: &RelayOptions, make: MakeRelayAgent) -> Relay {
        Relay {
            node: opts.node,
            routes: opts.routes.clone(),
            make,
            net: RelayNet::new(opts.node, opts.routes.clone(), Instant::now()),
            agents: HashMap::new(),
            flows: HashMap::new(),
            learned: HashMap::new(),
            last_sweep: Time::ZERO,
            report: RelayReport {
                node: opts.node,
                ..RelayReport::default()
            },
            sendq: Vec::new(),
            pacer: Pacer::new(opts.tuning.link_rate_bps),
            links: Links::default(),
            link_frames: Vec::new(),
            attempts: HashMap::new(),
            pool: Vec::new(),
        }
    }

    /// The counters so far.
    pub fn report(&self) -> RelayReport {
        let mut r = self.report.clone();
        r.agents_alive = self.agents.len() as u64;
        r.queue_drops = self.pacer.dropped;
        r.link_malformed = self.links.malformed;
        r.links = self.link_stats();
        r
    }

    /// Per link: its measured loss and the attempts asked on it.
    fn link_stats(&self) -> Vec<LinkStats> {
        let mut addrs: Vec<SocketAddr> = self
            .links
            .out
            .keys()
            .chain(self.attempts.keys())
            .copied()
            .collect();
        addrs.sort();
        addrs.dedup();
        addrs
            .into_iter()
            .map(|a| {
                let l = self.links.out.get(&a).cloned().unwrap_or_default();
                LinkStats {
                    node: self.routes.neighbour(a),
                    addr: a.to_string(),
                    marks: l.marks_sent(),
                    measured_sent: l.total_sent,
                    measured_heard: l.total_heard,
                    loss_run: l.run_estimate(),
                    loss_now: l.estimate(),
                    attempts: self.attempts.get(&a).cloned().unwrap_or_default(),
                }
            })
            .collect()
    }

    /// Datagrams whose turn on their link has come, with their next hops,
    /// each link's mark when one is due after them, and the reports
    /// answering the neighbours' marks.
    pub fn take_sends(&mut self) -> Vec<(Vec<u8>, SocketAddr)> {
        let now = self.net.clock();
        self.pacer.release(now, &mut self.sendq);
        for (_, to) in &self.sendq {
            self.links.sent(*to, now);
        }
        self.links.marks(now, &mut self.sendq);
        self.sendq.append(&mut self.link_frames);
        std::mem::take(&mut self.sendq)
    }

    /// What the agents see of the links to the neighbours, from the pacer's
    /// queues and meters (only with a link rate: otherwise the link is the
    /// socket, and `RelayNet::link` says so).
    fn refresh_links(&mut self) {
        let Some(rate) = self.pacer.rate_bps() else {
            return;
        };
        let now = self.net.clock();
        self.net.links.clear();
        for (node, addr) in self.routes.neighbours() {
            let meter = self.pacer.meter(addr);
            self.net.links.insert(
                node,
                LinkInfo {
                    rate_bps: rate,
                    up: true,
                    queue_len: self.pacer.queue_len(addr),
                    loss_estimate: self.links.estimate(addr),
                    available_rate_bps: Some(
                        meter.map_or(rate as f64, |m| m.available_bps(rate, now)),
                    ),
                    etx: None,
                },
            );
        }
    }

    /// The UDP address of neighbour `node`: the address an endpoint of
    /// that node was heard from (its port is ephemeral: the table's route
    /// for the node names a port it does not send from), else the one the
    /// route table names it by ([`RouteTable::neighbour`]'s reverse).
    fn neighbour_addr(&self, node: NodeId) -> Option<SocketAddr> {
        self.learned.get(&node).copied().or_else(|| {
            self.routes
                .neighbours()
                .find(|(n, _)| *n == node)
                .map(|(_, a)| a)
        })
    }

    /// Whether `from` may become the address of endpoint `node`, which a
    /// datagram claims to come from. Only a datagram straight from its
    /// endpoint (no relay crossed) teaches an address, and for a node the
    /// route table names, only from that node's IP (its port is
    /// ephemeral): otherwise any host could claim a neighbour's node id
    /// and have that neighbour's traffic, link-local answers included,
    /// sent to itself.
    fn may_learn(&self, node: NodeId, hop_limit: u8, from: SocketAddr) -> bool {
        if route::hops_travelled(hop_limit) != 1 {
            return false;
        }
        let named_ip = self
            .routes
            .neighbours()
            .find(|(n, _)| *n == node)
            .map(|(_, a)| a.ip());
        if named_ip.is_some_and(|ip| ip != from.ip()) {
            return false;
        }
        self.learned.len() < MAX_FLOWS || self.learned.contains_key(&node)
    }

    /// Where a datagram for `node` goes next: a learned endpoint address,
    /// else the table's route.
    fn next_hop(&self, node: NodeId) -> Option<SocketAddr> {
        self.learned
            .get(&node)
            .copied()
            .or_else(|| self.routes.next_hop(node))
    }

    fn buffer(&mut self) -> Vec<u8> {
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b
    }

    /// Handles one received datagram from the UDP address `from`.
    pub fn on_datagram(&mut self, d: &[u8], from: SocketAddr) {
        if self.links.on_datagram(d, from, &mut self.link_frames) {
            return;
        }
        // A sealed datagram (authenticated mode, `crate::seal`) shows its
        // headers in the clear: it is routed as any other, but only
        // forwarded, since its payload is for the ends' keys alone.
        let (dg, sealed) = match (route::parse(d), seal::parse(d)) {
            (Ok(dg), _) => (dg, false),
            (Err(_), Ok(s)) => (
                route::Datagram {
                    header: s.header,
                    route: s.route,
                    payload: &[],
                },
                true,
            ),
            (Err(_), Err(_)) => {
                self.report.malformed += 1;
                return;
            }
        };
        let Some(r) = dg.route else {
            self.report.malformed += 1;
            return;
        };
        if r.dst.node == self.node {
            self.report.addressed_here += 1;
            return;
        }
        // The hop limit this relay passes on; one that would leave as 0 is
        // spent.
        if r.hop_limit <= 1 {
            self.report.hop_limit_drops += 1;
            return;
        }
        let hop_limit = r.hop_limit - 1;
        self.net.saw(r.src.node, r.hop_limit);
        if self.routes.neighbour(from).is_none() && self.may_learn(r.src.node, r.hop_limit, from) {
            self.learned.insert(r.src.node, from);
        }
        let now = self.net.clock();
        let h = dg.header;
        // Asking the mapping costs nothing for a protocol without relays
        // (it answers `None` before making anything), and for one with
        // relays it is asked only while no agent lives.
        let runs_relays =
            self.agents.contains_key(&h.protocol) || (self.make)(h.protocol).is_some();
        if sealed {
            if runs_relays {
                // Its relay agent cannot read it: relays that terminate
                // connections and authenticated mode do not go together
                // (`send` refuses the combination).
                self.report.sealed_dropped += 1;
                return;
            }
            self.track(h, &r, now, true);
            self.forward_raw(d, r.dst.node, hop_limit);
            return;
        }
        if runs_relays && h.kind == Kind::Close && dg.payload.is_empty() {
            // A sender's (empty) `Close` ends its hop, not the flow; the
            // agent's own closing does that. A `Close` with the receiver's
            // verdict is end to end, and is forwarded below.
            self.report.closes_absorbed += 1;
            return;
        }
        // A relay agent's flow is opened by what its agent or its token
        // needs (`Hello`, `Data`, `Query`, `Retry`); the server's last
        // words (`Offer`, `Refused`, the verdict's `Close`) pass without
        // opening one, so a verdict repeated after the agent was forgotten
        // leaves nothing behind.
        let opens = !runs_relays || !matches!(h.kind, Kind::Close | Kind::Refused | Kind::Offer);
        let tracked = self.track(h, &r, now, opens);
        if !runs_relays {
            self.forward_raw(d, r.dst.node, hop_limit);
            return;
        }
        // Only `Hello` and `Data` carry the agents' packets; the runtime's
        // own kinds (`Refused`, `Retry`, `Query`, `Offer`, a verdict's
        // `Close`) travel end to end, untouched.
        let packet = match h.kind {
            Kind::Data => dg.payload,
            Kind::Hello => match frame::parse_hello(dg.payload) {
                Ok((token, packet)) => {
                    if let Some(t) = token {
                        self.learn_token(h.protocol, &r, t);
                    }
                    packet
                }
                Err(_) => {
                    self.report.malformed += 1;
                    return;
                }
            },
            Kind::Retry => {
                if let Ok(t) = frame::parse_retry(dg.payload) {
                    self.on_retry(h.protocol, &r, t);
                }
                self.forward_raw(d, r.dst.node, hop_limit);
                return;
            }
            Kind::Close | Kind::Refused | Kind::Query | Kind::Offer => {
                self.forward_raw(d, r.dst.node, hop_limit);
                return;
            }
        };
        if !tracked {
            // No table entry, so nothing it sends could be framed.
            self.report.dropped += 1;
            return;
        }
        self.transit(h, r, hop_limit, packet, from);
    }

    /// Records a token seen on a flow (in a `Hello` from upstream).
    fn learn_token(&mut self, protocol: Protocol, r: &RouteRepr, token: [u8; TOKEN_LEN]) {
        if let Some(meta) = self.flows.get_mut(&(protocol, FlowKey::of(r.src, r.dst))) {
            meta.token = token;
        }
    }

    /// A `Retry` crossing this relay: the server asks for a token in the
    /// `Hello`s it gets from this relay's address when this relay is the
    /// last before it. The relay keeps it for its own `Hello`s on the flow
    /// and repeats at once those it sent without one (the `Retry` still
    /// goes on toward the client, which may be waiting for it to repeat a
    /// `Query`).
    fn on_retry(&mut self, protocol: Protocol, r: &RouteRepr, token: [u8; TOKEN_LEN]) {
        let Some(meta) = self.flows.get_mut(&(protocol, FlowKey::of(r.src, r.dst))) else {
            return;
        };
        if meta.token == token {
            return;
        }
        meta.token = token;
        let again = std::mem::take(&mut meta.hellos);
        let conn_id = meta.conn_id;
        for (from, to, packet) in &again {
            let h = Header {
                kind: Kind::Hello,
                protocol,
                conn_id,
            };
            self.report.originated += 1;
            self.send_routed(h, &RouteRepr::new(*from, *to), packet, None, None);
        }
        // Kept until the far end is heard (another `Retry` may follow).
        if let Some(meta) = self.flows.get_mut(&(protocol, FlowKey::of(r.src, r.dst))) {
            meta.hellos = again;
        }
    }

    /// The token a `Hello` of this flow goes out with (zero when none).
    fn flow_token(&self, protocol: Protocol, r: &RouteRepr) -> [u8; TOKEN_LEN] {
        self.flows
            .get(&(protocol, FlowKey::of(r.src, r.dst)))
            .map_or([0; TOKEN_LEN], |m| m.token)
    }

    /// Records the flow of a datagram (opening it if `open`); false when
    /// it is not in the table (full, or not to be opened).
    fn track(&mut self, h: Header, r: &RouteRepr, now: Time, open: bool) -> bool {
        let key = (h.protocol, FlowKey::of(r.src, r.dst));
        if !self.flows.contains_key(&key) {
            if !open || self.flows.len() >= MAX_FLOWS {
                return false;
            }
            self.report.flows_opened += 1;
            self.flows.insert(
                key,
                FlowMeta {
                    conn_id: h.conn_id,
                    heard: Vec::with_capacity(2),
                    last: now,
                    token: [0; TOKEN_LEN],
                    hellos: Vec::new(),
                },
            );
        }
        let Some(meta) = self.flows.get_mut(&key) else {
            return false;
        };
        meta.last = now;
        // Only the connection's own kinds say an end has it: a `Retry`,
        // `Offer` or `Refused` comes from a server that has not made it.
        let speaks = matches!(h.kind, Kind::Hello | Kind::Data);
        if speaks && !meta.heard.contains(&r.src) && meta.heard.len() < 2 {
            meta.heard.push(r.src);
            // That end answered: no `Hello` toward it needs repeating.
            meta.hellos.retain(|(_, to, _)| *to != r.src);
        }
        true
    }

    /// Passes a datagram on unchanged but for its hop limit.
    fn forward_raw(&mut self, d: &[u8], dst: NodeId, hop_limit: u8) {
        let Some(next) = self.next_hop(dst) else {
            self.report.no_route += 1;
            return;
        };
        let mut out = self.buffer();
        out.extend_from_slice(d);
        match RoutePacket::new_checked(&mut out[HEADER_LEN..]) {
            Ok(mut p) => p.set_hop_limit(hop_limit),
            Err(_) => {
                // Parsed as routed a moment ago, so this cannot happen;
                // count rather than panic all the same.
                self.report.malformed += 1;
                return;
            }
        }
        self.report.forwarded += 1;
        self.pacer.push(out, next);
    }

    /// A datagram of a protocol that runs relays meets this node's agent.
    fn transit(
        &mut self,
        h: Header,
        r: RouteRepr,
        hop_limit: u8,
        payload: &[u8],
        from: SocketAddr,
    ) {
        if !self.agents.contains_key(&h.protocol) {
            let Some(agent) = (self.make)(h.protocol) else {
                return;
            };
            self.agents.insert(h.protocol, agent);
            self.report.agents_made += 1;
            self.refresh_links();
            if let Some(a) = self.agents.get_mut(&h.protocol) {
                self.net.begin_callback(None);
                a.start(&mut self.net);
            }
        }
        let previous_hop = self.routes.neighbour(from).unwrap_or(r.src.node);
        let mut packet = self.buffer();
        packet.extend_from_slice(payload);
        let mut opts = TxOpts::default();
        self.refresh_links();
        let verdict = match self.agents.get_mut(&h.protocol) {
            Some(agent) => {
                self.net.begin_callback(Some(previous_hop));
                let mut t = Transit {
                    src: r.src,
                    dst: r.dst,
                    previous_hop,
                    packet: &mut packet,
                    opts: &mut opts,
                };
                agent.on_transit(&mut self.net, &mut t)
            }
            None => TransitVerdict::Drop,
        };
        match verdict {
            TransitVerdict::Forward => {
                let out = RouteRepr { hop_limit, ..r };
                self.send_routed(h, &out, &packet, opts.link_attempts, None);
                if self.next_hop(r.dst.node).is_some() {
                    self.report.forwarded += 1;
                }
            }
            TransitVerdict::Consumed => self.report.consumed += 1,
            TransitVerdict::Drop => self.report.dropped += 1,
        }
        self.pool.push(packet);
        self.after_callback(h.protocol);
    }

    /// Frames a routed datagram toward its next hop: a `Hello` with the
    /// flow's token in front of the agent packet.
    /// `via`: to that neighbour, not by the route (where it is known).
    fn send_routed(
        &mut self,
        h: Header,
        r: &RouteRepr,
        payload: &[u8],
        attempts: Option<u8>,
        via: Option<NodeId>,
    ) {
        let next = via
            .and_then(|n| self.neighbour_addr(n))
            .or_else(|| self.next_hop(r.dst.node));
        let Some(next) = next else {
            self.report.no_route += 1;
            return;
        };
        if let Some(n) = attempts {
            let hist = self.attempts.entry(next).or_default();
            let i = n as usize;
            if hist.len() <= i {
                hist.resize(i + 1, 0);
            }
            hist[i] += 1;
        }
        let mut head = [0u8; route::ROUTED_HEADER_LEN];
        route::write_headers(&h, r, &mut head);
        let token = (h.kind == Kind::Hello).then(|| self.flow_token(h.protocol, r));
        let mut out = self.buffer();
        out.extend_from_slice(&head);
        if let Some(t) = token {
            out.extend_from_slice(&t);
        }
        out.extend_from_slice(payload);
        self.pacer.push(out, next);
    }

    /// Frames what the agent of `protocol` sent, and drops the agent if it
    /// now holds nothing.
    fn after_callback(&mut self, protocol: Protocol) {
        let sent = std::mem::take(&mut self.net.outbox);
        for Outgoing {
            from,
            to,
            packet,
            attempts,
            via,
        } in sent
        {
            let key = (protocol, FlowKey::of(from, to));
            let Some(meta) = self.flows.get_mut(&key) else {
                // A flow the relay never saw: no connection id to frame it.
                self.report.dropped += 1;
                continue;
            };
            let kind = if meta.heard.contains(&to) {
                Kind::Data
            } else {
                Kind::Hello
            };
            // Kept whatever token they carry (a token from the client may
            // have expired, and the server's `Retry` then brings another),
            // until that end is heard.
            if kind == Kind::Hello && meta.hellos.len() < MAX_RELAY_HELLOS {
                meta.hellos.push((from, to, packet.clone()));
            }
            let h = Header {
                kind,
                protocol,
                conn_id: meta.conn_id,
            };
            self.report.originated += 1;
            self.send_routed(h, &RouteRepr::new(from, to), &packet, attempts, via);
            if self.pool.len() < 4096 {
                self.pool.push(packet);
            }
        }
        self.report.dropped += std::mem::take(&mut self.net.outbox_dropped);
        let idle = self
            .agents
            .get(&protocol)
            .is_some_and(|a| a.is_closed() && a.poll_timeout().is_none());
        if idle {
            // A relay that holds nothing forgets, and so do its flows: the
            // next datagram of the protocol makes a new agent.
            self.agents.remove(&protocol);
            self.report.agents_forgotten += 1;
            let before = self.flows.len();
            self.flows.retain(|(p, _), _| *p != protocol);
            self.report.flows_forgotten += (before - self.flows.len()) as u64;
        }
    }

    /// Fires due agent timers and forgets silent forwarded flows.
    pub fn poll(&mut self) {
        let now = self.net.clock();
        let due: Vec<Protocol> = self
            .agents
            .iter()
            .filter(|(_, a)| a.poll_timeout().is_some_and(|t| t <= now))
            .map(|(p, _)| *p)
            .collect();
        for p in due {
            self.refresh_links();
            if let Some(a) = self.agents.get_mut(&p) {
                self.net.begin_callback(None);
                a.on_timeout(&mut self.net);
            }
            self.after_callback(p);
        }
        // The sweep walks every flow: once a second is plenty for a 10-s
        // idle rule, and keeps the per-datagram loop free of it.
        if now.saturating_since(self.last_sweep) < Duration::from_secs(1) {
            return;
        }
        self.last_sweep = now;
        let agents = &self.agents;
        let before = self.flows.len();
        self.flows.retain(|(p, _), m| {
            agents.contains_key(p) || now.saturating_since(m.last) <= FLOW_IDLE
        });
        self.report.flows_forgotten += (before - self.flows.len()) as u64;
    }

    /// The earliest instant `poll` has work, as a wait from now.
    pub fn next_wait(&self) -> Option<std::time::Duration> {
        let now = self.net.clock();
        let t = self
            .agents
            .values()
            .filter_map(|a| a.poll_timeout())
            .chain(self.pacer.next_release())
            .chain(self.links.next_mark())
            .min()?;
        Some(std::time::Duration::from_nanos(t.0.saturating_sub(now.0)))
    }

    /// Gives sent datagrams' buffers back for reuse.
    fn recycle(&mut self, pool: Vec<Vec<u8>>) {
        for b in pool {
            if self.pool.len() < 4096 {
                self.pool.push(b);
            }
        }
    }
}

/// Binds the relay's socket (separately, so a caller learns the port first).
pub fn bind(opts: &RelayOptions) -> Result<UdpSocket, String> {
    sock::bind(opts.bind).map_err(|e| format!("bind {}: {e}", opts.bind))
}

/// Runs a relay until `opts.duration` passes or `opts.stop` is set.
pub fn run_relay(opts: &RelayOptions, socket: UdpSocket) -> Result<RelayReport, String> {
    let mut relay = Relay::new(opts);
    let mut batch = RecvBatch::default();
    let mut sendq: Vec<(Vec<u8>, SocketAddr)> = Vec::new();
    let mut spent: Vec<Vec<u8>> = Vec::new();
    let began = Instant::now();
    let end = opts.duration.map(|d| std::time::Duration::from_nanos(d.0));
    loop {
        relay.poll();
        sendq.append(&mut relay.take_sends());
        flush(&socket, None, &mut sendq, &mut spent)?;
        relay.recycle(std::mem::take(&mut spent));
        let stopped = opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed));
        let elapsed = began.elapsed();
        if stopped || end.is_some_and(|e| elapsed >= e) {
            return Ok(relay.report());
        }
        let mut timeout = relay.next_wait().map_or(STOP_POLL, |t| t.min(STOP_POLL));
        if let Some(e) = end {
            timeout = timeout.min(e.saturating_sub(elapsed));
        }
        if !timeout.is_zero() {
            sock::wait(&[(&socket, !sendq.is_empty())], Some(timeout))
                .map_err(|e| e.to_string())?;
        }
        for _ in 0..16 {
            let n = batch.recv(&socket).map_err(|e| format!("receive: {e}"))?;
            for i in 0..n {
                match batch.get(i) {
                    (d, Some(from)) => relay.on_datagram(d, from),
                    (_, None) => relay.report.malformed += 1,
                }
            }
            sendq.append(&mut relay.take_sends());
            flush(&socket, None, &mut sendq, &mut spent)?;
            relay.recycle(std::mem::take(&mut spent));
            if n < sock::BATCH {
                break;
            }
        }
    }
}

static SIGNALLED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    SIGNALLED.store(true, Ordering::Relaxed);
}

/// A stop flag set by SIGINT or SIGTERM, so a relay run without
/// `--duration` still prints its report when stopped.
pub fn stop_on_signals() -> Arc<AtomicBool> {
    #[cfg(unix)]
    // SAFETY: installs a handler that only stores to an atomic.
    unsafe {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    std::thread::spawn(move || loop {
        if SIGNALLED.load(Ordering::Relaxed) {
            s.store(true, Ordering::Relaxed);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    });
    stop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame;

    fn relay(node: NodeId) -> Relay {
        let mut routes = RouteTable::new();
        routes.add(9, "127.0.0.1:9".parse().unwrap()).unwrap();
        routes.add(1, "127.0.0.1:1".parse().unwrap()).unwrap();
        Relay::new(&RelayOptions::new(
            "127.0.0.1:0".parse().unwrap(),
            node,
            routes,
        ))
    }

    fn dg(protocol: Protocol, kind: Kind, src: Addr, dst: Addr, hl: u8, p: &[u8]) -> Vec<u8> {
        let h = Header {
            kind,
            protocol,
            conn_id: 42,
        };
        route::emit(
            &h,
            &RouteRepr {
                src,
                dst,
                hop_limit: hl,
            },
            p,
        )
    }

    const FROM: &str = "127.0.0.1:1";

    #[test]
    fn forwards_with_hop_limit_decremented_and_counts_the_rest() {
        let mut r = relay(5);
        let from = FROM.parse().unwrap();
        let (a, b) = (Addr::new(1, 7), Addr::new(9, 5201));
        r.on_datagram(
            &dg(Protocol::named("udp"), Kind::Hello, a, b, 64, b"x"),
            from,
        );
        let sent = r.take_sends();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1, "127.0.0.1:9".parse().unwrap());
        let got = route::parse(&sent[0].0).unwrap();
        assert_eq!(got.route.unwrap().hop_limit, 63);
        assert_eq!(got.payload, b"x");
        // Spent hop limit, no route, for this node, two-party, garbage.
        r.on_datagram(&dg(Protocol::named("udp"), Kind::Data, a, b, 1, b"x"), from);
        r.on_datagram(
            &dg(
                Protocol::named("udp"),
                Kind::Data,
                a,
                Addr::new(3, 1),
                9,
                b"x",
            ),
            from,
        );
        r.on_datagram(
            &dg(
                Protocol::named("udp"),
                Kind::Data,
                a,
                Addr::new(5, 1),
                9,
                b"x",
            ),
            from,
        );
        let h = Header {
            kind: Kind::Data,
            protocol: Protocol::named("udp"),
            conn_id: 1,
        };
        r.on_datagram(&frame::emit(&h, b"x"), from);
        r.on_datagram(b"JN\x02", from);
        let rep = r.report();
        assert_eq!(
            (
                rep.forwarded,
                rep.hop_limit_drops,
                rep.no_route,
                rep.addressed_here,
                rep.malformed
            ),
            (1, 1, 1, 1, 2)
        );
        // Flows of datagrams that were relayed or tried to be.
        assert_eq!(rep.flows_opened, 2);
        assert!(r.take_sends().is_empty());
    }

    /// A transit agent that stamps every packet, answers the first on the
    /// destination's behalf, drops packets starting with `x` and is done
    /// after `bye`; it records the previous hops it was told.
    struct Stamp {
        hops: std::rc::Rc<std::cell::RefCell<Vec<NodeId>>>,
        answered: bool,
        done: bool,
        stats: joulenet_proto::TransportStats,
    }

    impl Agent for Stamp {
        fn protocol(&self) -> &'static str {
            "stamp"
        }
        fn start(&mut self, _net: &mut dyn Net) {}
        fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {}
        fn poll_timeout(&self) -> Option<Time> {
            None
        }
        fn on_timeout(&mut self, _net: &mut dyn Net) {}
        fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
            self.hops.borrow_mut().push(t.previous_hop);
            assert_eq!(net.previous_hop(), Some(t.previous_hop));
            if !self.answered {
                self.answered = true;
                net.send_as(t.dst, t.src, b"a".to_vec(), TxOpts::default());
            }
            if t.packet.first() == Some(&b'x') {
                return TransitVerdict::Drop;
            }
            self.done = t.packet.as_slice() == b"bye";
            t.packet.push(b'!');
            TransitVerdict::Forward
        }
        fn stats(&self) -> &joulenet_proto::TransportStats {
            &self.stats
        }
        fn is_closed(&self) -> bool {
            self.done
        }
    }

    /// The transit hook end to end inside one relay: the agent sees the
    /// previous hop from the table's reverse map, its rewrite is forwarded
    /// with the hop limit decremented, what it sends as another endpoint is
    /// framed with the flow's connection id (`Data`: that end was heard),
    /// its drops are counted, and it is forgotten once closed.
    #[test]
    fn a_transit_agent_rewrites_answers_drops_and_is_forgotten() {
        let hops = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let h2 = std::rc::Rc::clone(&hops);
        let mut routes = RouteTable::new();
        // Neighbour 1 first, then node 0 behind it: the source is node 0,
        // the previous hop node 1.
        routes.add(1, FROM.parse().unwrap()).unwrap();
        routes.add(0, FROM.parse().unwrap()).unwrap();
        routes.add(9, "127.0.0.1:9".parse().unwrap()).unwrap();
        let opts = RelayOptions::new("127.0.0.1:0".parse().unwrap(), 5, routes);
        let mut r = Relay::with_agents(
            &opts,
            Box::new(move |p| {
                (p == Protocol::named("udp")).then(|| {
                    Box::new(Stamp {
                        hops: std::rc::Rc::clone(&h2),
                        answered: false,
                        done: false,
                        stats: Default::default(),
                    }) as Box<dyn Agent>
                })
            }),
        );
        let from = FROM.parse().unwrap();
        let (a, b) = (Addr::new(0, 7), Addr::new(9, 5201));
        // A `Hello` carries its token (issue 15): the agent sees the packet
        // behind it, and the forwarded `Hello` carries the token again.
        let mut hello = vec![0x33; TOKEN_LEN];
        hello.extend_from_slice(b"hi");
        r.on_datagram(
            &dg(Protocol::named("udp"), Kind::Hello, a, b, 64, &hello),
            from,
        );
        let sent = r.take_sends();
        assert_eq!(sent.len(), 2, "the forwarded packet and the answer");
        let answer = route::parse(&sent[1].0).unwrap();
        assert_eq!(sent[1].1, from);
        assert_eq!(answer.route, Some(RouteRepr::new(b, a)));
        assert_eq!(
            (answer.header.kind, answer.header.conn_id),
            (Kind::Data, 42)
        );
        assert_eq!(answer.payload, b"a");
        let fwd = route::parse(&sent[0].0).unwrap();
        assert_eq!(sent[0].1, "127.0.0.1:9".parse().unwrap());
        assert_eq!(fwd.route.unwrap().hop_limit, 63);
        assert_eq!(
            frame::parse_hello(fwd.payload),
            Ok((Some([0x33; TOKEN_LEN]), &b"hi!"[..]))
        );
        assert_eq!(*hops.borrow(), [1]);
        r.on_datagram(
            &dg(Protocol::named("udp"), Kind::Data, a, b, 64, b"xx"),
            from,
        );
        assert!(r.take_sends().is_empty());
        r.on_datagram(
            &dg(Protocol::named("udp"), Kind::Data, a, b, 64, b"bye"),
            from,
        );
        assert_eq!(route::parse(&r.take_sends()[0].0).unwrap().payload, b"bye!");
        // Forwarded protocols still pass untouched.
        r.on_datagram(
            &dg(Protocol::named("wwp"), Kind::Data, a, b, 64, b"w"),
            from,
        );
        assert_eq!(route::parse(&r.take_sends()[0].0).unwrap().payload, b"w");
        let rep = r.report();
        assert_eq!(
            (rep.forwarded, rep.dropped, rep.originated, rep.consumed),
            (3, 1, 1, 0)
        );
        assert_eq!(
            (rep.agents_made, rep.agents_forgotten, rep.agents_alive),
            (1, 1, 0)
        );
        // The agent's flow went with it; the WWP flow stays until idle.
        assert_eq!((rep.flows_opened, rep.flows_forgotten), (2, 1));
    }

    /// Answers every packet link-locally to the neighbour it came from, as
    /// Hop's relay answers a BSYN with a BACK.
    struct LinkLocal {
        stats: joulenet_proto::TransportStats,
    }

    impl Agent for LinkLocal {
        fn protocol(&self) -> &'static str {
            "link-local"
        }
        fn start(&mut self, _net: &mut dyn Net) {}
        fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {}
        fn poll_timeout(&self) -> Option<Time> {
            None
        }
        fn on_timeout(&mut self, _net: &mut dyn Net) {}
        fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
            net.send_link_local(
                t.previous_hop,
                t.dst,
                t.src,
                b"back".to_vec(),
                TxOpts::default(),
            );
            TransitVerdict::Consumed
        }
        fn stats(&self) -> &joulenet_proto::TransportStats {
            &self.stats
        }
        fn is_closed(&self) -> bool {
            false
        }
    }

    /// A link-local answer goes to the neighbour the packet came from — a
    /// relay named by the table, or an endpoint heard from directly — even
    /// where the route toward the packet's source leaves by another
    /// neighbour (asymmetric routes).
    #[test]
    fn a_link_local_answer_returns_to_the_previous_hop_not_along_the_route() {
        let mut routes = RouteTable::new();
        routes.add(1, FROM.parse().unwrap()).unwrap();
        routes.add(9, "127.0.0.1:9".parse().unwrap()).unwrap();
        // Back toward sources 0 and 4: through neighbour 2.
        routes.add(2, "127.0.0.1:2".parse().unwrap()).unwrap();
        routes.add(0, "127.0.0.1:2".parse().unwrap()).unwrap();
        routes.add(4, "127.0.0.1:2".parse().unwrap()).unwrap();
        // Node 6 is a neighbour by the table (its server port), but its
        // endpoint sends from an ephemeral port: that is where it listens.
        routes.add(6, "127.0.0.1:5201".parse().unwrap()).unwrap();
        let opts = RelayOptions::new("127.0.0.1:0".parse().unwrap(), 5, routes);
        let mut r = Relay::with_agents(
            &opts,
            Box::new(|p| {
                (p == Protocol::named("udp")).then(|| {
                    Box::new(LinkLocal {
                        stats: Default::default(),
                    }) as Box<dyn Agent>
                })
            }),
        );
        let udp = Protocol::named("udp");
        let b = Addr::new(9, 5201);
        r.on_datagram(
            &dg(udp, Kind::Data, Addr::new(0, 7), b, 60, b"d"),
            FROM.parse().unwrap(),
        );
        let endpoint: SocketAddr = "127.0.0.1:7".parse().unwrap();
        r.on_datagram(&dg(udp, Kind::Data, Addr::new(4, 7), b, 64, b"d"), endpoint);
        let ephemeral: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        r.on_datagram(
            &dg(udp, Kind::Data, Addr::new(6, 7), b, 64, b"d"),
            ephemeral,
        );
        let sent = r.take_sends();
        let to: Vec<SocketAddr> = sent.iter().map(|s| s.1).collect();
        assert_eq!(to, [FROM.parse().unwrap(), endpoint, ephemeral]);
        let first = route::parse(&sent[0].0).unwrap();
        assert_eq!(first.route, Some(RouteRepr::new(b, Addr::new(0, 7))));
        assert_eq!(first.payload, b"back");
    }

    #[test]
    fn a_datagram_claiming_a_neighbours_node_id_from_elsewhere_teaches_nothing() {
        let mut routes = RouteTable::new();
        routes.add(9, "127.0.0.1:9".parse().unwrap()).unwrap();
        routes.add(6, "127.0.0.1:5201".parse().unwrap()).unwrap();
        let opts = RelayOptions::new("127.0.0.1:0".parse().unwrap(), 5, routes);
        let mut r = Relay::new(&opts);
        let udp = Protocol::named("udp");
        let b = Addr::new(9, 5201);
        let straight = route::DEFAULT_HOP_LIMIT;
        // Node 6 is the table's, at 127.0.0.1: another host claiming it is
        // not believed.
        let spoofer: SocketAddr = "10.9.9.9:40000".parse().unwrap();
        r.on_datagram(
            &dg(udp, Kind::Data, Addr::new(6, 7), b, straight, b"d"),
            spoofer,
        );
        assert_eq!(r.learned.get(&6), None);
        assert_eq!(r.neighbour_addr(6), Some("127.0.0.1:5201".parse().unwrap()));
        // A datagram that crossed relays says nothing of its sender's
        // address.
        let relayed: SocketAddr = "10.1.1.1:40001".parse().unwrap();
        r.on_datagram(
            &dg(udp, Kind::Data, Addr::new(8, 7), b, straight - 2, b"d"),
            relayed,
        );
        assert_eq!(r.learned.get(&8), None);
        // Straight from endpoints: node 8 (not in the table) from anywhere,
        // node 6 from its own IP on an ephemeral port.
        r.on_datagram(
            &dg(udp, Kind::Data, Addr::new(8, 7), b, straight, b"d"),
            relayed,
        );
        assert_eq!(r.learned.get(&8), Some(&relayed));
        let ephemeral: SocketAddr = "127.0.0.1:40002".parse().unwrap();
        r.on_datagram(
            &dg(udp, Kind::Data, Addr::new(6, 7), b, straight, b"d"),
            ephemeral,
        );
        assert_eq!(r.learned.get(&6), Some(&ephemeral));
    }

    /// Terminates every packet and opens its own hop toward the
    /// destination, as hbh-tcp's relay does.
    struct Opener {
        stats: joulenet_proto::TransportStats,
    }

    impl Agent for Opener {
        fn protocol(&self) -> &'static str {
            "opener"
        }
        fn start(&mut self, _net: &mut dyn Net) {}
        fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {}
        fn poll_timeout(&self) -> Option<Time> {
            None
        }
        fn on_timeout(&mut self, _net: &mut dyn Net) {}
        fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
            let mut p = b"own:".to_vec();
            p.extend_from_slice(t.packet);
            net.send_as(t.src, t.dst, p, TxOpts::default());
            TransitVerdict::Consumed
        }
        fn stats(&self) -> &joulenet_proto::TransportStats {
            &self.stats
        }
        fn is_closed(&self) -> bool {
            false
        }
    }

    /// Issue 15's kinds through a relay that terminates connections: its
    /// own `Hello`s carry the flow's token (taken from the client's
    /// `Hello`, or from a `Retry`, which also makes it repeat at once the
    /// `Hello`s it sent without one); `Retry`, `Query`, `Offer`, `Refused`
    /// and a verdict's `Close` pass end to end untouched; a sender's empty
    /// `Close` is absorbed; a `Hello` too short for its token is malformed.
    #[test]
    fn a_terminating_relay_carries_tokens_and_forwards_the_runtime_kinds() {
        let mut routes = RouteTable::new();
        routes.add(1, FROM.parse().unwrap()).unwrap();
        routes.add(9, "127.0.0.1:9".parse().unwrap()).unwrap();
        let opts = RelayOptions::new("127.0.0.1:0".parse().unwrap(), 5, routes);
        let mut r = Relay::with_agents(
            &opts,
            Box::new(|p| {
                (p == Protocol::named("hbh-tcp")).then(|| {
                    Box::new(Opener {
                        stats: Default::default(),
                    }) as Box<dyn Agent>
                })
            }),
        );
        let from: SocketAddr = FROM.parse().unwrap();
        let server: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let (a, b) = (Addr::new(1, 7), Addr::new(9, 5201));
        let p = Protocol::named("hbh-tcp");
        // The client's first `Hello`, without a token: the relay's own
        // `Hello` toward the server has none either.
        let mut hello = vec![0; TOKEN_LEN];
        hello.extend_from_slice(b"syn");
        r.on_datagram(&dg(p, Kind::Hello, a, b, 64, &hello), from);
        let sent = r.take_sends();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1, server);
        let own = route::parse(&sent[0].0).unwrap();
        assert_eq!(own.header.kind, Kind::Hello);
        assert_eq!(own.route.unwrap().hop_limit, 64, "the relay's own datagram");
        assert_eq!(frame::parse_hello(own.payload), Ok((None, &b"own:syn"[..])));
        // The server's `Retry` (to this relay's address): kept, the `Hello`
        // repeated with it at once, and passed on toward the client.
        r.on_datagram(&dg(p, Kind::Retry, b, a, 64, &[0x77; TOKEN_LEN]), server);
        let sent = r.take_sends();
        assert_eq!(sent.len(), 2, "{sent:?}");
        let again = route::parse(&sent[0].0).unwrap();
        assert_eq!(sent[0].1, server);
        assert_eq!(
            frame::parse_hello(again.payload),
            Ok((Some([0x77; TOKEN_LEN]), &b"own:syn"[..]))
        );
        let retry = route::parse(&sent[1].0).unwrap();
        assert_eq!(sent[1].1, from);
        assert_eq!(retry.header.kind, Kind::Retry);
        assert_eq!(retry.route.unwrap().hop_limit, 63);
        // The same `Retry` again repeats nothing more.
        r.on_datagram(&dg(p, Kind::Retry, b, a, 64, &[0x77; TOKEN_LEN]), server);
        assert_eq!(r.take_sends().len(), 1);
        // Another token (the first expired): the `Hello` again, with it.
        r.on_datagram(&dg(p, Kind::Retry, b, a, 64, &[0x78; TOKEN_LEN]), server);
        let sent = r.take_sends();
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert_eq!(
            frame::parse_hello(route::parse(&sent[0].0).unwrap().payload),
            Ok((Some([0x78; TOKEN_LEN]), &b"own:syn"[..]))
        );
        // A client's `Hello` with a newer token: the relay's next `Hello`
        // carries it.
        let mut hello = vec![0x44; TOKEN_LEN];
        hello.extend_from_slice(b"syn2");
        r.on_datagram(&dg(p, Kind::Hello, a, b, 64, &hello), from);
        let sent = r.take_sends();
        let own = route::parse(&sent[0].0).unwrap();
        assert_eq!(
            frame::parse_hello(own.payload),
            Ok((Some([0x44; TOKEN_LEN]), &b"own:syn2"[..]))
        );
        // End-to-end kinds pass untouched but for the hop limit.
        let verdict = frame::CloseRepr {
            verdict: frame::Verdict::Verified,
            stream_bytes: 3,
            sha256: [2; 32],
            reason: String::new(),
        }
        .emit();
        let query = frame::QueryRepr {
            token: Some([0x77; TOKEN_LEN]),
            size: 3,
            sha256: [2; 32],
            name: "f".into(),
        }
        .emit();
        let offer = frame::OfferRepr {
            prefix_len: 0,
            prefix_sha256: [0; 32],
        }
        .emit();
        for (kind, src, dst, at, payload) in [
            (Kind::Query, a, b, from, &query[..]),
            (Kind::Offer, b, a, server, &offer[..]),
            (Kind::Refused, b, a, server, &b"busy"[..]),
            (Kind::Close, b, a, server, &verdict[..]),
        ] {
            let d = dg(p, kind, src, dst, 64, payload);
            r.on_datagram(&d, at);
            let sent = r.take_sends();
            assert_eq!(sent.len(), 1, "{kind:?}");
            let mut want = d.clone();
            want[HEADER_LEN + 12] = 63;
            assert_eq!(sent[0].0, want, "{kind:?}");
        }
        // The client's empty `Close` ends its hop only.
        r.on_datagram(&dg(p, Kind::Close, a, b, 64, &[]), from);
        assert!(r.take_sends().is_empty());
        let before = r.report().malformed;
        r.on_datagram(&dg(p, Kind::Hello, a, b, 64, &[0; 15]), from);
        assert!(r.take_sends().is_empty());
        let rep = r.report();
        assert_eq!(rep.malformed, before + 1);
        assert_eq!(rep.closes_absorbed, 1);
        assert_eq!(rep.consumed, 2);
    }

    /// With a link rate, forwarded datagrams wait in the neighbour's queue
    /// and leave one per transmission time; the agents see that queue and
    /// the rate left (`crate::pace`).
    #[test]
    fn a_link_rate_paces_the_neighbours_queue_and_shows_it() {
        let mut routes = RouteTable::new();
        routes.add(9, "127.0.0.1:9".parse().unwrap()).unwrap();
        let mut opts = RelayOptions::new("127.0.0.1:0".parse().unwrap(), 5, routes);
        // 1 kbit/s: nothing but the first datagram leaves within the test.
        opts.tuning.link_rate_bps = Some(1_000);
        let mut r = Relay::new(&opts);
        let from = FROM.parse().unwrap();
        let (a, b) = (Addr::new(1, 7), Addr::new(9, 5201));
        for _ in 0..5 {
            r.on_datagram(
                &dg(Protocol::named("udp"), Kind::Data, a, b, 64, b"x"),
                from,
            );
        }
        assert_eq!(r.take_sends().len(), 1, "the first datagram leaves at once");
        assert_eq!(r.take_sends().len(), 0);
        assert!(
            r.next_wait().is_some(),
            "the queue's next departure is awaited"
        );
        r.refresh_links();
        let l = r.net.link(9).expect("the neighbour's link");
        assert_eq!((l.rate_bps, l.queue_len), (1_000, 4));
        assert!(l.available_rate_bps.is_some_and(|v| v <= 1_000.0));
        assert_eq!(r.report().forwarded, 5);
    }

    /// What the agents see on a relay: the loss of the link to node 9 from
    /// node 9's reports on what it heard, and the hops to node 9 from the
    /// hop limit of its datagrams (3 relays crossed: 62 left).
    #[test]
    fn reports_give_a_link_its_loss_and_hop_limits_the_hops_left() {
        use crate::link_loss::{LinkFrame, LinkFrameKind};
        let mut routes = RouteTable::new();
        routes.add(9, "127.0.0.1:9".parse().unwrap()).unwrap();
        let mut opts = RelayOptions::new("127.0.0.1:0".parse().unwrap(), 5, routes);
        opts.tuning.link_rate_bps = Some(1_000_000_000);
        let mut r = Relay::new(&opts);
        let (from, nine) = (FROM.parse().unwrap(), "127.0.0.1:9".parse().unwrap());
        let (a, b) = (Addr::new(1, 7), Addr::new(9, 5201));
        let udp = Protocol::named("udp");
        r.refresh_links();
        assert_eq!(
            r.net.link(9).unwrap().loss_estimate,
            None,
            "nothing measured"
        );
        assert_eq!(r.net.route(9).unwrap().hops, 1, "nothing heard from 9");
        for _ in 0..200 {
            r.on_datagram(&dg(udp, Kind::Data, a, b, 64, b"x"), from);
        }
        // Served at 1 Gbit/s: all 200 leave within a millisecond.
        let mut left = 0;
        while left < 200 {
            left += r.take_sends().len();
        }
        // Node 9 reports two marks: 170 of the 200 sent between them heard.
        for (sent, heard) in [(0, 0), (200, 170)] {
            let rep = LinkFrame {
                kind: LinkFrameKind::Report,
                mark: 1,
                sent,
                heard,
            };
            r.on_datagram(&rep.emit(), nine);
        }
        // A datagram from node 9 that crossed three relays before this one.
        r.on_datagram(&dg(udp, Kind::Data, b, a, 61, b"y"), nine);
        r.refresh_links();
        let p = r.net.link(9).unwrap().loss_estimate.expect("measured");
        assert!((p - 0.15).abs() < 1e-9, "{p}");
        assert_eq!(r.net.route(9).unwrap().hops, 4);
        let rep = r.report();
        let link = rep.links.iter().find(|l| l.node == Some(9)).unwrap();
        assert_eq!((link.measured_sent, link.measured_heard), (200, 170));
        assert!(rep.table().contains("loss 15.0%"), "{}", rep.table());
        // A mark from a neighbour is answered with what was heard from it.
        let mark = LinkFrame {
            kind: LinkFrameKind::Mark,
            mark: 3,
            sent: 250,
            heard: 0,
        };
        r.on_datagram(&mark.emit(), from);
        let sent = r.take_sends();
        let answer = sent
            .iter()
            .find(|(d, to)| *to == from && LinkFrame::is_link(d))
            .expect("a report");
        let got = LinkFrame::parse(&answer.0).unwrap();
        assert_eq!(
            (got.kind, got.mark, got.sent, got.heard),
            (LinkFrameKind::Report, 3, 250, 200)
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut r = relay(5);
        let from = FROM.parse().unwrap();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let good = dg(
            Protocol::named("hbh-tcp"),
            Kind::Hello,
            Addr::new(1, 7),
            Addr::new(9, 5201),
            64,
            &[0; 40],
        );
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut d = good.clone();
            if i % 3 == 0 {
                d.truncate((x % 80) as usize);
            } else {
                let at = (x % d.len() as u64) as usize;
                d[at] = (x >> 8) as u8;
            }
            r.on_datagram(&d, from);
            r.poll();
            r.take_sends();
        }
        let rep = r.report();
        assert!(rep.malformed > 0, "{rep:?}");
    }
}
