//! The R²CP engine: reliability, the receive buffer and scheduling across
//! pipes. See the module documentation in `mod.rs`.

use std::collections::{BTreeMap, BTreeSet};

use joulenet_wire::rcp::{self, RcpFlags, RcpRepr};

use super::config::{R2cpConfig, Scheduler};
use super::pending::{Pending, Reach};
use super::pipe::{Pipe, PipeState};
use crate::net::{Addr, Agent, Net, TimerId, TransportEvent};
use crate::stats::TransportStats;
use crate::tcp::reassembly::Reassembly;
use crate::tcp::seq::SeqSpace;
use crate::time::{Duration, Time};
use crate::timer::TimerTable;

const POLL: TimerId = TimerId(0);
const TOKENS: TimerId = TimerId(1);
/// Timers per pipe slot: handshake, retransmission, persist. A slot is
/// reused once its pipe is dead, and a path has at most one pipe that is
/// not, so the ids stay below 2 + 3 × paths whatever the outages.
const PIPE_TIMERS: u16 = 3;
fn handshake_timer(k: usize) -> TimerId {
    TimerId(2 + PIPE_TIMERS * k as u16)
}
fn rto_timer(k: usize) -> TimerId {
    TimerId(3 + PIPE_TIMERS * k as u16)
}
fn persist_timer(k: usize) -> TimerId {
    TimerId(4 + PIPE_TIMERS * k as u16)
}

pub struct R2cpReceiver {
    /// POLL, TOKENS, then the timers of each pipe slot.
    timers: TimerTable,
    cfg: R2cpConfig,
    port: u16,
    /// Pipe slots; a dead pipe's slot takes the next pipe opened.
    pipes: Vec<Pipe>,
    /// Pipes opened over the connection's life.
    pipes_opened: u64,
    /// Whether each path was up at the last poll: in handoff, a path
    /// gets a new pipe when it comes up, not whenever it has none.
    was_up: Vec<bool>,
    reasm: Reassembly,
    rcv_nxt: u64,
    /// Segment starts held out of order.
    have: BTreeSet<u64>,
    /// Data bound to no pipe (the paper's `pending`).
    pending: Pending,
    /// Global start -> pipe currently asked for it (the paper's `binding`;
    /// each pipe maps its local sequence numbers).
    bound: BTreeMap<u64, usize>,
    tokens: f64,
    tokens_at: Time,
    finished: bool,
    closed: bool,
    close_tries: u32,
    /// Arrivals, and arrivals finding the buffer at least 75 % full.
    arrivals: u64,
    arrivals_buffer_75: u64,
    stats: TransportStats,
}

impl R2cpReceiver {
    pub fn new(cfg: R2cpConfig) -> R2cpReceiver {
        let tokens = cfg.token_bucket.map_or(0.0, |t| t.depth_bytes as f64);
        R2cpReceiver {
            pending: Pending::new(cfg.rcp.mss as u64),
            cfg,
            port: 0,
            pipes: Vec::new(),
            pipes_opened: 0,
            was_up: Vec::new(),
            reasm: Reassembly::default(),
            rcv_nxt: 0,
            have: BTreeSet::new(),
            bound: BTreeMap::new(),
            tokens,
            tokens_at: Time::ZERO,
            finished: false,
            closed: false,
            close_tries: 0,
            arrivals: 0,
            arrivals_buffer_75: 0,
            stats: TransportStats::default(),
            timers: TimerTable::new(),
        }
    }

    fn mss(&self) -> u64 {
        self.cfg.rcp.mss as u64
    }

    /// Bytes received through the pipe in each slot so far.
    pub fn pipe_bytes(&self) -> Vec<u64> {
        self.pipes.iter().map(|p| p.bytes).collect()
    }

    /// Share of arrivals that found the receive buffer ≥ 75 % full.
    pub fn buffer_75_share(&self) -> f64 {
        self.arrivals_buffer_75 as f64 / self.arrivals.max(1) as f64
    }

    fn path_up(&self, net: &mut dyn Net, path: usize) -> bool {
        let p = self.cfg.paths[path];
        p.via
            .or_else(|| net.route(p.sender.node).map(|r| r.next_hop))
            .and_then(|hop| net.link(hop))
            .is_some_and(|l| l.up)
    }

    /// The path's pipe that is not dead, if any.
    fn pipe_of(&self, path: usize) -> Option<usize> {
        self.pipes
            .iter()
            .position(|p| p.path == path && p.state != PipeState::Dead)
    }

    fn poll_paths(&mut self, net: &mut dyn Net) {
        if self.finished {
            return;
        }
        self.was_up.resize(self.cfg.paths.len(), false);
        for path in 0..self.cfg.paths.len() {
            let up = self.path_up(net, path);
            let came_up = up && !self.was_up[path];
            self.was_up[path] = up;
            match (up, self.pipe_of(path)) {
                // Without aggregation the path handed off from keeps no
                // pipe while it stays up (§4.2: the old pipe is deleted);
                // it gets one again when it comes back up, or when no
                // pipe is left at all.
                (true, None)
                    if self.cfg.aggregate || came_up || !self.pipes.iter().any(|p| p.alive()) =>
                {
                    self.open_pipe(net, path)
                }
                (false, Some(k)) => self.kill_pipe(net, k),
                _ => {}
            }
        }
        self.timers.set(POLL, net.now() + self.cfg.poll);
    }

    /// A new pipe for `path`, in a dead pipe's slot if there is one.
    fn open_pipe(&mut self, net: &mut dyn Net, path: usize) {
        let spec = self.cfg.paths[path];
        let controller = spec.controller.unwrap_or(self.cfg.rcp.controller);
        let isn = net.rng().next_u32();
        let mut pipe = Pipe::new(path, spec.sender, &self.cfg.rcp, controller, isn);
        pipe.syn_sent_at = net.now();
        pipe.send(net, self.port, pipe.syn(), &mut self.stats);
        let k = match self.pipes.iter().position(|p| p.state == PipeState::Dead) {
            Some(k) => {
                self.pipes[k] = pipe;
                k
            }
            None => {
                self.pipes.push(pipe);
                self.pipes.len() - 1
            }
        };
        self.pipes_opened += 1;
        self.timers.cancel(rto_timer(k));
        self.timers.cancel(persist_timer(k));
        let at = net.now() + self.pipes[k].rtt.rto();
        self.timers.set(handshake_timer(k), at);
    }

    /// The pipe ends: its timers stop and its requests go back to the
    /// engine.
    fn end_pipe(&mut self, k: usize) {
        self.pipes[k].state = PipeState::Dead;
        self.timers.cancel(handshake_timer(k));
        self.timers.cancel(rto_timer(k));
        self.timers.cancel(persist_timer(k));
        let lost = self.pipes[k].unbind_all();
        self.return_holes(k, lost);
    }

    /// The pipe's path went down.
    fn kill_pipe(&mut self, net: &mut dyn Net, k: usize) {
        self.end_pipe(k);
        self.fill_all(net, None);
    }

    fn return_holes(&mut self, k: usize, ranges: Vec<(u64, u64)>) {
        for (s, e) in ranges {
            if self.bound.get(&s) == Some(&k) {
                self.bound.remove(&s);
            }
            if s >= self.rcv_nxt && !self.have.contains(&s) && !self.bound.contains_key(&s) {
                self.pending.release(s, e);
            }
        }
    }

    fn on_established(&mut self, net: &mut dyn Net, k: usize) {
        self.pipes[k].established(net.now(), &mut self.stats);
        self.timers.cancel(handshake_timer(k));
        if self.pipes.iter().filter(|p| p.alive()).count() == 1 {
            net.event(TransportEvent::Established);
        }
        if !self.cfg.aggregate {
            // Handoff: the newest pipe takes over; older ones retire.
            for (j, p) in self.pipes.iter_mut().enumerate() {
                if j != k && p.state == PipeState::Open {
                    p.state = PipeState::Retiring;
                }
            }
        }
        self.fill_all(net, None);
    }

    fn refill_tokens(&mut self, now: Time) {
        if let Some(tb) = self.cfg.token_bucket {
            let dt = now.saturating_since(self.tokens_at).as_secs_f64();
            self.tokens = (self.tokens + dt * tb.rate_bps as f64 / 8.0).min(tb.depth_bytes as f64);
            self.tokens_at = now;
        }
    }

    /// Give every pipe with room what it may request; `first_not` is asked
    /// last (a loss found there is re-requested elsewhere first).
    fn fill_all(&mut self, net: &mut dyn Net, first_not: Option<usize>) {
        if self.finished {
            return;
        }
        self.refill_tokens(net.now());
        let mut order: Vec<usize> = (0..self.pipes.len()).collect();
        // Primary (lowest path) first for the token bucket; the pipe that
        // just lost last.
        order.sort_by_key(|&k| (Some(k) == first_not, self.pipes[k].path, k));
        for k in order {
            self.fill(net, k);
        }
        self.retire();
        if let Some(tb) = self
            .cfg
            .token_bucket
            .filter(|_| self.pipes.iter().any(|p| p.room()) && self.pending.has_any())
        {
            let need = (self.mss() as f64 - self.tokens).max(1.0);
            let wait = Duration::from_secs_f64(need * 8.0 / tb.rate_bps.max(1) as f64);
            self.timers.set(TOKENS, net.now() + wait);
        }
    }

    fn retire(&mut self) {
        for k in 0..self.pipes.len() {
            if self.pipes[k].state == PipeState::Retiring && self.pipes[k].reqs.is_empty() {
                self.end_pipe(k);
            }
        }
    }

    fn fill(&mut self, net: &mut dyn Net, k: usize) {
        let now = net.now();
        while self.pipes[k].room() {
            if self.cfg.token_bucket.is_some() {
                // A later path may spend only what leaves the first one a
                // segment's worth.
                let reserve = if self.pipes[k].path == 0 { 0.0 } else { 1.0 };
                if self.tokens < self.mss() as f64 * (1.0 + reserve) {
                    break;
                }
            }
            let Some((g, e)) = self.choose(k) else {
                break;
            };
            if self.cfg.token_bucket.is_some() {
                self.tokens -= (e - g) as f64;
            }
            self.bind(net, k, g, e, now);
        }
        self.update_persist(net, k);
    }

    /// The global range pipe `k` should ask for next, if any.
    fn choose(&mut self, k: usize) -> Option<(u64, u64)> {
        let reach = Reach {
            horizon: self.rcv_nxt + self.cfg.rcp.recv_buffer as u64,
            limit: self.pipes[k].limit,
        };
        // Holes first, lowest first.
        let (rcv_nxt, have) = (self.rcv_nxt, &self.have);
        if let Some(hole) = self
            .pending
            .take_hole(reach, |s, _| s < rcv_nxt || have.contains(&s))
        {
            return Some(hole);
        }
        match self.cfg.scheduler {
            Scheduler::Fcfs => self.pending.take_rank(0, reach),
            Scheduler::Rank => {
                let rank = self.rank(k);
                self.pending.take_rank(rank, reach)
            }
            Scheduler::Stripe(block) => self.stripe(k, block.max(1) as u64, reach),
        }
    }

    /// Segments other pipes will have requested, in arrival order, ahead of
    /// a request sent through pipe `k` now (the paper's rank, from 0).
    fn rank(&self, k: usize) -> usize {
        let mine = self.pipes[k].srtt().as_secs_f64();
        let mut ahead = 0.0;
        for (j, p) in self.pipes.iter().enumerate() {
            if j == k || p.state != PipeState::Open {
                continue;
            }
            let theirs = p.srtt().as_secs_f64();
            if theirs < mine && theirs > 0.0 {
                let rate = p.cc.window() as f64 / theirs / self.mss() as f64;
                ahead += rate * (mine - theirs);
            }
        }
        ahead as usize
    }

    /// Application-level striping: path `i` owns blocks i, i + n, …
    fn stripe(&mut self, k: usize, block: u64, reach: Reach) -> Option<(u64, u64)> {
        let mss = self.mss();
        // Blocks are dealt among the pipes taking bindings now, in path
        // order, so a path that is down or retired strands nothing.
        let mut open: Vec<usize> = self
            .pipes
            .iter()
            .filter(|p| p.state == PipeState::Open)
            .map(|p| p.path)
            .collect();
        open.sort_unstable();
        open.dedup();
        let n = open.len().max(1) as u64;
        let path = open
            .iter()
            .position(|&p| p == self.pipes[k].path)
            .unwrap_or(0) as u64;
        self.pending
            .take_owned(reach, |s| (s / mss / block) % n == path)
    }

    /// SEG.WND of our REQs: the free receive buffer, in 64-byte units.
    fn window(&self) -> u16 {
        (self.cfg.rcp.recv_buffer.saturating_sub(self.reasm.bytes()) / 64).min(u16::MAX as usize)
            as u16
    }

    fn bind(&mut self, net: &mut dyn Net, k: usize, g: u64, e: u64, now: Time) {
        let window = self.window();
        let rcv_nxt = self.rcv_nxt;
        self.bound.insert(g, k);
        let p = &mut self.pipes[k];
        p.bind(g, e, now);
        let r = p.pull(g, e, rcv_nxt, window);
        let p = &self.pipes[k];
        p.send(net, self.port, r, &mut self.stats);
        if p.rto_deadline.is_none() {
            self.arm_rto(net, k);
        }
    }

    fn arm_rto(&mut self, net: &mut dyn Net, k: usize) {
        let at = net.now() + self.pipes[k].rtt.rto();
        self.pipes[k].rto_deadline = Some(at);
        self.timers.set(rto_timer(k), at);
    }

    /// Whether pipe `k` waits on its sender's request limit: open, nothing
    /// outstanding, data left to bind, and the limit at or below the
    /// frontier (what a slow source has not produced yet).
    fn blocked_by_limit(&self, k: usize) -> bool {
        let p = &self.pipes[k];
        p.state == PipeState::Open
            && p.reqs.is_empty()
            && !self.finished
            && self.pending.has_any()
            && p.limit <= self.pending.frontier()
    }

    /// TCP's persist timer, at the receiver: a pipe blocked by its
    /// sender's limit probes it, with back-off, so a raised limit whose
    /// announcement was lost (or never sent) is learnt.
    fn update_persist(&mut self, net: &mut dyn Net, k: usize) {
        if !self.blocked_by_limit(k) {
            self.timers.cancel(persist_timer(k));
            return;
        }
        if !self.timers.is_armed(persist_timer(k)) {
            let at = net.now() + self.persist_wait(k);
            self.timers.set(persist_timer(k), at);
        }
    }

    fn persist_wait(&self, k: usize) -> Duration {
        let p = &self.pipes[k];
        p.rtt
            .rto()
            .saturating_mul(1 << p.persist_backoff.min(6))
            .min(self.cfg.rcp.max_rto)
    }

    fn on_persist(&mut self, net: &mut dyn Net, k: usize) {
        if !self.blocked_by_limit(k) {
            return;
        }
        let r = self.pipes[k].probe(self.rcv_nxt, self.window());
        self.pipes[k].send(net, self.port, r, &mut self.stats);
        self.pipes[k].persist_backoff += 1;
        let at = net.now() + self.persist_wait(k);
        self.timers.set(persist_timer(k), at);
    }

    /// SND.LIM (and the end of the stream with FIN) from any packet.
    fn absorb_limit(&mut self, k: usize, r: &RcpRepr) {
        if !r.flags.has(RcpFlags::LIM) {
            return;
        }
        let p = &mut self.pipes[k];
        let lim = p.peer_space.unwrap(r.ack, 1 + p.limit).saturating_sub(1);
        p.limit = p.limit.max(lim);
        if r.flags.has(RcpFlags::FIN) {
            self.pending.set_end(lim);
        }
    }

    fn on_data(&mut self, net: &mut dyn Net, k: usize, r: &RcpRepr, payload: &[u8]) {
        let now = net.now();
        self.absorb_limit(k, r);
        if !payload.is_empty() {
            let p = &mut self.pipes[k];
            let s = p
                .peer_space
                .unwrap(r.seq, 1 + self.rcv_nxt)
                .saturating_sub(1);
            let e = s + payload.len() as u64;
            p.bytes += payload.len() as u64;
            if let Some(lost) = p.arrive(s, now, &mut self.stats) {
                if self.bound.get(&s) == Some(&k) {
                    self.bound.remove(&s);
                }
                if self.pipes[k].reqs.is_empty() {
                    self.pipes[k].rto_deadline = None;
                    self.timers.cancel(rto_timer(k));
                } else {
                    self.arm_rto(net, k);
                }
                self.return_holes(k, lost);
            }
            self.store(net, s, e, payload);
        }
        if self.pending.end() == Some(self.rcv_nxt) && !self.finished {
            self.finish(net);
            return;
        }
        self.fill_all(net, Some(k));
    }

    fn store(&mut self, net: &mut dyn Net, s: u64, e: u64, payload: &[u8]) {
        self.arrivals += 1;
        if self.reasm.bytes() * 4 >= self.cfg.rcp.recv_buffer * 3 {
            self.arrivals_buffer_75 += 1;
        }
        if e <= self.rcv_nxt || self.have.contains(&s) {
            self.stats.unexpected_dropped += 1;
            return;
        }
        if s <= self.rcv_nxt {
            net.deliver(&payload[(self.rcv_nxt - s) as usize..]);
            self.rcv_nxt = e;
            while let Some(piece) = self.reasm.pop_in_order(self.rcv_nxt) {
                self.rcv_nxt += piece.len() as u64;
                net.deliver(&piece);
            }
            let below: Vec<u64> = self.have.range(..self.rcv_nxt).copied().collect();
            for b in below {
                self.have.remove(&b);
            }
        } else {
            self.have.insert(s);
            self.reasm.insert(s, payload);
        }
        self.pending.received(s);
    }

    fn finish(&mut self, net: &mut dyn Net) {
        self.finished = true;
        net.deliver_finished();
        self.timers.cancel(POLL);
        self.timers.cancel(TOKENS);
        self.send_fins(net);
    }

    fn send_fins(&mut self, net: &mut dyn Net) {
        for k in 0..self.pipes.len() {
            self.timers.cancel(rto_timer(k));
            self.timers.cancel(persist_timer(k));
            let p = &mut self.pipes[k];
            if p.alive() && !p.fin_acked {
                p.fin_sent = true;
                let r = p.fin(self.rcv_nxt);
                self.pipes[k].send(net, self.port, r, &mut self.stats);
            }
        }
        self.timers.set(TOKENS, net.now() + Duration::from_secs(1));
    }

    fn maybe_close(&mut self, net: &mut dyn Net) {
        let waiting = self
            .pipes
            .iter()
            .any(|p| p.alive() && p.fin_sent && !p.fin_acked);
        if !waiting && !self.closed {
            self.closed = true;
            net.event(TransportEvent::Closed);
        }
    }

    fn on_rto(&mut self, net: &mut dyn Net, k: usize) {
        self.pipes[k].rto_deadline = None;
        if !self.pipes[k].alive() || self.pipes[k].reqs.is_empty() {
            return;
        }
        self.stats.timeouts += 1;
        let lost = self.pipes[k].timeout(net.now());
        self.return_holes(k, lost);
        if self.pipes[k].consecutive_rtos > self.cfg.rcp.max_consecutive_rtos {
            self.end_pipe(k);
        }
        self.fill_all(net, Some(k));
    }
}

impl Agent for R2cpReceiver {
    fn protocol(&self) -> &'static str {
        "r2cp"
    }

    fn start(&mut self, net: &mut dyn Net) {
        self.port = self.cfg.rcp.local_port.unwrap_or(net.local().port);
        self.tokens_at = net.now();
        self.poll_paths(net);
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        self.stats.packets_received += 1;
        self.stats.bytes_received += packet.len() as u64;
        let Ok((r, payload)) = rcp::parse(packet) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        let Some(k) = self
            .pipes
            .iter()
            .rposition(|p| p.sender == from && p.state != PipeState::Dead)
        else {
            self.stats.unexpected_dropped += 1;
            return;
        };
        if r.dst_port != self.port || r.flags.has(RcpFlags::REQ) {
            self.stats.unexpected_dropped += 1;
            return;
        }
        match self.pipes[k].state {
            PipeState::Opening => {
                if r.flags.has(RcpFlags::SYN)
                    && r.flags.has(RcpFlags::ACK)
                    && r.ack == self.pipes[k].space.to_wire(1)
                {
                    self.pipes[k].peer_space = SeqSpace::new(r.seq);
                    let ack = self.pipes[k].ack_of_syn();
                    self.pipes[k].send(net, self.port, ack, &mut self.stats);
                    self.on_established(net, k);
                } else {
                    self.stats.unexpected_dropped += 1;
                }
            }
            _ if r.flags.has(RcpFlags::SYN) => {
                // Our ACK was lost: the sender repeats its SYN+ACK.
                let ack = self.pipes[k].ack_of_syn();
                self.pipes[k].send(net, self.port, ack, &mut self.stats);
            }
            _ if r.flags.has(RcpFlags::ACK) => {
                if self.pipes[k].fin_sent && r.ack == self.pipes[k].space.to_wire(2) {
                    self.pipes[k].fin_acked = true;
                    self.maybe_close(net);
                } else {
                    self.stats.unexpected_dropped += 1;
                }
            }
            _ if self.finished => {}
            _ => self.on_data(net, k, &r, payload),
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

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "cwnd" => Some(
                self.pipes
                    .iter()
                    .filter(|p| p.alive())
                    .map(|p| p.cc.window())
                    .sum::<u64>() as f64,
            ),
            "ssthresh" => Some(
                self.pipes
                    .iter()
                    .filter(|p| p.alive())
                    .map(|p| p.cc.ssthresh().min(1 << 53))
                    .sum::<u64>() as f64,
            ),
            "pipes" => Some(self.pipes.iter().filter(|p| p.alive()).count() as f64),
            "pipes_opened" => Some(self.pipes_opened as f64),
            "pipe_slots" => Some(self.pipes.len() as f64),
            "rwnd" => Some(self.cfg.rcp.recv_buffer.saturating_sub(self.reasm.bytes()) as f64),
            "buffer_75" => Some(self.buffer_75_share()),
            _ => {
                let (kind, k) = name.rsplit_once('_')?;
                let p = self.pipes.get(k.parse::<usize>().ok()?)?;
                match kind {
                    "pipe_bytes" => Some(p.bytes as f64),
                    "pipe_srtt_ms" => Some(p.srtt().as_millis_f64()),
                    "pipe_cwnd" => Some(p.cc.window() as f64),
                    _ => None,
                }
            }
        }
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}

impl R2cpReceiver {
    fn on_timer(&mut self, net: &mut dyn Net, t: TimerId) {
        match t {
            POLL => self.poll_paths(net),
            TOKENS if self.finished => {
                self.close_tries += 1;
                if self.close_tries >= 3 {
                    for p in &mut self.pipes {
                        p.fin_acked = true;
                    }
                    self.maybe_close(net);
                } else if !self.closed {
                    self.send_fins(net);
                }
            }
            TOKENS => self.fill_all(net, None),
            TimerId(i) if i >= 2 && ((i - 2) / PIPE_TIMERS) < self.pipes.len() as u16 => {
                let k = ((i - 2) / PIPE_TIMERS) as usize;
                match (i - 2) % PIPE_TIMERS {
                    0 => self.on_handshake_timer(net, k),
                    1 => self.on_rto(net, k),
                    _ => self.on_persist(net, k),
                }
            }
            _ => {}
        }
    }

    fn on_handshake_timer(&mut self, net: &mut dyn Net, k: usize) {
        if self.pipes[k].state != PipeState::Opening {
            return;
        }
        let p = &mut self.pipes[k];
        p.tries += 1;
        if p.tries > self.cfg.rcp.max_consecutive_rtos {
            self.end_pipe(k);
            return;
        }
        p.rtt.back_off();
        p.syn_resent = true;
        let at = net.now() + p.rtt.rto();
        let syn = p.syn();
        self.pipes[k].send(net, self.port, syn, &mut self.stats);
        self.timers.set(handshake_timer(k), at);
    }
}
