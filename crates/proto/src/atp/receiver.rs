//! The ATP-like destination: delivers the stream in order, exactly once,
//! and feeds back at a constant period (`feedback_period`, longer than the
//! RTT) from the first packet on, the first feedback at once (so the source
//! learns the path's rate after one round trip: ATP's quick start). Each
//! feedback carries the cumulative ACK, the highest packet received, a
//! SNACK of the holes below it, and the rate the path offers this flow:
//!
//!   R = (data bits that arrived since the last feedback) / (time since it)
//!     + (mean available rate stamped in those packets).
//!
//! The stamped rate is what the path's bottleneck leaves *unused* (§2.1.1:
//! idle TDMA slots), so the flow's own share shows in what arrives, not in
//! the stamp; their sum is the rate the flow could have, as ATP's
//! delay-based report is (see docs/jtp.md). The first feedback, with
//! nothing measured yet, reports the stamp alone. A period in which no
//! packet carried a stamp (links that report no available rate) reports
//! none, and the source keeps its rate.
//! After the last packet it sends a FIN feedback, and answers any later
//! packet with another.
//!
//! Unlike JTP's destination it has no path monitor and no rate controller
//! (the path's report is the rate), no variable period and no urgent
//! feedback, no loss tolerance and no energy advice.

use crate::jtp::reorder::Reorder;

use joulenet_wire::jtp::{JtpAck, JtpData, JtpPacket, JtpRepr, PROTOCOL, RATE_UNKNOWN};

use super::config::AtpConfig;
use crate::config_error::ConfigError;
use crate::net::{Addr, Agent, Net, TimerId, TimerTable, TxOpts};
use crate::stats::TransportStats;
use crate::time::Time;

const FEEDBACK: TimerId = TimerId(0);

pub struct AtpReceiver {
    cfg: AtpConfig,
    timers: TimerTable,
    /// The source, once a packet arrived.
    peer: Option<Addr>,
    /// Delivered, waiting and given-up packets.
    reorder: Reorder,
    fin_seq: Option<u32>,
    finished: bool,
    /// Stamped rates since the last feedback: sum and count.
    samples: (f64, u32),
    /// Data bytes that arrived since the last feedback, and when it left.
    arrived: (u64, Option<Time>),
    /// The rate last reported, b/s.
    reported: u32,
    stats: TransportStats,
    duplicates: u64,
}

impl AtpReceiver {
    pub fn new(cfg: AtpConfig) -> Result<AtpReceiver, ConfigError> {
        cfg.validate()?;
        Ok(AtpReceiver {
            cfg,
            timers: TimerTable::new(),
            peer: None,
            reorder: Reorder::default(),
            fin_seq: None,
            finished: false,
            samples: (0.0, 0),
            arrived: (0, None),
            reported: RATE_UNKNOWN,
            stats: TransportStats::default(),
            duplicates: 0,
        })
    }

    /// Holes between the cumulative ACK and the highest packet received.
    fn snack(&self) -> Vec<u32> {
        let room = self.cfg.max_snack.min(self.cfg.format.max_ack_entries());
        self.reorder.holes(room)
    }

    /// The arrival rate plus the mean stamped rate since the last
    /// feedback; [`RATE_UNKNOWN`] when no packet carried a stamp.
    fn take_rate(&mut self, now: Time) -> u32 {
        let (sum, n) = std::mem::take(&mut self.samples);
        let (bytes, since) = std::mem::replace(&mut self.arrived, (0, Some(now)));
        if n == 0 {
            return RATE_UNKNOWN;
        }
        let elapsed = since.map_or(0.0, |t| now.saturating_since(t).as_secs_f64());
        let arrival = if elapsed > 0.0 {
            bytes as f64 * 8.0 / elapsed
        } else {
            0.0
        };
        self.reported = (arrival + sum / n as f64).min((RATE_UNKNOWN - 1) as f64) as u32;
        self.reported
    }

    fn send_feedback(&mut self, net: &mut dyn Net) {
        let Some(peer) = self.peer else { return };
        let ack = JtpAck {
            format: self.cfg.format,
            fin: self.finished,
            urgent: false,
            flow: self.cfg.flow,
            cum_ack: self.reorder.next(),
            rate: self.take_rate(net.now()),
            energy_budget: 0,
            feedback_period_us: (self.cfg.feedback_period.as_nanos() / 1_000).min(u32::MAX as u64)
                as u32,
            highest: self.reorder.highest().map_or(0, |h| h.saturating_add(1)),
            snack: self.snack(),
            local: Vec::new(),
        };
        let mut buf = net.packet_buffer();
        buf.clear();
        JtpRepr::Ack(ack).emit_to_vec(&mut buf);
        self.stats.control_packets += 1;
        self.stats.control_bytes += buf.len() as u64;
        net.send(peer, buf, TxOpts::ipv4(PROTOCOL));
        if self.finished {
            self.timers.cancel(FEEDBACK);
        } else {
            self.timers
                .set(FEEDBACK, net.now() + self.cfg.feedback_period);
        }
    }

    fn deliver_in_order(&mut self, net: &mut dyn Net) {
        while let Some(payload) = self.reorder.pop_in_order() {
            net.deliver(&payload);
        }
    }

    fn on_data(&mut self, net: &mut dyn Net, from: Addr, d: JtpData<'_>) {
        self.stats.packets_received += 1;
        self.stats.bytes_received += d.payload.len() as u64;
        if d.flow != self.cfg.flow || self.reorder.too_far(d.seq) {
            self.stats.unexpected_dropped += 1;
            return;
        }
        let first = self.peer.is_none();
        self.peer = Some(from);
        // Every packet that arrives used the path, a copy or not.
        self.arrived.0 += (d.format.data_header_len() + d.payload.len()) as u64;
        if d.available_rate != RATE_UNKNOWN {
            self.samples.0 += d.available_rate as f64;
            self.samples.1 += 1;
        }
        if self.finished || self.reorder.is_duplicate(d.seq) {
            self.duplicates += 1;
            if self.finished {
                // The source has not heard that we are done.
                self.send_feedback(net);
            }
            return;
        }
        if d.flags.fin {
            self.fin_seq = Some(d.seq);
        }
        self.reorder.insert(d.seq, d.payload);
        self.deliver_in_order(net);
        if self.fin_seq.is_some_and(|f| self.reorder.next() > f) {
            self.finished = true;
            net.deliver_finished();
            self.send_feedback(net);
        } else if first {
            self.send_feedback(net);
        }
    }
}

impl Agent for AtpReceiver {
    fn protocol(&self) -> &'static str {
        "atp"
    }

    fn start(&mut self, _net: &mut dyn Net) {}

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        match JtpRepr::parse(&JtpPacket::new_unchecked(packet)) {
            Ok(JtpRepr::Data(d)) => self.on_data(net, from, d),
            Ok(JtpRepr::Ack(_)) => self.stats.unexpected_dropped += 1,
            Err(_) => self.stats.malformed_dropped += 1,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        while let Some(id) = self.timers.pop_expired(net.now()) {
            if id == FEEDBACK && !self.finished {
                self.send_feedback(net);
            }
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "atp_reported_rate_bps" => {
                (self.reported != RATE_UNKNOWN).then_some(self.reported as f64)
            }
            "atp_duplicates" => Some(self.duplicates as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.finished
    }
}
