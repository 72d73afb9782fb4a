//! The E2TCP sender: SACK-driven immediate retransmission, burst-aware window
//! and two timers (one for first transmissions, one for retransmissions).

use std::collections::BTreeMap;

use joulenet_wire::e2tcp::E2tcpRepr;

use super::config::E2tcpConfig;
use super::window::{AckClass, Window};
use super::{finish_header, timers, tx_opts, unwrap, PROTOCOL};
use crate::net::{Addr, Agent, AppRead, Net, TimerId, TransportEvent};
use crate::stats::TransportStats;
use crate::tcp::rtt::RttEstimator;
use crate::time::{Duration, Time};
use crate::timer::TimerTable;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum E2tcpState {
    Closed,
    SynSent,
    Established,
    /// All data acknowledged, FIN sent.
    FinSent,
    Done,
}

#[derive(Clone, Debug)]
struct Segment {
    data: Vec<u8>,
    sent_at: Time,
    /// Transmission order of the last sending.
    order: u64,
    /// The last sending was a retransmission.
    retransmitted: bool,
    ever_retransmitted: bool,
    sacked: bool,
    lost: bool,
}

impl Segment {
    fn in_flight(&self) -> bool {
        !self.sacked && !self.lost
    }
}

pub struct E2tcpSender {
    /// This agent's timers (`super::timer`/`timers` names them).
    timers: TimerTable,
    cfg: E2tcpConfig,
    peer: Addr,
    conn_id: u8,
    state: E2tcpState,
    window: Window,
    rtt: RttEstimator,
    /// Unacknowledged segments by stream offset.
    segs: BTreeMap<u64, Segment>,
    snd_una: u64,
    snd_nxt: u64,
    order: u64,
    app_finished: bool,
    /// When the SYN was sent, and whether it was ever resent: the SYN-ACK
    /// times a round trip only if it cannot answer an earlier SYN (Karn).
    syn_sent_at: Time,
    syn_retransmitted: bool,
    fin_sent_at: Time,
    /// Highest offset sent when the last TCP-like reduction happened.
    recovery_point: u64,
    consecutive_timeouts: u32,
    last_class: AckClass,
    /// The smallest round trip measured: an ACK of a retransmitted segment
    /// sooner than this after the retransmission answers an earlier
    /// sending (RACK's rule, RFC 8985 §6.2).
    min_rtt: Option<Duration>,
    /// The receiver's advertised window (bytes beyond `snd_una`); an ACK
    /// without one sets no limit (`u16::MAX`, above the largest window).
    rwnd: u64,
    /// Window probes sent in a row without the window opening.
    persist_probes: u32,
    stats: TransportStats,
    buf: Vec<u8>,
}

impl E2tcpSender {
    pub fn new(cfg: E2tcpConfig, peer: Addr) -> E2tcpSender {
        E2tcpSender {
            window: Window::new(&cfg),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            buf: vec![0; cfg.mss as usize],
            cfg,
            peer,
            conn_id: 0,
            state: E2tcpState::Closed,
            segs: BTreeMap::new(),
            snd_una: 0,
            snd_nxt: 0,
            order: 0,
            app_finished: false,
            syn_sent_at: Time::ZERO,
            syn_retransmitted: false,
            fin_sent_at: Time::ZERO,
            recovery_point: 0,
            consecutive_timeouts: 0,
            last_class: AckClass::Clean,
            min_rtt: None,
            rwnd: u16::MAX as u64,
            persist_probes: 0,
            stats: TransportStats::default(),
            timers: TimerTable::new(),
        }
    }

    pub fn state(&self) -> E2tcpState {
        self.state
    }
    pub fn cwnd(&self) -> u32 {
        self.window.segments()
    }
    pub fn last_class(&self) -> AckClass {
        self.last_class
    }
    pub fn lost_segments(&self) -> usize {
        self.segs.values().filter(|s| s.lost).count()
    }
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    fn emit(&mut self, net: &mut dyn Net, mut r: E2tcpRepr, payload: &[u8]) -> Option<Vec<u8>> {
        r.conn_id = self.conn_id;
        let local = net.local();
        finish_header(&self.cfg, &mut r, local, self.peer, self.snd_nxt as u32, 0);
        let mut p = net.packet_buffer();
        r.emit(payload, &mut p).ok()?;
        Some(p)
    }

    fn send_syn(&mut self, net: &mut dyn Net) {
        let r = E2tcpRepr {
            syn: true,
            seq: Some(0),
            window: Some(u16::MAX),
            ..E2tcpRepr::default()
        };
        if let Some(p) = self.emit(net, r, &[]) {
            self.stats.control_packets += 1;
            self.stats.control_bytes += p.len() as u64;
            net.send(self.peer, p, tx_opts(&self.cfg));
        }
        self.syn_sent_at = net.now();
        let t = net.now() + self.rtt.rto();
        self.timers.set(timers::TRANSMIT, t);
    }

    /// The SYN-ACK arrived. RFC 6298 §2/§3: the opening exchange may give
    /// the first RTT measurement, unless the SYN was resent — then the
    /// SYN-ACK may answer either sending, and the backed-off RTO stays until
    /// the first data sample (Karn).
    fn syn_acked(&mut self, net: &mut dyn Net, r: &E2tcpRepr) {
        self.read_window(r);
        if !self.syn_retransmitted {
            self.rtt_sample(net.now().saturating_since(self.syn_sent_at));
        }
        self.timers.cancel(timers::TRANSMIT);
        self.consecutive_timeouts = 0;
        self.state = E2tcpState::Established;
        net.event(TransportEvent::Established);
        self.transmit(net);
    }

    fn rtt_sample(&mut self, sample: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(sample, |m| m.min(sample)));
        self.rtt.sample(sample);
        self.stats.rtt.record(sample);
        self.stats.rtt.smoothed = self.rtt.srtt();
    }

    fn send_fin(&mut self, net: &mut dyn Net) {
        self.state = E2tcpState::FinSent;
        let r = E2tcpRepr {
            fin: true,
            seq: Some(self.snd_nxt as u32),
            ..E2tcpRepr::default()
        };
        if let Some(p) = self.emit(net, r, &[]) {
            self.stats.control_packets += 1;
            self.stats.control_bytes += p.len() as u64;
            net.send(self.peer, p, tx_opts(&self.cfg));
        }
        self.fin_sent_at = net.now();
        self.timers.cancel(timers::RETRANSMIT);
        let t = net.now() + self.rtt.rto();
        self.timers.set(timers::TRANSMIT, t);
    }

    fn send_segment(&mut self, net: &mut dyn Net, off: u64, retransmission: bool) {
        let now = net.now();
        self.order += 1;
        let order = self.order;
        let data = {
            let s = self.segs.get_mut(&off).expect("segment exists");
            s.sent_at = now;
            s.order = order;
            s.retransmitted = retransmission;
            s.ever_retransmitted |= retransmission;
            s.lost = false;
            s.data.clone()
        };
        let r = E2tcpRepr {
            seq: Some(off as u32),
            ..E2tcpRepr::default()
        };
        if let Some(p) = self.emit(net, r, &data) {
            if retransmission {
                self.stats.retransmitted_packets += 1;
                self.stats.retransmitted_bytes += p.len() as u64;
            } else {
                self.stats.data_packets += 1;
                self.stats.data_bytes += p.len() as u64;
                self.stats.payload_bytes += data.len() as u64;
            }
            net.send(self.peer, p, tx_opts(&self.cfg));
        }
    }

    fn flight(&self) -> u32 {
        self.segs.values().filter(|s| s.in_flight()).count() as u32
    }

    /// Send what the window allows: reported holes first, then new data.
    fn transmit(&mut self, net: &mut dyn Net) {
        if self.state != E2tcpState::Established {
            return;
        }
        let mss = self.cfg.mss as usize;
        let span_limit = (self.cfg.max_window as u64 * mss as u64).min(65_000);
        while self.flight() < self.window.segments() {
            if let Some(off) = self.segs.iter().find(|(_, s)| s.lost).map(|(&o, _)| o) {
                self.send_segment(net, off, true);
                continue;
            }
            if self.app_finished || self.snd_nxt + mss as u64 - self.snd_una > span_limit {
                break;
            }
            let Some(room) = self.window_room() else {
                break;
            };
            match net.app_read(&mut self.buf[..room]) {
                AppRead::Data(n) => {
                    let off = self.snd_nxt;
                    self.segs.insert(
                        off,
                        Segment {
                            data: self.buf[..n].to_vec(),
                            sent_at: Time::ZERO,
                            order: 0,
                            retransmitted: false,
                            ever_retransmitted: false,
                            sacked: false,
                            lost: false,
                        },
                    );
                    self.snd_nxt += n as u64;
                    self.send_segment(net, off, false);
                }
                AppRead::Pending => break,
                AppRead::Finished => self.app_finished = true,
            }
        }
        if self.app_finished && self.segs.is_empty() {
            self.send_fin(net);
            return;
        }
        self.arm_timers();
        self.arm_persist(net);
    }

    /// Bytes of new data the receiver's window lets go out now: a whole
    /// segment, or — with nothing in flight to bring a larger window — what
    /// is left of it. None: wait for the window to open.
    fn window_room(&self) -> Option<usize> {
        let mss = self.cfg.mss as u64;
        let usable = (self.snd_una + self.rwnd).saturating_sub(self.snd_nxt);
        if usable >= mss {
            Some(mss as usize)
        } else if usable > 0 && self.flight() == 0 {
            Some(usable as usize)
        } else {
            None
        }
    }

    /// Whether the receiver's window holds back data the application may
    /// have, with nothing in flight whose ACK would reopen it.
    fn window_blocked(&self) -> bool {
        self.state == E2tcpState::Established
            && !self.app_finished
            && self.flight() == 0
            && !self.segs.values().any(|s| s.lost)
            && self.window_room().is_none()
    }

    /// A window update can be lost like any ACK: while the window is closed
    /// with nothing in flight, probe it after an RTO, backing off.
    fn arm_persist(&mut self, net: &mut dyn Net) {
        if !self.window_blocked() {
            self.persist_probes = 0;
            self.timers.cancel(timers::PERSIST);
            return;
        }
        if self.timers.get(timers::PERSIST).is_none() {
            let wait = self
                .rtt
                .rto()
                .saturating_mul(1 << self.persist_probes.min(16))
                .min(self.cfg.max_rto.max(self.rtt.rto()));
            self.timers.set(timers::PERSIST, net.now() + wait);
        }
    }

    /// A window probe: a header-only segment at `snd_nxt`, which the
    /// receiver answers with an ACK carrying its window.
    fn send_window_probe(&mut self, net: &mut dyn Net) {
        let r = E2tcpRepr {
            seq: Some(self.snd_nxt as u32),
            ..E2tcpRepr::default()
        };
        if let Some(p) = self.emit(net, r, &[]) {
            self.stats.control_packets += 1;
            self.stats.control_bytes += p.len() as u64;
            net.send(self.peer, p, tx_opts(&self.cfg));
        }
        self.persist_probes += 1;
    }

    fn read_window(&mut self, r: &E2tcpRepr) {
        self.rwnd = r.window.map_or(u16::MAX as u64, u64::from);
    }

    /// Each timer runs from the newest in-flight sending of its kind.
    fn arm_timers(&mut self) {
        let rto = self.rtt.rto();
        for (timer, retx) in [(timers::TRANSMIT, false), (timers::RETRANSMIT, true)] {
            let newest = self
                .segs
                .values()
                .filter(|s| s.in_flight() && s.retransmitted == retx)
                .map(|s| s.sent_at)
                .max();
            match newest {
                Some(t) => self.timers.set(timer, t + rto),
                None => self.timers.cancel(timer),
            }
        }
    }

    fn on_ack(&mut self, net: &mut dyn Net, r: &E2tcpRepr) {
        let Some(ack) = r.ack.and_then(|a| unwrap(self.snd_una, a)) else {
            return;
        };
        if self.state == E2tcpState::FinSent {
            if ack > self.snd_nxt {
                self.timers.cancel(timers::TRANSMIT);
                self.state = E2tcpState::Done;
                net.event(TransportEvent::Closed);
            }
            return;
        }
        if ack > self.snd_nxt + 1 {
            self.stats.unexpected_dropped += 1;
            return;
        }
        let now = net.now();
        let mut newest_acked: u64 = 0;
        // The newest sending this ACK newly acknowledges: on one hop without
        // reordering, the arrival that elicited it. Only that one times a
        // round trip. An older segment newly covered (one the receiver held
        // behind a hole, whose SACK never reached us) arrived long ago: the
        // ACK moved because a retransmission filled the hole, and its age
        // measures the repair, not the path.
        let mut newest: Option<(u64, bool, Time)> = None;
        let mut acked_segments = 0;
        let min_rtt = self.min_rtt;
        let mut note = |s: &Segment| {
            // A retransmission acknowledged sooner than any round trip
            // cannot have arrived yet: an earlier sending did. Its order
            // says nothing about what was sent before it (a needless
            // retransmission would otherwise condemn everything in flight).
            let early =
                s.retransmitted && min_rtt.is_some_and(|m| now.saturating_since(s.sent_at) < m);
            if !early {
                newest_acked = newest_acked.max(s.order);
            }
            if newest.is_none_or(|(o, _, _)| s.order > o) {
                newest = Some((s.order, s.ever_retransmitted, s.sent_at));
            }
        };
        // Cumulatively acknowledged.
        let done: Vec<u64> = self.segs.range(..ack).map(|(&o, _)| o).collect();
        for o in done {
            let s = self.segs.remove(&o).expect("present");
            if o + s.data.len() as u64 > ack {
                // A partial ACK of one segment cannot happen with whole
                // segments; keep it to be safe.
                self.segs.insert(o, s);
                continue;
            }
            if !s.sacked {
                note(&s);
                acked_segments += 1;
            }
        }
        self.snd_una = self.snd_una.max(ack.min(self.snd_nxt));
        self.read_window(r);
        // Selectively acknowledged.
        for &(l, rt) in &r.sack {
            let (Some(l), Some(rt)) = (unwrap(self.snd_una, l), unwrap(self.snd_una, rt)) else {
                continue;
            };
            for (&o, s) in self.segs.range_mut(l..rt) {
                if !s.sacked && o + s.data.len() as u64 <= rt {
                    s.sacked = true;
                    // It arrived after all: nothing to resend.
                    s.lost = false;
                    note(s);
                    acked_segments += 1;
                }
            }
        }
        // One hop, no reordering: whatever was sent before a segment that
        // arrived, and has not arrived itself, was lost.
        let mut new_losses = 0;
        for s in self.segs.values_mut() {
            if s.in_flight() && s.order < newest_acked {
                s.lost = true;
                new_losses += 1;
            }
        }
        // Karn: no sample when that arrival was a retransmission.
        let rtt_from = newest.and_then(|(_, retx, at)| (!retx).then_some(at));
        if let Some(at) = rtt_from {
            self.rtt_sample(now.saturating_since(at));
        }
        if acked_segments > 0 {
            self.consecutive_timeouts = 0;
        }
        let in_recovery = self.snd_una < self.recovery_point;
        if new_losses > 0 && !in_recovery {
            self.recovery_point = self.snd_nxt;
            self.stats.fast_recoveries += 1;
        }
        if acked_segments > 0 || new_losses > 0 {
            self.last_class = self.window.on_ack(acked_segments, new_losses, in_recovery);
        }
        self.transmit(net);
    }

    fn on_timeout(&mut self, net: &mut dyn Net, retransmissions: bool) {
        self.stats.timeouts += 1;
        self.consecutive_timeouts += 1;
        if self.consecutive_timeouts > self.cfg.max_timeouts {
            self.state = E2tcpState::Done;
            self.timers.cancel(timers::TRANSMIT);
            self.timers.cancel(timers::RETRANSMIT);
            net.event(TransportEvent::Aborted);
            return;
        }
        self.rtt.back_off();
        match self.state {
            E2tcpState::SynSent => {
                self.syn_retransmitted = true;
                self.send_syn(net);
            }
            E2tcpState::FinSent => self.send_fin(net),
            E2tcpState::Established => {
                let now = net.now();
                for s in self.segs.values_mut() {
                    if s.in_flight() && s.retransmitted == retransmissions && s.sent_at <= now {
                        s.lost = true;
                    }
                }
                self.window.on_timeout();
                self.recovery_point = self.snd_nxt;
                self.transmit(net);
            }
            _ => {}
        }
    }
}

impl Agent for E2tcpSender {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn start(&mut self, net: &mut dyn Net) {
        if self.state == E2tcpState::Closed {
            // A connection identifier both ends use instead of addresses.
            self.conn_id = (net.rng().next_u32() & 0xff) as u8;
            self.state = E2tcpState::SynSent;
            self.send_syn(net);
        }
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        let Some((_, r)) = super::accept(&mut self.stats, packet) else {
            return;
        };
        if from != self.peer || r.conn_id != self.conn_id {
            self.stats.unexpected_dropped += 1;
            return;
        }
        match self.state {
            E2tcpState::SynSent if r.syn && r.ack.is_some() => self.syn_acked(net, &r),
            E2tcpState::Established | E2tcpState::FinSent if !r.syn => self.on_ack(net, &r),
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
        self.transmit(net);
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "cwnd" => Some(self.window.cwnd() * self.cfg.mss as f64),
            "flight" => Some(self.flight() as f64 * self.cfg.mss as f64),
            "srtt_ms" => self.rtt.srtt().map(|s| s.as_millis_f64()),
            "rto_ms" => Some(self.rtt.rto().as_millis_f64()),
            "rwnd" => Some(self.rwnd as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.state == E2tcpState::Done
    }
}

impl E2tcpSender {
    fn on_timer(&mut self, net: &mut dyn Net, timer: TimerId) {
        match timer {
            timers::TRANSMIT => self.on_timeout(net, false),
            timers::RETRANSMIT => self.on_timeout(net, true),
            timers::PERSIST => {
                if self.window_blocked() {
                    self.send_window_probe(net);
                }
                self.arm_persist(net);
            }
            _ => {}
        }
    }
}
