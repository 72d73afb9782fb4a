//! A shared wireless medium: nodes with positions, one radio each, a packet
//! error rate per pair from distance, carrier sense and interference
//! ranges, collisions at the receiver, overhearing, and an 802.11 CSMA/CA
//! MAC (DCF, optional EDCA categories, RTS/CTS, TXOP bursts) or a TDMA MAC
//! with collision-free pseudo-random slot schedules.
//!
//! [`Medium`] is a composition of owned parts with one interface between
//! them and the MAC:
//! * [`geometry::Geometry`] — positions, PER from distance (and fading),
//!   ranges, capture, propagation delay;
//! * [`routing::Router`] — static, DTN and link-state routes
//!   (`link_state.rs`: per-node views; `advertise.rs`: advertisements on
//!   the air);
//! * a MAC behind the [`mac::Mac`] trait — [`dcf::Dcf`] (802.11
//!   DCF/EDCA) or [`tdma::Tdma`], both built on the shared 802.11 station
//!   code (`station.rs`) with their own access policy — held as an
//!   [`AnyMac`] (a `match` per call: a `Box<dyn Mac>` cost 1.2% more
//!   instructions in the mesh benchmark); its data frames go at the
//!   configured rate or at the one bit-rate selection picks
//!   (`rate_control.rs`, SampleRate);
//! * what changes with time (`dynamics.rs`: outages, mobility).
//!
//! The medium is a module of its own: the rest of the simulator reaches it
//! through three hooks — [`crate::core::Core::forward`] hands it frames for
//! nodes on the medium, [`crate::event::Event::Medium`] carries its events,
//! and [`crate::ctx::Ctx`] asks it for routes and per-neighbour statistics
//! (`driver.rs`). See `docs/scenarios.md` (`[medium]`) for the model and
//! its keys.

mod advertise;
pub mod dcf;
pub mod driver;
pub mod dynamics;
pub mod geometry;
pub mod link_state;
pub mod mac;
pub mod phy;
pub mod rate_control;
pub mod routing;
pub mod service;
pub mod station;
pub mod tdma;
pub mod tx_kind;

use joulenet_channel::radio::RadioProfile;
use joulenet_proto::{Duration, LinkInfo, NodeId, Time};
use serde::Serialize;

pub use dynamics::{Fading, Mobility, Outage};
pub use mac::{Mac, Out};
pub use phy::Phy;

use crate::core::Core;
use crate::frame::Frame;
use crate::rng::Streams;
use geometry::Geometry;
use mac::Cx;
use routing::Router;

/// MAC-level broadcast address.
pub const BROADCAST: NodeId = u32::MAX;

/// Hops a frame may travel over the medium (IP's default TTL).
pub const HOP_LIMIT: u8 = 64;

/// The largest number of nodes on one medium (per-pair tables are n²).
pub const MAX_NODES: usize = 1000;

/// Events of the medium, carried by [`crate::event::Event::Medium`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MediumEvent {
    /// An on-air transmission ends (at its sender).
    TxEnd(u32),
    /// Transmission `id` starts / stops reaching `node` (with propagation
    /// delay; `flags` say whether the node hears, senses, suffers it).
    Arrive {
        id: u32,
        node: u32,
        flags: u8,
    },
    Depart {
        id: u32,
        node: u32,
        flags: u8,
    },
    /// A station's backoff expires (a frozen backoff cancels it; `gen`
    /// checks that none is stale).
    Access {
        node: u32,
        ac: u8,
        gen: u32,
    },
    /// A station gives up waiting for an ACK or CTS.
    Timeout {
        node: u32,
        gen: u32,
    },
    /// A station sends its response (ACK, CTS, data after CTS, next frame
    /// of a TXOP) one SIFS after what it answers.
    Respond {
        node: u32,
        gen: u32,
    },
    /// A station's NAV may have expired.
    NavEnd {
        node: u32,
    },
    /// An outage (index into `MediumSpec::outages`) begins or ends.
    NodeDown {
        outage: u32,
    },
    NodeUp {
        outage: u32,
    },
    /// Mobile nodes' positions are brought up to date.
    Move,
    /// Periodic link-state route update (views refreshed without messages).
    RouteUpdate,
    /// A node originates its link-state advertisement (over the air).
    Advertise {
        node: u32,
    },
    /// TDMA slot `index`: 0 wakes the slot's radios, 1 sends, 2 ends it.
    Slot {
        index: u32,
        phase: u8,
    },
}

/// Packet error rate as a function of distance.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Reception {
    /// Every frame within range is received (ns-2's threshold model).
    Disc,
    /// Log-distance path loss: the SNR at distance d is
    /// `snr_at_range + 10 · exponent · log10(range / d)` dB, and a
    /// 1000-byte frame is lost with probability
    /// `1 / (1 + exp((snr − snr50) / width))`.
    LogDistance {
        exponent: f64,
        snr_at_range_db: f64,
        snr50_db: f64,
        width_db: f64,
    },
}

impl Reception {
    /// PER of a 1000-byte frame at distance `d` (1 beyond `range`).
    pub fn per(&self, d: f64, range: f64) -> f64 {
        self.per_with_loss(d, range, 0.0)
    }

    /// PER with `extra_db` more path loss (a link's bad state).
    pub fn per_with_loss(&self, d: f64, range: f64, extra_db: f64) -> f64 {
        if d > range {
            return 1.0;
        }
        match *self {
            Reception::Disc => 0.0,
            Reception::LogDistance {
                exponent,
                snr_at_range_db,
                snr50_db,
                width_db,
            } => {
                let snr =
                    snr_at_range_db + 10.0 * exponent * (range / d.max(1e-3)).log10() - extra_db;
                1.0 / (1.0 + ((snr - snr50_db) / width_db).exp())
            }
        }
    }
}

/// Which medium access control the medium runs (`mac` in `[medium]`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MacKind {
    Csma,
    Tdma,
}

/// Route metric of the static shortest-path routing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Metric {
    Hops,
    /// Expected transmission count from the model's PER, both directions.
    Etx,
}

/// Which next hop routing names.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Routing {
    /// Shortest path on the current graph (recomputed when it changes).
    Static,
    /// As `Static`, but when no end-to-end path exists, the next hop on the
    /// path of the complete network (if that neighbour is up): frames move
    /// as far as they can and wait at the edge of a partition.
    Dtn,
    /// JAVeLEN-style link state: every node's view is refreshed only every
    /// `interval` (stale in between: failures, recoveries and moves are
    /// learnt at the next update), with ETX weights from the measured
    /// per-neighbour delivery ratios where a link has carried at least
    /// `min_samples` frames (inaccurate with few samples), else from the
    /// model. With `over_air`, every node originates an advertisement every
    /// `interval` as a flooded broadcast frame and routes on its own view
    /// (`link_state.rs`); else every view is refreshed at once, without
    /// messages.
    LinkState {
        interval: Duration,
        min_samples: u64,
        over_air: bool,
    },
}

/// The validated `[medium]` table and node positions.
#[derive(Clone, Debug)]
pub struct MediumSpec {
    /// Position of every node in metres.
    pub positions: Vec<(f64, f64)>,
    pub range: f64,
    pub cs_range: f64,
    pub interference_range: f64,
    pub reception: Reception,
    /// Model propagation delay (distance / speed of light).
    pub propagation_delay: bool,
    /// Capture: a reception survives overlapping transmissions while its
    /// power exceeds theirs by this many dB (none: any overlap spoils it).
    pub capture_db: Option<f64>,
    /// Explicit PER per (a, b) pair, both directions; 1 removes the link.
    pub per_overrides: Vec<(NodeId, NodeId, f64)>,
    pub phy: Phy,
    pub mac: MacKind,
    /// Retransmissions after the first attempt; 0 disables link ARQ.
    pub retry_limit: u8,
    /// Frames whose network packet exceeds this use RTS/CTS.
    pub rts_threshold: Option<u32>,
    pub queue_limit: usize,
    /// Four EDCA access categories instead of plain DCF.
    pub edca: bool,
    pub txop: Duration,
    /// TDMA: shortest frame in slots (0: as many as the schedule needs).
    pub tdma_slots: u32,
    /// How unicast data frames with link ARQ pick their bit-rate.
    pub rate_control: rate_control::RateControl,
    pub radio: RadioProfile,
    pub metric: Metric,
    pub routing: Routing,
    pub outages: Vec<Outage>,
    pub fading: Option<Fading>,
    pub mobility: Option<Mobility>,
}

impl MediumSpec {
    pub fn distance(&self, a: usize, b: usize) -> f64 {
        let (pa, pb) = (self.positions[a], self.positions[b]);
        ((pa.0 - pb.0).powi(2) + (pa.1 - pb.1).powi(2)).sqrt()
    }

    /// PER of a 1000-byte frame for every ordered pair, row-major.
    pub fn per_matrix(&self) -> Vec<f32> {
        self.per_matrix_with_loss(0.0)
    }

    /// The same with `extra_db` more path loss (for the bad state).
    pub fn per_matrix_with_loss(&self, extra_db: f64) -> Vec<f32> {
        let n = self.positions.len();
        let mut per = vec![1.0f32; n * n];
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    per[a * n + b] =
                        self.reception
                            .per_with_loss(self.distance(a, b), self.range, extra_db)
                            as f32;
                }
            }
        }
        for &(a, b, p) in &self.per_overrides {
            let (a, b) = (a as usize, b as usize);
            per[a * n + b] = p as f32;
            per[b * n + a] = p as f32;
        }
        per
    }

    /// Neighbours (PER < 1) of every node.
    pub fn adjacency(&self) -> Vec<Vec<NodeId>> {
        let n = self.positions.len();
        let per = self.per_matrix();
        (0..n)
            .map(|a| {
                (0..n)
                    .filter(|&b| b != a && per[a * n + b] < 1.0)
                    .map(|b| b as NodeId)
                    .collect()
            })
            .collect()
    }
}

/// What happened on the medium, for results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MediumStats {
    /// Data frames put on the air, first attempts and retransmissions.
    pub data_tx: u64,
    pub retransmissions: u64,
    pub acks_tx: u64,
    pub rts_tx: u64,
    pub cts_tx: u64,
    /// Data frames delivered to their next hop (duplicates excluded).
    pub data_delivered: u64,
    /// Data receptions at the intended receiver spoiled by an overlapping
    /// transmission (or by the receiver transmitting).
    pub data_collisions: u64,
    /// Any frame at its intended receiver spoiled by overlap (RTS, CTS and
    /// ACK included).
    pub collisions: u64,
    /// Frames at their intended receiver lost to the channel's PER.
    pub channel_losses: u64,
    /// Frames given up after the retry limit.
    pub retry_drops: u64,
    /// EDCA: two categories of one station won the same slot; the lower
    /// one backed off as after a collision.
    pub internal_collisions: u64,
    pub queue_drops: u64,
    /// Duplicates (a lost ACK made the sender repeat) filtered by sequence
    /// number.
    pub duplicates: u64,
    /// Frames overheard and handed to agents in promiscuous mode.
    pub overheard: u64,
    /// Link-state advertisements (over the air): originated, and
    /// broadcast again by nodes that installed them as news (flooding).
    pub lsa_originated: u64,
    pub lsa_forwarded: u64,
    /// At the end of the run: (node, origin) pairs whose view holds an
    /// older advertisement than the origin's newest (lost or in flight).
    pub lsa_stale_views: u64,
    /// Frames dropped at the hop limit (routing loops).
    pub hop_limit_drops: u64,
    pub broadcasts: u64,
    /// Seconds each node's radio spent transmitting, per node.
    pub tx_airtime_s: Vec<f64>,
    /// Per node: data frames put on the air (retransmissions and
    /// broadcasts included), their bytes, and data frames delivered to it
    /// as next hop (duplicates excluded).
    pub frames_sent: Vec<u64>,
    pub bytes_on_air: Vec<u64>,
    pub frames_received: Vec<u64>,
    /// Per node: transmit energy by what was sent (`tx_kind`).
    pub tx_by_kind: Vec<tx_kind::TxByKind>,
    /// Under rate control: (rate in bit/s, data frame attempts at it);
    /// empty at a fixed rate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub data_tx_by_rate: Vec<(u64, u64)>,
}

/// The shared medium: geometry, routing and a MAC, plus which nodes are up.
pub struct Medium {
    pub geo: Geometry,
    pub router: Router,
    pub mac: AnyMac,
    /// Whether each node is up (outages), and how many outages hold it down.
    pub(crate) up: Vec<bool>,
    pub(crate) down_count: Vec<u32>,
    /// Mobility's walkers.
    pub(crate) dyn_: dynamics::Dynamics,
    /// Routing's counters (hop-limit drops, advertisements); the MAC keeps
    /// its own.
    pub stats: MediumStats,
    /// What the MAC hands back: frames for the simulation, and what it
    /// decoded for routing.
    pub out: Vec<Out>,
    pub(crate) decoded: mac::Decoded,
}

impl Medium {
    /// `radios[i]` is node i's radio in the core's ledgers.
    pub fn new(spec: &MediumSpec, radios: &[u32], streams: &Streams) -> Medium {
        let geo = Geometry::new(spec, streams);
        let n = geo.n;
        let up = vec![true; n];
        let router = Router::new(&geo.per, n, spec.metric, spec.routing, &up);
        let mac = match spec.mac {
            MacKind::Csma => AnyMac::Dcf(dcf::Dcf::new(spec, radios, streams)),
            MacKind::Tdma => AnyMac::Tdma(tdma::Tdma::new(spec, radios, streams)),
        };
        Medium {
            geo,
            router,
            mac,
            up,
            down_count: vec![0; n],
            dyn_: Default::default(),
            stats: MediumStats::default(),
            out: Vec::new(),
            decoded: Default::default(),
        }
    }

    pub fn nodes(&self) -> usize {
        self.geo.n
    }

    /// The MAC with what it borrows from the rest of the medium.
    #[inline(always)]
    fn split<'a>(&'a mut self, core: &'a mut Core) -> (&'a mut AnyMac, Cx<'a>) {
        let cx = Cx {
            core,
            geo: &mut self.geo,
            up: &self.up,
            out: &mut self.out,
            decoded: &mut self.decoded,
        };
        (&mut self.mac, cx)
    }

    /// The next hop from `node` toward `dst` and the hops left.
    pub fn next_hop(&self, node: NodeId, dst: NodeId) -> Option<(NodeId, u32)> {
        self.router.next_hop(node, dst, &self.up)
    }

    /// Queue `frame` at `node` for its next hop `next` (or [`BROADCAST`]).
    pub fn enqueue(&mut self, core: &mut Core, node: NodeId, frame: Frame, next: NodeId) {
        let (mac, mut cx) = self.split(core);
        mac.enqueue(&mut cx, node, frame, next, false);
    }

    /// The node died: its queue is lost and its station falls silent.
    pub fn kill(&mut self, core: &mut Core, node: NodeId) {
        let (mac, mut cx) = self.split(core);
        mac.kill(&mut cx, node);
    }

    /// The node's radio is usable again: resume sending.
    pub fn wake(&mut self, core: &mut Core, node: NodeId) {
        let (mac, mut cx) = self.split(core);
        mac.wake(&mut cx, node);
    }

    /// What `Net::link` reports for `node`'s link toward `nbr`.
    pub fn link_info(&self, node: NodeId, nbr: NodeId, now: Time) -> Option<LinkInfo> {
        let (a, b) = (node as usize, nbr as usize);
        let n = self.geo.n;
        if a >= n || b >= n || a == b {
            return None;
        }
        let in_range = self.geo.per_of(a, b) < 1.0 && self.up[a] && self.up[b];
        self.mac.link(node, nbr, in_range, now)
    }

    #[inline(always)]
    pub fn handle(&mut self, core: &mut Core, ev: MediumEvent) {
        match ev {
            MediumEvent::NodeDown { outage } => self.outage_event(core, outage, true),
            MediumEvent::NodeUp { outage } => self.outage_event(core, outage, false),
            MediumEvent::Move => self.move_event(core),
            MediumEvent::RouteUpdate => self.route_update(core),
            MediumEvent::Advertise { node } => self.advertise(core, node as usize),
            ev => {
                let (mac, mut cx) = self.split(core);
                mac.handle(&mut cx, ev);
                // Only link-state routing over the air wants decodes.
                if self.decoded.track_heard {
                    self.after_decoding(core);
                }
            }
        }
    }

    /// A node fails (its queue is lost) or recovers; routes follow.
    pub(crate) fn set_up(&mut self, core: &mut Core, node: usize, up: bool) {
        self.up[node] = up;
        if !up {
            self.kill(core, node as NodeId);
        }
        self.router
            .graph_changed(&self.geo.per, self.geo.n, &self.up);
        if up {
            self.wake(core, node as NodeId);
        }
    }

    /// Positions changed: the geometry is rebuilt and routes follow.
    pub(crate) fn rebuild_geometry(&mut self) {
        self.geo.rebuild();
        self.router
            .graph_changed(&self.geo.per, self.geo.n, &self.up);
    }

    /// A link-state update: routes from the current graph, weighted by the
    /// measured delivery ratios where there are enough samples.
    fn route_update(&mut self, core: &mut Core) {
        let Routing::LinkState {
            interval,
            min_samples,
            over_air: false,
        } = self.router.mode
        else {
            return;
        };
        let n = self.geo.n;
        let mut est = self.geo.per.clone();
        self.mac.visit_links(&mut |a, b, c| {
            let b = b as usize;
            if c.attempts >= min_samples && est[a * n + b] < 1.0 {
                // Attempts without an ACK: both directions' losses.
                let fail = 1.0 - c.acked as f64 / c.attempts as f64;
                est[a * n + b] = (fail.clamp(0.0, 0.99)) as f32;
            }
        });
        self.router.refresh(&est, n, &self.up);
        core.queue.push(
            core.now + interval,
            crate::event::Event::Medium(MediumEvent::RouteUpdate),
        );
    }

    /// Results: the MAC's counters, routing's, and per-node airtime.
    pub fn snapshot(&self) -> MediumStats {
        let mut s = self.mac.stats();
        s.hop_limit_drops = self.stats.hop_limit_drops;
        s.lsa_originated = self.stats.lsa_originated;
        s.lsa_forwarded = self.stats.lsa_forwarded;
        s.lsa_stale_views = self.router.ls.as_ref().map_or(0, |ls| ls.stale_pairs());
        s
    }
}

/// The MACs the medium can run, dispatched statically (a `match` instead
/// of a vtable: see docs/PERFORMANCE.md for the measurement).
pub enum AnyMac {
    Dcf(dcf::Dcf),
    Tdma(tdma::Tdma),
}

/// `Mac::method(m, ..)`, not `m.method(..)`: the station code has inherent
/// methods of the same names, which method syntax would pick.
macro_rules! each_mac {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            AnyMac::Dcf($m) => $e,
            AnyMac::Tdma($m) => $e,
        }
    };
}

impl Mac for AnyMac {
    fn start(&mut self, cx: &mut Cx<'_>, streams: &Streams) {
        each_mac!(self, m => Mac::start(m, cx, streams))
    }
    fn enqueue(&mut self, cx: &mut Cx<'_>, node: NodeId, frame: Frame, next: NodeId, advert: bool) {
        each_mac!(self, m => Mac::enqueue(m, cx, node, frame, next, advert))
    }
    #[inline(always)]
    fn handle(&mut self, cx: &mut Cx<'_>, ev: MediumEvent) {
        each_mac!(self, m => Mac::handle(m, cx, ev))
    }
    fn wake(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        each_mac!(self, m => Mac::wake(m, cx, node))
    }
    fn kill(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        each_mac!(self, m => Mac::kill(m, cx, node))
    }
    fn link(&self, node: NodeId, nbr: NodeId, in_range: bool, now: Time) -> Option<LinkInfo> {
        each_mac!(self, m => Mac::link(m, node, nbr, in_range, now))
    }
    fn link_counts(&self, node: NodeId, nbr: NodeId) -> Option<mac::LinkCounts> {
        each_mac!(self, m => Mac::link_counts(m, node, nbr))
    }
    fn visit_links(&self, f: &mut dyn FnMut(usize, NodeId, mac::LinkCounts)) {
        each_mac!(self, m => Mac::visit_links(m, f))
    }
    fn stats(&self) -> MediumStats {
        each_mac!(self, m => Mac::stats(m, ))
    }
}
