//! The ATP-like source: sends numbered packets, paced at a rate that
//! follows the path's explicit rate feedback ([`super::rate`]); keeps every
//! packet until the cumulative ACK passes it and retransmits end to end
//! what the receiver's SNACK names. No relay recovers anything for it, so
//! unlike JTP's source it has no back-off for locally recovered packets,
//! no energy budget and no per-packet link attempts.
//!
//! Two rules are JTP's (`jtp/sender.rs`), kept so that the baselines
//! differ from JTP only where the paper says they do: a SNACKed packet
//! retransmitted less than a round trip ago is still under way, not lost
//! again; and held packets at or above the feedback's highest-received mark
//! are resent once two round trips plus the grace have passed (a lost tail
//! no SNACK can name). When feedback is later than two periods plus the
//! grace, the source multiplies its rate by `late_backoff` and probes with
//! its oldest unacknowledged packet.

use std::collections::{BTreeMap, BTreeSet};

use joulenet_wire::jtp::{
    DataFlags, JtpAck, JtpData, JtpPacket, JtpRepr, LossTolerance, PROTOCOL, RATE_UNKNOWN,
};

use super::config::AtpConfig;
use super::rate::next_rate;
use super::stamp::stamp;
use crate::config_error::ConfigError;
use crate::jtp::chunks::Chunks;
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

const SEND: TimerId = TimerId(0);
const FEEDBACK_LATE: TimerId = TimerId(1);

pub struct AtpSender {
    cfg: AtpConfig,
    peer: Addr,
    timers: TimerTable,
    chunks: Chunks,
    /// Unacknowledged packets by sequence number.
    held: BTreeMap<u32, Held>,
    /// The smallest time from a packet's first sending to feedback naming
    /// it the highest received.
    rtt: Option<Duration>,
    next_seq: u32,
    /// End-to-end retransmissions to make, lowest first.
    to_resend: BTreeSet<u32>,
    rate_bps: f64,
    /// No packet leaves before this (pacing).
    next_send: Time,
    closed: bool,
    stats: TransportStats,
    late_feedbacks: u64,
}

impl AtpSender {
    pub fn new(cfg: AtpConfig, peer: Addr) -> Result<AtpSender, ConfigError> {
        cfg.validate()?;
        Ok(AtpSender {
            rate_bps: cfg.initial_rate_bps,
            chunks: Chunks::new(cfg.packet_size),
            cfg,
            peer,
            timers: TimerTable::new(),
            held: BTreeMap::new(),
            rtt: None,
            next_seq: 0,
            to_resend: BTreeSet::new(),
            next_send: Time::ZERO,
            closed: false,
            stats: TransportStats::default(),
            late_feedbacks: 0,
        })
    }

    /// The rate the source sends at now, bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn emit(&mut self, net: &mut dyn Net, seq: u32, retx: bool) {
        let Some(held) = self.held.get_mut(&seq) else {
            return;
        };
        held.last_sent = net.now();
        let repr = JtpRepr::Data(JtpData {
            format: self.cfg.format,
            flags: DataFlags {
                fin: held.fin,
                retx,
                local: false,
            },
            flow: self.cfg.flow,
            seq,
            available_rate: RATE_UNKNOWN,
            // No energy accounting: ATP has none.
            energy_budget: u32::MAX,
            energy_used: 0,
            loss_tolerance: LossTolerance::ZERO,
            hops: 0,
            priority: 0,
            payload: &held.payload,
        });
        let len = repr.buffer_len() as u64;
        let payload_len = held.payload.len() as u64;
        let mut buf = net.packet_buffer();
        buf.clear();
        repr.emit_to_vec(&mut buf);
        // The source's own link is the path's first hop.
        stamp(net, self.peer.node, &mut buf, self.cfg.max_attempts);
        net.send(self.peer, buf, TxOpts::ipv4(PROTOCOL));
        self.stats.data_packets += 1;
        self.stats.data_bytes += len;
        if retx {
            self.stats.retransmitted_packets += 1;
            self.stats.retransmitted_bytes += len;
        } else {
            self.stats.payload_bytes += payload_len;
        }
        let gap = Duration::from_secs_f64(len as f64 * 8.0 / self.rate_bps);
        self.next_send = net.now() + gap;
    }

    /// Sends what is due now (retransmissions first) and arms the send
    /// timer for the next.
    fn pump(&mut self, net: &mut dyn Net) {
        if self.closed {
            self.timers.cancel(SEND);
            return;
        }
        if net.now() < self.next_send {
            self.timers.set(SEND, self.next_send);
            return;
        }
        self.timers.cancel(SEND);
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
            let held = Held {
                payload,
                fin,
                first_sent: now,
                last_sent: now,
            };
            self.held.insert(seq, held);
            self.emit(net, seq, false);
            self.timers.set(SEND, self.next_send);
        }
    }

    fn arm_feedback_watch(&mut self, net: &dyn Net) {
        let wait = self
            .cfg
            .feedback_period
            .saturating_mul(2)
            .saturating_add(self.cfg.ack_grace);
        self.timers.set(FEEDBACK_LATE, net.now() + wait);
    }

    /// Queues the SNACKed packets not still under way, and a lost tail.
    fn queue_losses(&mut self, now: Time, ack: &JtpAck) {
        for seq in &ack.snack {
            let Some(h) = self.held.get(seq) else {
                continue;
            };
            // Sent less than a round trip ago: it cannot have reached the
            // receiver before it wrote this feedback.
            let under_way = self.rtt.is_some_and(|rtt| h.last_sent + rtt > now);
            if !under_way {
                self.to_resend.insert(*seq);
            }
        }
        let Some(rtt) = self.rtt else { return };
        let patience = rtt.saturating_mul(2).saturating_add(self.cfg.ack_grace);
        for (seq, h) in self.held.range(ack.highest..) {
            if h.last_sent + patience <= now {
                self.to_resend.insert(*seq);
            }
        }
    }

    fn on_feedback(&mut self, net: &mut dyn Net, ack: JtpAck) {
        self.stats.packets_received += 1;
        if ack.flow != self.cfg.flow {
            self.stats.unexpected_dropped += 1;
            return;
        }
        if ack.rate != RATE_UNKNOWN {
            self.rate_bps = next_rate(self.rate_bps, ack.rate as f64, &self.cfg);
        }
        let now = net.now();
        if let Some(h) = ack.highest.checked_sub(1).and_then(|s| self.held.get(&s)) {
            let sample = now.saturating_since(h.first_sent);
            self.rtt = Some(self.rtt.map_or(sample, |r| r.min(sample)));
        }
        self.held = self.held.split_off(&ack.cum_ack);
        self.queue_losses(now, &ack);
        if ack.fin && self.chunks.fin_taken() && self.held.is_empty() {
            self.closed = true;
            self.timers.clear();
            net.event(TransportEvent::Closed);
            return;
        }
        self.arm_feedback_watch(net);
        self.pump(net);
    }

    fn on_feedback_late(&mut self, net: &mut dyn Net) {
        self.stats.timeouts += 1;
        self.late_feedbacks += 1;
        self.rate_bps = (self.rate_bps * self.cfg.late_backoff).max(self.cfg.min_rate_bps());
        if self.to_resend.is_empty() {
            if let Some(&seq) = self.held.keys().next() {
                self.to_resend.insert(seq);
            }
        }
        self.arm_feedback_watch(net);
        self.pump(net);
    }
}

impl Agent for AtpSender {
    fn protocol(&self) -> &'static str {
        "atp"
    }

    fn start(&mut self, net: &mut dyn Net) {
        self.next_send = net.now();
        self.arm_feedback_watch(net);
        self.pump(net);
    }

    fn on_packet(&mut self, net: &mut dyn Net, _from: Addr, packet: &[u8]) {
        match JtpRepr::parse(&JtpPacket::new_unchecked(packet)) {
            Ok(JtpRepr::Ack(ack)) => self.on_feedback(net, ack),
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
                FEEDBACK_LATE => self.on_feedback_late(net),
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
            "atp_late_feedback" => Some(self.late_feedbacks as f64),
            "atp_held" => Some(self.held.len() as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}
