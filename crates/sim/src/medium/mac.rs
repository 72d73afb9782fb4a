//! The one interface between the medium's MAC and everything above it.
//!
//! A [`Mac`] owns every station's interface queues and decides when each
//! frame goes on the air; [`super::Medium`] composes it with the geometry
//! (who hears whom, PER, delays: [`Geometry`]) and routing
//! ([`super::routing::Router`]), holding it as a [`super::AnyMac`] (a new
//! MAC is a new variant there). Two implementations exist:
//!
//! * [`super::dcf::Dcf`] — 802.11 DCF, or EDCA with four access categories
//!   (`edca = true`): carrier sense, NAV, backoff, RTS/CTS, TXOP bursts,
//!   link ARQ with a retry limit.
//! * [`super::tdma::Tdma`] — JAVeLEN-like TDMA: collision-free
//!   pseudo-random slot schedules per frame, one frame per link slot, link
//!   ACKs and retries in the link's later slots, radios asleep outside
//!   their slots.
//!
//! Both share the 802.11 station machinery (frames on the air, link ACKs,
//! duplicate filtering: `station.rs`), differing only in their access
//! policy ([`super::station::Access`]).
//!
//! # What a transport asks of the MAC, and how
//!
//! Transports never call a `Mac` directly: they send through `Net` with a
//! [`joulenet_proto::TxOpts`], the simulator routes the packet and hands
//! the frame to [`Mac::enqueue`] with the options intact, and `Net::link`
//! answers from [`Mac::link`]. Per packet:
//!
//! * `TxOpts::link_attempts` — link-layer attempts for this packet,
//!   including the first (`Some(1)`: link ARQ off; `None`: the medium's
//!   `retry_limit` + 1). Hop turns ARQ off for its data frames (it recovers
//!   losses hop by hop itself) and leaves it on for its control frames;
//!   JTP sets it per packet from the packet's loss tolerance. Broadcasts
//!   always get one attempt. Under TDMA the retries happen in the link's
//!   later slots.
//! * `TxOpts::access_class` — the 802.11e access category under EDCA
//!   (voice, video, best effort, background: separate queues, AIFS and
//!   contention windows; Hop puts its control frames in voice and bulk
//!   data in background). Plain DCF and TDMA use one queue.
//! * `TxOpts::burst` — the frame may follow the previous one in the same
//!   transmit opportunity (SIFS-separated, no new backoff) for up to the
//!   medium's `txop`, or [`super::dcf::BURST_TXOP`] (Hop's 8160 µs) when
//!   the medium sets none. TDMA ignores it (one frame per slot).
//!
//! Per link, [`Mac::link`] reports what `Net::link` returns: the PHY rate,
//! the frames queued toward the neighbour, the measured loss rate of one
//! link attempt and the ETX (attempts per acknowledged frame), and under
//! TDMA the rate still available (the link's unused slots), which JTP uses
//! as its rate estimate.

use joulenet_proto::{LinkInfo, NodeId, Time};

use super::geometry::Geometry;
use super::{MediumEvent, MediumStats};
use crate::core::Core;
use crate::frame::Frame;
use crate::rng::Streams;

/// What a MAC borrows from the rest of the simulator and the medium while
/// it works: the core (clock, event queue, radios, node state), the
/// geometry (mutable for the fading states it draws), which nodes are up
/// on the medium (outages), and where to put what it hands back: frames
/// for the simulation (`out`, drained after every medium event) and what
/// routing needs from the frames decoded (`decoded`).
pub struct Cx<'a> {
    pub core: &'a mut Core,
    pub geo: &'a mut Geometry,
    pub up: &'a [bool],
    pub out: &'a mut Vec<Out>,
    pub decoded: &'a mut Decoded,
}

/// What a MAC hands up to the simulation after an event.
#[derive(Debug)]
pub enum Out {
    /// A data frame reached `node` (its next hop or final destination).
    Deliver(NodeId, Frame),
    /// `node` overheard a data frame addressed to another node (handed to
    /// the agents and relays on `node` with its source and destination).
    Overheard(NodeId, Frame),
}

/// What a MAC decoded during an event that belongs to routing, collected
/// for [`super::Medium`] to act on when the event is over.
#[derive(Debug, Default)]
pub struct Decoded {
    /// Record every successful decode in `heard` (link-state neighbour
    /// liveness). Set only with link-state routing over the air, the only
    /// user of decodes; advertisements exist only then.
    pub track_heard: bool,
    /// (receiver, sender) of every frame decoded.
    pub heard: Vec<(u32, u32)>,
    /// Link-state advertisements decoded, with the node that decoded them.
    pub adverts: Vec<(usize, Vec<u8>)>,
}

/// Data frames a node sent toward one neighbour asking for a link ACK, and
/// how many of them were acknowledged (first attempts and retransmissions
/// counted separately; frames sent without an ACK tell nothing).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkCounts {
    pub attempts: u64,
    pub acked: u64,
}

impl LinkCounts {
    /// Probability that one attempt fails (data or ACK lost).
    pub fn loss_estimate(&self) -> Option<f64> {
        (self.attempts > 0).then(|| 1.0 - self.acked as f64 / self.attempts as f64)
    }

    /// Expected transmission count (attempts per acknowledged frame).
    pub fn etx(&self) -> Option<f64> {
        (self.attempts > 0 && self.acked > 0).then(|| self.attempts as f64 / self.acked as f64)
    }
}

/// A medium access control: the interface queues of every node on the
/// medium and the protocol that puts their frames on the air.
///
/// The medium calls it in three ways: frames to send ([`Mac::enqueue`]),
/// its own events ([`Mac::handle`], the [`MediumEvent`]s it scheduled), and
/// node state changes ([`Mac::wake`], [`Mac::kill`]). It answers with
/// frames delivered or overheard ([`Cx::out`]), what routing needs from
/// what it decoded ([`Cx::decoded`]), per-link statistics ([`Mac::link`],
/// [`Mac::visit_links`]) and counters for results ([`Mac::stats`]).
///
/// Every method is deterministic: randomness comes from per-station
/// streams drawn in event order.
pub trait Mac {
    /// Schedule the MAC's first events (TDMA: build the schedule, put the
    /// radios to sleep, start the first slot). Called once, before any
    /// other event, with the run's streams.
    fn start(&mut self, cx: &mut Cx<'_>, streams: &Streams);

    /// Queue `frame` at `node` for its next hop `next` (or
    /// [`super::BROADCAST`]), honouring `frame.opts` (see the module
    /// documentation: link attempts, access category, burst). A full queue
    /// drops the frame (counted as a queue drop). `advert` marks a
    /// link-state advertisement: sent like any broadcast, but handed back
    /// through [`Cx::decoded`] instead of delivered.
    fn enqueue(&mut self, cx: &mut Cx<'_>, node: NodeId, frame: Frame, next: NodeId, advert: bool);

    /// Handle one of the MAC's own events.
    fn handle(&mut self, cx: &mut Cx<'_>, ev: MediumEvent);

    /// `node`'s radio is usable again (it woke, or the node recovered from
    /// an outage): resume sending.
    fn wake(&mut self, cx: &mut Cx<'_>, node: NodeId);

    /// `node` died or went down: its queues are lost and it falls silent.
    fn kill(&mut self, cx: &mut Cx<'_>, node: NodeId);

    /// What `Net::link` reports for `node`'s link toward `nbr` at `now`:
    /// `in_range` says whether the geometry and outages allow the link now.
    /// `None` when the link is out of range and was never used.
    fn link(&self, node: NodeId, nbr: NodeId, in_range: bool, now: Time) -> Option<LinkInfo>;

    /// The counts behind [`Mac::link`]'s loss and ETX estimates, if
    /// `node` ever sent a data frame to `nbr`.
    fn link_counts(&self, node: NodeId, nbr: NodeId) -> Option<LinkCounts>;

    /// Every (node, neighbour) pair with counts, in no particular order.
    fn visit_links(&self, f: &mut dyn FnMut(usize, NodeId, LinkCounts));

    /// The MAC's counters and per-node airtime for results (routing's
    /// counters are the medium's to fill in).
    fn stats(&self) -> MediumStats;
}
