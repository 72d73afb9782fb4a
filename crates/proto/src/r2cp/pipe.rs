//! One RCP pipe of an R²CP connection: the per-path half of an RCP
//! receiver (handshake, congestion control, RTT, loss detection on a local
//! sequence space). What to request is the engine's decision.
//!
//! The window follows the RCP receiver's rules, which are the TCP sender's
//! (docs/rcp.md): it grows with in-order progress on the pipe's local
//! space only, a cut sets ssthresh from the pipe's FlightSize (from its
//! first request not yet arrived to its last, so requests answered above
//! a hole count, as SACKed data does), once per recovery and never above
//! the window, and a request must fit the window whole.

use std::collections::{BTreeMap, VecDeque};

use joulenet_wire::rcp::{RcpFlags, RcpRepr, RequestBlock, MAX_BLOCKS};

use crate::cc::CongestionControl;
use crate::net::{Addr, Net, TxOpts};
use crate::rcp::config::RcpConfig;
use crate::rcp::requests::Requests;
use crate::rcp::{RcpController, IP_PROTOCOL};
use crate::stats::TransportStats;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::seq::SeqSpace;
use crate::time::{Duration, Time};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum PipeState {
    Opening,
    Open,
    /// Takes no new bindings; ends when its requests are answered.
    Retiring,
    Dead,
}

pub(crate) struct Pipe {
    pub path: usize,
    pub sender: Addr,
    pub state: PipeState,
    pub space: SeqSpace,
    pub peer_space: SeqSpace,
    pub cc: Box<dyn CongestionControl>,
    pub rtt: RttEstimator,
    pub reqs: Requests,
    pub local_nxt: u64,
    /// local start -> global [start, end)
    pub bound: BTreeMap<u64, (u64, u64)>,
    /// global start -> local start
    pub by_global: BTreeMap<u64, u64>,
    pub limit: u64,
    /// Losses of local requests below this do not cut the window again.
    pub recovery_point: u64,
    pub in_recovery: bool,
    pub pulls: VecDeque<RequestBlock>,
    pub tries: u32,
    /// When the SYN was first sent; whether it was sent again (Karn).
    pub syn_sent_at: Time,
    pub syn_resent: bool,
    pub consecutive_rtos: u32,
    pub rto_deadline: Option<Time>,
    /// Persist probes sent since the pipe was last blocked.
    pub persist_backoff: u32,
    pub fin_sent: bool,
    pub fin_acked: bool,
    pub bytes: u64,
    mss: u64,
}

impl Pipe {
    pub fn new(
        path: usize,
        sender: Addr,
        cfg: &RcpConfig,
        controller: RcpController,
        isn: u32,
    ) -> Pipe {
        let cc = RcpConfig {
            controller,
            ..cfg.clone()
        }
        .controller();
        Pipe {
            path,
            sender,
            state: PipeState::Opening,
            space: SeqSpace::new(isn),
            peer_space: SeqSpace::new(0),
            cc,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            reqs: Requests::new(cfg.dupthresh),
            local_nxt: 0,
            bound: BTreeMap::new(),
            by_global: BTreeMap::new(),
            limit: 0,
            recovery_point: 0,
            in_recovery: false,
            pulls: VecDeque::new(),
            tries: 0,
            syn_sent_at: Time::ZERO,
            syn_resent: false,
            consecutive_rtos: 0,
            rto_deadline: None,
            persist_backoff: 0,
            fin_sent: false,
            fin_acked: false,
            bytes: 0,
            mss: cfg.mss as u64,
        }
    }

    pub fn alive(&self) -> bool {
        matches!(self.state, PipeState::Open | PipeState::Retiring)
    }

    /// Room for one more request: a whole segment must fit the window, as
    /// a TCP sender's must (RFC 6675's pipe rule), unless nothing is
    /// outstanding at all.
    pub fn room(&self) -> bool {
        let flight = self.reqs.flight();
        self.state == PipeState::Open && (flight == 0 || flight + self.mss <= self.cc.window())
    }

    /// RTT for scheduling: the estimate, or the RTO's start before one
    /// (only when the opening exchange gave no sample: a SYN sent again).
    pub fn srtt(&self) -> Duration {
        self.rtt.srtt().unwrap_or(self.rtt.rto())
    }

    fn sample(&mut self, rtt: Duration, stats: &mut TransportStats) {
        self.rtt.sample(rtt);
        stats.rtt.record(rtt);
        stats.rtt.smoothed = self.rtt.srtt();
    }

    /// The sender's SYN+ACK: the opening exchange is the pipe's first RTT
    /// sample, as the RCP receiver's and a TCP opener's (RFC 6298 §2–3),
    /// unless the SYN was sent again and the answer may be to either.
    pub fn established(&mut self, now: Time, stats: &mut TransportStats) {
        self.state = PipeState::Open;
        self.tries = 0;
        if !self.syn_resent {
            self.sample(now.saturating_since(self.syn_sent_at), stats);
        }
    }

    /// The first local byte not yet arrived (lost ones included): the
    /// pipe's cumulative point, as SND.UNA is a TCP sender's.
    fn una(&self) -> u64 {
        self.reqs.lowest().unwrap_or(self.local_nxt)
    }

    /// TCP's FlightSize on the local space.
    fn flight_size(&self) -> u64 {
        self.local_nxt - self.una()
    }

    /// Data answering global `g` arrived through this pipe: RTT, loss
    /// detection and the window on the local space. Returns the global
    /// ranges newly declared lost (now the engine's), or `None` when `g`
    /// was not bound here.
    pub fn arrive(
        &mut self,
        g: u64,
        now: Time,
        stats: &mut TransportStats,
    ) -> Option<Vec<(u64, u64)>> {
        let local = self.by_global.remove(&g)?;
        let (gs, ge) = self.bound.remove(&local)?;
        let una = self.una();
        let arrival = self.reqs.arrive(local, local + (ge - gs), now);
        if !arrival.expected {
            return Some(Vec::new());
        }
        self.consecutive_rtos = 0;
        if let Some(rtt) = arrival.rtt {
            self.sample(rtt, stats);
        }
        // In-order progress only: an arrival above a hole is a duplicate
        // ACK's news and grows nothing.
        let advanced = self.una() - una;
        if advanced > 0 && !self.in_recovery {
            self.cc
                .on_ack(now, advanced, arrival.rtt, self.flight_size());
        }
        let flight = self.flight_size();
        let mut lost = Vec::new();
        for l in arrival.lost {
            self.congestion(now, l, flight, stats);
            lost.extend(self.unbind_local(l));
        }
        if self.in_recovery && self.una() >= self.recovery_point {
            self.in_recovery = false;
        }
        Some(lost)
    }

    /// A hole found by later arrivals: one cut per recovery (RFC 6675),
    /// from FlightSize counted at most twice the window, so a cut never
    /// raises it.
    fn congestion(&mut self, now: Time, local: u64, flight: u64, stats: &mut TransportStats) {
        if self.in_recovery || local < self.recovery_point {
            return;
        }
        let flight = flight.min(2 * self.cc.window());
        let ssthresh = self.cc.on_congestion_event(now, flight);
        self.cc.set_window(ssthresh);
        self.in_recovery = true;
        self.recovery_point = self.local_nxt;
        stats.fast_recoveries += 1;
    }

    /// The retransmission timer fired: everything bound here goes back to
    /// the engine.
    pub fn timeout(&mut self, now: Time) -> Vec<(u64, u64)> {
        self.consecutive_rtos += 1;
        self.cc.on_timeout(now, self.flight_size());
        self.rtt.back_off();
        self.in_recovery = false;
        self.recovery_point = self.local_nxt;
        self.unbind_all()
    }

    pub fn send(&self, net: &mut dyn Net, port: u16, mut r: RcpRepr, stats: &mut TransportStats) {
        r.src_port = port;
        r.dst_port = self.sender.port;
        let mut out = net.packet_buffer();
        r.emit(&[], &mut out);
        stats.control_packets += 1;
        stats.control_bytes += out.len() as u64;
        net.send(self.sender, out, TxOpts::ipv4(IP_PROTOCOL));
    }

    pub fn syn(&self) -> RcpRepr {
        RcpRepr {
            seq: self.space.to_wire(0),
            flags: RcpFlags(RcpFlags::SYN),
            ..RcpRepr::default()
        }
    }

    pub fn ack_of_syn(&self) -> RcpRepr {
        RcpRepr {
            seq: self.space.to_wire(1),
            ack: self.peer_space.to_wire(1),
            flags: RcpFlags(RcpFlags::ACK),
            ..RcpRepr::default()
        }
    }

    pub fn fin(&self, rcv_nxt: u64) -> RcpRepr {
        RcpRepr {
            seq: self.space.to_wire(1),
            ack: self.peer_space.to_wire(1 + rcv_nxt),
            flags: RcpFlags(RcpFlags::FIN | RcpFlags::ACK),
            ..RcpRepr::default()
        }
    }

    /// The last pulls, newest first, as every REQ carries them.
    fn with_blocks(&self, mut r: RcpRepr) -> RcpRepr {
        let n = self.pulls.len().min(MAX_BLOCKS);
        for (i, b) in self.pulls.iter().take(n).enumerate() {
            r.blocks[i] = *b;
        }
        r.block_count = n as u8;
        r
    }

    /// A pull REQ for global `[s, e)`, with the last three pulls.
    pub fn pull(&mut self, s: u64, e: u64, rcv_nxt: u64, window: u16) -> RcpRepr {
        let r = self.with_blocks(RcpRepr {
            seq: self.peer_space.to_wire(1 + s),
            ack: self.peer_space.to_wire(1 + rcv_nxt),
            flags: RcpFlags(RcpFlags::REQ | RcpFlags::ACK | RcpFlags::PUL),
            length: (e - s).min(u16::MAX as u64) as u16,
            window,
            ..RcpRepr::default()
        });
        self.pulls.push_front(RequestBlock {
            start: r.seq,
            end: r.seq.wrapping_add(r.length as u32),
        });
        self.pulls.truncate(MAX_BLOCKS);
        r
    }

    /// A persist probe (TCP's persist timer, RCP's §3.3.4 reversed): a
    /// cumulative REQ for nothing beyond SEG.DEQ, which the sender answers
    /// with its request limit and never with data. It carries the last
    /// pulls, so a lost pull is served too.
    pub fn probe(&self, rcv_nxt: u64, window: u16) -> RcpRepr {
        self.with_blocks(RcpRepr {
            seq: self.peer_space.to_wire(1 + rcv_nxt),
            ack: self.peer_space.to_wire(1 + rcv_nxt),
            flags: RcpFlags(RcpFlags::REQ | RcpFlags::ACK),
            window,
            ..RcpRepr::default()
        })
    }

    /// Bind global `[g, e)` to the next local range and record its request.
    pub fn bind(&mut self, g: u64, e: u64, now: Time) {
        let local = self.local_nxt;
        self.local_nxt += e - g;
        self.reqs.request(local, local + (e - g), now);
        self.bound.insert(local, (g, e));
        self.by_global.insert(g, local);
        self.persist_backoff = 0;
    }

    /// Remove the binding of a local segment; returns its global range.
    pub fn unbind_local(&mut self, local: u64) -> Option<(u64, u64)> {
        let g = self.bound.remove(&local)?;
        self.by_global.remove(&g.0);
        self.reqs.remove(local);
        Some(g)
    }

    /// Everything still bound here, unbound (pipe death, timeout).
    pub fn unbind_all(&mut self) -> Vec<(u64, u64)> {
        let locals: Vec<u64> = self.bound.keys().copied().collect();
        locals
            .into_iter()
            .filter_map(|l| self.unbind_local(l))
            .collect()
    }
}
