//! A deterministic driver for any two agents (an RCP sender and receiver):
//! a virtual clock, a link with a rate, a delay and a FIFO per direction,
//! and a script deciding each packet's fate. The receiving application
//! checks that every byte arrives exactly once and in order.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use joulenet_proto::{
    Addr, Agent, AppRead, Duration, LinkInfo, Net, RadioControl, RadioMode, Route, Time, TimerId,
    TransportEvent, TxOpts, MAX_TIMERS,
};
use rand_pcg::Pcg32;

pub fn byte(i: u64) -> u8 {
    (i * 7 + i / 251) as u8
}

pub const SENDER: usize = 0;
pub const RECEIVER: usize = 1;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Lost on the wireless hop; the receiving link layer reports it (ELN).
    DropNotified,
}

pub struct Host {
    pub addr: Addr,
    now: Time,
    timers: [Time; MAX_TIMERS],
    rng: Pcg32,
    outbox: Vec<(Addr, Vec<u8>)>,
    pub total: u64,
    pub sent: u64,
    pub received: u64,
    pub finished: u32,
    pub events: Vec<(Time, TransportEvent)>,
    pub mode: RadioMode,
    pub loss_estimate: Option<f64>,
}

impl RadioControl for Host {
    fn set_mode(&mut self, mode: RadioMode) {
        self.mode = mode;
    }
    fn mode(&self) -> RadioMode {
        self.mode
    }
}

impl Net for Host {
    fn now(&self) -> Time {
        self.now
    }
    fn local(&self) -> Addr {
        self.addr
    }
    fn send(&mut self, to: Addr, packet: Vec<u8>, _opts: TxOpts) {
        self.outbox.push((to, packet));
    }
    fn set_timer(&mut self, timer: TimerId, at: Time) {
        assert!(at >= self.now, "timer armed in the past");
        self.timers[timer.0 as usize] = at;
    }
    fn cancel_timer(&mut self, timer: TimerId) {
        self.timers[timer.0 as usize] = Time::NEVER;
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        &mut self.rng
    }
    fn app_read(&mut self, buf: &mut [u8]) -> AppRead {
        let left = self.total - self.sent;
        if left == 0 {
            return AppRead::Finished;
        }
        let n = (buf.len() as u64).min(left) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = byte(self.sent + i as u64);
        }
        self.sent += n as u64;
        AppRead::Data(n)
    }
    fn deliver(&mut self, data: &[u8]) {
        assert!(!data.is_empty(), "empty delivery");
        assert_eq!(self.finished, 0, "data after end of stream");
        for (i, &b) in data.iter().enumerate() {
            let at = self.received + i as u64;
            assert_eq!(b, byte(at), "wrong byte at offset {at}");
        }
        self.received += data.len() as u64;
    }
    fn deliver_finished(&mut self) {
        self.finished += 1;
        assert_eq!(self.finished, 1, "end of stream delivered twice");
    }
    fn event(&mut self, event: TransportEvent) {
        self.events.push((self.now, event));
    }
    fn route(&self, dst: u32) -> Option<Route> {
        Some(Route {
            next_hop: dst,
            hops: 1,
        })
    }
    fn link(&self, _: u32) -> Option<LinkInfo> {
        Some(LinkInfo {
            loss_estimate: self.loss_estimate,
            up: true,
            ..LinkInfo::default()
        })
    }
    fn radio(&mut self) -> &mut dyn RadioControl {
        self
    }
}

/// (arrival, tie-break, receiver, bytes, reported as corrupted)
type InFlight = (Time, u64, usize, Vec<u8>, bool);

pub type Script = Box<dyn FnMut(usize, Time, &[u8]) -> Fate>;

pub struct Pair {
    pub now: Time,
    pub agents: [Box<dyn Agent>; 2],
    pub hosts: [Host; 2],
    pub rate_bps: u64,
    pub delay: Duration,
    wire: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    busy_until: [Time; 2],
    pub script: Script,
    pub delivered_packets: [u64; 2],
}

impl Pair {
    pub fn new(sender: Box<dyn Agent>, receiver: Box<dyn Agent>, bytes: u64) -> Pair {
        let host = |node: u32, seed: u64| Host {
            addr: Addr::new(node, 5000),
            now: Time::ZERO,
            timers: [Time::NEVER; MAX_TIMERS],
            rng: rand::SeedableRng::seed_from_u64(seed),
            outbox: Vec::new(),
            total: 0,
            sent: 0,
            received: 0,
            finished: 0,
            events: Vec::new(),
            mode: RadioMode::Awake,
            loss_estimate: None,
        };
        let mut hosts = [host(0, 1), host(1, 2)];
        hosts[SENDER].total = bytes;
        Pair {
            now: Time::ZERO,
            agents: [sender, receiver],
            hosts,
            rate_bps: 10_000_000,
            delay: Duration::from_millis(10),
            wire: BinaryHeap::new(),
            seq: 0,
            busy_until: [Time::ZERO; 2],
            script: Box::new(|_, _, _| Fate::Deliver),
            delivered_packets: [0; 2],
        }
    }

    pub fn start(&mut self) {
        for i in [RECEIVER, SENDER] {
            let (agent, host) = (&mut self.agents[i], &mut self.hosts[i]);
            agent.start(host);
            self.flush(i);
        }
    }

    pub fn flush(&mut self, i: usize) {
        let out = std::mem::take(&mut self.hosts[i].outbox);
        for (_, pkt) in out {
            let fate = (self.script)(i, self.now, &pkt);
            let tx = Duration::transmission((pkt.len() as u64 + 20) * 8, self.rate_bps);
            let start = self.busy_until[i].max(self.now);
            self.busy_until[i] = start + tx;
            let at = start + tx + self.delay;
            if fate != Fate::Drop {
                self.seq += 1;
                let corrupt = fate == Fate::DropNotified;
                self.wire.push(Reverse((at, self.seq, 1 - i, pkt, corrupt)));
            }
        }
    }

    fn next_timer(&self) -> Option<(Time, usize, u8)> {
        let mut best: Option<(Time, usize, u8)> = None;
        for (i, h) in self.hosts.iter().enumerate() {
            for (k, &t) in h.timers.iter().enumerate() {
                if t != Time::NEVER && best.is_none_or(|b| t < b.0) {
                    best = Some((t, i, k as u8));
                }
            }
        }
        best
    }

    /// One event; false when nothing is left.
    pub fn step(&mut self) -> bool {
        let pkt_at = self.wire.peek().map(|Reverse(p)| p.0);
        let timer = self.next_timer();
        match (pkt_at, timer) {
            (None, None) => false,
            (Some(t), tm) if tm.is_none_or(|tm| t <= tm.0) => {
                let Reverse((at, _, to, pkt, corrupt)) = self.wire.pop().expect("peeked");
                self.now = at;
                self.hosts[to].now = at;
                let from = self.hosts[1 - to].addr;
                let asleep = self.hosts[to].mode != RadioMode::Awake;
                if !asleep {
                    if corrupt {
                        self.agents[to].on_overheard(&mut self.hosts[to], &pkt);
                    } else {
                        self.delivered_packets[to] += 1;
                        self.agents[to].on_packet(&mut self.hosts[to], from, &pkt);
                    }
                }
                self.flush(to);
                true
            }
            (_, Some((t, i, k))) => {
                self.now = t;
                self.hosts[i].now = t;
                self.hosts[i].timers[k as usize] = Time::NEVER;
                self.agents[i].on_timer(&mut self.hosts[i], TimerId(k));
                self.flush(i);
                true
            }
            _ => false,
        }
    }

    pub fn run_until(&mut self, limit: Time, mut stop: impl FnMut(&Pair) -> bool) -> bool {
        while self.now < limit {
            if stop(self) {
                return true;
            }
            if !self.step() {
                return stop(self);
            }
        }
        false
    }

    pub fn run_until_closed(&mut self, limit: Time) -> bool {
        self.run_until(limit, |p| p.agents.iter().all(|a| a.is_closed()))
    }

    pub fn assert_complete(&self) {
        let r = &self.hosts[RECEIVER];
        assert_eq!(r.received, self.hosts[SENDER].total, "bytes delivered");
        assert_eq!(r.finished, 1, "end of stream delivered");
    }
}
