//! The RCP receiver: it owns congestion control, flow control, reliability
//! and resequencing, and drives the transfer with requests (REQ) that the
//! sender merely answers.
//!
//! * The congestion window (any [`crate::cc`] controller) limits the bytes
//!   requested and not yet received; data arrivals clock new requests.
//! * New data is requested in cumulative mode ("send up to SEG.REQ"),
//!   holes in pull mode ("send exactly this"), each REQ repeating the three
//!   most recent pull blocks so the sender can recover lost pulls.
//! * A hole is lost after `dupthresh` later-requested arrivals — for every
//!   hole and for retransmissions alike; loss outside an ongoing recovery
//!   halves the window once (fast retransmit / recovery).
//! * Flow control is internal: nothing is requested past RCV.NXT plus the
//!   receive buffer, nor past the sender's SND.LIM (persist mode then).
//! * ELN: holes the local link layer reports as wireless losses are
//!   requested again at once, without a window cut.
//! * Power save: asleep while the channel is bad, timers frozen, waking
//!   for beacons; on resuming, the holes are requested again.

use std::collections::VecDeque;

use joulenet_wire::rcp::{self, RcpFlags, RcpRepr, RequestBlock, MAX_BLOCKS};

use super::config::RcpConfig;
use super::requests::Requests;
use super::{timer, IP_PROTOCOL};
use crate::cc::CongestionControl;
use crate::net::{Addr, Agent, Net, RadioMode, TimerId, TransportEvent, TxOpts};
use crate::stats::TransportStats;
use crate::tcp::reassembly::Reassembly;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::seq::SeqSpace;
use crate::time::{Duration, Time};
use crate::timer::TimerTable;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReceiverState {
    Listen,
    SynReceived,
    Established,
    /// Everything arrived; our FIN waits for the sender's ACK.
    FinSent,
    Closed,
}

pub struct RcpReceiver {
    /// This agent's timers (`super::timer`/`timers` names them).
    timers: TimerTable,
    cfg: RcpConfig,
    port: u16,
    peer: Option<Addr>,
    state: ReceiverState,
    space: SeqSpace,
    peer_space: SeqSpace,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    reqs: Requests,
    reasm: Reassembly,
    /// Data index of the next byte to deliver.
    rcv_nxt: u64,
    /// Data index up to which new data has been requested.
    req_nxt: u64,
    /// The sender's request limit, as last heard.
    limit: u64,
    fin_at: Option<u64>,
    in_recovery: bool,
    /// Losses of segments below this do not cut the window again.
    recovery_point: u64,
    /// Recent pull blocks, newest first.
    pulls: VecDeque<RequestBlock>,
    tries: u32,
    /// When our SYN+ACK was first sent, and whether it was ever sent again:
    /// the packet that establishes times the opening exchange only if it
    /// cannot answer a later SYN+ACK (Karn).
    syn_ack_sent_at: Option<Time>,
    syn_ack_resent: bool,
    /// RCV.NXT as the sender last heard it (SEG.DEQ of our last REQ).
    deq_sent: u64,
    persist_backoff: u32,
    consecutive_rtos: u32,
    rto_deadline: Option<Time>,
    /// Power save: asleep (timers frozen) and the frozen RTO remainder.
    sleeping: bool,
    frozen_rto: Option<Duration>,
    beacon_started: Time,
    eln_recoveries: u64,
    sleep_periods: u64,
    stats: TransportStats,
}

impl RcpReceiver {
    pub fn new(cfg: RcpConfig) -> RcpReceiver {
        RcpReceiver {
            cc: cfg.controller(),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            reqs: Requests::new(cfg.dupthresh),
            cfg,
            port: 0,
            peer: None,
            state: ReceiverState::Listen,
            space: SeqSpace::new(0),
            peer_space: SeqSpace::new(0),
            reasm: Reassembly::default(),
            rcv_nxt: 0,
            req_nxt: 0,
            limit: 0,
            fin_at: None,
            in_recovery: false,
            recovery_point: 0,
            pulls: VecDeque::new(),
            tries: 0,
            syn_ack_sent_at: None,
            syn_ack_resent: false,
            deq_sent: 0,
            persist_backoff: 0,
            consecutive_rtos: 0,
            rto_deadline: None,
            sleeping: false,
            frozen_rto: None,
            beacon_started: Time::ZERO,
            eln_recoveries: 0,
            sleep_periods: 0,
            stats: TransportStats::default(),
            timers: TimerTable::new(),
        }
    }

    pub fn state(&self) -> ReceiverState {
        self.state
    }
    pub fn cwnd(&self) -> u64 {
        self.cc.window()
    }
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }
    pub fn flight(&self) -> u64 {
        self.reqs.flight()
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn is_sleeping(&self) -> bool {
        self.sleeping
    }
    /// Holes re-requested because the link layer reported a wireless loss.
    pub fn eln_recoveries(&self) -> u64 {
        self.eln_recoveries
    }
    pub fn sleep_periods(&self) -> u64 {
        self.sleep_periods
    }

    fn send(&mut self, net: &mut dyn Net, repr: &RcpRepr) {
        let Some(peer) = self.peer else { return };
        let mut out = net.packet_buffer();
        repr.emit(&[], &mut out);
        self.stats.control_packets += 1;
        self.stats.control_bytes += out.len() as u64;
        net.send(peer, out, TxOpts::ipv4(IP_PROTOCOL));
    }

    fn header(&self, flags: u8) -> RcpRepr {
        RcpRepr {
            src_port: self.port,
            dst_port: self.peer.map_or(0, |p| p.port),
            flags: RcpFlags(flags),
            ..RcpRepr::default()
        }
    }

    fn send_syn_ack(&mut self, net: &mut dyn Net) {
        if self.syn_ack_sent_at.is_some() {
            self.syn_ack_resent = true;
        } else {
            self.syn_ack_sent_at = Some(net.now());
        }
        let mut r = self.header(RcpFlags::SYN | RcpFlags::ACK);
        r.seq = self.space.to_wire(0);
        r.ack = self.peer_space.to_wire(1);
        self.send(net, &r);
        self.arm_handshake(net);
    }

    fn send_fin(&mut self, net: &mut dyn Net) {
        let mut r = self.header(RcpFlags::FIN | RcpFlags::ACK);
        r.seq = self.space.to_wire(1);
        r.ack = self.peer_space.to_wire(1 + self.rcv_nxt);
        self.send(net, &r);
        self.arm_handshake(net);
    }

    fn arm_handshake(&mut self, net: &mut dyn Net) {
        let backoff = 1u64 << self.tries.min(6);
        let at = net.now() + self.rtt.rto().saturating_mul(backoff);
        self.timers.set(timer::HANDSHAKE, at);
    }

    /// A REQ: cumulative up to `req_nxt`, or a pull of `[s, e)`.
    fn send_request(&mut self, net: &mut dyn Net, pull: Option<(u64, u64)>) {
        let mut r = self.header(RcpFlags::REQ | RcpFlags::ACK);
        r.ack = self.peer_space.to_wire(1 + self.rcv_nxt);
        self.deq_sent = self.rcv_nxt;
        let free = self.cfg.recv_buffer.saturating_sub(self.reasm.bytes()) / 64;
        r.window = free.min(u16::MAX as usize) as u16;
        let n = self.pulls.len().min(MAX_BLOCKS);
        for (i, b) in self.pulls.iter().take(n).enumerate() {
            r.blocks[i] = *b;
        }
        r.block_count = n as u8;
        match pull {
            Some((s, e)) => {
                r.flags.0 |= RcpFlags::PUL;
                r.seq = self.peer_space.to_wire(1 + s);
                r.length = (e - s).min(u16::MAX as u64) as u16;
                self.pulls.push_front(RequestBlock {
                    start: r.seq,
                    end: r.seq.wrapping_add(r.length as u32),
                });
                self.pulls.truncate(MAX_BLOCKS);
            }
            None => r.seq = self.peer_space.to_wire(1 + self.req_nxt),
        }
        self.send(net, &r);
    }

    /// The highest data index we may request now (flow control). The
    /// receive buffer's edge is rounded down to a segment boundary (silly
    /// window avoidance, RFC 1122 §4.2.3.3): else every request the buffer
    /// bounds would cut a segment in two small ones.
    fn request_horizon(&self) -> u64 {
        let mss = self.cfg.mss as u64;
        let buffer_end = self.rcv_nxt + self.cfg.recv_buffer as u64;
        let aligned = buffer_end - buffer_end % mss;
        let buffer_end = if aligned > self.rcv_nxt {
            aligned
        } else {
            buffer_end
        };
        let mut hi = self.limit.min(buffer_end);
        if let Some(f) = self.fin_at {
            hi = hi.min(f);
        }
        hi
    }

    /// Issue every request the window and the buffers allow.
    fn fill(&mut self, net: &mut dyn Net) {
        if self.state != ReceiverState::Established || self.sleeping {
            return;
        }
        let now = net.now();
        let mss = self.cfg.mss as u64;
        let cwnd = self.cc.window();
        // A request must fit in the window, as a TCP sender's segment must
        // (RFC 6675's pipe rule), unless nothing is outstanding at all.
        let fits = |flight: u64, len: u64| flight + len <= cwnd || flight == 0;
        // Holes first, each in pull mode.
        while let Some(seg) = self.reqs.first_lost() {
            if !fits(self.reqs.flight(), seg.end - seg.start) {
                break;
            }
            self.reqs.rerequest(seg.start, now);
            self.send_request(net, Some((seg.start, seg.end)));
        }
        // Then new data, cumulatively.
        let hi = self.request_horizon();
        let room_bytes = cwnd.saturating_sub(self.reqs.flight());
        let wanted = hi.saturating_sub(self.req_nxt);
        let segments = (room_bytes / mss).min(wanted.div_ceil(mss));
        let segments = if self.reqs.flight() == 0 && wanted > 0 {
            segments.max(1)
        } else {
            segments
        };
        let batch = self.cfg.request_every.max(1) as u64;
        let can_wait = self.reqs.flight() > cwnd / 2 && wanted > segments * mss;
        if segments > 0 && (segments >= batch || !can_wait) {
            while self.req_nxt < hi {
                let e = hi.min((self.req_nxt / mss + 1) * mss);
                if !fits(self.reqs.flight(), e - self.req_nxt) {
                    break;
                }
                self.reqs.request(self.req_nxt, e, now);
                self.req_nxt = e;
            }
            self.send_request(net, None);
        } else if self.req_nxt >= self.limit && self.rcv_nxt > self.deq_sent {
            // Blocked by the sender's limit: SEG.DEQ lets it free its
            // buffer and raise the limit (a TCP window update, reversed).
            self.send_request(net, None);
        }
        if !self.reqs.is_empty() {
            if self.rto_deadline.is_none() {
                self.arm_rto(net);
            }
            self.timers.cancel(timer::PERSIST);
        } else if self.req_nxt >= self.limit && self.fin_at != Some(self.rcv_nxt) {
            // The sender's limit stops us: persist.
            self.persist_backoff = 0;
            let at = now + self.rtt.rto();
            self.timers.set(timer::PERSIST, at);
        }
    }

    fn rtt_sample(&mut self, rtt: Duration) {
        self.rtt.sample(rtt);
        self.stats.rtt.record(rtt);
        self.stats.rtt.smoothed = self.rtt.srtt();
    }

    fn arm_rto(&mut self, net: &mut dyn Net) {
        let at = net.now() + self.rtt.rto();
        self.rto_deadline = Some(at);
        self.timers.set(timer::RTO, at);
    }

    fn disarm_rto(&mut self) {
        self.rto_deadline = None;
        self.timers.cancel(timer::RTO);
    }

    /// TCP's FlightSize (SND.MAX − SND.UNA), seen from the receiver: from
    /// the first byte not yet delivered to the last requested, so data
    /// held out of order counts, as SACKed data does in TCP.
    fn flight_size(&self) -> u64 {
        self.req_nxt.saturating_sub(self.rcv_nxt)
    }

    /// A hole found by later arrivals: one window cut per recovery.
    fn congestion(&mut self, now: Time, start: u64) {
        // As RFC 6675's sender: one cut per recovery, which lasts until
        // everything requested before it arrived — a loss found meanwhile
        // (even of data requested later) is repaired without a new cut.
        if self.in_recovery || start < self.recovery_point {
            return;
        }
        // A cut never raises the window. A TCP sender's FlightSize at a cut
        // is its window plus a few segments; the receiver's can be far more
        // when ELN or power save keep holes open outside recovery while
        // requests go on above them, so it counts at most twice the window.
        let flight = self.flight_size().min(2 * self.cc.window());
        let ssthresh = self.cc.on_congestion_event(now, flight);
        self.cc.set_window(ssthresh);
        self.in_recovery = true;
        self.recovery_point = self.req_nxt;
        self.stats.fast_recoveries += 1;
    }

    fn absorb_limit(&mut self, r: &RcpRepr) {
        if r.flags.has(RcpFlags::LIM) {
            let lim = self
                .peer_space
                .unwrap(r.ack, 1 + self.limit)
                .saturating_sub(1);
            self.limit = self.limit.max(lim);
            if r.flags.has(RcpFlags::FIN) {
                self.fin_at = Some(lim.max(self.rcv_nxt));
            }
        }
    }

    fn on_data(&mut self, net: &mut dyn Net, r: &RcpRepr, payload: &[u8]) {
        let now = net.now();
        self.absorb_limit(r);
        if !payload.is_empty() {
            let s = self
                .peer_space
                .unwrap(r.seq, 1 + self.rcv_nxt)
                .saturating_sub(1);
            let e = s + payload.len() as u64;
            let arrival = self.reqs.arrive(s, e, now);
            let before = self.rcv_nxt;
            if e <= self.rcv_nxt {
                self.stats.unexpected_dropped += 1;
            } else if s <= self.rcv_nxt {
                let skip = (self.rcv_nxt - s) as usize;
                net.deliver(&payload[skip..]);
                self.rcv_nxt = e;
                while let Some(piece) = self.reasm.pop_in_order(self.rcv_nxt) {
                    self.rcv_nxt += piece.len() as u64;
                    net.deliver(&piece);
                }
            } else if e <= self.rcv_nxt + self.cfg.recv_buffer as u64 {
                self.reasm.insert(s, payload);
            }
            if arrival.expected {
                self.consecutive_rtos = 0;
                if let Some(rtt) = arrival.rtt {
                    self.rtt_sample(rtt);
                }
                if self.reqs.is_empty() {
                    self.disarm_rto();
                } else if !self.sleeping {
                    self.arm_rto(net);
                }
            }
            // The window grows with in-order progress only, as a TCP
            // sender's grows with cumulative ACKs: an out-of-order arrival
            // is a duplicate ACK's news and grows nothing.
            let advanced = self.rcv_nxt - before;
            if advanced > 0 && !self.in_recovery {
                let flight = self.flight_size();
                self.cc.on_ack(now, advanced, arrival.rtt, flight);
            }
            for start in arrival.lost {
                self.congestion(now, start);
            }
            if self.in_recovery && self.rcv_nxt >= self.recovery_point {
                self.in_recovery = false;
            }
        }
        if self.fin_at == Some(self.rcv_nxt) {
            self.finish(net);
            return;
        }
        self.fill(net);
    }

    fn finish(&mut self, net: &mut dyn Net) {
        net.deliver_finished();
        self.disarm_rto();
        self.timers.cancel(timer::PERSIST);
        self.timers.cancel(timer::POWER);
        if self.sleeping {
            net.radio().set_mode(RadioMode::Awake);
            self.sleeping = false;
        }
        self.state = ReceiverState::FinSent;
        self.tries = 0;
        self.send_fin(net);
    }

    /// The sender answered our SYN+ACK. The receiver runs TCP's sender's
    /// RTO, so it takes what a TCP opener takes (RFC 6298 §2–3, the TCP
    /// agent's `syn_acked`): the opening exchange as the first RTT sample,
    /// unless the SYN+ACK was sent again (on a timeout or a repeated SYN) —
    /// then the answer may be to either sending and gives none (Karn).
    fn establish(&mut self, net: &mut dyn Net) {
        if let (Some(at), false) = (self.syn_ack_sent_at, self.syn_ack_resent) {
            self.rtt_sample(net.now().saturating_since(at));
        }
        self.state = ReceiverState::Established;
        self.tries = 0;
        self.timers.cancel(timer::HANDSHAKE);
        net.event(TransportEvent::Established);
        if let Some(ps) = self.cfg.power_save {
            self.timers
                .set(timer::POWER, net.now() + ps.beacon_interval);
        }
        if self.fin_at == Some(self.rcv_nxt) {
            self.finish(net);
        } else {
            self.fill(net);
        }
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        self.rto_deadline = None;
        if self.reqs.is_empty() || self.sleeping {
            return;
        }
        self.consecutive_rtos += 1;
        if self.consecutive_rtos > self.cfg.max_consecutive_rtos {
            self.state = ReceiverState::Closed;
            net.event(TransportEvent::Aborted);
            return;
        }
        self.stats.timeouts += 1;
        self.cc.on_timeout(net.now(), self.flight_size());
        self.rtt.back_off();
        // The receive buffer is kept: only what never arrived is asked again.
        self.reqs.mark_all_lost();
        self.in_recovery = false;
        self.recovery_point = self.req_nxt;
        self.arm_rto(net);
        self.fill(net);
    }

    /// The channel toward the sender, as the link layer estimates it now.
    fn channel_bad(&self, net: &mut dyn Net, bad_loss: f64) -> bool {
        let Some(peer) = self.peer else { return false };
        let Some(route) = net.route(peer.node) else {
            return false;
        };
        net.link(route.next_hop)
            .and_then(|l| l.loss_estimate)
            .is_some_and(|p| p >= bad_loss)
    }

    fn on_power_tick(&mut self, net: &mut dyn Net) {
        let Some(ps) = self.cfg.power_save else {
            return;
        };
        if self.state != ReceiverState::Established {
            return;
        }
        let now = net.now();
        if !self.sleeping {
            if self.channel_bad(net, ps.bad_loss) {
                // Freeze: timers stop, what is in transit is given up (to
                // be requested again on waking, without a window cut).
                self.sleeping = true;
                self.sleep_periods += 1;
                self.frozen_rto = self.rto_deadline.map(|d| d.saturating_since(now));
                self.rto_deadline = None;
                self.timers.cancel(timer::RTO);
                self.timers.cancel(timer::PERSIST);
                self.reqs.mark_all_lost();
                net.radio().set_mode(RadioMode::Sleep);
            }
            self.timers.set(timer::POWER, now + ps.beacon_interval);
        } else {
            // Wake for the beacon.
            self.beacon_started = now;
            net.radio().set_mode(RadioMode::Awake);
            self.timers.set(timer::BEACON, now + ps.beacon_duration);
        }
    }

    fn on_beacon_end(&mut self, net: &mut dyn Net) {
        let Some(ps) = self.cfg.power_save else {
            return;
        };
        if !self.sleeping || self.state != ReceiverState::Established {
            return;
        }
        let now = net.now();
        if self.channel_bad(net, ps.bad_loss) {
            net.radio().set_mode(RadioMode::Sleep);
            self.timers
                .set(timer::POWER, self.beacon_started + ps.beacon_interval);
            return;
        }
        self.sleeping = false;
        if let Some(left) = self.frozen_rto.take() {
            let at = now + left;
            self.rto_deadline = Some(at);
            self.timers.set(timer::RTO, at);
        }
        self.timers.set(timer::POWER, now + ps.beacon_interval);
        self.fill(net);
    }
}

impl Agent for RcpReceiver {
    fn protocol(&self) -> &'static str {
        "rcp"
    }

    fn start(&mut self, net: &mut dyn Net) {
        self.port = self.cfg.local_port.unwrap_or(net.local().port);
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        self.stats.packets_received += 1;
        self.stats.bytes_received += packet.len() as u64;
        let Ok((r, payload)) = rcp::parse(packet) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        let ours = r.dst_port == self.port && self.peer.is_none_or(|p| p == from);
        if !ours || r.flags.has(RcpFlags::REQ) || r.flags.has(RcpFlags::RST) {
            self.stats.unexpected_dropped += 1;
            return;
        }
        match self.state {
            ReceiverState::Listen => {
                if !r.flags.has(RcpFlags::SYN) || r.flags.has(RcpFlags::ACK) {
                    self.stats.unexpected_dropped += 1;
                    return;
                }
                self.peer = Some(from);
                self.peer_space = SeqSpace::new(r.seq);
                self.space = SeqSpace::new(net.rng().next_u32());
                self.absorb_limit(&r);
                self.state = ReceiverState::SynReceived;
                self.send_syn_ack(net);
            }
            ReceiverState::SynReceived => {
                if r.flags.has(RcpFlags::SYN) {
                    self.send_syn_ack(net);
                } else if !r.flags.has(RcpFlags::ACK) || r.ack != self.space.to_wire(1) {
                    // Only the ACK of our SYN+ACK completes the handshake
                    // (TCP's rule, RFC 9293 §3.10.7.4): the sender sends
                    // nothing else before our first REQ, which follows it.
                    self.stats.unexpected_dropped += 1;
                } else {
                    self.absorb_limit(&r);
                    self.establish(net);
                    if !payload.is_empty() {
                        self.on_data(net, &r, payload);
                    }
                }
            }
            ReceiverState::Established => {
                if r.flags.has(RcpFlags::SYN) || r.flags.has(RcpFlags::ACK) {
                    // A duplicate of the handshake: nothing to do.
                    self.stats.unexpected_dropped += 1;
                    return;
                }
                self.on_data(net, &r, payload);
            }
            ReceiverState::FinSent => {
                if r.flags.has(RcpFlags::ACK) && r.ack == self.space.to_wire(2) {
                    self.timers.cancel(timer::HANDSHAKE);
                    self.state = ReceiverState::Closed;
                    net.event(TransportEvent::Closed);
                } else {
                    self.stats.unexpected_dropped += 1;
                }
            }
            ReceiverState::Closed => self.stats.unexpected_dropped += 1,
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

    /// Explicit loss notification: the local link layer hands us the header
    /// of a frame it received corrupted (docs/rcp.md).
    fn on_link_loss(&mut self, net: &mut dyn Net, packet: &[u8]) {
        if !self.cfg.eln || self.state != ReceiverState::Established {
            return;
        }
        let Ok((r, _)) = rcp::parse(packet) else {
            return;
        };
        let Some(peer) = self.peer else { return };
        if r.dst_port != self.port || r.src_port != peer.port || r.flags.has(RcpFlags::REQ) {
            return;
        }
        let s = self
            .peer_space
            .unwrap(r.seq, 1 + self.rcv_nxt)
            .saturating_sub(1);
        if self.reqs.mark_lost(s) {
            self.eln_recoveries += 1;
            self.fill(net);
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "cwnd" => Some(self.cc.window() as f64),
            "ssthresh" => Some(self.cc.ssthresh().min(1 << 53) as f64),
            "flight" => Some(self.reqs.flight() as f64),
            "srtt_ms" => self.rtt.srtt().map(|d| d.as_millis_f64()),
            "rto_ms" => Some(self.rtt.rto().as_millis_f64()),
            "rwnd" => Some(self.cfg.recv_buffer.saturating_sub(self.reasm.bytes()) as f64),
            "sleeping" => Some(self.sleeping as u8 as f64),
            "in_recovery" => Some(self.in_recovery as u8 as f64),
            "eln_recoveries" | "eln_reports" => Some(self.eln_recoveries as f64),
            "ooo_bytes" => Some(self.reasm.bytes() as f64),
            "sleep_periods" => Some(self.sleep_periods as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.state == ReceiverState::Closed
    }
}

impl RcpReceiver {
    fn on_timer(&mut self, net: &mut dyn Net, t: TimerId) {
        match t {
            timer::HANDSHAKE => {
                self.tries += 1;
                let give_up = self.tries > self.cfg.max_consecutive_rtos;
                match self.state {
                    ReceiverState::SynReceived if give_up => {
                        self.state = ReceiverState::Closed;
                        net.event(TransportEvent::Aborted);
                    }
                    ReceiverState::SynReceived => {
                        self.stats.timeouts += 1;
                        self.send_syn_ack(net);
                    }
                    ReceiverState::FinSent if give_up || self.tries > 4 => {
                        // The data is all here; the sender's ACK is a courtesy.
                        self.state = ReceiverState::Closed;
                        net.event(TransportEvent::Closed);
                    }
                    ReceiverState::FinSent => self.send_fin(net),
                    _ => {}
                }
            }
            timer::RTO if self.state == ReceiverState::Established => self.on_timeout(net),
            timer::PERSIST if self.state == ReceiverState::Established && !self.sleeping => {
                // Probe the sender's limit with a repeat of the last request.
                self.send_request(net, None);
                self.persist_backoff = (self.persist_backoff + 1).min(6);
                let wait = self.rtt.rto().saturating_mul(1 << self.persist_backoff);
                self.timers
                    .set(timer::PERSIST, net.now() + wait.min(self.cfg.max_rto));
            }
            timer::POWER => self.on_power_tick(net),
            timer::BEACON => self.on_beacon_end(net),
            _ => {}
        }
    }
}
