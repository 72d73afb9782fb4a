//! The deterministic two-endpoint test driver of every protocol test here
//! (quinn-proto's `Pair` idea): two agents on a virtual clock, joined by a
//! link with a rate, a delay and a FIFO queue in each direction, and
//! scripts deciding each packet's fate. Each endpoint has an application
//! source of pattern bytes and a sink that checks every delivered byte
//! arrives once and in order.
//!
//! `Pair::new` makes two TCP agents; `Pair::with_agents` any two (RCP's
//! sender and receiver). `raw_script` sees every packet's bytes; `script`
//! sees parsed TCP segments (`PacketInfo`); a packet goes through if both
//! say `Deliver`. `Fate::DropNotified` loses a packet on the receiving
//! side's wireless hop and hands it to `Agent::on_overheard` (ELN). A
//! host whose radio is not awake receives nothing.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use joulenet_proto::tcp::{TcpAgent, TcpConfig};
use joulenet_proto::{
    Addr, Agent, AppRead, Duration, LinkInfo, Net, RadioControl, RadioMode, Route, Time,
    TransportEvent, TxOpts,
};
use joulenet_wire::tcp::{TcpPacket, TcpRepr};
use rand_pcg::Pcg32;

/// The test pattern: position-dependent so reordering or duplication shows.
pub fn byte(i: u64) -> u8 {
    (i * 7 + i / 251) as u8
}

pub const CLIENT: usize = 0;
pub const SERVER: usize = 1;

/// What the link does with one packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Lost on the wireless hop; the receiving link layer reports it (ELN).
    DropNotified,
    Duplicate,
}

/// What a pair holds as an endpoint: a TCP agent or any boxed agent.
pub trait Endpoint {
    fn agent(&mut self) -> &mut dyn Agent;
    fn agent_ref(&self) -> &dyn Agent;
}

impl Endpoint for TcpAgent {
    fn agent(&mut self) -> &mut dyn Agent {
        self
    }
    fn agent_ref(&self) -> &dyn Agent {
        self
    }
}

impl Endpoint for Box<dyn Agent> {
    fn agent(&mut self) -> &mut dyn Agent {
        self.as_mut()
    }
    fn agent_ref(&self) -> &dyn Agent {
        self.as_ref()
    }
}

/// What the script sees of a packet about to enter the link.
#[derive(Copy, Clone, Debug)]
pub struct PacketInfo {
    /// Index of the sending endpoint (CLIENT or SERVER).
    pub dir: usize,
    pub time: Time,
    /// Position among all packets this endpoint sent.
    pub index: u64,
    /// Position among this endpoint's segments carrying data (first
    /// transmissions and retransmissions alike).
    pub data_index: Option<u64>,
    /// Position among this endpoint's pure ACKs (no data, SYN or FIN).
    pub ack_index: Option<u64>,
    pub seq: u32,
    pub ack: Option<u32>,
    pub payload_len: usize,
    pub syn: bool,
    pub fin: bool,
    pub sack_blocks: usize,
}

pub struct App {
    /// Bytes the application will send.
    pub total: u64,
    pub sent: u64,
    /// Signal end of data after `total` (else answer Pending forever).
    pub finish: bool,
    pub received: u64,
    pub expect: u64,
    pub finished: u32,
}

pub struct Host {
    pub addr: Addr,
    now: Time,
    rng: Pcg32,
    outbox: Vec<(Addr, Vec<u8>)>,
    pub app: App,
    pub events: Vec<(Time, TransportEvent)>,
    pub mode: RadioMode,
    /// What `Net::link(..).loss_estimate` reports (RCP's power save).
    pub loss_estimate: Option<f64>,
    /// The IP protocol every packet must be sent with, if checked.
    pub protocol: Option<TxOpts>,
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
    fn send(&mut self, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        if let Some(expected) = self.protocol {
            assert_eq!(opts, expected);
        }
        self.outbox.push((to, packet));
    }
    fn send_as(&mut self, _from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        // A pair has no relays: the source address is the other end's.
        self.send(to, packet, opts)
    }
    fn previous_hop(&self) -> Option<u32> {
        None
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        &mut self.rng
    }
    fn app_read(&mut self, buf: &mut [u8]) -> AppRead {
        let app = &mut self.app;
        let left = app.total - app.sent;
        if left == 0 {
            return if app.finish {
                AppRead::Finished
            } else {
                AppRead::Pending
            };
        }
        let n = (buf.len() as u64).min(left) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = byte(app.sent + i as u64);
        }
        app.sent += n as u64;
        AppRead::Data(n)
    }
    fn deliver(&mut self, data: &[u8]) {
        let app = &mut self.app;
        assert!(!data.is_empty(), "empty delivery");
        assert_eq!(app.finished, 0, "data after end of stream");
        assert!(
            app.received + data.len() as u64 <= app.expect,
            "more bytes than were sent"
        );
        for (i, &b) in data.iter().enumerate() {
            let at = app.received + i as u64;
            assert_eq!(b, byte(at), "wrong byte at offset {at}");
        }
        app.received += data.len() as u64;
    }
    fn deliver_finished(&mut self) {
        self.app.finished += 1;
        assert_eq!(self.app.finished, 1, "end of stream delivered twice");
        assert_eq!(
            self.app.received, self.app.expect,
            "end of stream before all data"
        );
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

#[derive(Copy, Clone, Debug)]
pub struct Link {
    pub rate_bps: u64,
    pub delay: Duration,
    /// Packets that may wait for transmission in one direction.
    pub queue: usize,
}

impl Default for Link {
    fn default() -> Link {
        Link {
            rate_bps: 10_000_000,
            delay: Duration::from_millis(10),
            queue: 1000,
        }
    }
}

pub type Script = Box<dyn FnMut(&PacketInfo) -> Fate>;
/// Sees (sending endpoint, time, bytes) of every packet.
pub type RawScript = Box<dyn FnMut(usize, Time, &[u8]) -> Fate>;

/// A packet on the wire: (arrival, tie-breaking sequence, receiver, bytes,
/// lost on the wireless hop and reported).
type InFlight = (Time, u64, usize, Vec<u8>, bool);

pub struct Pair<A: Endpoint = TcpAgent> {
    pub now: Time,
    pub agents: [A; 2],
    pub hosts: [Host; 2],
    pub link: Link,
    wire: BinaryHeap<Reverse<InFlight>>,
    next_seq: u64,
    busy_until: [Time; 2],
    departures: [Vec<Time>; 2],
    counters: [[u64; 3]; 2],
    pub script: Script,
    pub raw_script: RawScript,
    /// Every TCP segment offered to the link, with its fate.
    pub log: Vec<(PacketInfo, Fate)>,
}

fn host(addr: Addr, total: u64, expect: u64, seed: u64) -> Host {
    Host {
        addr,
        now: Time::ZERO,
        rng: Pcg32::new(seed, 0x0a02_bdbf_7bb3_c0a7),
        outbox: Vec::new(),
        app: App {
            total,
            sent: 0,
            finish: true,
            received: 0,
            expect,
            finished: 0,
        },
        events: Vec::new(),
        mode: RadioMode::Awake,
        loss_estimate: None,
        protocol: None,
    }
}

impl Pair<TcpAgent> {
    /// A client sending `client_bytes` to a server sending `server_bytes`.
    pub fn new(client: TcpConfig, server: TcpConfig, client_bytes: u64, server_bytes: u64) -> Pair {
        let caddr = Addr::new(0, 1000);
        let saddr = Addr::new(1, 80);
        let mut hosts = [
            host(caddr, client_bytes, server_bytes, 1),
            host(saddr, server_bytes, client_bytes, 2),
        ];
        for h in &mut hosts {
            h.protocol = Some(TxOpts::ipv4(6));
        }
        Pair::assemble(
            [TcpAgent::client(client, saddr), TcpAgent::server(server)],
            hosts,
        )
    }

    /// Same configuration at both ends; the client sends `bytes`.
    pub fn one_way(cfg: TcpConfig, bytes: u64) -> Pair {
        Pair::new(cfg.clone(), cfg, bytes, 0)
    }

    pub fn script(mut self, f: impl FnMut(&PacketInfo) -> Fate + 'static) -> Pair {
        self.script = Box::new(f);
        self
    }
}

pub const SENDER: usize = CLIENT;
pub const RECEIVER: usize = SERVER;

impl Pair<Box<dyn Agent>> {
    /// Any two agents at ports 5000 of nodes 0 and 1: the first sends
    /// `bytes` to the second, which sends nothing.
    pub fn with_agents(sender: Box<dyn Agent>, receiver: Box<dyn Agent>, bytes: u64) -> Self {
        let hosts = [
            host(Addr::new(0, 5000), bytes, 0, 1),
            host(Addr::new(1, 5000), 0, bytes, 2),
        ];
        Pair::assemble([sender, receiver], hosts)
    }
}

impl<A: Endpoint> Pair<A> {
    fn assemble(agents: [A; 2], hosts: [Host; 2]) -> Self {
        Pair {
            now: Time::ZERO,
            agents,
            hosts,
            link: Link::default(),
            wire: BinaryHeap::new(),
            next_seq: 0,
            busy_until: [Time::ZERO; 2],
            departures: [Vec::new(), Vec::new()],
            counters: [[0; 3]; 2],
            script: Box::new(|_| Fate::Deliver),
            raw_script: Box::new(|_, _, _| Fate::Deliver),
            log: Vec::new(),
        }
    }

    pub fn start(&mut self) {
        for i in [SERVER, CLIENT] {
            self.hosts[i].now = self.now;
            self.agents[i].agent().start(&mut self.hosts[i]);
            self.flush(i);
        }
    }

    /// Tells endpoint `i` that its application has more to send.
    pub fn app_ready(&mut self, i: usize) {
        self.hosts[i].now = self.now;
        self.agents[i].agent().on_app_ready(&mut self.hosts[i]);
        self.flush(i);
    }

    /// Hands raw bytes to endpoint `to` as if they came from its peer.
    pub fn inject(&mut self, to: usize, bytes: &[u8]) {
        let from = self.hosts[1 - to].addr;
        self.inject_from(to, from, bytes);
    }

    /// Hands raw bytes to endpoint `to` as if they came from `from`.
    pub fn inject_from(&mut self, to: usize, from: Addr, bytes: &[u8]) {
        self.hosts[to].now = self.now;
        self.agents[to]
            .agent()
            .on_packet(&mut self.hosts[to], from, bytes);
        self.flush(to);
    }

    /// The earliest deadline of either agent (the client's on a tie).
    fn next_timer(&self) -> Option<(Time, usize)> {
        let mut best: Option<(Time, usize)> = None;
        for (i, a) in self.agents.iter().enumerate() {
            if let Some(at) = a.agent_ref().poll_timeout() {
                if !matches!(best, Some(b) if b.0 <= at) {
                    best = Some((at.max(self.now), i));
                }
            }
        }
        best
    }

    /// Runs the next event; false if there is none.
    pub fn step(&mut self) -> bool {
        let packet_at = self.wire.peek().map(|Reverse((t, ..))| *t);
        let timer = self.next_timer();
        match (packet_at, timer) {
            (None, None) => false,
            (Some(p), Some((t, ..))) if p <= t => self.deliver_packet(),
            (Some(_), None) => self.deliver_packet(),
            (_, Some((at, i))) => {
                self.now = at;
                self.hosts[i].now = at;
                self.agents[i].agent().on_timeout(&mut self.hosts[i]);
                self.flush(i);
                true
            }
        }
    }

    fn deliver_packet(&mut self) -> bool {
        let Some(Reverse((at, _, to, bytes, corrupt))) = self.wire.pop() else {
            return false;
        };
        assert!(at >= self.now, "time went backwards");
        self.now = at;
        self.hosts[to].now = at;
        let from = self.hosts[1 - to].addr;
        if self.hosts[to].mode == RadioMode::Awake {
            let (agent, host) = (self.agents[to].agent(), &mut self.hosts[to]);
            if corrupt {
                agent.on_link_loss(host, &bytes);
            } else {
                agent.on_packet(host, from, &bytes);
            }
        }
        self.flush(to);
        true
    }

    /// Moves what endpoint `i` sent onto the link.
    pub fn flush(&mut self, i: usize) {
        let out = std::mem::take(&mut self.hosts[i].outbox);
        for (to, bytes) in out {
            assert_eq!(to, self.hosts[1 - i].addr, "sent to a stranger");
            let mut fate = (self.raw_script)(i, self.now, &bytes);
            if let Some(info) = self.describe(i, &bytes) {
                if fate == Fate::Deliver {
                    fate = (self.script)(&info);
                }
                self.log.push((info, fate));
            }
            match fate {
                Fate::Drop => {}
                Fate::Deliver => self.enqueue(i, bytes, false),
                Fate::DropNotified => self.enqueue(i, bytes, true),
                Fate::Duplicate => {
                    self.enqueue(i, bytes.clone(), false);
                    self.enqueue(i, bytes, false);
                }
            }
        }
    }

    /// A TCP segment's description, if the pair carries TCP.
    fn describe(&mut self, dir: usize, bytes: &[u8]) -> Option<PacketInfo> {
        self.hosts[dir].protocol?;
        let seg = TcpRepr::parse(&TcpPacket::new_checked(bytes).expect("agent sent a bad header"))
            .expect("agent sent a bad segment");
        let c = &mut self.counters[dir];
        let index = c[0];
        c[0] += 1;
        let has_data = !seg.payload.is_empty();
        let pure_ack = !has_data && !seg.flags.syn && !seg.flags.fin;
        let mut bump = |k: usize, yes: bool| {
            yes.then(|| {
                c[k] += 1;
                c[k] - 1
            })
        };
        let data_index = bump(1, has_data);
        let ack_index = bump(2, pure_ack);
        Some(PacketInfo {
            dir,
            time: self.now,
            index,
            data_index,
            ack_index,
            seq: seg.seq,
            ack: seg.ack,
            payload_len: seg.payload.len(),
            syn: seg.flags.syn,
            fin: seg.flags.fin,
            sack_blocks: seg.options.sack_blocks.len(),
        })
    }

    fn enqueue(&mut self, dir: usize, bytes: Vec<u8>, corrupt: bool) {
        let now = self.now;
        let deps = &mut self.departures[dir];
        deps.retain(|&d| d > now);
        if deps.len() >= self.link.queue {
            return; // tail drop
        }
        // 20 bytes of IPv4 header go on the link too.
        let bits = (bytes.len() as u64 + 20) * 8;
        let start = self.busy_until[dir].max(now);
        let done = start + Duration::transmission(bits, self.link.rate_bps);
        self.busy_until[dir] = done;
        deps.push(done);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.wire.push(Reverse((
            done + self.link.delay,
            seq,
            1 - dir,
            bytes,
            corrupt,
        )));
    }

    pub fn run_until(&mut self, until: Time) {
        while self.peek_time().is_some_and(|t| t <= until) {
            self.step();
        }
        self.now = self.now.max(until);
    }

    fn peek_time(&self) -> Option<Time> {
        let p = self.wire.peek().map(|Reverse((t, ..))| *t);
        let t = self.next_timer().map(|(t, ..)| t);
        match (p, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs until both agents are closed (true) or `limit` passes.
    pub fn run_until_closed(&mut self, limit: Time) -> bool {
        while !self.both_closed() {
            if !matches!(self.peek_time(), Some(t) if t <= limit) || !self.step() {
                return false;
            }
        }
        true
    }

    pub fn both_closed(&self) -> bool {
        self.agents.iter().all(|a| a.agent_ref().is_closed())
    }

    /// Runs until `stop` holds after some event (true), or `limit` passes.
    pub fn run_until_cond(&mut self, limit: Time, mut stop: impl FnMut(&Self) -> bool) -> bool {
        self.run_while(limit, |p| !stop(p)) || stop(self)
    }

    /// Asserts that the sender's bytes all arrived, once and in order, with
    /// end of stream (one-way transfers of any protocol).
    pub fn assert_delivered(&self) {
        let r = &self.hosts[RECEIVER].app;
        assert_eq!(r.received, self.hosts[SENDER].app.total, "bytes delivered");
        assert_eq!(r.finished, 1, "end of stream delivered");
    }

    /// Runs until `cond` holds after some event, or `limit` passes.
    pub fn run_while(&mut self, limit: Time, mut cond: impl FnMut(&Self) -> bool) -> bool {
        while cond(self) {
            if !matches!(self.peek_time(), Some(t) if t <= limit) || !self.step() {
                return false;
            }
        }
        true
    }

    /// Asserts that everything was delivered exactly once, in order, with
    /// end of stream, and that both ends closed.
    pub fn assert_complete(&self) {
        for (i, h) in self.hosts.iter().enumerate() {
            assert_eq!(h.app.received, h.app.expect, "endpoint {i} received");
            assert_eq!(h.app.finished, 1, "endpoint {i} end of stream");
            let est = h
                .events
                .iter()
                .filter(|(_, e)| *e == TransportEvent::Established)
                .count();
            assert_eq!(est, 1, "endpoint {i} Established events");
            let closed = h
                .events
                .iter()
                .filter(|(_, e)| *e == TransportEvent::Closed)
                .count();
            assert_eq!(closed, 1, "endpoint {i} Closed events");
        }
        assert!(self.both_closed());
    }

    /// Packets endpoint `dir` sent, as logged.
    pub fn sent_by(&self, dir: usize) -> impl Iterator<Item = &PacketInfo> {
        self.log
            .iter()
            .filter(move |(p, _)| p.dir == dir)
            .map(|(p, _)| p)
    }
}
