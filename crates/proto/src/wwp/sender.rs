//! The WWP sender: sends whole waves back to back, then waits for the
//! receiver's N-S ACK; probes when told to pause (level 0) or when the N-S
//! ACK does not come (SEND_T).

use std::collections::{BTreeMap, BTreeSet};

use joulenet_wire::wwp::{WwpPacket, WwpRepr, WwpType, NS_FLAG_PROBE, PROBE_FLAG_RESENT};

use super::config::{Behaviour, WwpConfig};
use super::serial;
use super::{timers, PROTOCOL, TX_OPTS};
use crate::net::{Addr, Agent, AppRead, Net, TimerId, TransportEvent};
use crate::stats::TransportStats;
use crate::time::{Duration, Time};
use crate::timer::TimerTable;

/// Sender states.
/// Timeouts in a row with no answer before the timers start doubling.
const SILENT_TIMEOUTS_BEFORE_BACKOFF: u32 = 2;
/// The longest a backed-off timer waits (TCP's RTO ceiling, RFC 6298).
const MAX_SILENT_WAIT: Duration = Duration::from_secs(60);

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SenderState {
    Closed,
    SynSent,
    /// Connected, no wave out: waiting for the application.
    Estab,
    /// A wave is out; SEND_T armed.
    WaitWaveAck,
    /// PROBE1 sent, waiting for PR1 ACK.
    Probe1,
    /// PROBE2 sent, waiting for PR2 ACK.
    Probe2,
    /// PROBE3 sent: WAIT N-S ACK.
    WaitNsAck,
    FinSent,
    Done,
}

pub struct WwpSender {
    /// This agent's timers (`super::timer`/`timers` names them).
    pub(crate) timers: TimerTable,
    cfg: WwpConfig,
    peer: Addr,
    state: SenderState,
    level: u8,
    /// Unacknowledged segments by number (a count that never wraps; the
    /// wire carries its low 24 bits, see [`serial`]).
    segs: BTreeMap<u64, Vec<u8>>,
    /// Segments to send again.
    retx: BTreeSet<u64>,
    /// Next segment number to create from application data.
    next_new: u64,
    /// Segments below this have been sent at least once.
    next_unsent: u64,
    /// The segments of the wave now out, to tell its N-S ACK from a late one.
    wave: Vec<u64>,
    /// Application bytes not yet in a segment.
    partial: Vec<u8>,
    app_finished: bool,
    probe_seq: u32,
    /// Sequence number and time of the probe now awaiting its answer.
    probe_out: (u32, Time),
    wave_start: Time,
    wave_size: usize,
    /// Smoothed time from the start of a wave to its N-S ACK, per segment.
    per_segment: Option<Duration>,
    srtt: Option<Duration>,
    retries: u32,
    stats: TransportStats,
    buf: Vec<u8>,
}

impl WwpSender {
    pub fn new(cfg: WwpConfig, peer: Addr) -> WwpSender {
        let level = cfg.initial_level;
        let payload = cfg.payload as usize;
        let first = cfg.initial_segment as u64;
        WwpSender {
            cfg,
            peer,
            state: SenderState::Closed,
            level,
            segs: BTreeMap::new(),
            retx: BTreeSet::new(),
            next_new: first,
            next_unsent: first,
            wave: Vec::new(),
            partial: Vec::with_capacity(payload),
            app_finished: false,
            probe_seq: 0,
            probe_out: (0, Time::ZERO),
            wave_start: Time::ZERO,
            wave_size: 0,
            per_segment: None,
            srtt: None,
            retries: 0,
            stats: TransportStats::default(),
            timers: TimerTable::new(),
            buf: vec![0; payload],
        }
    }

    pub fn state(&self) -> SenderState {
        self.state
    }
    pub fn level(&self) -> u8 {
        self.level
    }
    pub fn unacked(&self) -> usize {
        self.segs.len()
    }

    fn control(&mut self, net: &mut dyn Net, repr: WwpRepr) {
        let mut p = net.packet_buffer();
        if repr.emit(&[], &mut p).is_ok() {
            self.stats.control_packets += 1;
            self.stats.control_bytes += p.len() as u64;
            net.send(self.peer, p, TX_OPTS);
        }
    }

    /// A timer after `retries` timeouts in a row with no answer, while the
    /// path has never been measured: the first two keep the initial
    /// timeout, each further one doubles it, up to [`MAX_SILENT_WAIT`]. A
    /// path whose round trip exceeds the initial timeout would otherwise
    /// never be measured — every probe resent before its answer arrives
    /// (issue 16: a 1 s round trip, ~1,000 one-second timeouts, give up).
    /// Once a round trip is measured the timers follow it and never back
    /// off, as the paper has it (WWP probes instead of backing off on
    /// errors): backing off then too cost 7–14 s at 50% loss in Tables 1–2.
    fn backed_off(&self, t: Duration) -> Duration {
        if self.srtt.is_some() {
            return t;
        }
        let doublings = self
            .retries
            .saturating_sub(SILENT_TIMEOUTS_BEFORE_BACKOFF)
            .min(16);
        t.saturating_mul(1u64 << doublings)
            .min(MAX_SILENT_WAIT.max(t))
    }

    fn probe_t(&self) -> Duration {
        let k = match self.cfg.behaviour {
            Behaviour::Conservative => 4,
            Behaviour::Aggressive => 2,
        };
        let t = match self.srtt {
            Some(s) => s.saturating_mul(k).max(self.cfg.min_probe_t),
            None => self.cfg.initial_timeout,
        };
        self.backed_off(t)
    }

    fn send_t(&self) -> Duration {
        let (k_num, k_den) = match self.cfg.behaviour {
            Behaviour::Conservative => (2, 1),
            Behaviour::Aggressive => (3, 2),
        };
        let t = match self.per_segment {
            Some(p) => Duration(p.0 * self.wave_size as u64 * k_num / k_den)
                .max(self.srtt.unwrap_or_default().saturating_mul(2))
                .max(self.cfg.min_send_t),
            None => self.cfg.initial_timeout.max(self.cfg.min_send_t),
        };
        self.backed_off(t)
    }

    /// Pull application bytes into whole segments until `want` segments are
    /// ready to go (retransmissions included) or the application stalls.
    fn fill(&mut self, net: &mut dyn Net, want: usize) {
        let payload = self.cfg.payload as usize;
        while self.ready() < want {
            if self.app_finished {
                if !self.partial.is_empty() {
                    self.push_segment();
                    continue;
                }
                return;
            }
            let room = payload - self.partial.len();
            match net.app_read(&mut self.buf[..room]) {
                AppRead::Data(n) => {
                    self.partial.extend_from_slice(&self.buf[..n]);
                    if self.partial.len() == payload {
                        self.push_segment();
                    }
                }
                AppRead::Pending => {
                    // Send what we have rather than stall on a trickling
                    // application (the paper's sender waits for a full wave
                    // of a bulk transfer, which never trickles).
                    if !self.partial.is_empty() {
                        self.push_segment();
                    }
                    return;
                }
                AppRead::Finished => self.app_finished = true,
            }
        }
    }

    /// Segments ready to go: retransmissions plus new ones not yet sent.
    fn ready(&self) -> usize {
        self.retx.len() + (self.next_new - self.next_unsent) as usize
    }

    fn push_segment(&mut self) {
        let data = std::mem::take(&mut self.partial);
        self.segs.insert(self.next_new, data);
        self.next_new += 1;
    }

    fn all_done(&self) -> bool {
        self.app_finished && self.partial.is_empty() && self.segs.is_empty()
    }

    /// Send the next wave, or FIN, or wait for the application.
    fn proceed(&mut self, net: &mut dyn Net) {
        if self.level == 0 {
            self.start_probe(net);
            return;
        }
        let want = self.cfg.wave(self.level);
        self.fill(net, want);
        let ready = self.ready();
        if ready == 0 {
            if self.all_done() {
                self.send_fin(net);
            } else {
                self.state = SenderState::Estab;
            }
            return;
        }
        // The highest level we can fill; below W(1) (the end of the stream,
        // or a stalled application) send what there is.
        let (level, size) = if ready >= want {
            (self.level, want)
        } else {
            match (1..self.level).rev().find(|&l| self.cfg.wave(l) <= ready) {
                Some(l) => (l, self.cfg.wave(l)),
                None => (1, ready),
            }
        };
        let mut numbers: Vec<u64> = self.retx.iter().copied().take(size).collect();
        let fresh = size - numbers.len();
        numbers.extend(self.next_unsent..self.next_unsent + fresh as u64);
        for n in &numbers {
            self.retx.remove(n);
        }
        let first_fresh = self.next_unsent;
        self.next_unsent += fresh as u64;
        for (i, &n) in numbers.iter().enumerate() {
            let repr = WwpRepr {
                kind: WwpType::Data,
                level,
                id: i as u8,
                seq: serial::to_wire(n),
                aux: size as u8,
            };
            let mut p = net.packet_buffer();
            let data = &self.segs[&n];
            if repr.emit(data, &mut p).is_err() {
                continue;
            }
            if n >= first_fresh {
                self.stats.data_packets += 1;
                self.stats.data_bytes += p.len() as u64;
                self.stats.payload_bytes += data.len() as u64;
            } else {
                self.stats.retransmitted_packets += 1;
                self.stats.retransmitted_bytes += p.len() as u64;
            }
            net.send(self.peer, p, TX_OPTS);
        }
        self.state = SenderState::WaitWaveAck;
        self.wave_start = net.now();
        self.wave_size = size;
        self.wave = numbers;
        let t = net.now() + self.send_t();
        self.timers.set(timers::SEND_T, t);
    }

    fn next_probe_seq(&mut self) -> u32 {
        self.probe_seq = serial::next(self.probe_seq);
        self.probe_seq
    }

    /// Send a probe. `answers` is the PR ACK it answers (its sequence
    /// number, echoed so the receiver can time that round trip); a probe
    /// resent on PROBE_T answers none and says so, since the time since
    /// the last PR ACK includes the timeout.
    fn send_probe(&mut self, net: &mut dyn Net, kind: WwpType, answers: Option<u32>, resent: bool) {
        let seq = self.next_probe_seq();
        let mut repr = WwpRepr::new(kind);
        repr.seq = seq;
        if let Some(ack) = answers {
            repr.id = (ack & 0xff) as u8;
        }
        if resent {
            repr.aux = PROBE_FLAG_RESENT;
        }
        self.probe_out = (seq, net.now());
        self.control(net, repr);
        let t = net.now() + self.probe_t();
        self.timers.set(timers::PROBE_T, t);
    }

    fn start_probe(&mut self, net: &mut dyn Net) {
        self.state = SenderState::Probe1;
        self.send_probe(net, WwpType::Probe1, None, false);
    }

    fn send_fin(&mut self, net: &mut dyn Net) {
        self.state = SenderState::FinSent;
        let mut r = WwpRepr::new(WwpType::Fin);
        r.seq = serial::to_wire(self.next_new);
        self.control(net, r);
        let t = net.now() + self.probe_t();
        self.timers.set(timers::PROBE_T, t);
    }

    fn send_syn(&mut self, net: &mut dyn Net) {
        let mut syn = WwpRepr::new(WwpType::Syn);
        syn.seq = self.cfg.initial_segment;
        self.control(net, syn);
        let t = net.now() + self.probe_t();
        self.timers.set(timers::PROBE_T, t);
    }

    fn rtt_sample(&mut self, net: &dyn Net) {
        let rtt = net.now().saturating_since(self.probe_out.1);
        self.stats.rtt.record(rtt);
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => Duration((7 * s.0 + rtt.0) / 8),
        });
        self.stats.rtt.smoothed = self.srtt;
    }

    /// Apply an N-S ACK's view of the receiver: `next` is one past the
    /// highest segment received, `missing` every hole below it.
    fn apply_ack(&mut self, next: u64, missing: &BTreeSet<u64>) {
        let received: Vec<u64> = self
            .segs
            .range(..next)
            .map(|(&n, _)| n)
            .filter(|n| !missing.contains(n))
            .collect();
        for n in received {
            self.segs.remove(&n);
        }
        self.retx = self
            .segs
            .range(..self.next_unsent)
            .map(|(&n, _)| n)
            .filter(|n| *n >= next || missing.contains(n))
            .collect();
    }

    fn on_ns_ack(&mut self, net: &mut dyn Net, repr: &WwpRepr, payload: &[u8]) {
        let Ok(ranges) = WwpRepr::missing(payload) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        let near = self.next_unsent;
        let next = serial::from_wire(repr.seq, near);
        let missing: BTreeSet<u64> = ranges
            .iter()
            .flat_map(|r| {
                let start = serial::from_wire(r.start, near);
                start..start + r.count as u64
            })
            .collect();
        let from_probe = repr.aux & NS_FLAG_PROBE != 0;
        let expected = match self.state {
            SenderState::WaitWaveAck => !from_probe && self.acks_this_wave(next, &missing),
            SenderState::WaitNsAck => from_probe && repr.id == (self.probe_out.0 & 0xff) as u8,
            _ => false,
        };
        if !expected {
            // A late or duplicate N-S ACK: its news about received segments
            // is still true, its level no longer applies.
            if matches!(
                self.state,
                SenderState::Probe1 | SenderState::Probe2 | SenderState::WaitNsAck
            ) {
                self.apply_ack(next, &missing);
            }
            self.stats.unexpected_dropped += 1;
            return;
        }
        self.retries = 0;
        self.apply_ack(next, &missing);
        if self.state == SenderState::WaitWaveAck {
            self.timers.cancel(timers::SEND_T);
            if self.wave_size > 0 {
                let per =
                    Duration(net.now().saturating_since(self.wave_start).0 / self.wave_size as u64);
                self.per_segment = Some(match self.per_segment {
                    None => per,
                    Some(p) => Duration((3 * p.0 + per.0) / 4),
                });
            }
        } else {
            self.timers.cancel(timers::PROBE_T);
            self.rtt_sample(net);
        }
        self.level = repr.level.min(self.cfg.top());
        if self.all_done() {
            self.send_fin(net);
        } else {
            self.proceed(net);
        }
    }

    /// Whether an N-S ACK reports a segment of the wave now out as received.
    /// No earlier N-S ACK can: each of the wave's segments was new, or named
    /// missing by the N-S ACK that released the wave, and the receiver never
    /// loses a segment once it has it. So a late or reordered N-S ACK of an
    /// earlier wave is told apart without a wave number on the wire.
    fn acks_this_wave(&self, next: u64, missing: &BTreeSet<u64>) -> bool {
        self.wave.iter().any(|n| *n < next && !missing.contains(n))
    }

    fn give_up(&mut self, net: &mut dyn Net) {
        self.state = SenderState::Done;
        self.timers.cancel(timers::PROBE_T);
        self.timers.cancel(timers::SEND_T);
        net.event(TransportEvent::Aborted);
    }
}

impl Agent for WwpSender {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn start(&mut self, net: &mut dyn Net) {
        if self.state == SenderState::Closed {
            self.state = SenderState::SynSent;
            self.probe_out = (0, net.now());
            self.send_syn(net);
        }
    }

    fn on_packet(&mut self, net: &mut dyn Net, _from: Addr, packet: &[u8]) {
        let Ok(p) = WwpPacket::new_checked(packet) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        self.stats.packets_received += 1;
        self.stats.bytes_received += packet.len() as u64;
        let repr = WwpRepr::parse(&p);
        match (repr.kind, self.state) {
            (WwpType::SynAck, SenderState::SynSent) => {
                self.timers.cancel(timers::PROBE_T);
                // Karn: after a retransmitted SYN the answer may be to any
                // copy (SYNs carry no sequence number to tell them apart);
                // timing it from the first would take every lost SYN's
                // PROBE_T for path delay and inflate PROBE_T fourfold.
                if self.retries == 0 {
                    self.rtt_sample(net);
                }
                self.retries = 0;
                self.state = SenderState::Estab;
                net.event(TransportEvent::Established);
                self.proceed(net);
            }
            (WwpType::NsAck, _) => self.on_ns_ack(net, &repr, p.payload()),
            (WwpType::Pr1Ack, SenderState::Probe1) if repr.seq == self.probe_out.0 => {
                self.rtt_sample(net);
                self.retries = 0;
                self.state = SenderState::Probe2;
                self.send_probe(net, WwpType::Probe2, Some(repr.seq), false);
            }
            (WwpType::Pr2Ack, SenderState::Probe2) if repr.seq == self.probe_out.0 => {
                self.rtt_sample(net);
                self.retries = 0;
                self.state = SenderState::WaitNsAck;
                self.send_probe(net, WwpType::Probe3, Some(repr.seq), false);
            }
            (WwpType::FinAck, SenderState::FinSent)
                if repr.seq == serial::to_wire(self.next_new) =>
            {
                self.timers.cancel(timers::PROBE_T);
                self.state = SenderState::Done;
                net.event(TransportEvent::Closed);
            }
            _ => self.stats.unexpected_dropped += 1,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        while let Some(timer) = self.timers.pop_expired(net.now()) {
            self.on_timer(net, timer);
        }
    }

    fn on_app_ready(&mut self, net: &mut dyn Net) {
        if self.state == SenderState::Estab {
            self.proceed(net);
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "wave_level" => Some(self.level as f64),
            "cwnd" => Some((self.cfg.wave(self.level) * self.cfg.payload as usize) as f64),
            "srtt_ms" => self.srtt.map(|s| s.as_millis_f64()),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.state == SenderState::Done
    }
}

impl WwpSender {
    fn on_timer(&mut self, net: &mut dyn Net, timer: TimerId) {
        let expected = match timer {
            timers::SEND_T => self.state == SenderState::WaitWaveAck,
            timers::PROBE_T => matches!(
                self.state,
                SenderState::SynSent
                    | SenderState::Probe1
                    | SenderState::Probe2
                    | SenderState::WaitNsAck
                    | SenderState::FinSent
            ),
            _ => false,
        };
        if !expected {
            return;
        }
        self.stats.timeouts += 1;
        self.retries += 1;
        if self.retries > self.cfg.max_retries {
            self.give_up(net);
            return;
        }
        // A resent probe answers no PR ACK: flagged, it gives no RTT.
        match self.state {
            SenderState::WaitWaveAck => self.start_probe(net),
            SenderState::SynSent => self.send_syn(net),
            SenderState::Probe1 => self.send_probe(net, WwpType::Probe1, None, true),
            SenderState::Probe2 => self.send_probe(net, WwpType::Probe2, None, true),
            SenderState::WaitNsAck => self.send_probe(net, WwpType::Probe3, None, true),
            SenderState::FinSent => self.send_fin(net),
            _ => {}
        }
    }
}
