//! The simulator's world apart from the agents: clock, event queue, links,
//! radios, nodes and routes. Agents reach it only through [`crate::ctx::Ctx`].

use std::collections::VecDeque;

use joulenet_channel::battery::Battery;
use joulenet_channel::loss::FrameInfo;
use joulenet_channel::radio::{FrameRole, RadioLedger};
use joulenet_proto::{Addr, Duration, NodeId, RadioMode, Time};

use crate::app::DelayLog;
use crate::event::{AgentIndex, Event, EventQueue, Slot};
use crate::frame::Frame;
use crate::link::{Exchange, LinkIndex, Transmitter};
use crate::pcap::Capture;

/// What deciding one frame's exchange needs of its link.
struct ExchangeParams {
    rate_bps: u64,
    delay: Duration,
    arq: Option<crate::link::Arq>,
    down: bool,
    overhead: u32,
    frame_time: Duration,
}

/// A node's state beyond its links.
#[derive(Debug, Default)]
pub struct NodeState {
    pub radios: Vec<u32>,
    /// Outgoing link directions, in interface order.
    pub links_out: Vec<LinkIndex>,
    pub battery: Option<Battery>,
    pub died_at: Option<Time>,
    /// Packets that arrived for a port with no agent, or had no route.
    pub unroutable: u64,
    pub forwarded: u64,
    /// Relay agents living here, by relay class (made lazily).
    pub relays: Vec<(u16, crate::event::AgentIndex)>,
    /// Packets in transit that relays here passed on, took, and dropped.
    pub transit_forwarded: u64,
    pub transit_consumed: u64,
    pub transit_dropped: u64,
    /// Application calls by relays here (a relay has no application).
    pub relay_app_calls: u64,
    /// What the agents of each relay class share here
    /// (`Net::node_shared`).
    pub shared: NodeShared,
}

/// The state the agents of one relay class share on a node, by class: made
/// by the agents (`Net::node_shared`), lost with the node.
#[derive(Default)]
pub struct NodeShared(pub Vec<(u16, Option<Box<dyn std::any::Any>>)>);

impl std::fmt::Debug for NodeShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeShared({} classes)", self.0.len())
    }
}

impl NodeShared {
    /// The slot of relay class `class`, made empty on first use.
    pub fn slot(&mut self, class: u16) -> &mut Option<Box<dyn std::any::Any>> {
        let i = match self.0.iter().position(|(c, _)| *c == class) {
            Some(i) => i,
            None => {
                self.0.push((class, None));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
}

impl NodeState {
    pub fn alive(&self) -> bool {
        self.died_at.is_none()
    }
}

/// Per-flow observations kept outside the protocol: generation times of the
/// bytes in flight, one log per direction (0 = client to server).
#[derive(Debug, Default)]
pub struct FlowObserver {
    pub logs: [DelayLog; 2],
}

pub struct Core {
    pub now: Time,
    pub queue: EventQueue,
    pub links: Vec<Transmitter>,
    pub radios: Vec<RadioLedger>,
    /// Which node each radio belongs to.
    pub radio_node: Vec<NodeId>,
    pub nodes: Vec<NodeState>,
    /// `next_link[node][dst]`: the outgoing link direction toward `dst`.
    pub next_link: Vec<Vec<Option<LinkIndex>>>,
    pub hop_count: Vec<Vec<u32>>,
    /// Agents bound on each node: (port, agent). A node has few agents, so
    /// a scan beats hashing on the per-packet path.
    pub ports: Vec<Vec<(u16, AgentIndex)>>,
    /// Per node, how many of its agents (bound endpoints and living
    /// relays) hear overheard frames (`Agent::hears_overheard`): the
    /// medium copies a frame it overhears only for a node that has one.
    pub overhearing: Vec<u32>,
    pub flows: Vec<FlowObserver>,
    pub loopback: VecDeque<Frame>,
    pool: Vec<Vec<u8>>,
    pub capture: Option<Capture>,
    /// The shared wireless medium, when the topology has one.
    pub medium: Option<Box<crate::medium::Medium>>,
    /// Explicit loss notification (`crate::link_hooks`): frames lost on a
    /// wireless last hop, kept until their would-be arrival time.
    pub eln: crate::link_hooks::ElnReports,
    /// Policy routes (source/port rules, as `ip rule` on a multi-homed
    /// host), consulted before `next_link` only when there are any.
    pub policy: Vec<PolicyRoute>,
}

/// At `node`, a frame from port `src_port` to `dst` (node and port) leaves
/// by `link`, whatever `next_link` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyRoute {
    pub node: NodeId,
    pub src_port: u16,
    pub dst: Addr,
    pub link: LinkIndex,
}

const POOL_LIMIT: usize = 4096;

impl Core {
    pub fn new(
        links: Vec<Transmitter>,
        radios: Vec<RadioLedger>,
        radio_node: Vec<NodeId>,
        nodes: Vec<NodeState>,
    ) -> Core {
        let n = nodes.len();
        let mut core = Core {
            now: Time::ZERO,
            queue: EventQueue::new(),
            links,
            radios,
            radio_node,
            nodes,
            next_link: vec![vec![None; n]; n],
            hop_count: vec![vec![u32::MAX; n]; n],
            ports: vec![Vec::new(); n],
            overhearing: vec![0; n],
            flows: Vec::new(),
            loopback: VecDeque::new(),
            pool: Vec::new(),
            capture: None,
            medium: None,
            eln: Default::default(),
            policy: Vec::new(),
        };
        core.compute_routes();
        core
    }

    /// Shortest paths by hop count (breadth-first from every node), ties
    /// broken by link order so routes are deterministic.
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        for src in 0..n {
            let mut first = vec![None; n];
            let mut dist = vec![u32::MAX; n];
            dist[src] = 0;
            let mut frontier = VecDeque::from([src]);
            while let Some(u) = frontier.pop_front() {
                for &l in &self.nodes[u].links_out {
                    let v = self.links[l as usize].to as usize;
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u] + 1;
                        first[v] = if u == src { Some(l) } else { first[u] };
                        frontier.push_back(v);
                    }
                }
            }
            self.next_link[src] = first;
            self.hop_count[src] = dist;
        }
    }

    /// Pin a connection between `local` and `remote` to the interface of
    /// `local`'s node toward its neighbour `via`, both ways: `local` →
    /// `via` → (shortest route avoiding `local`'s node) → `remote`, and
    /// back along the shortest route from `remote` to `via` avoiding it,
    /// then `via` → `local`. Installs one policy route per node on the way
    /// (as `ip rule` on a multi-homed host, matching ports); `Err` says why
    /// no such path exists.
    pub fn pin_path(&mut self, local: Addr, via: NodeId, remote: Addr) -> Result<(), String> {
        let link = |from: NodeId, to: NodeId| {
            self.nodes[from as usize]
                .links_out
                .iter()
                .copied()
                .find(|&l| self.links[l as usize].to == to)
                .ok_or_else(|| format!("node {to} is not a neighbour of node {from}"))
        };
        let (out_link, in_link) = (link(local.node, via)?, link(via, local.node)?);
        let between = |from: NodeId, to: NodeId| {
            if from == to {
                return Ok(Vec::new());
            }
            self.path_avoiding(from, to, local.node).ok_or_else(|| {
                format!(
                    "no path from node {from} to node {to} avoiding node {}",
                    local.node
                )
            })
        };
        let mut out = vec![(local.node, out_link)];
        out.extend(between(via, remote.node)?);
        let mut back = between(remote.node, via)?;
        back.push((via, in_link));
        for (hops, src_port, dst) in [(out, local.port, remote), (back, remote.port, local)] {
            for (node, link) in hops {
                let rule = PolicyRoute {
                    node,
                    src_port,
                    dst,
                    link,
                };
                self.policy.retain(|p| {
                    !(p.node == rule.node && p.src_port == rule.src_port && p.dst == rule.dst)
                });
                self.policy.push(rule);
            }
        }
        Ok(())
    }

    /// The shortest path (hop count, ties by link order) from `from` to
    /// `to` that never enters `avoid`: (node, outgoing link) per hop.
    fn path_avoiding(
        &self,
        from: NodeId,
        to: NodeId,
        avoid: NodeId,
    ) -> Option<Vec<(NodeId, LinkIndex)>> {
        let n = self.nodes.len();
        let mut came: Vec<Option<LinkIndex>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[from as usize] = true;
        seen[avoid as usize] = true;
        let mut frontier = VecDeque::from([from]);
        while let Some(u) = frontier.pop_front() {
            if u == to {
                break;
            }
            for &l in &self.nodes[u as usize].links_out {
                let v = self.links[l as usize].to;
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    came[v as usize] = Some(l);
                    frontier.push_back(v);
                }
            }
        }
        let mut hops = Vec::new();
        let mut at = to;
        while at != from {
            let l = came[at as usize]?;
            let prev = self.links[l as usize].from;
            hops.push((prev, l));
            at = prev;
        }
        hops.reverse();
        Some(hops)
    }

    /// Bind `agent` to `addr`; `overhears` if it hears overheard frames.
    pub fn bind(&mut self, addr: Addr, agent: AgentIndex, overhears: bool) {
        self.ports[addr.node as usize].push((addr.port, agent));
        self.overhearing[addr.node as usize] += overhears as u32;
    }

    /// The agent bound to `addr`, if any.
    pub fn agent_at(&self, addr: Addr) -> Option<AgentIndex> {
        self.ports
            .get(addr.node as usize)?
            .iter()
            .find(|(p, _)| *p == addr.port)
            .map(|&(_, a)| a)
    }

    // `buffer` and `recycle`: every packet takes a buffer from the pool
    // and gives it back; inlined, each is a few instructions.
    #[inline]
    pub fn buffer(&mut self) -> Vec<u8> {
        self.pool.pop().unwrap_or_else(|| Vec::with_capacity(2048))
    }

    #[inline]
    pub fn recycle(&mut self, mut packet: Vec<u8>) {
        if self.pool.len() < POOL_LIMIT && packet.capacity() >= 1024 {
            packet.clear();
            self.pool.push(packet);
        }
    }

    /// A node hands a frame to the network layer: deliver locally or route.
    // `send_from`, `forward`, `enqueue` and `arrival` are `#[inline]`:
    // every frame passes through them, and a frame (~90 bytes) passed by
    // value was copied at each call that stayed a call.
    #[inline]
    pub fn send_from(&mut self, node: NodeId, frame: Frame) {
        if !self.nodes[node as usize].alive() {
            self.recycle(frame.packet);
            return;
        }
        if frame.dst.node == node {
            self.loopback.push_back(frame);
            self.queue.push(self.now, Event::Loopback);
            return;
        }
        self.forward(node, frame);
    }

    /// A node hands a frame to one neighbour, `via`, whatever the routes
    /// say (`Net::send_link_local`): over the node's wired link to `via` if
    /// it has one, else over the medium if there is one (a topology may mix
    /// both, as `medium_forward` does); routed as `send_from` would where
    /// neither reaches `via`.
    pub fn send_link_local(&mut self, node: NodeId, via: NodeId, mut frame: Frame) {
        if !self.nodes[node as usize].alive() {
            self.recycle(frame.packet);
            return;
        }
        if via == node {
            return self.send_from(node, frame);
        }
        frame.prev = node;
        let wired = self.nodes[node as usize]
            .links_out
            .iter()
            .copied()
            .find(|&l| self.links[l as usize].to == via);
        if let Some(l) = wired {
            return self.enqueue(l, frame);
        }
        if let Some(mut m) = self.medium.take() {
            frame.hops += 1;
            m.enqueue(self, node, frame, via);
            self.medium = Some(m);
            return;
        }
        self.forward(node, frame);
    }

    /// Route a frame one hop further from `node`.
    #[inline]
    pub fn forward(&mut self, node: NodeId, mut frame: Frame) {
        frame.prev = node;
        // Only a network with a medium hands the frame there and back: on
        // wired links the frame (~90 bytes) is not moved twice more.
        if self.medium.is_some() {
            match self.medium_forward(node, frame) {
                Some(back) => frame = back,
                None => return,
            }
        }
        if !self.policy.is_empty() {
            return self.forward_pinned(node, frame);
        }
        let next = self
            .next_link
            .get(node as usize)
            .and_then(|r| r.get(frame.dst.node as usize))
            .copied()
            .flatten();
        match next {
            Some(l) => self.enqueue(l, frame),
            None => {
                self.nodes[node as usize].unroutable += 1;
                self.recycle(frame.packet);
            }
        }
    }

    /// `forward` in a network with policy routes. Out of line, so that the
    /// usual path stays as it was.
    #[cold]
    #[inline(never)]
    fn forward_pinned(&mut self, node: NodeId, frame: Frame) {
        match self.out_link(node, frame.src, frame.dst) {
            Some(l) => self.enqueue(l, frame),
            None => {
                self.nodes[node as usize].unroutable += 1;
                self.recycle(frame.packet);
            }
        }
    }

    /// The link a frame from `src` to `dst` leaves `node` by: a policy
    /// route if one matches, else the route by destination.
    pub fn out_link(&self, node: NodeId, src: Addr, dst: Addr) -> Option<LinkIndex> {
        self.policy_link(node, src, dst).or_else(|| {
            self.next_link
                .get(node as usize)
                .and_then(|r| r.get(dst.node as usize))
                .copied()
                .flatten()
        })
    }

    /// The policy route's link for a frame, if one matches.
    fn policy_link(&self, node: NodeId, src: Addr, dst: Addr) -> Option<LinkIndex> {
        self.policy
            .iter()
            .find(|p| p.node == node && p.dst == dst && p.src_port == src.port)
            .map(|p| p.link)
    }

    #[inline]
    pub fn enqueue(&mut self, l: LinkIndex, frame: Frame) {
        let now = self.now;
        let link = &mut self.links[l as usize];
        let busy = link.free_at > now;
        if busy || !link.queue.is_empty() {
            if link.queue.len() >= link.params.queue_limit {
                link.counters.queue_drops += 1;
                self.recycle(frame.packet);
                return;
            }
            // The first frame to wait behind a transmission asks for the
            // transmitter's end; a non-empty queue already has it asked for
            // (or waits for its radio to wake, `set_radio_mode`).
            let first_behind = busy && link.queue.is_empty();
            link.queue.push_back(frame);
            link.counters.peak_queue = link.counters.peak_queue.max(link.queue.len());
            if first_behind {
                let at = link.free_at;
                self.queue.push(at, Event::TransmitDone(l));
            }
            return;
        }
        self.transmit(l, frame);
    }

    /// The transmitter of `l` is free again: send the next queued frame.
    pub fn transmit_done(&mut self, l: LinkIndex) {
        let link = &mut self.links[l as usize];
        // Stale: a queue drained (node death) and refilled asked twice for
        // the same end, and the first answer already started the next frame.
        if link.free_at > self.now {
            return;
        }
        if let Some(frame) = link.queue.pop_front() {
            self.transmit(l, frame);
        }
    }

    fn radio_usable(&self, radio: Option<u32>, t: Time) -> bool {
        radio.is_none_or(|r| self.radios[r as usize].usable_at(t))
    }

    fn transmit(&mut self, l: LinkIndex, frame: Frame) {
        let now = self.now;
        let (from_radio, from) = {
            let link = &self.links[l as usize];
            (link.from_radio, link.from)
        };
        if !self.radio_usable(from_radio, now) || !self.nodes[from as usize].alive() {
            // Asleep: hold the frame until the radio wakes (see `radio_woke`).
            let link = &mut self.links[l as usize];
            link.queue.push_front(frame);
            return;
        }
        if let Some(c) = self.capture.as_mut() {
            c.record(now, from, l, &frame);
        }
        let exchange = self.exchange(l, &frame);
        let link = &mut self.links[l as usize];
        link.free_at = exchange.done_at;
        link.counters.frames_offered += 1;
        link.counters.busy_time += exchange.done_at - now;
        // The end of a transmission is an event only if a frame waits for
        // it: otherwise the next `enqueue` finds the transmitter free by
        // its clock (one event fewer per frame on an uncongested link).
        if !link.queue.is_empty() {
            self.queue.push(exchange.done_at, Event::TransmitDone(l));
        }
        match exchange.delivered_at {
            Some(at) => {
                let at = link.jittered(at);
                link.in_flight.push_back((at, frame));
                if link.in_flight.len() == 1 {
                    self.queue.push(at, Event::Arrival(l));
                }
            }
            None => {
                link.counters.frames_lost += 1;
                let to_radio = link.to_radio;
                let arrive = exchange.done_at + link.params.delay;
                let reported = link.wireless
                    && link.to == frame.dst.node
                    && self.radio_usable(to_radio, arrive)
                    && self.eln.wants(frame.dst);
                if reported {
                    self.eln.push(arrive, frame);
                    self.queue.push(arrive, Event::Corrupted);
                } else {
                    self.recycle(frame.packet);
                }
            }
        }
    }

    /// Decide, when a frame starts, every attempt of its transmission: the
    /// channel is a function of time, so the outcome is known now. Radio
    /// activity is registered with the ledgers before it starts.
    fn exchange(&mut self, l: LinkIndex, frame: &Frame) -> Exchange {
        let now = self.now;
        let li = l as usize;
        // Only the scalars: the link's downtime schedule stays where it is.
        let p = &self.links[li].params;
        let params = ExchangeParams {
            rate_bps: p.rate_bps,
            delay: p.delay,
            arq: p.arq,
            down: p.down.is_down(now),
            overhead: p.overhead_bytes,
            frame_time: p.frame_time,
        };
        let (from_radio, to_radio, reverse) = (
            self.links[li].from_radio,
            self.links[li].to_radio,
            self.links[li].reverse,
        );
        let receiver_listening = self.radio_usable(to_radio, now + params.delay);
        let bits = (frame.network_len() as u64 + params.overhead as u64) * 8;
        let t_frame = params.frame_time + Duration::transmission(bits, params.rate_bps);
        let d = params.delay;
        // A link that is down (`link_schedule`) loses what starts on it.
        let down = params.down;
        let Some(arq) = params.arq else {
            let lost = down
                || self.links[li].loss.is_lost(
                    now,
                    &FrameInfo {
                        tx_start: now,
                        tx_end: now + t_frame,
                        bits,
                    },
                );
            self.count_attempt(li, bits, lost);
            // A wired link has no radio to account for.
            if from_radio.is_some() || to_radio.is_some() {
                self.register(from_radio, to_radio, now, t_frame, d, receiver_listening);
                let heard = receiver_listening.then_some(lost);
                self.charge_frame(from_radio, to_radio, (bits / 8) as u32, t_frame, heard);
            }
            let delivered = (!lost && receiver_listening).then_some(now + t_frame + d);
            return Exchange {
                delivered_at: delivered,
                done_at: now + t_frame,
            };
        };
        let attempts = frame.opts.link_attempts.unwrap_or(arq.max_attempts).max(1);
        let ack_bits = arq.ack_bytes as u64 * 8;
        let t_ack = params.frame_time + Duration::transmission(ack_bits, params.rate_bps);
        let ack_timeout = d + arq.sifs + t_ack + d;
        let mut start = now;
        let mut delivered = None;
        for _ in 0..attempts {
            let lost = down
                || self.links[li].loss.is_lost(
                    now,
                    &FrameInfo {
                        tx_start: start,
                        tx_end: start + t_frame,
                        bits,
                    },
                );
            self.count_attempt(li, bits, lost);
            self.register(from_radio, to_radio, start, t_frame, d, receiver_listening);
            let heard = receiver_listening.then_some(lost);
            self.charge_frame(from_radio, to_radio, (bits / 8) as u32, t_frame, heard);
            if lost || !receiver_listening {
                start = start + t_frame + ack_timeout;
                continue;
            }
            delivered.get_or_insert(start + t_frame + d);
            let ack_start = start + t_frame + d + arq.sifs;
            let ack_lost = self.links[reverse as usize].loss.is_lost(
                now,
                &FrameInfo {
                    tx_start: ack_start,
                    tx_end: ack_start + t_ack,
                    bits: ack_bits,
                },
            );
            self.register(to_radio, from_radio, ack_start, t_ack, d, true);
            let c = &mut self.links[li].counters;
            c.link_acks += 1;
            if !ack_lost {
                return Exchange {
                    delivered_at: delivered,
                    done_at: ack_start + t_ack + d,
                };
            }
            c.link_acks_lost += 1;
            start = start + t_frame + ack_timeout;
        }
        Exchange {
            delivered_at: delivered,
            done_at: start,
        }
    }

    fn count_attempt(&mut self, li: usize, bits: u64, lost: bool) {
        let c = &mut self.links[li].counters;
        c.attempts += 1;
        c.bytes_on_air += bits / 8;
        c.attempts_lost += lost as u64;
    }

    /// Charge one data frame's per-frame energy: sent by `tx`, and received
    /// (`heard = Some(false)`) or discarded as lost (`Some(true)`) by `rx`
    /// if it listened. Link ACKs cost only their airtime.
    fn charge_frame(
        &mut self,
        tx: Option<u32>,
        rx: Option<u32>,
        bytes: u32,
        airtime: Duration,
        heard: Option<bool>,
    ) {
        if let Some(r) = tx {
            self.radios[r as usize].add_frame(FrameRole::Send, bytes, airtime);
        }
        if let (Some(r), Some(lost)) = (rx, heard) {
            let role = match lost {
                true => FrameRole::Discarded,
                false => FrameRole::Receive,
            };
            self.radios[r as usize].add_frame(role, bytes, airtime);
        }
    }

    /// Register one transmission of `airtime` starting at `start` with the
    /// sending radio and, if it listens, the receiving radio.
    fn register(
        &mut self,
        tx: Option<u32>,
        rx: Option<u32>,
        start: Time,
        airtime: Duration,
        delay: Duration,
        rx_listening: bool,
    ) {
        if let Some(r) = tx {
            self.radios[r as usize].add_tx(start, start + airtime);
        }
        if let (Some(r), true) = (rx, rx_listening) {
            self.radios[r as usize].add_rx(start + delay, start + delay + airtime);
        }
    }

    /// The oldest frame in flight on `l` arrives now. Returns it if the
    /// receiving node can take it, and the place in the order of events of
    /// the next frame's arrival if one is in flight: the caller queues
    /// `Event::Arrival(l)` there, or handles it directly when it is next
    /// (`Simulation::arrivals`).
    #[inline]
    pub fn arrival(&mut self, l: LinkIndex) -> (Option<Frame>, Option<Slot>) {
        let link = &mut self.links[l as usize];
        let Some((at, frame)) = link.in_flight.pop_front() else {
            return (None, None);
        };
        debug_assert_eq!(at, self.now);
        let next = link
            .in_flight
            .front()
            .map(|&(next, _)| self.queue.reserve(next));
        let (to, to_radio) = (link.to, link.to_radio);
        let listening = self.radio_usable(to_radio, self.now) && self.nodes[to as usize].alive();
        if !listening {
            self.links[l as usize].counters.frames_missed += 1;
            self.recycle(frame.packet);
            return (None, next);
        }
        self.links[l as usize].counters.frames_delivered += 1;
        if let Some(c) = self.capture.as_mut() {
            c.record(self.now, to, l, &frame);
        }
        (Some(frame), next)
    }

    /// Bring every radio's energy integration up to now.
    pub fn advance_radios(&mut self) {
        let now = self.now;
        for r in &mut self.radios {
            r.advance(now);
        }
    }

    /// Energy a node's radios have used so far.
    pub fn node_energy(&mut self, node: NodeId) -> f64 {
        let now = self.now;
        let radios = self.nodes[node as usize].radios.clone();
        radios
            .iter()
            .map(|&r| {
                let ledger = &mut self.radios[r as usize];
                ledger.advance(now);
                ledger.consumed_j()
            })
            .sum()
    }

    /// Switch every radio of `node` to `mode`; restart transmitters when they
    /// become usable again.
    pub fn set_radio_mode(&mut self, node: NodeId, mode: RadioMode) {
        let now = self.now;
        let radios = self.nodes[node as usize].radios.clone();
        let mut usable = now;
        for r in radios {
            let ledger = &mut self.radios[r as usize];
            ledger.advance(now);
            usable = usable.max(ledger.set_mode(now, mode));
        }
        if mode == RadioMode::Awake {
            self.medium_wake(node);
            for l in self.nodes[node as usize].links_out.clone() {
                let link = &self.links[l as usize];
                if link.free_at <= now && !link.queue.is_empty() {
                    self.links[l as usize].free_at = usable;
                    self.queue.push(usable, Event::TransmitDone(l));
                }
            }
        }
    }

    /// The battery of `node` ran out now: its radios go off for good and
    /// everything it had queued is lost.
    pub fn kill_node(&mut self, node: NodeId) {
        self.set_radio_mode(node, RadioMode::Off);
        self.nodes[node as usize].died_at = Some(self.now);
        self.nodes[node as usize].shared.0.clear();
        self.medium_kill(node);
        for l in self.nodes[node as usize].links_out.clone() {
            let drained: Vec<Frame> = self.links[l as usize].queue.drain(..).collect();
            for f in drained {
                self.recycle(f.packet);
            }
        }
    }
}
