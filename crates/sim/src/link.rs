//! Point-to-point links: one [`Transmitter`] per direction.
//!
//! A direction has a rate, a propagation delay, a drop-tail queue, a per-frame
//! link-layer overhead, an optional link-layer ARQ, and its own loss process.
//! Links are full duplex, as ns-2/ns-3 point-to-point links are: the two
//! directions never contend. Link-layer ACKs travel on the reverse direction's
//! channel (they face its loss process) without queueing behind its data,
//! which is the full-duplex assumption applied to control frames.

use std::collections::VecDeque;

use joulenet_channel::loss::LossProcess;
use joulenet_proto::{Duration, NodeId, Time};

use crate::frame::Frame;

pub type LinkIndex = u32;

/// Link-layer retransmission: stop-and-wait with an ACK per frame.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Arq {
    /// Transmissions per frame including the first (retry limit + 1).
    pub max_attempts: u8,
    /// Size of a link-layer ACK on the air, overhead included.
    pub ack_bytes: u32,
    /// Gap between the end of a data frame and the start of its ACK.
    pub sifs: Duration,
}

/// The fixed properties of one link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    pub rate_bps: u64,
    pub delay: Duration,
    /// Frames that may wait behind the one being transmitted.
    pub queue_limit: usize,
    /// Link-layer bytes added to every frame (MAC header, FCS, preamble).
    pub overhead_bytes: u32,
    /// Time on the air before every frame's bits, at no data rate: a
    /// radio's preamble and turnaround (E2TCP §1.2: WaveLAN needs 254 µs
    /// before the payload). Link ACKs pay it too.
    pub frame_time: Duration,
    /// Each delivered frame is held up to this much longer, uniformly at
    /// random, in order (a frame never overtakes the one before it): the
    /// per-segment delays of the Wave & Probing paper's PHASE_DROP (§4),
    /// which sits between transport and IP, so the radios do not see it.
    pub jitter: Duration,
    pub arq: Option<Arq>,
    /// When the link is down (`crate::link_schedule`).
    pub down: crate::link_schedule::Downtime,
}

impl LinkParams {
    pub fn frame_bits(&self, network_len: usize) -> u64 {
        (network_len as u64 + self.overhead_bytes as u64) * 8
    }
}

/// What happened on a link direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkCounters {
    /// Frames handed to the link (after the queue accepted them).
    pub frames_offered: u64,
    /// Transmission attempts, and their bytes on the air (overhead included).
    pub attempts: u64,
    pub bytes_on_air: u64,
    /// Attempts the channel corrupted.
    pub attempts_lost: u64,
    /// Frames that reached the receiver (once each).
    pub frames_delivered: u64,
    /// Frames dropped because the queue was full.
    pub queue_drops: u64,
    /// Frames given up on by link-layer ARQ or lost without ARQ.
    pub frames_lost: u64,
    /// Frames that arrived while the receiving radio was asleep or dead.
    pub frames_missed: u64,
    pub link_acks: u64,
    pub link_acks_lost: u64,
    /// Most frames ever waiting behind a transmission. A frame that finds
    /// the transmitter free at the instant it is handed over never waits.
    pub peak_queue: usize,
    /// Time the transmitter was busy (sending or waiting for a link ACK).
    pub busy_time: Duration,
}

/// One direction of a point-to-point link.
pub struct Transmitter {
    pub params: LinkParams,
    pub from: NodeId,
    pub to: NodeId,
    pub from_radio: Option<u32>,
    pub to_radio: Option<u32>,
    /// The opposite direction of the same link.
    pub reverse: LinkIndex,
    pub loss: Box<dyn LossProcess>,
    pub queue: VecDeque<Frame>,
    /// When the transmission in progress (with its ACK exchange) ends:
    /// the transmitter is busy while `now < free_at`. A `TransmitDone`
    /// event is queued for that time only while frames wait behind it.
    pub free_at: Time,
    /// Frames propagating toward the receiver, in arrival order.
    pub in_flight: VecDeque<(Time, Frame)>,
    pub counters: LinkCounters,
    /// Wireless (has radios) or wired.
    pub wireless: bool,
    /// Draws the `jitter` of each delivered frame (its own stream, so a
    /// link without jitter draws nothing and runs as before).
    pub jitter_rng: rand_pcg::Pcg64Mcg,
}

impl Transmitter {
    /// When a frame that would arrive at `at` arrives with the link's
    /// jitter: a uniform extra delay, never before the frame ahead of it.
    pub fn jittered(&mut self, at: Time) -> Time {
        if self.params.jitter == Duration::ZERO {
            return at;
        }
        use rand::Rng;
        let extra =
            Duration((self.params.jitter.0 as f64 * self.jitter_rng.random::<f64>()) as u64);
        let behind = self.in_flight.back().map_or(Time::ZERO, |f| f.0);
        (at + extra).max(behind)
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }
}

/// The outcome of transmitting one frame, decided when it starts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// When the frame reaches the receiver, if it ever does.
    pub delivered_at: Option<Time>,
    /// When the transmitter is free for the next frame.
    pub done_at: Time,
}
