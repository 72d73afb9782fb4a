//! The eJTP destination (§2.1.2, §5): delivers in order; watches the path's
//! minimum available rate with the flip-flop monitor; sets the source's rate
//! with PI²/MD; and feeds back every T = max(T_lb, n / rate), or at once when
//! the monitor sees a persistent change. Each ACK carries the cumulative
//! ACK, a SNACK of the holes below the highest packet received, the rate,
//! an energy budget and the period until the next regular ACK.
//!
//! With a loss tolerance above 0 the destination asks only for the packets
//! the application needs: it gives up on holes while the share given up
//! stays within the tolerance, and delivers the stream without them.

use crate::jtp::reorder::Reorder;

use joulenet_wire::jtp::{JtpAck, JtpData, JtpPacket, JtpRepr, PROTOCOL, RATE_UNKNOWN};

use super::config::JtpConfig;
use super::controller::Pi2Md;
use super::feedback::feedback_period;
use super::monitor::{Filter, FlipFlop, Observation};
use crate::config_error::ConfigError;
use crate::net::{Addr, Agent, Net, TimerId, TimerTable, TxOpts};
use crate::stats::TransportStats;
use crate::time::{Duration, Time};

const FEEDBACK: TimerId = TimerId(0);

/// EWMA gain of the mean energy used per packet (ours).
const ENERGY_GAIN: f64 = 0.1;

pub struct JtpReceiver {
    cfg: JtpConfig,
    timers: TimerTable,
    monitor: FlipFlop,
    controller: Pi2Md,
    /// The source, once a packet arrived.
    peer: Option<Addr>,
    /// Delivered, waiting and given-up packets.
    reorder: Reorder,
    fin_seq: Option<u32>,
    finished: bool,
    /// The rate granted to the source, packets/s.
    rate_pps: f64,
    mean_energy: Option<f64>,
    stats: TransportStats,
    acks_urgent: u64,
    duplicates: u64,
    /// Holes given up on within the loss tolerance.
    skipped: u64,
    /// The same per priority (all under priority 0 without priorities).
    skipped_by: Vec<u64>,
    /// The latest available-rate sample (b/s): Fig. 5's instantaneous value.
    last_sample: Option<f64>,
}

impl JtpReceiver {
    pub fn new(cfg: JtpConfig) -> Result<JtpReceiver, ConfigError> {
        cfg.validate()?;
        Ok(JtpReceiver {
            timers: TimerTable::new(),
            monitor: FlipFlop::new(cfg.monitor)?,
            controller: Pi2Md::new(cfg.controller)?,
            rate_pps: cfg.initial_rate_bps / (8.0 * cfg.wire_packet_len() as f64),
            cfg,
            peer: None,
            reorder: Reorder::default(),
            fin_seq: None,
            finished: false,
            mean_energy: None,
            stats: TransportStats::default(),
            acks_urgent: 0,
            duplicates: 0,
            skipped: 0,
            skipped_by: vec![0; 256],
            last_sample: None,
        })
    }

    fn packet_bits(&self) -> f64 {
        8.0 * self.cfg.wire_packet_len() as f64
    }

    fn period(&self) -> Duration {
        if let Some(constant) = self.cfg.constant_feedback {
            return constant;
        }
        feedback_period(
            self.cfg.feedback_lower_bound,
            self.cfg.feedback_packets,
            self.rate_pps,
        )
    }

    /// Most holes one feedback names: what one ACK holds, or more if the
    /// granted rate carries more packets in a period — no more repairs are
    /// asked for than the source can send before the next feedback (and
    /// relays, which resend at once, are not sent a flood).
    fn snack_budget(&self, room: usize, period: Duration) -> usize {
        let per_period = (period.as_secs_f64().min(1e6) * self.rate_pps).floor();
        room.max(per_period.min(u16::MAX as f64) as usize)
    }

    fn send_ack(&mut self, net: &mut dyn Net, urgent: bool) {
        let Some(peer) = self.peer else { return };
        // §5.2: update the rate from the mean available path rate, when the
        // path has reported one.
        if let Some(avail_bps) = self.monitor.mean() {
            // Compared at the header's resolution (whole b/s): with δ = 0 the
            // MD branch needs Ā ≤ 0, and an EWMA of samples that fell to 0
            // reaches 0 only at this resolution (after ~17 samples on the
            // agile filter from 100 kb/s), never in exact arithmetic.
            let avail = avail_bps.floor().max(0.0) / self.packet_bits();
            self.rate_pps = self.controller.next(self.rate_pps, avail, None);
        }
        let period = if self.finished {
            Duration::ZERO
        } else {
            self.period()
        };
        let room = self.cfg.max_snack.min(self.cfg.format.max_ack_entries());
        let holes = self.reorder.holes(self.snack_budget(room, period));
        let budget = self.mean_energy.map_or(0, |e| {
            (e * self.cfg.budget_factor).ceil().min(u32::MAX as f64) as u32
        });
        // Holes that do not fit one ACK go in more ACKs sent together: a
        // hole left out waits a whole period more, and so does everything
        // the in-order stream holds behind it.
        let mut chunks: Vec<Vec<u32>> = holes.chunks(room.max(1)).map(<[u32]>::to_vec).collect();
        if chunks.is_empty() {
            chunks.push(Vec::new());
        }
        for snack in chunks {
            let ack = JtpAck {
                format: self.cfg.format,
                fin: self.finished,
                urgent,
                flow: self.cfg.flow,
                cum_ack: self.reorder.next(),
                rate: (self.rate_pps * self.packet_bits()).min((RATE_UNKNOWN - 1) as f64) as u32,
                energy_budget: budget,
                feedback_period_us: (period.as_nanos() / 1_000).min(u32::MAX as u64) as u32,
                highest: self.reorder.highest().map_or(0, |h| h.saturating_add(1)),
                snack,
                local: Vec::new(),
            };
            let mut buf = net.packet_buffer();
            buf.clear();
            JtpRepr::Ack(ack).emit_to_vec(&mut buf);
            self.stats.control_packets += 1;
            self.stats.control_bytes += buf.len() as u64;
            net.send(peer, buf, TxOpts::ipv4(PROTOCOL));
        }
        if urgent {
            self.acks_urgent += 1;
        }
        if self.finished {
            self.timers.cancel(FEEDBACK);
        } else {
            self.timers.set(FEEDBACK, net.now() + period);
        }
    }

    /// Delivers what is in order. A hole below the highest packet received
    /// is given up on — skipped, never SNACKed — while the packets given up
    /// stay within the loss tolerance of those the stream has reached
    /// (`skipped + 1 ≤ lt · (highest + 1)`); with lt = 0 (jtp0) never.
    /// With priorities (`super::priority`) the rule holds per priority: a
    /// hole's priority's tolerance, over that priority's packets.
    fn advance(&mut self, net: &mut dyn Net) {
        loop {
            if let Some(payload) = self.reorder.pop_in_order() {
                net.deliver(&payload);
                continue;
            }
            let Some(top) = self.reorder.highest() else {
                break;
            };
            let hole = self.reorder.next();
            let pr = &self.cfg.priorities;
            let class = usize::from(pr.of(hole, 0));
            let allowed =
                pr.tolerance_of(hole, self.cfg.loss_tolerance) * pr.peers_up_to(hole, top) as f64;
            if top > hole && (self.skipped_by[class] + 1) as f64 <= allowed {
                self.skipped += 1;
                self.skipped_by[class] += 1;
                self.reorder.skip();
                continue;
            }
            break;
        }
    }

    fn on_data(&mut self, net: &mut dyn Net, from: Addr, d: JtpData<'_>) {
        self.stats.packets_received += 1;
        self.stats.bytes_received += d.payload.len() as u64;
        if d.flow != self.cfg.flow {
            self.stats.unexpected_dropped += 1;
            return;
        }
        if self.reorder.too_far(d.seq) {
            self.stats.unexpected_dropped += 1;
            return;
        }
        let first = self.peer.is_none();
        self.peer = Some(from);
        if self.finished || self.reorder.is_duplicate(d.seq) {
            // A duplicate (a probe after a lost ACK, or a copy from two
            // caches): say again where we are.
            self.duplicates += 1;
            if self.finished {
                self.send_ack(net, false);
            }
            return;
        }
        let used = d.energy_used as f64;
        self.mean_energy = Some(match self.mean_energy {
            Some(m) => (1.0 - ENERGY_GAIN) * m + ENERGY_GAIN * used,
            None => used,
        });
        let mut urgent = false;
        if d.available_rate != RATE_UNKNOWN {
            let sample = d.available_rate as f64;
            self.last_sample = Some(sample);
            let switched = self.monitor.observe(sample) == Observation::Switched;
            // Constant-rate feedback (Fig. 4) waits for its period.
            urgent = switched && self.cfg.constant_feedback.is_none();
        }
        if d.flags.fin {
            self.fin_seq = Some(d.seq);
        }
        self.reorder.insert(d.seq, d.payload);
        self.advance(net);
        if self.fin_seq.is_some_and(|f| self.reorder.next() > f) {
            self.finished = true;
            net.deliver_finished();
            self.send_ack(net, false);
        } else if first || urgent {
            // The source learns its rate from the first packet on, and hears
            // at once when the path changed.
            self.send_ack(net, urgent);
        }
    }
}

impl Agent for JtpReceiver {
    fn protocol(&self) -> &'static str {
        "jtp"
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
                self.send_ack(net, false);
            }
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "rate_bps" => Some(self.rate_pps * self.packet_bits()),
            "jtp_available_mean" => self.monitor.mean(),
            "jtp_available_sample" => self.last_sample,
            "jtp_agile" => Some(f64::from(u8::from(self.monitor.filter() == Filter::Agile))),
            "jtp_urgent_acks" => Some(self.acks_urgent as f64),
            "jtp_duplicates" => Some(self.duplicates as f64),
            "jtp_skipped" => Some(self.skipped as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.finished
    }
}
