//! The shared medium's engine: on-air transmissions, reception and
//! collisions at each receiver, carrier sense, and the 802.11 DCF state
//! machine of every station.
//!
//! Model (see docs/scenarios.md, `[medium]`):
//! * A transmission from s reaches every node r within `range` (PER from
//!   the reception curve), is sensed by every node within
//!   `carrier_sense_range`, and interferes at every node within
//!   `interference_range`. A receiver locks onto the first frame that
//!   reaches it while it is neither transmitting nor locked; that reception
//!   fails if any other transmission within interference range of the
//!   receiver overlaps it, or if the receiver starts transmitting. With a
//!   capture threshold, it fails only when the overlapping power comes
//!   within the threshold of its own, and a frame that far above all else
//!   on the air takes the receiver over. Hidden terminals arise from the
//!   geometry alone.
//! * Propagation delay is neglected by default (under 2 µs at these
//!   ranges, below a slot's CCA allowance; stations whose backoff ends in
//!   the same slot collide). When modelled, each node starts and stops
//!   hearing a transmission distance / c later (`Arrive`/`Depart` events);
//!   a frame whose sender is done with it while it still propagates is
//!   kept with its transmission (`stash`).
//! * DCF: DIFS (AIFS) then a backoff of uniform [0, CW] slots, frozen while
//!   the medium is busy (physical or virtual carrier sense through the NAV),
//!   EIFS after a frame that could not be decoded, binary exponential
//!   backoff on a missing ACK/CTS, retry limit per frame, post-backoff after
//!   every exchange, immediate access when a frame arrives at an idle
//!   station whose medium has been idle for DIFS.

use std::collections::VecDeque;

use joulenet_proto::{Duration, LinkInfo, NodeId, Time};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::phy::{self, AcParams};
use super::routing::Routes;
use super::{MediumEvent, MediumSpec, MediumStats, BROADCAST};
use crate::core::Core;
use crate::event::Event;
use crate::frame::Frame;
use crate::rng::Streams;

mod advertise;
mod air;

use air::{delay_matrix, near_lists, power_matrix, LIGHT};

const RX: u8 = 1;
const CS: u8 = 2;
const INTF: u8 = 4;

/// Longest burst for frames sent with `TxOpts::burst` when the medium has
/// no TXOP limit of its own (the Hop paper's 8160 µs).
pub const BURST_TXOP: Duration = Duration::from_micros(8160);

/// What the medium hands back to the simulation after an event.
#[derive(Debug)]
pub enum Out {
    /// A data frame reached `node` (its next hop or final destination).
    Deliver(NodeId, Frame),
    /// `node` overheard a data frame addressed to another node.
    /// A frame for another node that this node heard (promiscuous).
    Overheard(NodeId, Frame),
}

struct Queued {
    frame: Frame,
    next: NodeId,
    seq: u16,
    /// Attempts allowed, including the first.
    attempts: u8,
    /// A link-state advertisement (handled by the medium, not delivered).
    lsa: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Data,
    Ack,
    Rts,
    Cts,
}

struct Air {
    src: NodeId,
    dst: NodeId,
    kind: Kind,
    nav_end: Time,
    bytes: u32,
    seq: u16,
    wants_ack: bool,
    /// The intended receiver was in range but busy (locked onto another
    /// frame, or transmitting) when this frame began.
    dst_missed: bool,
    /// Receivers locked onto this frame and whether it is still intact.
    rx: Vec<(NodeId, bool)>,
    /// The nodes that sensed or were interfered with when it started
    /// (positions may change before it ends).
    sensed: Vec<(NodeId, u8)>,
    /// When the sender stops transmitting.
    end: Time,
    /// Receivers it has yet to stop reaching (propagation delay).
    pending: u32,
    /// The frame, once its sender is done with it while it still
    /// propagates (no ACK awaited), and whether it is an advertisement.
    stash: Option<(Frame, bool)>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Waiting {
    Nothing,
    Ack,
    Cts,
}

#[derive(Copy, Clone, Debug)]
enum Response {
    Ack {
        to: NodeId,
    },
    Cts {
        to: NodeId,
        nav_end: Time,
    },
    /// The head data frame (after a CTS, or the next frame of a TXOP).
    Data,
}

/// Per-neighbour link statistics, as `Net::link` reports them.
#[derive(Clone, Debug, Default)]
struct Nbr {
    node: NodeId,
    attempts: u64,
    acked: u64,
}

/// One EDCA backoff entity (a single one, index 2, under plain DCF).
struct Ac {
    queue: VecDeque<Queued>,
    p: AcParams,
    /// AIFS = SIFS + AIFSN slots.
    aifs: Duration,
    backoff: Option<u32>,
    cw: u32,
    retries: u8,
    gen: u32,
    scheduled: bool,
    access_at: Time,
    countdown_start: Time,
}

struct Station {
    radio: u32,
    acs: [Ac; 4],
    /// In a frame exchange (transmitting or waiting for the answer) for
    /// access category `cur`, which started at `exchange_start`.
    exchange: bool,
    cur: usize,
    exchange_start: Time,
    busy: u32,
    intf: u32,
    nav: Time,
    idle_since: Time,
    sensing_idle: bool,
    eifs: bool,
    tx_active: bool,
    locked: Option<u32>,
    waiting: Waiting,
    tgen: u32,
    response: Option<Response>,
    rgen: u32,
    txop_start: Option<Time>,
    next_seq: u16,
    last_seq: Vec<(NodeId, u16)>,
    rng: Pcg64Mcg,
    loss_rng: Pcg64Mcg,
    nbrs: Vec<Nbr>,
    tx_airtime: Duration,
    /// Data frames this station put on the air (retransmissions included),
    /// their bytes, and data frames delivered to it as next hop.
    frames_sent: u64,
    bytes_on_air: u64,
    frames_received: u64,
    /// Its latest transmission.
    last_air: u32,
}

pub struct Medium {
    pub spec: MediumSpec,
    n: usize,
    per: Vec<f32>,
    /// PER in the bad path-loss state (empty without fading).
    per_bad: Vec<f32>,
    near: Vec<Vec<(NodeId, u8)>>,
    pub(super) up: Vec<bool>,
    pub(super) down_count: Vec<u32>,
    /// Routes of the complete network, for DTN next hops.
    all_up_routes: Option<Routes>,
    pub(super) dyn_: super::dynamics::Dynamics,
    pub(super) tdma: Option<super::tdma::Tdma>,
    /// Per-node link-state views (over-the-air advertisements).
    pub(super) ls: Option<super::link_state::LinkStateViews>,
    /// Advertisements decoded during a transmission's end, to flood on.
    lsa_flood: Vec<(usize, Vec<u8>)>,
    st: Vec<Station>,
    air: Vec<Option<Air>>,
    free: Vec<u32>,
    pub routes: Routes,
    pub stats: MediumStats,
    pub out: Vec<Out>,
    slot: Duration,
    sifs: Duration,
    eifs: Duration,
    ack_t: Duration,
    cts_t: Duration,
    rts_t: Duration,
    scratch: Vec<NodeId>,
    /// Propagation delay in ns per ordered pair (empty: not modelled).
    delay: Vec<u32>,
    /// Twice the propagation delay over the range, added to the ACK/CTS
    /// timeout (802.11's coverage class).
    round_trip: Duration,
    /// Relative received power per ordered pair (empty without capture).
    power: Vec<f32>,
    /// Total power of the interfering transmissions reaching each node.
    intf_power: Vec<f64>,
    rx_pool: Vec<Vec<(NodeId, bool)>>,
    sensed_pool: Vec<Vec<(NodeId, u8)>>,
}

impl Medium {
    /// `radios[i]` is node i's radio in the core's ledgers.
    pub fn new(spec: &MediumSpec, radios: &[u32], streams: &Streams) -> Medium {
        let n = spec.positions.len();
        let per = spec.per_matrix();
        let near = near_lists(spec, &per);
        let params = phy::edca_params(&spec.phy, spec.txop, spec.edca);
        let phy = &spec.phy;
        let ac = |p: AcParams| Ac {
            queue: VecDeque::new(),
            p,
            aifs: phy.sifs + phy.slot.saturating_mul(p.aifsn as u64),
            backoff: None,
            cw: p.cw_min,
            retries: 0,
            gen: 0,
            scheduled: false,
            access_at: Time::ZERO,
            countdown_start: Time::ZERO,
        };
        let st = (0..n)
            .map(|i| Station {
                radio: radios[i],
                acs: params.map(ac),
                exchange: false,
                cur: 2,
                exchange_start: Time::ZERO,
                busy: 0,
                intf: 0,
                nav: Time::ZERO,
                idle_since: Time::ZERO,
                sensing_idle: true,
                eifs: false,
                tx_active: false,
                locked: None,
                waiting: Waiting::Nothing,
                tgen: 0,
                response: None,
                rgen: 0,
                txop_start: None,
                next_seq: 0,
                last_seq: Vec::new(),
                rng: streams.stream(&format!("medium/{i}/backoff")),
                loss_rng: streams.stream(&format!("medium/{i}/reception")),
                nbrs: Vec::new(),
                tx_airtime: Duration::ZERO,
                frames_sent: 0,
                bytes_on_air: 0,
                frames_received: 0,
                last_air: u32::MAX,
            })
            .collect();
        let up = vec![true; n];
        let routes = Routes::compute(&per, n, spec.metric, &up);
        Medium {
            all_up_routes: (spec.routing == super::Routing::Dtn).then(|| routes.clone()),
            routes,
            n,
            per_bad: spec
                .fading
                .map(|f| spec.per_matrix_with_loss(f.extra_loss_db))
                .unwrap_or_default(),
            per,
            near,
            up,
            down_count: vec![0; n],
            dyn_: Default::default(),
            tdma: None,
            ls: None,
            lsa_flood: Vec::new(),
            st,
            air: Vec::new(),
            free: Vec::new(),
            stats: MediumStats::default(),
            out: Vec::new(),
            slot: phy.slot,
            sifs: phy.sifs,
            eifs: phy.eifs(),
            ack_t: phy.ack_airtime(),
            cts_t: phy.control_airtime(phy::CTS_BYTES),
            rts_t: phy.control_airtime(phy::RTS_BYTES),
            scratch: Vec::new(),
            delay: delay_matrix(spec),
            round_trip: match spec.propagation_delay {
                true => Duration::from_secs_f64(2.0 * spec.range / LIGHT),
                false => Duration::ZERO,
            },
            power: power_matrix(spec),
            intf_power: vec![0.0; n],
            rx_pool: Vec::new(),
            sensed_pool: Vec::new(),
            spec: spec.clone(),
        }
    }

    pub fn nodes(&self) -> usize {
        self.n
    }

    /// The next hop from `node` toward `dst` and the hops left.
    pub fn next_hop(&self, node: NodeId, dst: NodeId) -> Option<(NodeId, u32)> {
        if let Some(h) = self.routes.next_hop(node, dst) {
            return Some((h, self.routes.hops(node, dst)));
        }
        let all = self.all_up_routes.as_ref()?;
        let h = all.next_hop(node, dst)?;
        self.up[h as usize].then(|| (h, all.hops(node, dst)))
    }

    /// Positions or ranges changed: recompute PER, neighbourhoods, routes.
    pub(super) fn rebuild_geometry(&mut self) {
        self.per = self.spec.per_matrix();
        if let Some(f) = self.spec.fading {
            self.per_bad = self.spec.per_matrix_with_loss(f.extra_loss_db);
        }
        self.near = near_lists(&self.spec, &self.per);
        self.delay = delay_matrix(&self.spec);
        self.power = power_matrix(&self.spec);
        if !self.stale_views() {
            self.routes = Routes::compute(&self.per, self.n, self.spec.metric, &self.up);
        }
    }

    pub(super) fn per_of(&self, a: usize, b: usize) -> f32 {
        self.per[a * self.n + b]
    }

    pub(super) fn radio_of(&self, s: usize) -> usize {
        self.st[s].radio as usize
    }

    /// TDMA: in the slot of link s→b, send the oldest frame for b.
    pub(super) fn tdma_send(&mut self, core: &mut Core, s: usize, b: NodeId) -> bool {
        let st = &mut self.st[s];
        if st.exchange || st.tx_active || !self.up[s] || !core.nodes[s].alive() {
            return false;
        }
        let q = &mut st.acs[2].queue;
        let Some(i) = q.iter().position(|x| x.next == b) else {
            return false;
        };
        if i > 0 {
            let f = q.remove(i).expect("index from position");
            q.push_front(f);
        }
        st.txop_start = None;
        self.transmit_head(core, s, 2, true);
        true
    }

    fn stale_views(&self) -> bool {
        matches!(self.spec.routing, super::Routing::LinkState { .. })
    }

    /// A link-state update: routes from the current graph, weighted by the
    /// measured delivery ratios where there are enough samples.
    pub(super) fn route_update(&mut self, core: &mut Core) {
        let super::Routing::LinkState {
            interval,
            min_samples,
            over_air: false,
        } = self.spec.routing
        else {
            return;
        };
        let n = self.n;
        let mut est = self.per.clone();
        for (a, st) in self.st.iter().enumerate() {
            for x in &st.nbrs {
                let b = x.node as usize;
                if x.attempts >= min_samples && est[a * n + b] < 1.0 {
                    // Attempts without an ACK: both directions' losses.
                    let fail = 1.0 - x.acked as f64 / x.attempts as f64;
                    est[a * n + b] = (fail.clamp(0.0, 0.99)) as f32;
                }
            }
        }
        self.routes = Routes::compute(&est, n, super::Metric::Etx, &self.up);
        core.queue
            .push(core.now + interval, Event::Medium(MediumEvent::RouteUpdate));
    }

    /// A node fails (its queue is lost) or recovers; routes follow.
    pub(super) fn set_up(&mut self, core: &mut Core, node: usize, up: bool) {
        self.up[node] = up;
        if !up {
            self.kill(core, node as NodeId);
        }
        if !self.stale_views() {
            self.routes = Routes::compute(&self.per, self.n, self.spec.metric, &self.up);
        }
        if up {
            self.wake(core, node as NodeId);
        }
    }

    /// Results: the counters plus per-node airtime.
    pub fn snapshot(&self) -> MediumStats {
        let mut s = self.stats.clone();
        s.lsa_stale_views = self.ls.as_ref().map_or(0, |ls| ls.stale_pairs());
        s.tx_airtime_s = self
            .st
            .iter()
            .map(|st| st.tx_airtime.as_secs_f64())
            .collect();
        s.frames_sent = self.st.iter().map(|st| st.frames_sent).collect();
        s.frames_received = self.st.iter().map(|st| st.frames_received).collect();
        s.bytes_on_air = self.st.iter().map(|st| st.bytes_on_air).collect();
        s
    }

    /// What `Net::link` reports for `node`'s link toward `nbr`.
    pub fn link_info(&self, node: NodeId, nbr: NodeId) -> Option<LinkInfo> {
        let (a, b) = (node as usize, nbr as usize);
        if a >= self.n || b >= self.n || a == b {
            return None;
        }
        let st = &self.st[a];
        let stats = st.nbrs.iter().find(|x| x.node == nbr);
        let in_range = self.per[a * self.n + b] < 1.0 && self.up[a] && self.up[b];
        if !in_range && stats.is_none() {
            return None;
        }
        let (loss, etx) = match stats {
            Some(x) if x.attempts > 0 => (
                Some(1.0 - x.acked as f64 / x.attempts as f64),
                (x.acked > 0).then(|| x.attempts as f64 / x.acked as f64),
            ),
            _ => (None, None),
        };
        Some(LinkInfo {
            rate_bps: self.spec.phy.rate_bps,
            up: in_range,
            queue_len: st
                .acs
                .iter()
                .flat_map(|a| a.queue.iter())
                .filter(|q| q.next == nbr)
                .count(),
            loss_estimate: loss,
            available_rate_bps: self
                .tdma
                .as_ref()
                .and_then(|t| Some(t.available_bps(t.link_index(node, nbr)?))),
            etx,
        })
    }

    /// Queue `frame` at `node` for its next hop `next` (or [`BROADCAST`]).
    pub fn enqueue(&mut self, core: &mut Core, node: NodeId, frame: Frame, next: NodeId) {
        let retry_limit = self.spec.retry_limit;
        let ac = if self.spec.edca {
            phy::ac_index(frame.opts.access_class)
        } else {
            2
        };
        let st = &mut self.st[node as usize];
        if st.acs[ac].queue.len() >= self.spec.queue_limit {
            self.stats.queue_drops += 1;
            core.recycle(frame.packet);
            return;
        }
        let attempts = if next == BROADCAST {
            1
        } else {
            frame
                .opts
                .link_attempts
                .unwrap_or(retry_limit.saturating_add(1))
                .max(1)
        };
        let seq = st.next_seq;
        st.next_seq = st.next_seq.wrapping_add(1);
        st.acs[ac].queue.push_back(Queued {
            frame,
            next,
            seq,
            attempts,
            lsa: false,
        });
        self.kick(core, node as usize, ac);
    }

    /// The node died: its queue is lost and its station falls silent.
    pub fn kill(&mut self, core: &mut Core, node: NodeId) {
        let st = &mut self.st[node as usize];
        for a in &mut st.acs {
            for q in a.queue.drain(..) {
                core.recycle(q.frame.packet);
            }
            a.backoff = None;
            a.scheduled = false;
        }
        st.exchange = false;
        st.waiting = Waiting::Nothing;
        st.response = None;
    }

    /// The node's radio is usable again: resume sending.
    pub fn wake(&mut self, core: &mut Core, node: NodeId) {
        for ac in 0..4 {
            self.kick(core, node as usize, ac);
        }
    }

    pub fn handle(&mut self, core: &mut Core, ev: MediumEvent) {
        match ev {
            MediumEvent::TxEnd(id) => self.tx_end(core, id),
            MediumEvent::Arrive { id, node, flags } => {
                self.arrive(core, id, node as usize, flags);
                if flags & CS != 0 {
                    self.update_sense(core, node as usize);
                }
            }
            MediumEvent::Depart { id, node, flags } => self.depart(core, id, node as usize, flags),
            MediumEvent::Access { node, ac, gen } => {
                self.access(core, node as usize, ac as usize, gen)
            }
            MediumEvent::Timeout { node, gen } => self.timeout(core, node as usize, gen),
            MediumEvent::Respond { node, gen } => self.respond(core, node as usize, gen),
            MediumEvent::NavEnd { node } => self.update_sense(core, node as usize),
            MediumEvent::NodeDown { outage } => self.outage_event(core, outage, true),
            MediumEvent::NodeUp { outage } => self.outage_event(core, outage, false),
            MediumEvent::Move => self.move_event(core),
            MediumEvent::RouteUpdate => self.route_update(core),
            MediumEvent::Advertise { node } => self.advertise(core, node as usize),
            MediumEvent::Slot { index, phase } => self.slot_event(core, index, phase),
        }
    }

    fn usable(&self, core: &Core, s: usize) -> bool {
        core.nodes[s].alive() && core.radios[self.st[s].radio as usize].usable_at(core.now)
    }

    fn sensed_idle(&self, s: usize, now: Time) -> bool {
        let st = &self.st[s];
        st.busy == 0 && st.nav <= now && !st.tx_active && !st.exchange && st.response.is_none()
    }

    fn draw(&mut self, s: usize, ac: usize) -> u32 {
        let st = &mut self.st[s];
        let cw = st.acs[ac].cw;
        st.rng.random_range(0..=cw)
    }

    /// A frame is queued in `ac`: access at once if the medium has been idle
    /// for AIFS and nothing is pending, else start (or keep) a backoff.
    fn kick(&mut self, core: &mut Core, s: usize, ac: usize) {
        if self.tdma.is_some() {
            return; // TDMA sends only in its slots.
        }
        let now = core.now;
        let st = &self.st[s];
        if st.acs[ac].queue.is_empty() || st.acs[ac].backoff.is_some() || !self.usable(core, s) {
            return;
        }
        let others_pending = st.acs.iter().any(|a| a.backoff.is_some());
        if !others_pending
            && self.sensed_idle(s, now)
            && st.sensing_idle
            && now >= st.idle_since + st.acs[ac].aifs
        {
            self.st[s].txop_start = Some(now);
            self.transmit_head(core, s, ac, false);
            return;
        }
        let b = self.draw(s, ac);
        self.st[s].acs[ac].backoff = Some(b);
        self.schedule(core, s, ac);
    }

    /// Track idle/busy transitions of what `s` senses.
    fn update_sense(&mut self, core: &mut Core, s: usize) {
        let now = core.now;
        let idle = self.sensed_idle(s, now);
        let st = &mut self.st[s];
        if idle && !st.sensing_idle {
            st.sensing_idle = true;
            st.idle_since = now;
            for ac in 0..4 {
                self.schedule(core, s, ac);
            }
        } else if !idle && st.sensing_idle {
            st.sensing_idle = false;
            self.freeze(now, s);
        }
    }

    fn schedule(&mut self, core: &mut Core, s: usize, ac: usize) {
        let now = core.now;
        let (slot, eifs) = (self.slot, self.eifs);
        let st = &mut self.st[s];
        let use_eifs = st.eifs;
        let (idle, idle_since) = (st.sensing_idle, st.idle_since);
        let a = &mut st.acs[ac];
        let Some(backoff) = a.backoff else {
            return;
        };
        if !idle || a.scheduled {
            return;
        }
        // EIFS replaces DIFS; under EDCA it is EIFS - DIFS + AIFS.
        let ifs = if use_eifs {
            eifs - self.spec.phy.difs() + a.aifs
        } else {
            a.aifs
        };
        let start = (idle_since + ifs).max(now);
        a.countdown_start = start;
        a.access_at = start + slot.saturating_mul(backoff as u64);
        a.scheduled = true;
        a.gen = a.gen.wrapping_add(1);
        core.queue.push(
            a.access_at,
            Event::Medium(MediumEvent::Access {
                node: s as u32,
                ac: ac as u8,
                gen: a.gen,
            }),
        );
    }

    /// The medium turned busy for `s`: count the idle slots that passed.
    fn freeze(&mut self, now: Time, s: usize) {
        let slot = self.slot.0.max(1);
        for a in &mut self.st[s].acs {
            if !a.scheduled || a.access_at == now {
                // A backoff ending in this very slot goes ahead (and collides).
                continue;
            }
            let elapsed = now.saturating_since(a.countdown_start);
            let slots = (elapsed.0 / slot) as u32;
            if let Some(b) = a.backoff.as_mut() {
                *b -= slots.min(*b);
            }
            a.scheduled = false;
            a.gen = a.gen.wrapping_add(1);
        }
    }

    fn access(&mut self, core: &mut Core, s: usize, ac: usize, gen: u32) {
        let now = core.now;
        let st = &mut self.st[s];
        let a = &mut st.acs[ac];
        if gen != a.gen || !a.scheduled {
            return;
        }
        a.scheduled = false;
        // Another category of this station won the same slot: an internal
        // collision, which the loser treats as a failed attempt.
        let higher_wins = st.acs[..ac]
            .iter()
            .any(|h| h.scheduled && h.access_at == now && !h.queue.is_empty());
        let exchange_now = st.exchange && st.exchange_start == now;
        if (higher_wins || exchange_now) && !st.acs[ac].queue.is_empty() {
            self.stats.internal_collisions += 1;
            self.failed_attempt(core, s, ac);
            return;
        }
        let st = &mut self.st[s];
        if st.tx_active || st.response.is_some() || st.exchange {
            st.acs[ac].backoff = Some(0);
            return;
        }
        st.acs[ac].backoff = None;
        st.eifs = false;
        if st.acs[ac].queue.is_empty() {
            return;
        }
        if !self.usable(core, s) {
            return;
        }
        self.st[s].txop_start = Some(now);
        self.transmit_head(core, s, ac, false);
    }

    fn data_bytes(&self, q: &Queued) -> u32 {
        q.frame.network_len() as u32 + self.spec.phy.data_overhead
    }

    /// Send the head frame: RTS first if it is long enough, else the data.
    fn transmit_head(&mut self, core: &mut Core, s: usize, ac: usize, no_rts: bool) {
        let now = core.now;
        let Some(q) = self.st[s].acs[ac].queue.front() else {
            self.st[s].exchange = false;
            self.update_sense(core, s);
            return;
        };
        let (next, seq, len) = (q.next, q.seq, q.frame.network_len());
        let bytes = self.data_bytes(q);
        let wants_ack = next != BROADCAST && q.attempts > 1;
        let data_t = self.spec.phy.data_airtime(len);
        let (sifs, ack_t) = (self.sifs, self.ack_t);
        let st = &mut self.st[s];
        if !st.exchange {
            st.exchange_start = now;
        }
        st.exchange = true;
        st.cur = ac;
        st.acs[ac].backoff = None;
        let use_rts = !no_rts
            && wants_ack
            && self
                .spec
                .rts_threshold
                .is_some_and(|t| len as u64 > t as u64);
        if use_rts {
            let nav_end = now + self.rts_t + sifs + self.cts_t + sifs + data_t + sifs + ack_t;
            self.st[s].waiting = Waiting::Cts;
            self.stats.rts_tx += 1;
            self.start_air(
                core,
                s,
                Kind::Rts,
                next,
                (phy::RTS_BYTES, self.rts_t),
                nav_end,
                seq,
                false,
            );
            return;
        }
        let nav_end = if wants_ack {
            now + data_t + sifs + ack_t
        } else {
            now + data_t
        };
        self.stats.data_tx += 1;
        self.st[s].frames_sent += 1;
        self.st[s].bytes_on_air += bytes as u64;
        if next == BROADCAST {
            self.stats.broadcasts += 1;
        }
        if self.st[s].acs[ac].retries > 0 {
            self.stats.retransmissions += 1;
        }
        if next != BROADCAST {
            let st = &mut self.st[s];
            match st.nbrs.iter_mut().find(|x| x.node == next) {
                Some(x) => x.attempts += 1,
                None => st.nbrs.push(Nbr {
                    node: next,
                    attempts: 1,
                    acked: 0,
                }),
            }
        }
        self.st[s].waiting = if wants_ack {
            Waiting::Ack
        } else {
            Waiting::Nothing
        };
        self.start_air(
            core,
            s,
            Kind::Data,
            next,
            (bytes, data_t),
            nav_end,
            seq,
            wants_ack,
        );
    }

    fn arm_timeout(&mut self, core: &mut Core, s: usize, answer: Duration) {
        let st = &mut self.st[s];
        st.tgen = st.tgen.wrapping_add(1);
        let at = core.now + self.sifs + answer + self.slot + self.round_trip;
        core.queue.push(
            at,
            Event::Medium(MediumEvent::Timeout {
                node: s as u32,
                gen: st.tgen,
            }),
        );
    }

    fn set_nav(&mut self, core: &mut Core, r: usize, until: Time) {
        if until > self.st[r].nav && until > core.now {
            self.st[r].nav = until;
            core.queue
                .push(until, Event::Medium(MediumEvent::NavEnd { node: r as u32 }));
        }
    }

    fn respond_in_sifs(&mut self, core: &mut Core, r: usize, resp: Response) {
        let st = &mut self.st[r];
        st.response = Some(resp);
        st.rgen = st.rgen.wrapping_add(1);
        core.queue.push(
            core.now + self.sifs,
            Event::Medium(MediumEvent::Respond {
                node: r as u32,
                gen: st.rgen,
            }),
        );
    }

    /// `r` decoded `air` correctly.
    fn receive(&mut self, core: &mut Core, r: usize, air: &Air) {
        let rn = r as NodeId;
        let now = core.now;
        match air.kind {
            Kind::Data => {
                if air.dst == rn || air.dst == BROADCAST {
                    if air.wants_ack {
                        self.respond_in_sifs(core, r, Response::Ack { to: air.src });
                    }
                    let st = &mut self.st[r];
                    let dup = match st.last_seq.iter_mut().find(|x| x.0 == air.src) {
                        Some(x) if x.1 == air.seq && air.dst != BROADCAST => true,
                        Some(x) => {
                            x.1 = air.seq;
                            false
                        }
                        None => {
                            st.last_seq.push((air.src, air.seq));
                            false
                        }
                    };
                    if dup {
                        self.stats.duplicates += 1;
                        return;
                    }
                    if self.head_is_lsa(air) {
                        self.lsa_received(core, r, air);
                        return;
                    }
                    if let Some(frame) = self.copy_head(core, air) {
                        self.stats.data_delivered += 1;
                        self.st[r].frames_received += 1;
                        self.out.push(Out::Deliver(rn, frame));
                    }
                } else {
                    self.set_nav(core, r, air.nav_end);
                    if !core.ports[r].is_empty() || !core.nodes[r].relays.is_empty() {
                        if let Some(frame) = self.copy_head(core, air) {
                            self.stats.overheard += 1;
                            self.out.push(Out::Overheard(rn, frame));
                        }
                    }
                }
            }
            Kind::Rts => {
                let st = &self.st[r];
                if air.dst == rn {
                    if st.nav <= now && st.response.is_none() && !st.tx_active {
                        self.respond_in_sifs(
                            core,
                            r,
                            Response::Cts {
                                to: air.src,
                                nav_end: air.nav_end,
                            },
                        );
                    }
                } else {
                    self.set_nav(core, r, air.nav_end);
                }
            }
            Kind::Cts => {
                if air.dst == rn && self.st[r].waiting == Waiting::Cts {
                    let st = &mut self.st[r];
                    st.waiting = Waiting::Nothing;
                    st.tgen = st.tgen.wrapping_add(1);
                    self.respond_in_sifs(core, r, Response::Data);
                } else if air.dst != rn {
                    self.set_nav(core, r, air.nav_end);
                }
            }
            Kind::Ack => {
                if air.dst == rn && self.st[r].waiting == Waiting::Ack {
                    let st = &mut self.st[r];
                    st.waiting = Waiting::Nothing;
                    st.tgen = st.tgen.wrapping_add(1);
                    self.complete(core, r, true);
                }
            }
        }
    }

    /// The frame on the air: the sender's head frame, or the one it
    /// handed over while the transmission still propagates.
    fn on_air<'a>(&'a self, air: &'a Air) -> Option<(&'a Frame, bool)> {
        if let Some((frame, lsa)) = &air.stash {
            return Some((frame, *lsa));
        }
        let st = &self.st[air.src as usize];
        let q = st.acs[st.cur].queue.front()?;
        (q.seq == air.seq).then_some((&q.frame, q.lsa))
    }

    /// A copy of the frame on the air.
    fn copy_head(&self, core: &mut Core, air: &Air) -> Option<Frame> {
        let (f, _) = self.on_air(air)?;
        let mut packet = core.buffer();
        packet.extend_from_slice(&f.packet);
        Some(Frame {
            packet,
            src: f.src,
            dst: f.dst,
            opts: f.opts,
            sent_at: f.sent_at,
            hops: f.hops,
            prev: f.prev,
            relay: f.relay,
        })
    }

    /// The head frame's exchange is over (acknowledged, or sent without ACK).
    fn complete(&mut self, core: &mut Core, s: usize, acked: bool) {
        let now = core.now;
        let st = &mut self.st[s];
        let ac = st.cur;
        let a = &mut st.acs[ac];
        if let Some(q) = a.queue.pop_front() {
            if acked {
                if let Some(x) = st.nbrs.iter_mut().find(|x| x.node == q.next) {
                    x.acked += 1;
                }
            }
            // Still propagating toward farther receivers: the air keeps it.
            match self.air.get_mut(st.last_air as usize) {
                Some(Some(air)) if air.src as usize == s && air.seq == q.seq && air.pending > 0 => {
                    air.stash = Some((q.frame, q.lsa));
                }
                _ => core.recycle(q.frame.packet),
            }
        }
        let a = &mut st.acs[ac];
        a.cw = a.p.cw_min;
        a.retries = 0;
        st.waiting = Waiting::Nothing;
        // Continue a TXOP with the next frame if it fits.
        if let (Some(start), Some(q), None) = (st.txop_start, a.queue.front(), &self.tdma) {
            let limit = if a.p.txop > Duration::ZERO {
                a.p.txop
            } else if q.frame.opts.burst {
                BURST_TXOP
            } else {
                Duration::ZERO
            };
            let len = q.frame.network_len();
            let mut exchange = self.sifs + self.spec.phy.data_airtime(len);
            if q.next != BROADCAST && q.attempts > 1 {
                exchange += self.sifs + self.ack_t;
            }
            if limit > Duration::ZERO && now + exchange <= start + limit {
                self.respond_in_sifs(core, s, Response::Data);
                return;
            }
        }
        self.end_exchange(core, s, ac);
    }

    /// Leave the exchange and draw a fresh (post-)backoff for `ac`.
    fn end_exchange(&mut self, core: &mut Core, s: usize, ac: usize) {
        let st = &mut self.st[s];
        st.txop_start = None;
        st.exchange = false;
        if self.tdma.is_some() {
            self.update_sense(core, s);
            return;
        }
        let b = self.draw(s, ac);
        self.st[s].acs[ac].backoff = Some(b);
        self.update_sense(core, s);
        self.schedule(core, s, ac);
        // Categories whose frames arrived during the exchange contend too.
        for other in 0..4 {
            self.kick(core, s, other);
        }
    }

    /// An attempt of `ac`'s head frame failed: retry with a doubled window,
    /// or drop the frame at the retry limit.
    fn failed_attempt(&mut self, core: &mut Core, s: usize, ac: usize) {
        let st = &mut self.st[s];
        let a = &mut st.acs[ac];
        a.retries = a.retries.saturating_add(1);
        let give_up = a.queue.front().is_none_or(|q| a.retries >= q.attempts);
        if give_up {
            if let Some(q) = a.queue.pop_front() {
                self.stats.retry_drops += 1;
                core.recycle(q.frame.packet);
            }
            a.cw = a.p.cw_min;
            a.retries = 0;
        } else {
            a.cw = (2 * a.cw + 1).min(a.p.cw_max);
        }
        a.scheduled = false;
        a.gen = a.gen.wrapping_add(1);
        if self.tdma.is_some() {
            return; // retried in the link's next slot
        }
        let b = self.draw(s, ac);
        self.st[s].acs[ac].backoff = Some(b);
        self.schedule(core, s, ac);
    }

    fn timeout(&mut self, core: &mut Core, s: usize, gen: u32) {
        let st = &mut self.st[s];
        if gen != st.tgen || st.waiting == Waiting::Nothing {
            return;
        }
        st.waiting = Waiting::Nothing;
        let ac = st.cur;
        st.txop_start = None;
        st.exchange = false;
        self.failed_attempt(core, s, ac);
        self.update_sense(core, s);
        for other in 0..4 {
            self.kick(core, s, other);
        }
    }

    fn respond(&mut self, core: &mut Core, s: usize, gen: u32) {
        let st = &mut self.st[s];
        if gen != st.rgen {
            return;
        }
        let Some(resp) = st.response.take() else {
            return;
        };
        if st.tx_active || !self.usable(core, s) {
            if matches!(resp, Response::Data) {
                self.timeout_now(core, s);
            }
            self.update_sense(core, s);
            return;
        }
        match resp {
            Response::Ack { to } => {
                self.stats.acks_tx += 1;
                let nav = core.now + self.ack_t;
                self.start_air(
                    core,
                    s,
                    Kind::Ack,
                    to,
                    (phy::ACK_BYTES, self.ack_t),
                    nav,
                    0,
                    false,
                );
            }
            Response::Cts { to, nav_end } => {
                self.stats.cts_tx += 1;
                self.start_air(
                    core,
                    s,
                    Kind::Cts,
                    to,
                    (phy::CTS_BYTES, self.cts_t),
                    nav_end,
                    0,
                    false,
                );
            }
            Response::Data => {
                let ac = self.st[s].cur;
                self.transmit_head(core, s, ac, true)
            }
        }
    }

    /// Treat the current exchange as failed now (the station could not go on).
    fn timeout_now(&mut self, core: &mut Core, s: usize) {
        let st = &mut self.st[s];
        st.waiting = Waiting::Ack;
        let gen = st.tgen;
        self.timeout(core, s, gen);
    }
}
