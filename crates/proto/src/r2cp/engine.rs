//! The R²CP engine: reliability, the receive buffer and scheduling across
//! pipes. See the module documentation in `mod.rs`.

use std::collections::{BTreeMap, BTreeSet};

use joulenet_wire::rcp::{self, RcpFlags, RcpRepr};

use super::pipe::{Pipe, PipeState};
use crate::net::{Addr, Agent, Net, NodeId, TimerId, TransportEvent};
use crate::rcp::config::RcpConfig;
use crate::stats::TransportStats;
use crate::tcp::reassembly::Reassembly;
use crate::tcp::seq::SeqSpace;
use crate::time::{Duration, Time};
use crate::timer::TimerTable;

/// How a pipe with room is given data.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Scheduler {
    /// R²CP: the segment whose arrival through this pipe keeps order.
    #[default]
    Rank,
    /// R²CP-s: first come, first served (the next unbound segment).
    Fcfs,
    /// Application-level striping: blocks of this many segments are dealt
    /// to the paths round robin, each path fetching its own in order.
    Stripe(u32),
}

/// A path of the connection: a sender reached through the interface the
/// route to it uses, or through the neighbour `via` when the network pins
/// the path to an interface (two paths to the same server: the driver
/// routes each pipe by its ports, and `via` is whose link tells whether
/// the path is up).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PathSpec {
    pub sender: Addr,
    pub via: Option<NodeId>,
}

impl PathSpec {
    /// A path over the route to `sender`.
    pub fn to(sender: Addr) -> PathSpec {
        PathSpec { sender, via: None }
    }
}

/// Policy aggregation (§4.4.3): tokens at `rate_bps`, consumed on binding;
/// the first path spends first, later paths only what it leaves.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TokenBucket {
    pub rate_bps: u64,
    pub depth_bytes: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct R2cpConfig {
    /// Per-pipe settings (MSS, initial window, RTOs, dupthresh, controller)
    /// and the connection's receive buffer (`recv_buffer`).
    pub rcp: RcpConfig,
    pub paths: Vec<PathSpec>,
    pub scheduler: Scheduler,
    /// Use every live path at once; otherwise only the newest takes new
    /// bindings (handoff) and older pipes retire.
    pub aggregate: bool,
    pub token_bucket: Option<TokenBucket>,
    /// How often paths are checked for coming up or going down.
    pub poll: Duration,
}

impl Default for R2cpConfig {
    fn default() -> R2cpConfig {
        R2cpConfig {
            rcp: RcpConfig {
                recv_buffer: 256 * 1024,
                ..RcpConfig::default()
            },
            paths: Vec::new(),
            scheduler: Scheduler::Rank,
            aggregate: true,
            token_bucket: None,
            poll: Duration::from_millis(50),
        }
    }
}

/// Most pipes one connection opens over its life (two timers each, so the
/// timer ids stay within `u16`): a bound against a path flapping for ever,
/// far above what handoffs and migrations need.
pub const MAX_PIPES: usize = 4096;
const POLL: TimerId = TimerId(0);
const TOKENS: TimerId = TimerId(1);
fn handshake_timer(k: usize) -> TimerId {
    TimerId(2 + 2 * k as u16)
}
fn rto_timer(k: usize) -> TimerId {
    TimerId(3 + 2 * k as u16)
}

pub struct R2cpReceiver {
    /// POLL, TOKENS, then a handshake and an RTO timer per pipe.
    timers: TimerTable,
    cfg: R2cpConfig,
    port: u16,
    pipes: Vec<Pipe>,
    /// Per path: its current pipe.
    path_pipe: Vec<Option<usize>>,
    reasm: Reassembly,
    rcv_nxt: u64,
    /// Segment starts held out of order.
    have: BTreeSet<u64>,
    /// Next segment never bound to any pipe.
    frontier: u64,
    /// Segments below the frontier never bound (skipped by rank).
    skipped: BTreeSet<u64>,
    /// Segments whose binding was lost.
    holes: BTreeSet<u64>,
    /// Global start -> pipe currently asked for it.
    bound: BTreeMap<u64, usize>,
    end: Option<u64>,
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
        let n = cfg.paths.len();
        let tokens = cfg.token_bucket.map_or(0.0, |t| t.depth_bytes as f64);
        R2cpReceiver {
            cfg,
            port: 0,
            pipes: Vec::new(),
            path_pipe: vec![None; n],
            reasm: Reassembly::default(),
            rcv_nxt: 0,
            have: BTreeSet::new(),
            frontier: 0,
            skipped: BTreeSet::new(),
            holes: BTreeSet::new(),
            bound: BTreeMap::new(),
            end: None,
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

    /// Bytes received through each pipe so far, in opening order.
    pub fn pipe_bytes(&self) -> Vec<u64> {
        self.pipes.iter().map(|p| p.bytes).collect()
    }

    /// Share of arrivals that found the receive buffer ≥ 75 % full.
    pub fn buffer_75_share(&self) -> f64 {
        self.arrivals_buffer_75 as f64 / self.arrivals.max(1) as f64
    }

    fn seg_end(&self, start: u64) -> u64 {
        let e = start + self.mss();
        self.end.map_or(e, |end| e.min(end))
    }

    fn path_up(&self, net: &mut dyn Net, path: usize) -> bool {
        let p = self.cfg.paths[path];
        p.via
            .or_else(|| net.route(p.sender.node).map(|r| r.next_hop))
            .and_then(|hop| net.link(hop))
            .is_some_and(|l| l.up)
    }

    fn poll_paths(&mut self, net: &mut dyn Net) {
        if self.finished {
            return;
        }
        for path in 0..self.cfg.paths.len() {
            let up = self.path_up(net, path);
            let current = self.path_pipe[path].filter(|&k| self.pipes[k].state != PipeState::Dead);
            match (up, current) {
                (true, None) if self.pipes.len() < MAX_PIPES => self.open_pipe(net, path),
                (false, Some(k)) => self.kill_pipe(net, k),
                _ => {}
            }
        }
        self.timers.set(POLL, net.now() + self.cfg.poll);
    }

    fn open_pipe(&mut self, net: &mut dyn Net, path: usize) {
        let k = self.pipes.len();
        let isn = net.rng().next_u32();
        let pipe = Pipe::new(path, self.cfg.paths[path].sender, &self.cfg.rcp, isn);
        let syn = pipe.syn();
        pipe.send(net, self.port, syn, &mut self.stats);
        self.pipes.push(pipe);
        self.path_pipe[path] = Some(k);
        let at = net.now() + self.pipes[k].rtt.rto();
        self.timers.set(handshake_timer(k), at);
    }

    /// The pipe's path went down: its requests go back to the engine.
    fn kill_pipe(&mut self, net: &mut dyn Net, k: usize) {
        self.pipes[k].state = PipeState::Dead;
        self.timers.cancel(handshake_timer(k));
        self.timers.cancel(rto_timer(k));
        let lost = self.pipes[k].unbind_all();
        self.return_holes(k, lost);
        self.fill_all(net, None);
    }

    fn return_holes(&mut self, k: usize, ranges: Vec<(u64, u64)>) {
        for (s, _) in ranges {
            if self.bound.get(&s) == Some(&k) {
                self.bound.remove(&s);
            }
            if s >= self.rcv_nxt && !self.have.contains(&s) && !self.bound.contains_key(&s) {
                self.holes.insert(s);
            }
        }
    }

    fn on_established(&mut self, net: &mut dyn Net, k: usize) {
        self.pipes[k].state = PipeState::Open;
        self.pipes[k].tries = 0;
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
            .filter(|_| self.pipes.iter().any(|p| p.room()) && self.has_unbound())
        {
            let need = (self.mss() as f64 - self.tokens).max(1.0);
            let wait = Duration::from_secs_f64(need * 8.0 / tb.rate_bps.max(1) as f64);
            self.timers.set(TOKENS, net.now() + wait);
        }
    }

    fn has_unbound(&self) -> bool {
        !self.holes.is_empty()
            || !self.skipped.is_empty()
            || self.end.is_none_or(|e| self.frontier < e)
    }

    fn retire(&mut self) {
        for k in 0..self.pipes.len() {
            if self.pipes[k].state == PipeState::Retiring && self.pipes[k].reqs.is_empty() {
                self.pipes[k].state = PipeState::Dead;
                self.timers.cancel(rto_timer(k));
            }
        }
    }

    fn fill(&mut self, net: &mut dyn Net, k: usize) {
        let now = net.now();
        let horizon = self.rcv_nxt + self.cfg.rcp.recv_buffer as u64;
        while self.pipes[k].room() {
            if self.cfg.token_bucket.is_some() {
                // A later path may spend only what leaves the first one a
                // segment's worth.
                let reserve = if self.pipes[k].path == 0 { 0.0 } else { 1.0 };
                if self.tokens < self.mss() as f64 * (1.0 + reserve) {
                    break;
                }
            }
            let Some(g) = self.choose(k, horizon) else {
                break;
            };
            let e = self.seg_end(g);
            if self.cfg.token_bucket.is_some() {
                self.tokens -= (e - g) as f64;
            }
            self.bind(net, k, g, e, now);
        }
    }

    /// The global segment pipe `k` should ask for next, if any.
    fn choose(&mut self, k: usize, horizon: u64) -> Option<u64> {
        let mss = self.mss();
        let limit = self.pipes[k].limit;
        let fits = |s: u64, end: Option<u64>| {
            let e = end.map_or(s + mss, |x| (s + mss).min(x));
            s < end.unwrap_or(u64::MAX) && e <= horizon && e <= limit
        };
        // Holes first, lowest first.
        while let Some(&h) = self.holes.iter().next() {
            if h < self.rcv_nxt || self.have.contains(&h) {
                self.holes.remove(&h);
                continue;
            }
            if fits(h, self.end) {
                self.holes.remove(&h);
                return Some(h);
            }
            break;
        }
        let rank = match self.cfg.scheduler {
            Scheduler::Fcfs => 0,
            Scheduler::Rank => self.rank(k),
            Scheduler::Stripe(block) => return self.stripe(k, block.max(1) as u64, horizon),
        };
        // The rank-th unbound segment (skipped ones first, then the
        // frontier), or the last one that fits.
        let mut chosen = None;
        let mut index = 0;
        for &s in self.skipped.iter() {
            if !fits(s, self.end) {
                break;
            }
            chosen = Some(s);
            if index == rank {
                break;
            }
            index += 1;
        }
        if chosen.is_none() || index < rank {
            let mut s = self.frontier;
            while fits(s, self.end) {
                chosen = Some(s);
                if index == rank {
                    break;
                }
                index += 1;
                s += mss;
            }
        }
        let c = chosen?;
        if c >= self.frontier {
            let mut s = self.frontier;
            while s < c {
                self.skipped.insert(s);
                s += mss;
            }
            self.frontier = c + mss;
        } else {
            self.skipped.remove(&c);
        }
        Some(c)
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
    fn stripe(&mut self, k: usize, block: u64, horizon: u64) -> Option<u64> {
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
        let limit = self.pipes[k].limit;
        let owns = |s: u64| (s / mss / block) % n == path;
        let ok = |s: u64, end: Option<u64>| {
            let e = end.map_or(s + mss, |x| (s + mss).min(x));
            s < end.unwrap_or(u64::MAX) && e <= horizon && e <= limit
        };
        if let Some(&s) = self.skipped.iter().find(|&&s| owns(s)) {
            if ok(s, self.end) {
                self.skipped.remove(&s);
                return Some(s);
            }
            return None;
        }
        let mut s = self.frontier;
        while !owns(s) {
            s += mss;
        }
        if !ok(s, self.end) {
            return None;
        }
        let mut t = self.frontier;
        while t < s {
            self.skipped.insert(t);
            t += mss;
        }
        self.frontier = s + mss;
        Some(s)
    }

    fn bind(&mut self, net: &mut dyn Net, k: usize, g: u64, e: u64, now: Time) {
        let window = (self.cfg.rcp.recv_buffer.saturating_sub(self.reasm.bytes()) / 64)
            .min(u16::MAX as usize) as u16;
        let rcv_nxt = self.rcv_nxt;
        let p = &mut self.pipes[k];
        let local = p.local_nxt;
        p.local_nxt += e - g;
        p.reqs.request(local, local + (e - g), now);
        p.bound.insert(local, (g, e));
        p.by_global.insert(g, local);
        self.bound.insert(g, k);
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

    fn on_data(&mut self, net: &mut dyn Net, k: usize, r: &RcpRepr, payload: &[u8]) {
        let now = net.now();
        {
            let p = &mut self.pipes[k];
            if r.flags.has(RcpFlags::LIM) {
                let lim = p.peer_space.unwrap(r.ack, 1 + p.limit).saturating_sub(1);
                p.limit = p.limit.max(lim);
                if r.flags.has(RcpFlags::FIN) {
                    p.fin_at = Some(lim);
                    self.end = Some(self.end.map_or(lim, |e| e.min(lim)));
                }
            }
        }
        if !payload.is_empty() {
            let p = &mut self.pipes[k];
            let s = p
                .peer_space
                .unwrap(r.seq, 1 + self.rcv_nxt)
                .saturating_sub(1);
            let e = s + payload.len() as u64;
            p.bytes += payload.len() as u64;
            // The pipe's own bookkeeping on its local sequence space.
            if let Some(local) = p.by_global.remove(&s) {
                let (_, ge) = p.bound.remove(&local).unwrap_or((s, e));
                let arrival = p.reqs.arrive(local, local + (ge - s), now);
                if arrival.expected {
                    p.consecutive_rtos = 0;
                    if let Some(rtt) = arrival.rtt {
                        p.rtt.sample(rtt);
                        self.stats.rtt.record(rtt);
                        self.stats.rtt.smoothed = p.rtt.srtt();
                    }
                    if local >= p.recovery_point {
                        p.cc.on_ack(now, arrival.bytes, arrival.rtt, p.reqs.flight());
                    }
                }
                let mut lost = Vec::new();
                for l in arrival.lost {
                    if let Some(g) = p.bound.remove(&l) {
                        p.by_global.remove(&g.0);
                        p.reqs.remove(l);
                        lost.push(g);
                        if l >= p.recovery_point {
                            let ss = p.cc.on_congestion_event(now, p.reqs.outstanding());
                            p.cc.set_window(ss);
                            p.recovery_point = p.local_nxt;
                            self.stats.fast_recoveries += 1;
                        }
                    }
                }
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
        if self.end == Some(self.rcv_nxt) && !self.finished {
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
        self.holes.remove(&s);
        self.skipped.remove(&s);
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
        let p = &mut self.pipes[k];
        p.consecutive_rtos += 1;
        p.cc.on_timeout(net.now(), p.reqs.outstanding());
        p.rtt.back_off();
        p.recovery_point = p.local_nxt;
        let lost = p.unbind_all();
        if p.consecutive_rtos > self.cfg.rcp.max_consecutive_rtos {
            p.state = PipeState::Dead;
        }
        self.return_holes(k, lost);
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
            "pipes" => Some(self.pipes.iter().filter(|p| p.alive()).count() as f64),
            "rwnd" => Some(self.cfg.rcp.recv_buffer.saturating_sub(self.reasm.bytes()) as f64),
            "buffer_75" => Some(self.buffer_75_share()),
            _ => {
                let k: usize = name.strip_prefix("pipe_bytes_")?.parse().ok()?;
                self.pipes.get(k).map(|p| p.bytes as f64)
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
            TimerId(i) if i >= 2 && ((i - 2) / 2) < self.pipes.len() as u16 => {
                let k = ((i - 2) / 2) as usize;
                if i % 2 == 0 {
                    if self.pipes[k].state == PipeState::Opening {
                        let p = &mut self.pipes[k];
                        p.tries += 1;
                        if p.tries > self.cfg.rcp.max_consecutive_rtos {
                            p.state = PipeState::Dead;
                            return;
                        }
                        p.rtt.back_off();
                        let syn = p.syn();
                        let at = net.now() + p.rtt.rto();
                        self.pipes[k].send(net, self.port, syn, &mut self.stats);
                        self.timers.set(handshake_timer(k), at);
                    }
                } else {
                    self.on_rto(net, k);
                }
            }
            _ => {}
        }
    }
}
