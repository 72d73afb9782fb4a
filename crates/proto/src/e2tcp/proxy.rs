//! The base-station agent of a split connection: it terminates the client's
//! connection (the "upstream" protocol) and opens its own to the server (the
//! "downstream" protocol), relaying every byte in order. For E2TCP one side
//! is wired TCP and the other the wireless E2TCP hop; which is which depends
//! on where the wired host is ([`WiredSide`]).
//!
//! The two inner agents see the real `Net` through a shim: the upstream
//! agent's deliveries fill a relay buffer that the downstream agent reads as
//! its application; the downstream agent's timers are shifted by
//! [`TIMER_SHIFT`] so both share the node's timer table.

use std::collections::VecDeque;

use crate::net::{
    Addr, Agent, AppRead, LinkInfo, Net, RadioControl, Route, TimerId, TransportEvent, TxOpts,
    MAX_TIMERS,
};
use crate::stats::TransportStats;
use crate::time::Time;

/// Downstream timer ids are the inner agent's plus this.
pub const TIMER_SHIFT: u8 = (MAX_TIMERS / 2) as u8;

/// Where the wired host of a split flow is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WiredSide {
    /// The flow's client (the data source) is on the wired network: data goes
    /// wired → base station → mobile (a download).
    Client,
    /// The flow's server (the data sink) is wired: an upload.
    Server,
}

pub struct SplitProxy {
    upstream: Box<dyn Agent>,
    downstream: Box<dyn Agent>,
    /// The server the downstream agent talks to; everything else is upstream.
    server: Addr,
    relay: VecDeque<u8>,
    upstream_finished: bool,
    established: bool,
    closed: bool,
    /// Bytes relayed so far.
    relayed: u64,
    stats: TransportStats,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Role {
    Up,
    Down,
}

struct Shim<'a> {
    net: &'a mut dyn Net,
    role: Role,
    relay: &'a mut VecDeque<u8>,
    upstream_finished: &'a mut bool,
    delivered: &'a mut bool,
    events: &'a mut Vec<(Role, TransportEvent)>,
}

impl Shim<'_> {
    fn timer(&self, t: TimerId) -> TimerId {
        match self.role {
            Role::Up => t,
            Role::Down => TimerId(t.0 + TIMER_SHIFT),
        }
    }
}

impl Net for Shim<'_> {
    fn now(&self) -> Time {
        self.net.now()
    }
    fn local(&self) -> Addr {
        self.net.local()
    }
    fn send(&mut self, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.net.send(to, packet, opts)
    }
    fn packet_buffer(&mut self) -> Vec<u8> {
        self.net.packet_buffer()
    }
    fn set_timer(&mut self, timer: TimerId, at: Time) {
        let t = self.timer(timer);
        self.net.set_timer(t, at)
    }
    fn cancel_timer(&mut self, timer: TimerId) {
        let t = self.timer(timer);
        self.net.cancel_timer(t)
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        self.net.rng()
    }
    fn app_read(&mut self, buf: &mut [u8]) -> AppRead {
        if self.role == Role::Up {
            return AppRead::Finished;
        }
        if self.relay.is_empty() {
            return if *self.upstream_finished {
                AppRead::Finished
            } else {
                AppRead::Pending
            };
        }
        let n = buf.len().min(self.relay.len());
        for (b, v) in buf.iter_mut().zip(self.relay.drain(..n)) {
            *b = v;
        }
        AppRead::Data(n)
    }
    fn deliver(&mut self, data: &[u8]) {
        if self.role == Role::Up {
            self.relay.extend(data);
            *self.delivered = true;
        }
    }
    fn deliver_finished(&mut self) {
        if self.role == Role::Up {
            *self.upstream_finished = true;
            *self.delivered = true;
        }
    }
    fn event(&mut self, event: TransportEvent) {
        self.events.push((self.role, event));
    }
    fn route(&self, dst: u32) -> Option<Route> {
        self.net.route(dst)
    }
    fn link(&self, neighbour: u32) -> Option<LinkInfo> {
        self.net.link(neighbour)
    }
    fn radio(&mut self) -> &mut dyn RadioControl {
        self.net.radio()
    }
}

impl SplitProxy {
    /// `upstream` accepts the client's connection; `downstream` must already
    /// be aimed at `server`.
    pub fn new(upstream: Box<dyn Agent>, downstream: Box<dyn Agent>, server: Addr) -> SplitProxy {
        SplitProxy {
            upstream,
            downstream,
            server,
            relay: VecDeque::new(),
            upstream_finished: false,
            established: false,
            closed: false,
            relayed: 0,
            stats: TransportStats::default(),
        }
    }

    /// Bytes waiting in the relay buffer.
    pub fn buffered(&self) -> usize {
        self.relay.len()
    }

    fn run(
        &mut self,
        net: &mut dyn Net,
        role: Role,
        f: &mut dyn FnMut(&mut dyn Agent, &mut dyn Net),
    ) {
        let mut delivered = false;
        let mut events = Vec::new();
        let before = self.relay.len();
        {
            let agent = match role {
                Role::Up => self.upstream.as_mut(),
                Role::Down => self.downstream.as_mut(),
            };
            let mut shim = Shim {
                net,
                role,
                relay: &mut self.relay,
                upstream_finished: &mut self.upstream_finished,
                delivered: &mut delivered,
                events: &mut events,
            };
            f(agent, &mut shim);
        }
        if role == Role::Up {
            self.relayed += (self.relay.len() - before) as u64;
        }
        for (r, e) in events {
            match e {
                TransportEvent::Established if r == Role::Up && !self.established => {
                    self.established = true;
                    net.event(TransportEvent::Established);
                }
                TransportEvent::Aborted => net.event(TransportEvent::Aborted),
                _ => {}
            }
        }
        if delivered {
            // New bytes (or the end) for the downstream application.
            self.run(net, Role::Down, &mut |a, n| a.on_app_ready(n));
        }
        self.refresh(net);
    }

    fn refresh(&mut self, net: &mut dyn Net) {
        let (u, d) = (self.upstream.stats(), self.downstream.stats());
        let mut s = u.clone();
        s.data_packets += d.data_packets;
        s.data_bytes += d.data_bytes;
        s.payload_bytes += d.payload_bytes;
        s.retransmitted_packets += d.retransmitted_packets;
        s.retransmitted_bytes += d.retransmitted_bytes;
        s.control_packets += d.control_packets;
        s.control_bytes += d.control_bytes;
        s.packets_received += d.packets_received;
        s.bytes_received += d.bytes_received;
        s.malformed_dropped += d.malformed_dropped;
        s.unexpected_dropped += d.unexpected_dropped;
        s.timeouts += d.timeouts;
        s.fast_recoveries += d.fast_recoveries;
        self.stats = s;
        if !self.closed && self.upstream.is_closed() && self.downstream.is_closed() {
            self.closed = true;
            net.event(TransportEvent::Closed);
        }
    }
}

impl Agent for SplitProxy {
    fn protocol(&self) -> &'static str {
        "split-proxy"
    }

    fn start(&mut self, net: &mut dyn Net) {
        self.run(net, Role::Up, &mut |a, n| a.start(n));
        self.run(net, Role::Down, &mut |a, n| a.start(n));
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        let role = if from == self.server {
            Role::Down
        } else {
            Role::Up
        };
        self.run(net, role, &mut |a, n| a.on_packet(n, from, packet));
    }

    fn on_timer(&mut self, net: &mut dyn Net, timer: TimerId) {
        if timer.0 >= TIMER_SHIFT {
            self.run(net, Role::Down, &mut |a, n| {
                a.on_timer(n, TimerId(timer.0 - TIMER_SHIFT))
            });
        } else {
            self.run(net, Role::Up, &mut |a, n| a.on_timer(n, timer));
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "relay_buffer" => Some(self.relay.len() as f64),
            "relayed" => Some(self.relayed as f64),
            _ => self.downstream.gauge(name),
        }
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}
