//! One RCP pipe of an R²CP connection: the per-path half of an RCP
//! receiver (handshake, congestion control, RTT, loss detection on a local
//! sequence space). What to request is the engine's decision.

use std::collections::{BTreeMap, VecDeque};

use joulenet_wire::rcp::{RcpFlags, RcpRepr, RequestBlock, MAX_BLOCKS};

use crate::cc::CongestionControl;
use crate::net::{Addr, Net, TxOpts};
use crate::rcp::config::RcpConfig;
use crate::rcp::requests::Requests;
use crate::rcp::IP_PROTOCOL;
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
    pub fin_at: Option<u64>,
    pub recovery_point: u64,
    pub pulls: VecDeque<RequestBlock>,
    pub tries: u32,
    pub consecutive_rtos: u32,
    pub rto_deadline: Option<Time>,
    pub fin_sent: bool,
    pub fin_acked: bool,
    pub bytes: u64,
}

impl Pipe {
    pub fn new(path: usize, sender: Addr, cfg: &RcpConfig, isn: u32) -> Pipe {
        Pipe {
            path,
            sender,
            state: PipeState::Opening,
            space: SeqSpace::new(isn),
            peer_space: SeqSpace::new(0),
            cc: cfg.controller(),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            reqs: Requests::new(cfg.dupthresh),
            local_nxt: 0,
            bound: BTreeMap::new(),
            by_global: BTreeMap::new(),
            limit: 0,
            fin_at: None,
            recovery_point: 0,
            pulls: VecDeque::new(),
            tries: 0,
            consecutive_rtos: 0,
            rto_deadline: None,
            fin_sent: false,
            fin_acked: false,
            bytes: 0,
        }
    }

    pub fn alive(&self) -> bool {
        matches!(self.state, PipeState::Open | PipeState::Retiring)
    }

    pub fn room(&self) -> bool {
        self.state == PipeState::Open && self.reqs.flight() < self.cc.window()
    }

    /// RTT for scheduling: the estimate, or the RTO's start before one.
    pub fn srtt(&self) -> Duration {
        self.rtt.srtt().unwrap_or(self.rtt.rto())
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

    /// A pull REQ for global `[s, e)`, with the last three pulls.
    pub fn pull(&mut self, s: u64, e: u64, rcv_nxt: u64, window: u16) -> RcpRepr {
        let mut r = RcpRepr {
            seq: self.peer_space.to_wire(1 + s),
            ack: self.peer_space.to_wire(1 + rcv_nxt),
            flags: RcpFlags(RcpFlags::REQ | RcpFlags::ACK | RcpFlags::PUL),
            length: (e - s).min(u16::MAX as u64) as u16,
            window,
            ..RcpRepr::default()
        };
        let n = self.pulls.len().min(MAX_BLOCKS);
        for (i, b) in self.pulls.iter().take(n).enumerate() {
            r.blocks[i] = *b;
        }
        r.block_count = n as u8;
        self.pulls.push_front(RequestBlock {
            start: r.seq,
            end: r.seq.wrapping_add(r.length as u32),
        });
        self.pulls.truncate(MAX_BLOCKS);
        r
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
