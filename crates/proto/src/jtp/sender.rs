//! The eJTP source (§2.1, §4.1, §5): sends at the rate the destination
//! grants, paced; keeps every packet until the cumulative ACK passes it;
//! retransmits end to end only what remains in an ACK's SNACK list; pauses
//! Σ sⱼ / r(t) for the packets relays recovered on its behalf; and backs off
//! (and probes) when feedback is later than the destination announced.
//!
//! One retransmission rule is ours: a SNACK can name only holes below the
//! highest packet received, so a lost *tail* (the last packets sent) would
//! wait for a late-feedback probe. An ACK carries one past the highest
//! packet received; held packets at or above it are resent once they have
//! been out more than twice as long as the newest packet the receiver has
//! took to be reported (its age when an ACK first carried that mark), plus
//! the ACK grace. Packets sent after the newest one received are younger
//! than it, so while the mark advances at every ACK (a flowing transfer,
//! whose holes the SNACK names) nothing is resent this way, however long
//! the queues along the path make the trip; only a mark that stays put
//! (the end of a transfer, a path that broke) lets the tail age past it.

use std::collections::{BTreeMap, BTreeSet};

use joulenet_wire::jtp::{
    DataFlags, JtpAck, JtpData, JtpPacket, JtpRepr, LossTolerance, PROTOCOL, RATE_UNKNOWN,
};

use super::backoff::backoff;
use super::chunks::Chunks;
use super::config::JtpConfig;
use super::hop::{rewrite, HopVerdict};
use crate::config_error::ConfigError;
use crate::net::{Addr, Agent, Net, TimerId, TimerTable, TransportEvent, TxOpts};
use crate::stats::TransportStats;
use crate::time::{Duration, Time};

/// A packet sent and not yet acknowledged.
struct Held {
    payload: Vec<u8>,
    fin: bool,
    first_sent: Time,
    last_sent: Time,
}

/// The sender's timers.
const SEND: TimerId = TimerId(0);
const FEEDBACK_LATE: TimerId = TimerId(1);

pub struct JtpSender {
    cfg: JtpConfig,
    peer: Addr,
    timers: TimerTable,
    /// Unacknowledged packets by sequence number.
    held: BTreeMap<u32, Held>,
    /// Round-trip estimate: the smallest time from a packet's first sending
    /// to an ACK naming it the highest received (an overestimate when the
    /// receiver waited to ACK, never an underestimate).
    rtt: Option<Duration>,
    /// The highest-received mark the ACKs carry, and the age of the packet
    /// just below it when an ACK first carried that mark: how long the
    /// newest packet the receiver has took to be heard of (queues included).
    newest: Option<(u32, Duration)>,
    /// The next new sequence number.
    next_seq: u32,
    /// The application's data in packet-sized chunks.
    chunks: Chunks,
    /// End-to-end retransmissions to make, lowest first.
    to_resend: BTreeSet<u32>,
    rate_bps: f64,
    /// Packets' energy budget (the receiver's advice once it arrives).
    budget_uj: u32,
    /// No packet leaves before this (pacing and back-off).
    next_send: Time,
    /// The feedback period the receiver announced last.
    period: Option<Duration>,
    closed: bool,
    stats: TransportStats,
    /// Packets relays recovered for this source, and the last back-off.
    locally_recovered: u64,
    /// Packets the source's own hop found over their energy budget.
    over_budget: u64,
    last_backoff: Duration,
    late_feedbacks: u64,
    /// End-to-end retransmissions queued, by why: named in a SNACK, an
    /// unseen tail, a late-feedback probe.
    queued_snack: u64,
    queued_tail: u64,
    queued_probe: u64,
}

impl JtpSender {
    pub fn new(cfg: JtpConfig, peer: Addr) -> Result<JtpSender, ConfigError> {
        cfg.validate()?;
        Ok(JtpSender {
            rate_bps: cfg.initial_rate_bps,
            chunks: Chunks::new(cfg.packet_size),
            budget_uj: cfg.energy_budget_uj,
            cfg,
            peer,
            timers: TimerTable::new(),
            held: BTreeMap::new(),
            rtt: None,
            newest: None,
            next_seq: 0,
            to_resend: BTreeSet::new(),
            next_send: Time::ZERO,
            period: None,
            closed: false,
            stats: TransportStats::default(),
            locally_recovered: 0,
            over_budget: 0,
            last_backoff: Duration::ZERO,
            late_feedbacks: 0,
            queued_snack: 0,
            queued_tail: 0,
            queued_probe: 0,
        })
    }

    /// The rate the source sends at now, bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn emit(&mut self, net: &mut dyn Net, seq: u32, retx: bool) {
        let now = net.now();
        let Some(held) = self.held.get_mut(&seq) else {
            return;
        };
        held.last_sent = now;
        let (payload, fin) = (&held.payload, &held.fin);
        let repr = JtpRepr::Data(JtpData {
            format: self.cfg.format,
            flags: DataFlags {
                fin: *fin,
                retx,
                local: false,
            },
            flow: self.cfg.flow,
            seq,
            available_rate: RATE_UNKNOWN,
            energy_budget: self.budget_uj,
            energy_used: 0,
            loss_tolerance: LossTolerance::from_fraction(
                self.cfg
                    .priorities
                    .tolerance_of(seq, self.cfg.loss_tolerance),
            ),
            hops: 0,
            priority: self.cfg.priorities.of(seq, self.cfg.priority),
            payload,
        });
        let len = repr.buffer_len();
        let mut buf = net.packet_buffer();
        buf.clear();
        repr.emit_to_vec(&mut buf);
        let payload_len = payload.len() as u64;
        // The packet's slot at the granted rate is spent whether or not it
        // leaves: a packet over budget at the source must not free the slot,
        // or the send timer fires again at once, forever.
        let gap = Duration::from_secs_f64(len as f64 * 8.0 / self.rate_bps);
        self.next_send = now + gap;
        // The source is the first iJTP hop.
        let link_attempts = match rewrite(net, self.peer.node, &mut buf, &self.cfg) {
            HopVerdict::Send { link_attempts } => link_attempts,
            HopVerdict::OverBudget => {
                self.over_budget += 1;
                return;
            }
        };
        let mut opts = TxOpts::ipv4(PROTOCOL);
        opts.link_attempts = Some(link_attempts);
        net.send(self.peer, buf, opts);
        self.stats.data_packets += 1;
        self.stats.data_bytes += len as u64;
        if retx {
            self.stats.retransmitted_packets += 1;
            self.stats.retransmitted_bytes += len as u64;
        } else {
            self.stats.payload_bytes += payload_len;
        }
    }

    /// Sends what is due now and arms the send timer for the next.
    fn pump(&mut self, net: &mut dyn Net) {
        let now = net.now();
        if self.closed {
            self.timers.cancel(SEND);
            return;
        }
        if now < self.next_send {
            self.timers.set(SEND, self.next_send);
            return;
        }
        self.timers.cancel(SEND);
        // Retransmissions first, then new data.
        while let Some(seq) = self.to_resend.pop_first() {
            if self.held.contains_key(&seq) {
                self.emit(net, seq, true);
                self.timers.set(SEND, self.next_send);
                return;
            }
        }
        if let Some((payload, fin)) = self.chunks.next(net) {
            let seq = self.next_seq;
            self.next_seq += 1;
            let now = net.now();
            self.held.insert(
                seq,
                Held {
                    payload,
                    fin,
                    first_sent: now,
                    last_sent: now,
                },
            );
            self.emit(net, seq, false);
            self.timers.set(SEND, self.next_send);
        }
    }

    fn arm_feedback_watch(&mut self, net: &dyn Net) {
        let wait = match self.period {
            Some(t) => t.saturating_add(Duration(t.0 / 2)),
            None => self.cfg.feedback_lower_bound,
        };
        self.timers.set(
            FEEDBACK_LATE,
            net.now() + wait.saturating_add(self.cfg.ack_grace),
        );
    }

    fn on_ack(&mut self, net: &mut dyn Net, ack: JtpAck) {
        self.stats.packets_received += 1;
        if ack.flow != self.cfg.flow {
            self.stats.unexpected_dropped += 1;
            return;
        }
        if ack.rate > 0 && ack.rate != RATE_UNKNOWN {
            self.rate_bps = ack.rate as f64;
        }
        if ack.energy_budget > 0 {
            self.budget_uj = ack.energy_budget;
        }
        self.period = Some(Duration::from_micros(ack.feedback_period_us as u64));
        // §4.1: pause for what relays sent on our behalf, at the granted rate.
        let header = self.cfg.format.data_header_len();
        let sizes: Vec<usize> = ack
            .local
            .iter()
            .map(|s| {
                self.held
                    .get(s)
                    .map_or(self.cfg.wire_packet_len(), |h| header + h.payload.len())
            })
            .collect();
        if !sizes.is_empty() {
            self.locally_recovered += sizes.len() as u64;
            let tb = backoff(sizes, self.rate_bps).filter(|_| self.cfg.local_backoff);
            if let Some(tb) = tb {
                self.last_backoff = tb;
                self.next_send = self.next_send.max(net.now()) + tb;
            }
        }
        let now = net.now();
        if let Some(h) = ack.highest.checked_sub(1).and_then(|s| self.held.get(&s)) {
            let sample = now.saturating_since(h.first_sent);
            self.rtt = Some(self.rtt.map_or(sample, |r| r.min(sample)));
            if self.newest.is_none_or(|(mark, _)| mark != ack.highest) {
                self.newest = Some((ack.highest, sample));
            }
        }
        // Forget what arrived; resend only what remains in the SNACK.
        self.held = self.held.split_off(&ack.cum_ack);
        for seq in &ack.local {
            self.to_resend.remove(seq);
        }
        for seq in ack.snack {
            let Some(h) = self.held.get(&seq) else {
                continue;
            };
            // A retransmission sent less than a round trip ago cannot have
            // reached the receiver before it wrote this SNACK: still under
            // way, not lost again.
            let under_way = self.rtt.is_some_and(|rtt| h.last_sent + rtt > now);
            if !ack.local.contains(&seq) && !under_way && self.to_resend.insert(seq) {
                self.queued_snack += 1;
            }
        }
        // A lost tail: unseen by the receiver for twice as long as the
        // newest packet it has took to be reported.
        if let Some((_, age)) = self.newest {
            let patience = age.saturating_mul(2).saturating_add(self.cfg.ack_grace);
            for (seq, h) in self.held.range(ack.highest..) {
                if h.last_sent + patience <= now
                    && !ack.local.contains(seq)
                    && self.to_resend.insert(*seq)
                {
                    self.queued_tail += 1;
                }
            }
        }
        if ack.fin && self.chunks.fin_taken() && self.held.is_empty() {
            self.closed = true;
            self.timers.clear();
            net.event(TransportEvent::Closed);
            return;
        }
        self.arm_feedback_watch(net);
        self.pump(net);
    }
}

impl Agent for JtpSender {
    fn protocol(&self) -> &'static str {
        "jtp"
    }

    fn start(&mut self, net: &mut dyn Net) {
        self.next_send = net.now();
        self.arm_feedback_watch(net);
        self.pump(net);
    }

    fn on_packet(&mut self, net: &mut dyn Net, _from: Addr, packet: &[u8]) {
        match JtpRepr::parse(&JtpPacket::new_unchecked(packet)) {
            Ok(JtpRepr::Ack(ack)) => self.on_ack(net, ack),
            Ok(JtpRepr::Data(_)) => self.stats.unexpected_dropped += 1,
            Err(_) => self.stats.malformed_dropped += 1,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        while let Some(id) = self.timers.pop_expired(net.now()) {
            match id {
                SEND => self.pump(net),
                FEEDBACK_LATE => {
                    // §2.1.2: feedback is late — back off, and probe with the
                    // oldest unacknowledged packet so a receiver that heard
                    // nothing (or whose ACK was lost) answers.
                    self.stats.timeouts += 1;
                    self.late_feedbacks += 1;
                    self.rate_bps = (self.rate_bps * self.cfg.late_backoff).max(
                        self.cfg.controller.min_rate * 8.0 * self.cfg.wire_packet_len() as f64,
                    );
                    if self.to_resend.is_empty() {
                        if let Some(&seq) = self.held.keys().next() {
                            self.to_resend.insert(seq);
                            self.queued_probe += 1;
                        }
                    }
                    self.arm_feedback_watch(net);
                    self.pump(net);
                }
                _ => {}
            }
        }
    }

    fn on_app_ready(&mut self, net: &mut dyn Net) {
        if !self.timers.is_armed(SEND) {
            self.pump(net);
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "rate_bps" => Some(self.rate_bps),
            "jtp_locally_recovered" => Some(self.locally_recovered as f64),
            "jtp_over_budget" => Some(self.over_budget as f64),
            "jtp_backoff_s" => Some(self.last_backoff.as_secs_f64()),
            "jtp_late_feedback" => Some(self.late_feedbacks as f64),
            "jtp_held" => Some(self.held.len() as f64),
            "jtp_queued_snack" => Some(self.queued_snack as f64),
            "jtp_queued_tail" => Some(self.queued_tail as f64),
            "jtp_queued_probe" => Some(self.queued_probe as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}
