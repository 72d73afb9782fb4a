//! 802.11 stations on the shared medium, whatever decides when they may
//! send: interface queues (one per EDCA access category), frame exchanges
//! (data, then an ACK if link ARQ is on; RTS/CTS first for long frames),
//! the NAV and physical carrier sense, duplicate filtering, and the frames
//! themselves on the air (`station/air.rs`: who hears, senses and suffers
//! each transmission, collisions, capture, decoding).
//!
//! The access policy is a type parameter ([`Access`]): contention (802.11
//! DCF/EDCA backoff and TXOP bursts, `dcf.rs`) or TDMA slots (`tdma.rs`).
//! The station code calls the policy at the points where they differ — a
//! frame was queued, the medium turned idle or busy, an exchange ended or
//! failed, a TXOP may go on — and never asks which policy it runs.
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

use std::collections::VecDeque;
use std::marker::PhantomData;

use joulenet_proto::{Duration, LinkInfo, NodeId, Time};
use rand_pcg::Pcg64Mcg;

use super::geometry::CS;
use super::mac::{Cx, LinkCounts, Out};
use super::phy::{self, AcParams, Phy};
use super::{MediumEvent, MediumSpec, MediumStats, BROADCAST};
use crate::core::Core;
use crate::event::{Event, EventKey, EventQueue};
use crate::frame::Frame;
use crate::rng::Streams;

mod air;

/// When stations may send: the hooks where 802.11 contention and TDMA
/// slots differ. The station code calls them at fixed points; each
/// implementation is free to do nothing there.
pub trait Access: Sized {
    /// A frame was queued in category `ac` of station `s`, or the station
    /// may send again (it woke, an exchange failed): start contending.
    fn kick(x: &mut Stations<Self>, cx: &mut Cx<'_>, s: usize, ac: usize);
    /// The medium as `s` senses it (carrier, NAV, own activity) turned
    /// idle at `core.now`.
    fn medium_idle(x: &mut Stations<Self>, core: &mut Core, s: usize);
    /// ... or busy.
    fn medium_busy(x: &mut Stations<Self>, core: &mut Core, s: usize);
    /// `s`'s exchange of `ac` succeeded and another frame is queued: does
    /// it follow within the same transmit opportunity (begun at `start`)?
    fn txop_continues(x: &Stations<Self>, now: Time, s: usize, ac: usize, start: Time) -> bool;
    /// `s`'s exchange of `ac` is over (the station is free again).
    fn exchange_over(x: &mut Stations<Self>, cx: &mut Cx<'_>, s: usize, ac: usize);
    /// An attempt of `ac`'s head frame failed; `dropped` if the frame was
    /// given up at its attempt limit.
    fn attempt_failed(x: &mut Stations<Self>, cx: &mut Cx<'_>, s: usize, ac: usize, dropped: bool);
}

pub(super) struct Queued {
    pub(super) frame: Frame,
    pub(super) next: NodeId,
    pub(super) seq: u16,
    /// Attempts allowed, including the first.
    pub(super) attempts: u8,
    /// A link-state advertisement (handled by the medium, not delivered).
    pub(super) lsa: bool,
    /// Rate index chosen for it by rate control on its first attempt
    /// (`rate_control::CONFIGURED` until then, and for good without it).
    pub(super) rate: u8,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Data,
    Ack,
    Rts,
    Cts,
}

pub(super) struct Air {
    pub(super) src: NodeId,
    pub(super) dst: NodeId,
    pub(super) kind: Kind,
    pub(super) nav_end: Time,
    pub(super) bytes: u32,
    pub(super) seq: u16,
    pub(super) wants_ack: bool,
    /// The intended receiver was in range but busy (locked onto another
    /// frame, or transmitting) when this frame began.
    pub(super) dst_missed: bool,
    /// Receivers locked onto this frame and whether it is still intact.
    pub(super) rx: Vec<(NodeId, bool)>,
    /// The nodes that sensed or were interfered with when it started
    /// (positions may change before it ends).
    pub(super) sensed: Vec<(NodeId, u8)>,
    /// When the sender stops transmitting, and how long it transmits.
    pub(super) end: Time,
    pub(super) airtime: Duration,
    /// Receivers it has yet to stop reaching (propagation delay).
    pub(super) pending: u32,
    /// The frame, once its sender is done with it while it still
    /// propagates (no ACK awaited), and whether it is an advertisement.
    pub(super) stash: Option<(Frame, bool)>,
    /// dB more SNR its rate needs than the configured one (0 at that rate).
    pub(super) extra_db: f32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Waiting {
    Nothing,
    Ack,
    Cts,
}

#[derive(Copy, Clone, Debug)]
pub(super) enum Response {
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
pub(super) struct Nbr {
    pub(super) node: NodeId,
    pub(super) attempts: u64,
    pub(super) acked: u64,
}

/// One EDCA backoff entity (a single one, index 2, under plain DCF).
/// `repr(C, align(64))`: what freezing and resuming a countdown reads
/// (`Stations::freeze`, `schedule`) comes first and fills the entity's
/// first cache line. Whether the backoff is pending or counting down is
/// kept in the station's first line instead (`Station::backoffs`,
/// `Station::counting`), so that carrier sense at a station with no
/// backoff never touches its entities.
#[repr(C, align(64))]
pub(super) struct Ac {
    /// Slots left; `Some` exactly while the station's `backoffs` bit for
    /// this category is set (written through `Station::set_backoff`).
    pub(super) backoff: Option<u32>,
    pub(super) gen: u32,
    pub(super) cw: u32,
    pub(super) access_at: Time,
    pub(super) countdown_start: Time,
    /// The queued `Access` event while counting down, taken back from the
    /// queue when the backoff freezes.
    pub(super) access_key: Option<EventKey>,
    pub(super) retries: u8,
    /// AIFS = SIFS + AIFSN slots.
    pub(super) aifs: Duration,
    pub(super) queue: VecDeque<Queued>,
    pub(super) p: AcParams,
}

/// `repr(C, align(64))`: at a thousand stations they no longer sit in
/// cache, and carrier sense (`sensed_idle`, `update_sense`, `arrive`,
/// `unsense`) touches each station a transmission reaches; the fields it
/// reads come first, in the station's first cache line, then the backoff
/// entities (whose hot fields lead), then the rest.
#[repr(C, align(64))]
pub(super) struct Station {
    pub(super) nav: Time,
    pub(super) idle_since: Time,
    pub(super) busy: u32,
    pub(super) intf: u32,
    pub(super) locked: Option<u32>,
    pub(super) radio: u32,
    pub(super) sensing_idle: bool,
    pub(super) tx_active: bool,
    /// In a frame exchange (transmitting or waiting for the answer) for
    /// access category `cur`, which started at `exchange_start`.
    pub(super) exchange: bool,
    pub(super) eifs: bool,
    /// Bit `ac` set while category `ac` has a backoff pending
    /// (`acs[ac].backoff` is `Some`).
    backoffs: u8,
    /// Bit `ac` set while that backoff counts down: its `Access` event is
    /// queued (under `acs[ac].access_key`).
    counting: u8,
    pub(super) response: Option<Response>,
    pub(super) acs: [Ac; 4],
    pub(super) cur: usize,
    pub(super) exchange_start: Time,
    pub(super) waiting: Waiting,
    pub(super) tgen: u32,
    pub(super) rgen: u32,
    pub(super) txop_start: Option<Time>,
    pub(super) next_seq: u16,
    pub(super) last_seq: Vec<(NodeId, u16)>,
    pub(super) rng: Pcg64Mcg,
    pub(super) loss_rng: Pcg64Mcg,
    pub(super) nbrs: Vec<Nbr>,
    pub(super) tx_airtime: Duration,
    /// Transmit energy by what was sent.
    pub(super) tx_by_kind: super::tx_kind::TxByKind,
    /// Data frames this station put on the air (retransmissions included),
    /// their bytes, and data frames delivered to it as next hop.
    pub(super) frames_sent: u64,
    pub(super) bytes_on_air: u64,
    pub(super) frames_received: u64,
    /// Its latest transmission.
    pub(super) last_air: u32,
    /// Its frames' service times: the rate it has left (`super::service`).
    pub(super) service: super::service::ServiceMeter,
}

impl Station {
    /// Categories with a backoff pending, as a bit set.
    #[inline]
    pub(super) fn backoffs(&self) -> u8 {
        self.backoffs
    }

    /// Categories whose backoff counts down, as a bit set.
    #[inline]
    pub(super) fn counting(&self) -> u8 {
        self.counting
    }

    /// Whether `ac`'s backoff counts down (its `Access` event is queued).
    #[inline]
    pub(super) fn scheduled(&self, ac: usize) -> bool {
        self.counting & 1 << ac != 0
    }

    /// Set (or clear) `ac`'s pending backoff, and its bit in `backoffs`.
    #[inline]
    pub(super) fn set_backoff(&mut self, ac: usize, slots: Option<u32>) {
        self.acs[ac].backoff = slots;
        match slots {
            Some(_) => self.backoffs |= 1 << ac,
            None => self.backoffs &= !(1 << ac),
        }
    }

    /// `ac`'s backoff counts down until its `Access` event under `key`.
    #[inline]
    pub(super) fn start_countdown(&mut self, ac: usize, key: EventKey) {
        self.counting |= 1 << ac;
        self.acs[ac].access_key = Some(key);
    }

    /// `ac`'s countdown ended: its `Access` event was popped.
    #[inline]
    pub(super) fn countdown_over(&mut self, ac: usize) {
        self.counting &= !(1 << ac);
        self.acs[ac].access_key = None;
    }

    /// `ac`'s backoff no longer counts down: its queued `Access` event, if
    /// any, is taken back so it is never popped.
    #[inline]
    pub(super) fn unschedule(&mut self, ac: usize, queue: &mut EventQueue) {
        self.counting &= !(1 << ac);
        if let Some(key) = self.acs[ac].access_key.take() {
            queue.cancel(key);
        }
    }
}

/// Every station on the medium, and the transmissions on the air, under
/// access policy `A`.
pub struct Stations<A: Access> {
    pub(super) n: usize,
    pub(super) phy: Phy,
    /// Retransmissions after the first attempt; 0 disables link ARQ.
    retry_limit: u8,
    /// Frames whose network packet exceeds this use RTS/CTS.
    rts_threshold: Option<u32>,
    queue_limit: usize,
    /// Four EDCA access categories instead of plain DCF.
    edca: bool,
    /// Bit-rate selection (none: every frame at the configured rate).
    pub(super) rates: Option<super::rate_control::RateSelection>,
    /// The reception curve's width (dB) a rate's SNR need shifts; none
    /// when PER does not depend on SNR (`disc`).
    width_db: Option<f64>,
    /// The geometry models capture / propagation delay (fixed for a run).
    capture: bool,
    delayed: bool,
    pub(super) st: Vec<Station>,
    air: Vec<Option<Air>>,
    free: Vec<u32>,
    pub(super) stats: MediumStats,
    pub(super) slot: Duration,
    pub(super) sifs: Duration,
    pub(super) eifs: Duration,
    pub(super) ack_t: Duration,
    cts_t: Duration,
    rts_t: Duration,
    scratch: Vec<NodeId>,
    /// Total power of the interfering transmissions reaching each node.
    intf_power: Vec<f64>,
    rx_pool: Vec<Vec<(NodeId, bool)>>,
    sensed_pool: Vec<Vec<(NodeId, u8)>>,
    access: PhantomData<A>,
}

impl<A: Access> Stations<A> {
    /// `radios[i]` is node i's radio in the core's ledgers.
    pub fn new(spec: &MediumSpec, radios: &[u32], streams: &Streams) -> Stations<A> {
        let n = spec.positions.len();
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
            access_key: None,
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
                backoffs: 0,
                counting: 0,
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
                tx_by_kind: Default::default(),
                frames_sent: 0,
                bytes_on_air: 0,
                frames_received: 0,
                last_air: u32::MAX,
                service: Default::default(),
            })
            .collect();
        Stations {
            n,
            retry_limit: spec.retry_limit,
            rts_threshold: spec.rts_threshold,
            queue_limit: spec.queue_limit,
            edca: spec.edca,
            rates: super::rate_control::RateSelection::new(spec.rate_control, phy, n, |i| {
                streams.stream(&format!("medium/{i}/rate"))
            }),
            width_db: match spec.reception {
                super::Reception::LogDistance { width_db, .. } => Some(width_db),
                super::Reception::Disc => None,
            },
            capture: spec.capture_db.is_some(),
            delayed: spec.propagation_delay,
            st,
            air: Vec::new(),
            free: Vec::new(),
            stats: MediumStats::default(),
            slot: phy.slot,
            sifs: phy.sifs,
            eifs: phy.eifs(),
            ack_t: phy.ack_airtime(),
            cts_t: phy.control_airtime(phy::CTS_BYTES),
            rts_t: phy.control_airtime(phy::RTS_BYTES),
            scratch: Vec::new(),
            intf_power: vec![0.0; n],
            rx_pool: Vec::new(),
            sensed_pool: Vec::new(),
            phy: phy.clone(),
            access: PhantomData,
        }
    }

    pub(super) fn radio_of(&self, s: usize) -> usize {
        self.st[s].radio as usize
    }

    /// The counters plus per-node airtime and frame counts.
    pub(super) fn snapshot(&self) -> MediumStats {
        let mut s = self.stats.clone();
        s.tx_airtime_s = self
            .st
            .iter()
            .map(|st| st.tx_airtime.as_secs_f64())
            .collect();
        s.frames_sent = self.st.iter().map(|st| st.frames_sent).collect();
        s.tx_by_kind = self.st.iter().map(|st| st.tx_by_kind).collect();
        s.frames_received = self.st.iter().map(|st| st.frames_received).collect();
        s.bytes_on_air = self.st.iter().map(|st| st.bytes_on_air).collect();
        if let Some(r) = &self.rates {
            s.data_tx_by_rate = r.attempts_by_rate();
        }
        s
    }

    /// What `Net::link` reports for `node`'s link toward `nbr`, with the
    /// policy's estimate of the rate still available.
    pub(super) fn link_info(
        &self,
        node: NodeId,
        nbr: NodeId,
        in_range: bool,
        available: impl FnOnce() -> Option<f64>,
    ) -> Option<LinkInfo> {
        let st = &self.st[node as usize];
        let stats = st.nbrs.iter().find(|x| x.node == nbr);
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
            rate_bps: self.phy.rate_bps,
            up: in_range,
            queue_len: st
                .acs
                .iter()
                .flat_map(|a| a.queue.iter())
                .filter(|q| q.next == nbr)
                .count(),
            loss_estimate: loss,
            available_rate_bps: available(),
            etx,
        })
    }

    pub(super) fn link_counts(&self, node: NodeId, nbr: NodeId) -> Option<LinkCounts> {
        let x = self.st[node as usize].nbrs.iter().find(|x| x.node == nbr)?;
        Some(LinkCounts {
            attempts: x.attempts,
            acked: x.acked,
        })
    }

    pub(super) fn visit_links(&self, f: &mut dyn FnMut(usize, NodeId, LinkCounts)) {
        for (a, st) in self.st.iter().enumerate() {
            for x in &st.nbrs {
                let c = LinkCounts {
                    attempts: x.attempts,
                    acked: x.acked,
                };
                f(a, x.node, c);
            }
        }
    }

    /// Queue `frame` at `node` for its next hop `next` (or [`BROADCAST`]).
    pub(super) fn enqueue(
        &mut self,
        cx: &mut Cx<'_>,
        node: NodeId,
        frame: Frame,
        next: NodeId,
        lsa: bool,
    ) {
        let retry_limit = self.retry_limit;
        let ac = if self.edca {
            phy::ac_index(frame.opts.access_class)
        } else {
            2
        };
        let st = &mut self.st[node as usize];
        if st.acs[ac].queue.len() >= self.queue_limit {
            self.stats.queue_drops += 1;
            cx.core.recycle(frame.packet);
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
            lsa,
            rate: super::rate_control::CONFIGURED,
        });
        if st.acs[ac].queue.len() == 1 {
            st.service.head(ac, cx.core.now);
        }
        A::kick(self, cx, node as usize, ac);
    }

    /// The node died: its queue is lost and its station falls silent.
    pub(super) fn kill(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        let st = &mut self.st[node as usize];
        for ac in 0..4 {
            for q in st.acs[ac].queue.drain(..) {
                cx.core.recycle(q.frame.packet);
            }
            st.service.flushed(ac);
            st.set_backoff(ac, None);
            st.unschedule(ac, &mut cx.core.queue);
        }
        st.exchange = false;
        st.waiting = Waiting::Nothing;
        st.response = None;
    }

    /// The node's radio is usable again: resume sending.
    pub(super) fn wake(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        for ac in 0..4 {
            A::kick(self, cx, node as usize, ac);
        }
    }

    /// The station events every policy shares: transmissions on the air,
    /// ACK/CTS timeouts, responses, the NAV. Others are ignored.
    #[inline(always)]
    pub(super) fn handle(&mut self, cx: &mut Cx<'_>, ev: MediumEvent) {
        match ev {
            MediumEvent::TxEnd(id) => self.tx_end(cx, id),
            MediumEvent::Arrive { id, node, flags } => {
                self.arrive(cx.core, cx.geo, id, node as usize, flags);
                if flags & CS != 0 {
                    self.update_sense(cx.core, node as usize);
                }
            }
            MediumEvent::Depart { id, node, flags } => self.depart(cx, id, node as usize, flags),
            MediumEvent::Timeout { node, gen } => self.timeout(cx, node as usize, gen),
            MediumEvent::Respond { node, gen } => self.respond(cx, node as usize, gen),
            MediumEvent::NavEnd { node } => self.update_sense(cx.core, node as usize),
            _ => {}
        }
    }

    pub(super) fn usable(&self, cx: &Cx<'_>, s: usize) -> bool {
        cx.core.nodes[s].alive() && cx.core.radios[self.st[s].radio as usize].usable_at(cx.core.now)
    }

    pub(super) fn sensed_idle(&self, s: usize, now: Time) -> bool {
        let st = &self.st[s];
        st.busy == 0 && st.nav <= now && !st.tx_active && !st.exchange && st.response.is_none()
    }

    /// Track idle/busy transitions of what `s` senses.
    pub(super) fn update_sense(&mut self, core: &mut Core, s: usize) {
        let now = core.now;
        let idle = self.sensed_idle(s, now);
        let st = &mut self.st[s];
        if idle && !st.sensing_idle {
            st.sensing_idle = true;
            st.idle_since = now;
            A::medium_idle(self, core, s);
        } else if !idle && st.sensing_idle {
            st.sensing_idle = false;
            A::medium_busy(self, core, s);
        }
    }

    fn data_bytes(&self, q: &Queued) -> u32 {
        self.phy.psdu_bytes(q.frame.network_len())
    }

    /// Send the head frame: RTS first if it is long enough, else the data.
    pub(super) fn transmit_head(&mut self, cx: &mut Cx<'_>, s: usize, ac: usize, no_rts: bool) {
        let now = cx.core.now;
        let Some(q) = self.st[s].acs[ac].queue.front() else {
            self.st[s].exchange = false;
            self.update_sense(cx.core, s);
            return;
        };
        let (next, seq, len) = (q.next, q.seq, q.frame.network_len());
        let bytes = self.data_bytes(q);
        let wants_ack = next != BROADCAST && q.attempts > 1;
        let (data_t, extra_db) = self.head_rate(now, s, ac, wants_ack);
        let (sifs, ack_t) = (self.sifs, self.ack_t);
        let st = &mut self.st[s];
        if !st.exchange {
            st.exchange_start = now;
        }
        st.exchange = true;
        st.cur = ac;
        st.set_backoff(ac, None);
        let use_rts =
            !no_rts && wants_ack && self.rts_threshold.is_some_and(|t| len as u64 > t as u64);
        if use_rts {
            let nav_end = now + self.rts_t + sifs + self.cts_t + sifs + data_t + sifs + ack_t;
            self.st[s].waiting = Waiting::Cts;
            self.stats.rts_tx += 1;
            self.start_air(
                cx,
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
        // Only an exchange with a link ACK says whether the frame got
        // through: a frame sent without one (Hop's data, UDP/no-ARQ) would
        // otherwise count as lost, and measured ETX and loss estimates would
        // call a link that carries such traffic broken.
        if wants_ack {
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
            cx,
            s,
            Kind::Data,
            next,
            (bytes, data_t),
            nav_end,
            seq,
            wants_ack,
        );
        if let Some(Some(air)) = self.air.get_mut(self.st[s].last_air as usize) {
            air.extra_db = extra_db;
        }
    }

    /// The head frame's airtime and how much more SNR its rate needs than
    /// the configured one. Under rate control a frame with link ARQ gets
    /// its rate on its first attempt and keeps it for its retries.
    fn head_rate(&mut self, now: Time, s: usize, ac: usize, wants_ack: bool) -> (Duration, f32) {
        use super::rate_control::CONFIGURED;
        let Some(q) = self.st[s].acs[ac].queue.front() else {
            return (Duration::ZERO, 0.0);
        };
        let (len, next) = (q.frame.network_len(), q.next);
        let Some(rates) = self.rates.as_mut().filter(|_| wants_ack) else {
            return (self.phy.data_airtime(len), 0.0);
        };
        let bytes = self.phy.psdu_bytes(len);
        let a = &mut self.st[s].acs[ac];
        let attempt = a.retries as u32;
        let q = a.queue.front_mut().expect("checked above");
        if q.rate == CONFIGURED {
            q.rate = rates.choose(s, next, bytes, now);
        }
        let rate = super::rate_control::RateSelection::attempt_rate(q.rate, attempt);
        rates.sent(rate);
        (rates.airtime(rate, bytes), rates.extra_db(rate))
    }

    /// Airtime of `q` (queued at `s`) if it were sent next: at its rate,
    /// or the one rate control would give it now.
    pub(super) fn planned_airtime(&self, now: Time, s: usize, q: &Queued) -> Duration {
        let len = q.frame.network_len();
        match &self.rates {
            Some(r) if q.next != BROADCAST && q.attempts > 1 => {
                let rate = match q.rate {
                    super::rate_control::CONFIGURED => r.peek(s, q.next, now),
                    rate => rate,
                };
                r.airtime(rate, self.phy.psdu_bytes(len))
            }
            _ => self.phy.data_airtime(len),
        }
    }

    #[inline]
    fn arm_timeout(&mut self, cx: &mut Cx<'_>, s: usize, answer: Duration) {
        let st = &mut self.st[s];
        st.tgen = st.tgen.wrapping_add(1);
        let at = cx.core.now + self.sifs + answer + self.slot + cx.geo.round_trip;
        cx.core.queue.push(
            at,
            Event::Medium(MediumEvent::Timeout {
                node: s as u32,
                gen: st.tgen,
            }),
        );
    }

    #[inline]
    fn set_nav(&mut self, cx: &mut Cx<'_>, r: usize, until: Time) {
        if until > self.st[r].nav && until > cx.core.now {
            self.st[r].nav = until;
            cx.core
                .queue
                .push(until, Event::Medium(MediumEvent::NavEnd { node: r as u32 }));
        }
    }

    #[inline]
    fn respond_in_sifs(&mut self, cx: &mut Cx<'_>, r: usize, resp: Response) {
        let st = &mut self.st[r];
        st.response = Some(resp);
        st.rgen = st.rgen.wrapping_add(1);
        cx.core.queue.push(
            cx.core.now + self.sifs,
            Event::Medium(MediumEvent::Respond {
                node: r as u32,
                gen: st.rgen,
            }),
        );
    }

    /// `r` decoded `air` correctly.
    fn receive(&mut self, cx: &mut Cx<'_>, r: usize, air: &Air) {
        let rn = r as NodeId;
        let now = cx.core.now;
        match air.kind {
            Kind::Data => {
                if air.dst == rn || air.dst == BROADCAST {
                    if air.wants_ack {
                        self.respond_in_sifs(cx, r, Response::Ack { to: air.src });
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
                        // Routing's: the medium installs and floods it
                        // once the event is over.
                        if let Some(frame) = self.copy_head(cx, air) {
                            cx.decoded.adverts.push((r, frame.packet));
                        }
                        return;
                    }
                    if let Some(frame) = self.copy_head(cx, air) {
                        self.stats.data_delivered += 1;
                        self.st[r].frames_received += 1;
                        cx.out.push(Out::Deliver(rn, frame));
                    }
                } else {
                    self.set_nav(cx, r, air.nav_end);
                    if !cx.core.ports[r].is_empty() || !cx.core.nodes[r].relays.is_empty() {
                        // Counted at every node with agents; copied only
                        // for one with an agent that listens.
                        if cx.core.overhearing[r] == 0 {
                            self.stats.overheard += self.on_air(air).is_some() as u64;
                        } else if let Some(frame) = self.copy_head(cx, air) {
                            self.stats.overheard += 1;
                            cx.out.push(Out::Overheard(rn, frame));
                        }
                    }
                }
            }
            Kind::Rts => {
                let st = &self.st[r];
                if air.dst == rn {
                    if st.nav <= now && st.response.is_none() && !st.tx_active {
                        self.respond_in_sifs(
                            cx,
                            r,
                            Response::Cts {
                                to: air.src,
                                nav_end: air.nav_end,
                            },
                        );
                    }
                } else {
                    self.set_nav(cx, r, air.nav_end);
                }
            }
            Kind::Cts => {
                if air.dst == rn && self.st[r].waiting == Waiting::Cts {
                    let st = &mut self.st[r];
                    st.waiting = Waiting::Nothing;
                    st.tgen = st.tgen.wrapping_add(1);
                    self.respond_in_sifs(cx, r, Response::Data);
                } else if air.dst != rn {
                    self.set_nav(cx, r, air.nav_end);
                }
            }
            Kind::Ack => {
                if air.dst == rn && self.st[r].waiting == Waiting::Ack {
                    let st = &mut self.st[r];
                    st.waiting = Waiting::Nothing;
                    st.tgen = st.tgen.wrapping_add(1);
                    self.complete(cx, r, true);
                }
            }
        }
    }

    fn head_is_lsa(&self, air: &Air) -> bool {
        self.on_air(air).is_some_and(|(_, lsa)| lsa)
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
    fn copy_head(&self, cx: &mut Cx<'_>, air: &Air) -> Option<Frame> {
        let (f, _) = self.on_air(air)?;
        let mut packet = cx.core.buffer();
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
            flow: f.flow,
            origin: f.origin,
        })
    }

    /// The head frame's exchange is over (acknowledged, or sent without ACK).
    fn complete(&mut self, cx: &mut Cx<'_>, s: usize, acked: bool) {
        let now = cx.core.now;
        let st = &mut self.st[s];
        let ac = st.cur;
        let a = &mut st.acs[ac];
        if let Some(q) = a.queue.pop_front() {
            if acked {
                if let Some(x) = st.nbrs.iter_mut().find(|x| x.node == q.next) {
                    x.acked += 1;
                }
                if let Some(r) = self.rates.as_mut() {
                    let bytes = self.phy.psdu_bytes(q.frame.network_len());
                    let tries = a.retries as u32 + 1;
                    r.report(s, q.next, q.rate, bytes, tries, true, now);
                }
            }
            let bytes = q.frame.network_len() as u32;
            st.service
                .served(ac, now, q.next, bytes, acked, !a.queue.is_empty());
            // Still propagating toward farther receivers: the air keeps it.
            match self.air.get_mut(st.last_air as usize) {
                Some(Some(air)) if air.src as usize == s && air.seq == q.seq && air.pending > 0 => {
                    air.stash = Some((q.frame, q.lsa));
                }
                _ => cx.core.recycle(q.frame.packet),
            }
        }
        let a = &mut st.acs[ac];
        a.cw = a.p.cw_min;
        a.retries = 0;
        st.waiting = Waiting::Nothing;
        // Continue a TXOP with the next frame if the policy lets it.
        if let Some(start) = st.txop_start {
            if A::txop_continues(self, now, s, ac, start) {
                self.respond_in_sifs(cx, s, Response::Data);
                return;
            }
        }
        self.end_exchange(cx, s, ac);
    }

    /// Leave the exchange; the policy decides what comes next (a fresh
    /// post-backoff under DCF).
    fn end_exchange(&mut self, cx: &mut Cx<'_>, s: usize, ac: usize) {
        let st = &mut self.st[s];
        st.txop_start = None;
        st.exchange = false;
        A::exchange_over(self, cx, s, ac);
    }

    /// An attempt of `ac`'s head frame failed: retry it (when is the
    /// policy's), or drop the frame at its attempt limit.
    pub(super) fn failed_attempt(&mut self, cx: &mut Cx<'_>, s: usize, ac: usize) {
        let st = &mut self.st[s];
        let a = &mut st.acs[ac];
        a.retries = a.retries.saturating_add(1);
        let give_up = a.queue.front().is_none_or(|q| a.retries >= q.attempts);
        if give_up {
            let tries = a.retries;
            if let Some(q) = a.queue.pop_front() {
                let bytes = q.frame.network_len() as u32;
                let more = !a.queue.is_empty();
                st.service
                    .served(ac, cx.core.now, q.next, bytes, false, more);
                self.stats.retry_drops += 1;
                if let Some(r) = self.rates.as_mut() {
                    let psdu = self.phy.psdu_bytes(q.frame.network_len());
                    r.report(s, q.next, q.rate, psdu, tries as u32, false, cx.core.now);
                }
                cx.core.recycle(q.frame.packet);
            }
            a.retries = 0;
        }
        A::attempt_failed(self, cx, s, ac, give_up);
    }

    fn timeout(&mut self, cx: &mut Cx<'_>, s: usize, gen: u32) {
        let st = &mut self.st[s];
        if gen != st.tgen || st.waiting == Waiting::Nothing {
            return;
        }
        st.waiting = Waiting::Nothing;
        let ac = st.cur;
        st.txop_start = None;
        st.exchange = false;
        self.failed_attempt(cx, s, ac);
        self.update_sense(cx.core, s);
        for other in 0..4 {
            A::kick(self, cx, s, other);
        }
    }

    fn respond(&mut self, cx: &mut Cx<'_>, s: usize, gen: u32) {
        let st = &mut self.st[s];
        if gen != st.rgen {
            return;
        }
        let Some(resp) = st.response.take() else {
            return;
        };
        if st.tx_active || !self.usable(cx, s) {
            if matches!(resp, Response::Data) {
                self.timeout_now(cx, s);
            }
            self.update_sense(cx.core, s);
            return;
        }
        match resp {
            Response::Ack { to } => {
                self.stats.acks_tx += 1;
                let nav = cx.core.now + self.ack_t;
                self.start_air(
                    cx,
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
                    cx,
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
                self.transmit_head(cx, s, ac, true)
            }
        }
    }

    /// Treat the current exchange as failed now (the station could not go on).
    fn timeout_now(&mut self, cx: &mut Cx<'_>, s: usize) {
        let st = &mut self.st[s];
        st.waiting = Waiting::Ack;
        let gen = st.tgen;
        self.timeout(cx, s, gen);
    }
}
