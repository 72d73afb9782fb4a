//! The RCP sender: it answers requests and does nothing else — no
//! congestion control, no retransmission timer for data, no loss detection.
//! It keeps the send buffer (freed up to SEG.DEQ), SND.NXT for cumulative
//! requests, the cyclic buffer of recent pull blocks, and its request limit
//! SND.LIM (reverse flow control: how far the receiver may ask).

use std::collections::VecDeque;

use joulenet_wire::rcp::{self, RcpFlags, RcpRepr, RequestBlock};

use super::config::RcpConfig;
use super::cyclic::CyclicBuffer;
use super::sent::SentRanges;
use super::{timer, IP_PROTOCOL};
use crate::net::{Addr, Agent, AppRead, Net, TransportEvent, TxOpts};
use crate::stats::TransportStats;
use crate::tcp::seq::SeqSpace;
use crate::time::Time;
use crate::timer::TimerTable;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SenderState {
    Idle,
    SynSent,
    /// Passive open: the receiver's SYN was answered (R²CP pipes).
    SynReceived,
    Established,
    Closed,
}

/// Data ranges `[start, end)` already sent in answer to one REQ.
type Answered = Vec<(u64, u64)>;

pub struct RcpSender {
    /// This agent's timers (`super::timer`/`timers` names them).
    timers: TimerTable,
    cfg: RcpConfig,
    peer: Addr,
    port: u16,
    state: SenderState,
    /// Our sequence space: 0 = SYN, data byte i at 1 + i.
    space: SeqSpace,
    /// The receiver's: 0 = its SYN, 1 = its FIN.
    peer_space: SeqSpace,
    /// Data index of `buffer[0]`.
    base: u64,
    buffer: VecDeque<u8>,
    app_finished: bool,
    /// Data index of the next byte never sent (cumulative mode).
    snd_nxt: u64,
    /// Highest data index every sent byte ever reached.
    sent_max: u64,
    /// What was ever sent at or above SEG.DEQ (data or retransmission).
    sent: SentRanges,
    /// The furthest the receiver has asked for (data index), by a
    /// cumulative request or a pull: whether it waits on the limit.
    last_request: u64,
    /// The limit we last told the receiver.
    told_limit: u64,
    told_fin: bool,
    cyclic: CyclicBuffer,
    syn_tries: u32,
    /// Waits for the receiver's SYN instead of opening.
    passive: bool,
    stats: TransportStats,
}

impl RcpSender {
    pub fn new(cfg: RcpConfig, peer: Addr) -> RcpSender {
        RcpSender {
            cfg,
            peer,
            port: 0,
            state: SenderState::Idle,
            space: SeqSpace::new(0),
            peer_space: SeqSpace::new(0),
            base: 0,
            buffer: VecDeque::new(),
            app_finished: false,
            snd_nxt: 0,
            sent_max: 0,
            sent: SentRanges::default(),
            last_request: 0,
            told_limit: 0,
            told_fin: false,
            cyclic: CyclicBuffer::default(),
            syn_tries: 0,
            passive: false,
            stats: TransportStats::default(),
            timers: TimerTable::new(),
        }
    }

    /// A sender that waits for the receiver to open (R²CP opens one pipe
    /// per path from the mobile host). Unchanged otherwise.
    pub fn listen(cfg: RcpConfig) -> RcpSender {
        RcpSender {
            passive: true,
            ..RcpSender::new(cfg, Addr::default())
        }
    }

    pub fn state(&self) -> SenderState {
        self.state
    }

    /// SND.LIM: the data index the receiver may request up to.
    pub fn limit(&self) -> u64 {
        self.base + self.buffer.len() as u64
    }

    fn fin_known(&self) -> bool {
        self.app_finished
    }

    fn fill(&mut self, net: &mut dyn Net) {
        if self.app_finished {
            return;
        }
        let mut chunk = [0u8; 8192];
        while self.buffer.len() < self.cfg.send_buffer {
            let room = (self.cfg.send_buffer - self.buffer.len()).min(chunk.len());
            match net.app_read(&mut chunk[..room]) {
                AppRead::Data(n) => self.buffer.extend(&chunk[..n.min(room)]),
                AppRead::Pending => break,
                AppRead::Finished => {
                    self.app_finished = true;
                    break;
                }
            }
        }
    }

    fn header(&self, flags: u8) -> RcpRepr {
        RcpRepr {
            src_port: self.port,
            dst_port: self.peer.port,
            flags: RcpFlags(flags),
            ..RcpRepr::default()
        }
    }

    /// Every packet after the SYN carries SND.LIM, and FIN once the limit
    /// is the end of the stream.
    fn limit_flags(&self) -> u8 {
        RcpFlags::LIM | if self.fin_known() { RcpFlags::FIN } else { 0 }
    }

    fn emit(&mut self, net: &mut dyn Net, mut repr: RcpRepr, payload_range: Option<(u64, u64)>) {
        let mut out = net.packet_buffer();
        repr.ack = self.space.to_wire(1 + self.limit());
        match payload_range {
            Some((s, e)) => {
                let from = (s - self.base) as usize;
                let to = (e - self.base) as usize;
                // The range in the ring's two halves, copied slice-wise (a
                // byte-by-byte copy here was most of RCP's sender CPU).
                let (a, b) = self.buffer.as_slices();
                let mut payload = Vec::with_capacity(to - from);
                payload.extend_from_slice(&a[from.min(a.len())..to.min(a.len())]);
                payload.extend_from_slice(
                    &b[from.saturating_sub(a.len())..to.saturating_sub(a.len())],
                );
                repr.emit(&payload, &mut out);
                let len = out.len() as u64;
                let new = self.sent.insert(s, e);
                if new == 0 {
                    self.stats.retransmitted_packets += 1;
                    self.stats.retransmitted_bytes += len;
                } else {
                    self.stats.data_packets += 1;
                    self.stats.data_bytes += len;
                    self.stats.payload_bytes += new;
                }
                self.sent_max = self.sent_max.max(e);
            }
            None => {
                repr.emit(&[], &mut out);
                self.stats.control_packets += 1;
                self.stats.control_bytes += out.len() as u64;
            }
        }
        self.told_limit = self.limit();
        self.told_fin = self.fin_known();
        net.send(self.peer, out, TxOpts::ipv4(IP_PROTOCOL));
    }

    /// Send data `[start, end)` in segments cut at multiples of the MSS,
    /// but no segment already in `sent` — the segments sent in answer to
    /// the same REQ, which this one joins.
    fn send_range(&mut self, net: &mut dyn Net, start: u64, end: u64, sent: &mut Answered) {
        let mss = self.cfg.mss as u64;
        let start = start.max(self.base);
        let end = end.min(self.limit());
        let mut at = start;
        while at < end {
            let cut = ((at / mss) + 1) * mss;
            let e = end.min(cut);
            if !sent.iter().any(|&(s, t)| s <= at && e <= t) {
                let mut repr = self.header(self.limit_flags());
                repr.seq = self.space.to_wire(1 + at);
                self.emit(net, repr, Some((at, e)));
                sent.push((at, e));
            }
            at = e;
        }
    }

    fn send_syn(&mut self, net: &mut dyn Net) {
        // The SYN already carries the request limit (and FIN if the whole
        // stream is buffered), so the receiver may request at once.
        let mut repr = self.header(RcpFlags::SYN | self.limit_flags());
        repr.seq = self.space.to_wire(0);
        repr.ack = self.space.to_wire(1 + self.limit());
        self.told_limit = self.limit();
        self.told_fin = self.fin_known();
        let mut out = net.packet_buffer();
        repr.emit(&[], &mut out);
        self.stats.control_packets += 1;
        self.stats.control_bytes += out.len() as u64;
        net.send(self.peer, out, TxOpts::ipv4(IP_PROTOCOL));
        let backoff = 1u64 << self.syn_tries.min(6);
        self.timers.set(
            timer::HANDSHAKE,
            net.now() + self.cfg.initial_rto.saturating_mul(backoff),
        );
    }

    /// Passive open: SYN+ACK (the ACK field is taken, so the request limit
    /// follows in a window update).
    fn send_syn_ack(&mut self, net: &mut dyn Net) {
        let mut repr = self.header(RcpFlags::SYN | RcpFlags::ACK);
        repr.seq = self.space.to_wire(0);
        repr.ack = self.peer_space.to_wire(1);
        let mut out = net.packet_buffer();
        repr.emit(&[], &mut out);
        self.stats.control_packets += 1;
        self.stats.control_bytes += out.len() as u64;
        net.send(self.peer, out, TxOpts::ipv4(IP_PROTOCOL));
        self.control(net, 0, None);
    }

    fn control(&mut self, net: &mut dyn Net, extra: u8, ack: Option<u32>) {
        let mut repr = self.header(self.limit_flags() | extra);
        repr.seq = self.space.to_wire(1 + self.limit());
        if let Some(a) = ack {
            // ACK and LIM share the field: an ACK of the receiver's SYN or
            // FIN carries no limit (and so no FIN either).
            repr.flags = RcpFlags(RcpFlags::ACK | extra);
            let mut out = net.packet_buffer();
            repr.ack = a;
            repr.emit(&[], &mut out);
            self.stats.control_packets += 1;
            self.stats.control_bytes += out.len() as u64;
            net.send(self.peer, out, TxOpts::ipv4(IP_PROTOCOL));
            return;
        }
        self.emit(net, repr, None);
    }

    fn on_request(&mut self, net: &mut dyn Net, r: &RcpRepr) {
        // SEG.DEQ: everything below is in the receiver's hands.
        let deq = self.space.unwrap(r.ack, 1 + self.base).saturating_sub(1);
        if deq > self.base {
            let free = (deq - self.base).min(self.buffer.len() as u64) as usize;
            self.buffer.drain(..free);
            self.base += free as u64;
            self.sent.forget_below(self.base);
        }
        self.fill(net);
        let sent_before = self.stats.total_packets_sent();
        // One REQ is answered with each segment at most once. Its blocks
        // are the receiver's pulls *before* this one, so a pull repeated
        // after a lost one names the same segment twice (block and PUL),
        // and a segment pulled repeatedly may fill several blocks.
        let mut sent = Answered::new();
        // Pull requests the cyclic buffer never saw (their REQs were lost).
        for b in self.cyclic.missing(r.blocks()) {
            self.serve_pull(net, b, &mut sent);
        }
        let req = self.space.unwrap(r.seq, 1 + self.snd_nxt).saturating_sub(1);
        if r.flags.has(RcpFlags::PUL) {
            let end = r.seq.wrapping_add(r.length as u32);
            self.serve_pull(net, RequestBlock { start: r.seq, end }, &mut sent);
        } else {
            self.last_request = self.last_request.max(req);
            if req > self.snd_nxt {
                let from = self.snd_nxt.max(self.base);
                let to = req.min(self.limit());
                self.send_range(net, from, to, &mut sent);
                self.snd_nxt = self.snd_nxt.max(to);
            }
        }
        // A cumulative request answered by nothing that reached the limit
        // we told, or asks for nothing beyond SEG.DEQ (an R²CP pipe's
        // persist probe: it pulls everything else), is a probe or a window
        // update; tell the limit now.
        let answered = self.stats.total_packets_sent() > sent_before;
        let probe = req >= self.told_limit || req <= deq;
        if !answered && !r.flags.has(RcpFlags::PUL) && probe {
            self.control(net, 0, None);
        }
    }

    fn serve_pull(&mut self, net: &mut dyn Net, b: RequestBlock, sent: &mut Answered) {
        let s = self.space.unwrap(b.start, 1 + self.base).saturating_sub(1);
        let len = b.end.wrapping_sub(b.start) as u64;
        // A pull reaching the limit we told waits on it, as a cumulative
        // request there does: a raised limit is announced (R²CP pulls
        // only). What lies past the limit is not served: the send buffer
        // keeps its size, and a receiver asks only up to the limit.
        self.last_request = self.last_request.max(s + len);
        self.cyclic.push(b);
        self.send_range(net, s, s + len, sent);
        if s + len >= self.limit() && self.app_finished && s + len > self.sent_max {
            self.control(net, 0, None);
        }
    }
}

impl Agent for RcpSender {
    fn protocol(&self) -> &'static str {
        "rcp"
    }

    fn start(&mut self, net: &mut dyn Net) {
        self.port = self.cfg.local_port.unwrap_or(net.local().port);
        self.space = SeqSpace::new(net.rng().next_u32());
        self.fill(net);
        if !self.passive {
            self.state = SenderState::SynSent;
            self.send_syn(net);
        }
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: crate::net::Addr, packet: &[u8]) {
        self.stats.packets_received += 1;
        if self.app_finished && self.state == SenderState::Established {
            // The receiver's FIN (or the ACK of it) may be lost for good:
            // a sender whose stream has ended closes after a silence. The
            // silence must outlast the receiver's own patience: a receiver
            // still asking sends a REQ at least every maximum RTO, but on a
            // lossy path all of them may be lost, and it gives up only after
            // `max_consecutive_rtos` timeouts in a row. A shorter silence
            // (four maximum RTOs before issue 16: four REQs lost in a row,
            // 2.6% at 40% loss) closed senders whose receivers then timed out
            // against nobody until they gave up.
            let linger = self
                .cfg
                .max_rto
                .saturating_mul(self.cfg.max_consecutive_rtos as u64 + 1);
            self.timers.set(timer::LINGER, net.now() + linger);
        }
        self.stats.bytes_received += packet.len() as u64;
        let Ok((r, _)) = rcp::parse(packet) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        if self.passive && self.state == SenderState::Idle {
            if r.flags.has(RcpFlags::SYN) && !r.flags.has(RcpFlags::ACK) && r.dst_port == self.port
            {
                self.peer = from;
                self.peer_space = SeqSpace::new(r.seq);
                self.state = SenderState::SynReceived;
                self.send_syn_ack(net);
            } else {
                self.stats.unexpected_dropped += 1;
            }
            return;
        }
        if from != self.peer || r.dst_port != self.port || r.flags.has(RcpFlags::RST) {
            self.stats.unexpected_dropped += 1;
            return;
        }
        match self.state {
            SenderState::SynSent => {
                if r.flags.has(RcpFlags::SYN)
                    && r.flags.has(RcpFlags::ACK)
                    && r.ack == self.space.to_wire(1)
                {
                    self.peer_space = SeqSpace::new(r.seq);
                    self.state = SenderState::Established;
                    self.timers.cancel(timer::HANDSHAKE);
                    net.event(TransportEvent::Established);
                    let ack = self.peer_space.to_wire(1);
                    self.control(net, 0, Some(ack));
                } else {
                    self.stats.unexpected_dropped += 1;
                }
            }
            SenderState::SynReceived => {
                if r.flags.has(RcpFlags::SYN) {
                    // A repeat of the SYN, or a new pipe from the receiver
                    // whose previous one died before our SYN+ACK was
                    // acknowledged: answer the SYN it sent last.
                    self.peer_space = SeqSpace::new(r.seq);
                    self.send_syn_ack(net);
                    return;
                }
                // The ACK of our SYN, or a REQ that overtook a lost ACK.
                self.state = SenderState::Established;
                net.event(TransportEvent::Established);
                if r.flags.has(RcpFlags::REQ) {
                    self.on_request(net, &r);
                }
            }
            SenderState::Established => {
                if r.flags.has(RcpFlags::SYN) && self.passive {
                    if r.flags.has(RcpFlags::ACK) || self.peer_space == SeqSpace::new(r.seq) {
                        self.stats.unexpected_dropped += 1;
                        return;
                    }
                    // A new pipe from the same receiver (R²CP re-opening a
                    // path): a new incarnation over the same stream.
                    self.peer_space = SeqSpace::new(r.seq);
                    self.cyclic = CyclicBuffer::default();
                    self.state = SenderState::SynReceived;
                    self.send_syn_ack(net);
                } else if r.flags.has(RcpFlags::SYN) {
                    // Our ACK was lost: acknowledge the SYN again.
                    let ack = self.peer_space.to_wire(1);
                    self.control(net, 0, Some(ack));
                } else if r.flags.has(RcpFlags::REQ) {
                    self.on_request(net, &r);
                } else if r.flags.has(RcpFlags::FIN) {
                    // The receiver has everything and closes: acknowledge.
                    let ack = self.peer_space.to_wire(2);
                    self.control(net, 0, Some(ack));
                    self.state = SenderState::Closed;
                    net.event(TransportEvent::Closed);
                } else {
                    self.stats.unexpected_dropped += 1;
                }
            }
            SenderState::Closed => {
                if r.flags.has(RcpFlags::FIN) && !r.flags.has(RcpFlags::REQ) {
                    let ack = self.peer_space.to_wire(2);
                    self.control(net, 0, Some(ack));
                } else {
                    self.stats.unexpected_dropped += 1;
                }
            }
            SenderState::Idle => self.stats.unexpected_dropped += 1,
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
        let (limit, fin) = (self.limit(), self.fin_known());
        self.fill(net);
        // The receiver waits at the old limit: tell it about the new one.
        let changed = self.limit() != limit || self.fin_known() != fin;
        if changed && self.state == SenderState::Established && self.last_request >= self.told_limit
        {
            self.control(net, 0, None);
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "snd_buf" => Some(self.buffer.len() as f64),
            "limit" => Some(self.limit() as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.state == SenderState::Closed
    }
}

impl RcpSender {
    fn on_timer(&mut self, net: &mut dyn Net, t: crate::net::TimerId) {
        if t == timer::LINGER && self.state == SenderState::Established {
            self.state = SenderState::Closed;
            net.event(TransportEvent::Closed);
            return;
        }
        if t == timer::HANDSHAKE && self.state == SenderState::SynSent {
            self.syn_tries += 1;
            self.stats.timeouts += 1;
            if self.syn_tries > self.cfg.max_consecutive_rtos {
                self.state = SenderState::Closed;
                net.event(TransportEvent::Aborted);
                return;
            }
            self.send_syn(net);
        }
    }
}
