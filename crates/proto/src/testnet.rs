//! A tiny deterministic driver for protocol unit tests: agents on nodes
//! 0..n joined by FIFO links of fixed rate and delay, a loss function the test
//! controls, a virtual clock, a source application on agent 0 and a sink
//! application on the last agent.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand_core::SeedableRng;

use crate::net::{
    Addr, Agent, AppRead, LinkInfo, Net, NodeId, RadioControl, RadioMode, Route, TransportEvent,
    TxOpts,
};
use crate::time::{Duration, Time};

/// Decides whether a packet is lost: (now, from node, to node, packet).
pub(crate) type DropFn = Box<dyn FnMut(Time, u32, u32, &[u8]) -> bool>;

/// What the link layer of node `from` knows of its link toward neighbour
/// `to` (`Net::link`): (from, to).
pub(crate) type LinkFn = Box<dyn Fn(u32, u32) -> Option<LinkInfo>>;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Arrive {
        to: usize,
        from: Addr,
        packet: Vec<u8>,
    },
    Timer {
        agent: usize,
        at: Time,
    },
    /// A packet reaching `node` on its way from `src` to `dst` (relay
    /// worlds only), from neighbour `prev`.
    Hop {
        node: u32,
        prev: u32,
        src: Addr,
        dst: Addr,
        packet: Vec<u8>,
    },
}

#[allow(dead_code)]
pub(crate) struct Sent {
    pub at: Time,
    pub from: u32,
    pub to: u32,
    pub packet: Vec<u8>,
    pub dropped: bool,
}

pub(crate) struct World {
    pub now: Time,
    pub agents: Vec<Box<dyn Agent>>,
    pub addrs: Vec<Addr>,
    queue: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    /// Per agent: the time of its pending timer event (`NEVER`: none).
    scheduled: Vec<Time>,
    link_free: std::collections::HashMap<(u32, u32), Time>,
    pub delay: Duration,
    /// Transmission time per byte.
    pub per_byte: Duration,
    /// A token bucket in front of each link, as deep as this much of its
    /// transmission time (0: none): after an idle spell that many bytes
    /// leave at once, then the link's rate (Linux `tbf`'s `burst`).
    pub burst: Duration,
    pub drop: DropFn,
    pub source: Vec<u8>,
    pub source_pos: usize,
    /// Largest chunk one `app_read` returns.
    pub chunk: usize,
    pub delivered: Vec<u8>,
    pub finished: u32,
    pub events: Vec<(usize, TransportEvent)>,
    pub log: Vec<Sent>,
    rng: rand_pcg::Pcg64Mcg,
    radio: Radio,
    /// Nodes form a line and packets cross every node between their ends,
    /// meeting the agent there as a relay ([`World::chain`]).
    relay_mode: bool,
    /// The neighbour the packet being handled came from.
    previous_hop: Option<u32>,
    /// Packets relays passed on, took, and dropped.
    pub transit: [u64; 3],
    /// Answers `Net::link`; `None` (the default): the link layer knows
    /// nothing, unless [`World::mac`] is set.
    pub links: Option<LinkFn>,
    /// Hosts' schedulers stalling agents: an agent's events in each of its
    /// stalls are handled when the stall ends, in order, at that later time.
    pub stalls: Vec<Stall>,
    /// A MAC under every link; `None` (the default): each packet is one
    /// attempt and `Net::link` answers from [`World::links`] only.
    pub mac: Option<Mac>,
    /// Per link: when each packet on it leaves (the interface queue that
    /// [`Mac`] reports).
    departures: std::collections::HashMap<(u32, u32), VecDeque<Time>>,
}

/// Agent `agent` cannot run during the first `length` of every `every`
/// (a loaded host's late wakes, for tests of what a protocol makes of them).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Stall {
    pub agent: usize,
    pub every: Duration,
    pub length: Duration,
}

impl Stall {
    /// When an event for `agent` due at `t` is handled.
    fn defer(&self, agent: usize, t: Time) -> Time {
        let into = Duration(t.0 % self.every.0);
        if agent != self.agent || into >= self.length {
            return t;
        }
        Time(t.0 - into.0) + self.length
    }
}

/// What the drivers under the agents do that a bare link does not: link
/// ARQ for packets that ask for it (the simulator's MAC, §4.1 of the Hop
/// paper: "enabled for control packets") and a report of each link's rate
/// and interface queue (`Net::link`, as the simulator and the runtime give).
/// A retry takes the link for the packet's time again and meets the drop
/// function again; link ACKs take no time here.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mac {
    /// Attempts for a packet whose `TxOpts::link_attempts` is unset.
    pub attempts: u8,
}

impl Mac {
    /// The simulator's 802.11 default: retry limit 7, so 8 attempts.
    pub const DOT11: Mac = Mac { attempts: 8 };
}

struct Radio;
impl RadioControl for Radio {
    fn set_mode(&mut self, _mode: RadioMode) {}
    fn mode(&self) -> RadioMode {
        RadioMode::Awake
    }
}

impl World {
    /// Agents `agents[i]` live at node `i`, port 1.
    pub fn new(agents: Vec<Box<dyn Agent>>, source: Vec<u8>) -> World {
        let n = agents.len();
        World {
            now: Time::ZERO,
            addrs: (0..n as u32).map(|i| Addr::new(i, 1)).collect(),
            agents,
            queue: BinaryHeap::new(),
            seq: 0,
            scheduled: vec![Time::NEVER; n],
            link_free: Default::default(),
            delay: Duration::from_millis(10),
            // 1 Mbit/s.
            per_byte: Duration::from_nanos(8_000),
            burst: Duration::ZERO,
            drop: Box::new(|_, _, _, _| false),
            source,
            source_pos: 0,
            chunk: 1 << 20,
            delivered: Vec::new(),
            finished: 0,
            events: Vec::new(),
            log: Vec::new(),
            rng: rand_pcg::Pcg64Mcg::seed_from_u64(7),
            radio: Radio,
            relay_mode: false,
            previous_hop: None,
            transit: [0; 3],
            links: None,
            stalls: Vec::new(),
            mac: None,
            departures: Default::default(),
        }
    }

    /// A line of nodes: `client` at node 0, `relays` at nodes 1..=k (each
    /// sees every packet crossing its node through `Agent::on_transit`),
    /// `server` at node k + 1. Packets travel hop by hop.
    pub fn chain(
        client: Box<dyn Agent>,
        relays: Vec<Box<dyn Agent>>,
        server: Box<dyn Agent>,
        source: Vec<u8>,
    ) -> World {
        let mut agents = vec![client];
        agents.extend(relays);
        agents.push(server);
        let mut w = World::new(agents, source);
        w.relay_mode = true;
        w
    }

    /// Put `packet` on the link from `node` toward `dst` (relay worlds: to
    /// the neighbour on the line; otherwise straight to `dst`).
    fn transmit(&mut self, node: u32, src: Addr, dst: Addr, packet: Vec<u8>, opts: TxOpts) {
        let next = if !self.relay_mode || node.abs_diff(dst.node) <= 1 {
            dst.node
        } else if dst.node > node {
            node + 1
        } else {
            node - 1
        };
        let now = self.now;
        let attempts = match self.mac {
            Some(mac) => opts.link_attempts.unwrap_or(mac.attempts).max(1),
            None => 1,
        };
        let mut delivered = None;
        for _ in 0..attempts {
            let free = self.link_free.entry((node, next)).or_insert(now);
            // `free`: when the link's rate has served what was sent (the
            // bucket's theoretical time); a packet leaves at once if the
            // bucket still holds its bytes.
            *free = (*free).max(Time(now.0.saturating_sub(self.burst.0)))
                + Duration(self.per_byte.0 * packet.len() as u64);
            let depart = (*free).max(now);
            let dropped = (self.drop)(now, node, next, &packet);
            self.log.push(Sent {
                at: now,
                from: node,
                to: next,
                packet: packet.clone(),
                dropped,
            });
            if !dropped {
                delivered = Some(depart);
                break;
            }
        }
        if self.mac.is_some() {
            let q = self.departures.entry((node, next)).or_default();
            while q.front().is_some_and(|&t| t <= now) {
                q.pop_front();
            }
            q.push_back(self.link_free[&(node, next)]);
        }
        let Some(depart) = delivered else {
            return;
        };
        let at = depart + self.delay;
        if self.relay_mode {
            let ev = Ev::Hop {
                node: next,
                prev: node,
                src,
                dst,
                packet,
            };
            self.push(at, ev);
        } else if let Some(to) = self.addrs.iter().position(|a| *a == dst) {
            self.push(
                at,
                Ev::Arrive {
                    to,
                    from: src,
                    packet,
                },
            );
        }
    }

    fn hop(&mut self, node: u32, prev: u32, src: Addr, dst: Addr, mut packet: Vec<u8>) {
        self.previous_hop = Some(prev);
        if node == dst.node {
            if let Some(to) = self.addrs.iter().position(|a| *a == dst) {
                self.with_agent(to, |a, c| a.on_packet(c, src, &packet));
            }
        } else {
            let mut opts = TxOpts::default();
            let mut verdict = crate::TransitVerdict::Forward;
            self.with_agent(node as usize, |a, c| {
                let mut t = crate::Transit {
                    src,
                    dst,
                    previous_hop: prev,
                    packet: &mut packet,
                    opts: &mut opts,
                };
                verdict = a.on_transit(c, &mut t);
            });
            match verdict {
                crate::TransitVerdict::Forward => {
                    self.transit[0] += 1;
                    self.previous_hop = None;
                    self.transmit(node, src, dst, packet, opts);
                }
                crate::TransitVerdict::Consumed => self.transit[1] += 1,
                crate::TransitVerdict::Drop => self.transit[2] += 1,
            }
        }
        self.previous_hop = None;
    }

    fn push(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, ev)));
    }

    fn with_agent(&mut self, i: usize, f: impl FnOnce(&mut dyn Agent, &mut Ctx)) {
        let mut agent = std::mem::replace(&mut self.agents[i], Box::new(Dummy));
        let mut ctx = Ctx { w: self, me: i };
        f(agent.as_mut(), &mut ctx);
        // The agent owns its timers: schedule an event at its earliest
        // deadline unless one is already pending at or before it.
        if let Some(at) = agent.poll_timeout() {
            let at = at.max(self.now);
            if at < self.scheduled[i] {
                self.scheduled[i] = at;
                self.push(at, Ev::Timer { agent: i, at });
            }
        }
        self.agents[i] = agent;
    }

    pub fn start(&mut self) {
        for i in (0..self.agents.len()).rev() {
            self.with_agent(i, |a, c| a.start(c));
        }
    }

    /// Process one event; false when none is left or the next is after `until`.
    pub fn step(&mut self, until: Time) -> bool {
        let Some(Reverse((t, s, ev))) = self.queue.pop() else {
            return false;
        };
        if t > until {
            self.queue.push(Reverse((t, s, ev)));
            return false;
        }
        let agent = match &ev {
            Ev::Arrive { to, .. } => Some(*to),
            Ev::Timer { agent, .. } => Some(*agent),
            Ev::Hop { .. } => None,
        };
        if let Some(later) = agent.map(|a| self.stalls.iter().fold(t, |t, st| st.defer(a, t))) {
            if later > t {
                self.queue.push(Reverse((later, s, ev)));
                return true;
            }
        }
        self.now = t;
        match ev {
            Ev::Arrive { to, from, packet } => {
                self.previous_hop = Some(from.node);
                self.with_agent(to, |a, c| a.on_packet(c, from, &packet));
                self.previous_hop = None;
            }
            Ev::Hop {
                node,
                prev,
                src,
                dst,
                packet,
            } => self.hop(node, prev, src, dst, packet),
            Ev::Timer { agent, at } => {
                if self.scheduled[agent] == at {
                    self.scheduled[agent] = Time::NEVER;
                    self.expire(agent);
                }
            }
        }
        true
    }

    /// Run until every agent is closed (true) or `until` passes (false).
    pub fn run(&mut self, until: Time) -> bool {
        while !self.agents.iter().all(|a| a.is_closed()) {
            if !self.step(until) {
                return self.agents.iter().all(|a| a.is_closed());
            }
        }
        true
    }

    /// Deliver a packet to agent `to` as if from agent `from`, now.
    pub fn inject(&mut self, from: usize, to: usize, packet: &[u8]) {
        let from = self.addrs[from];
        self.with_agent(to, |a, c| a.on_packet(c, from, packet));
    }

    /// Let agent `i` handle its timers due now (none: it only re-polls).
    pub fn expire(&mut self, i: usize) {
        let now = self.now;
        self.with_agent(i, |a, c| {
            if a.poll_timeout().is_some_and(|t| t <= now) {
                a.on_timeout(c)
            }
        });
    }

    /// Packets sent since the last call, dropping the log.
    pub fn take_log(&mut self) -> Vec<Sent> {
        std::mem::take(&mut self.log)
    }

    /// Throw away every packet in flight.
    pub fn flush_in_flight(&mut self) {
        let kept: Vec<_> = std::mem::take(&mut self.queue)
            .into_iter()
            .filter(|Reverse((_, _, e))| matches!(e, Ev::Timer { .. }))
            .collect();
        self.queue = kept.into_iter().collect();
        self.link_free.clear();
        self.departures.clear();
    }
}

/// A relay that passes every packet on untouched: the intermediate nodes
/// of a chain for protocols with no per-hop agent (TCP end to end).
#[derive(Default)]
pub(crate) struct Forwarder {
    stats: crate::stats::TransportStats,
}

impl Agent for Forwarder {
    fn protocol(&self) -> &'static str {
        "forwarder"
    }
    fn start(&mut self, _: &mut dyn Net) {}
    fn on_packet(&mut self, _: &mut dyn Net, _: Addr, _: &[u8]) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _: &mut dyn Net) {}
    fn stats(&self) -> &crate::stats::TransportStats {
        &self.stats
    }
    fn is_closed(&self) -> bool {
        true
    }
}

struct Dummy;
impl Agent for Dummy {
    fn protocol(&self) -> &'static str {
        "dummy"
    }
    fn start(&mut self, _: &mut dyn Net) {}
    fn on_packet(&mut self, _: &mut dyn Net, _: Addr, _: &[u8]) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _: &mut dyn Net) {}
    fn stats(&self) -> &crate::stats::TransportStats {
        unimplemented!()
    }
    fn is_closed(&self) -> bool {
        true
    }
}

pub(crate) struct Ctx<'a> {
    w: &'a mut World,
    me: usize,
}

impl Net for Ctx<'_> {
    fn now(&self) -> Time {
        self.w.now
    }
    fn local(&self) -> Addr {
        self.w.addrs[self.me]
    }
    fn send(&mut self, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        let from = self.w.addrs[self.me];
        self.w.transmit(from.node, from, to, packet, opts);
    }
    fn send_as(&mut self, from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        let node = self.w.addrs[self.me].node;
        self.w.transmit(node, from, to, packet, opts);
    }
    fn previous_hop(&self) -> Option<NodeId> {
        self.w.previous_hop
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        &mut self.w.rng
    }
    fn app_read(&mut self, buf: &mut [u8]) -> AppRead {
        if self.me != 0 {
            return AppRead::Finished;
        }
        let left = self.w.source.len() - self.w.source_pos;
        if left == 0 {
            return AppRead::Finished;
        }
        let n = left.min(buf.len()).min(self.w.chunk);
        buf[..n].copy_from_slice(&self.w.source[self.w.source_pos..self.w.source_pos + n]);
        self.w.source_pos += n;
        AppRead::Data(n)
    }
    fn deliver(&mut self, data: &[u8]) {
        self.w.delivered.extend_from_slice(data);
    }
    fn deliver_finished(&mut self) {
        // Only the sink's end of stream counts (a TCP client also sees the
        // end of its peer's empty stream).
        if self.me + 1 == self.w.agents.len() {
            self.w.finished += 1;
        }
    }
    fn event(&mut self, event: TransportEvent) {
        self.w.events.push((self.me, event));
    }
    /// Every destination is one hop away, except on a chain with link
    /// information ([`World::links`], [`World::mac`]), where the next hop is
    /// the neighbour on the line toward it (so `Net::link` describes the
    /// right link). Hops left stay 1 there too: JTP's tests read them as
    /// they always were.
    fn route(&self, dst: u32) -> Option<Route> {
        let me = self.w.addrs[self.me].node;
        let informed = self.w.links.is_some() || self.w.mac.is_some();
        let next_hop = match (self.w.relay_mode && informed, dst.cmp(&me)) {
            (true, std::cmp::Ordering::Greater) => me + 1,
            (true, std::cmp::Ordering::Less) => me - 1,
            _ => dst,
        };
        Some(Route { next_hop, hops: 1 })
    }
    fn link(&self, neighbour: u32) -> Option<LinkInfo> {
        let me = self.w.addrs[self.me].node;
        if let Some(f) = &self.w.links {
            return f(me, neighbour);
        }
        self.w.mac?;
        let now = self.w.now;
        let queue_len = self
            .w
            .departures
            .get(&(me, neighbour))
            .map_or(0, |q| q.iter().filter(|&&t| t > now).count());
        Some(LinkInfo {
            rate_bps: 8_000_000_000 / self.w.per_byte.0.max(1),
            up: true,
            queue_len,
            ..LinkInfo::default()
        })
    }
    fn radio(&mut self) -> &mut dyn RadioControl {
        &mut self.w.radio
    }
}

/// A deterministic byte pattern of length `n`.
pub(crate) fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}
