//! A terminating relay: the flow's connection ends here and a new one
//! starts toward the destination, every byte relayed in order through a
//! bounded buffer (a split-connection proxy, as a performance-enhancing
//! proxy or the E2TCP base station does; on every hop, hop-by-hop TCP).
//!
//! The relay is transparent: endpoints address each other, and the relay
//! answers for them. Its *upstream* agent accepts the client's connection
//! and speaks as the server (its packets carry the server's address); its
//! *downstream* agent opens a connection to the server and speaks as the
//! client. So a chain of such relays needs no configuration at the ends: a
//! packet toward the server is upstream traffic at the next relay it meets,
//! a packet toward the client is downstream traffic of the previous one.
//!
//! The buffer between the two is bounded. The upstream agent sees its free
//! space as the application's room ([`Net::app_room`]): it delivers no more,
//! holds the rest and advertises no more, so a slow downstream hop holds the
//! client back instead of filling the relay.
//!
//! A relay may instead store and forward whole *bundles*
//! ([`SplitConnection::with_bundles`], the DTN bundle relay): the downstream
//! agent is handed nothing of a bundle until all of it has arrived, so
//! nothing is pipelined within a bundle.

use std::collections::VecDeque;

use super::FlowRelay;
use crate::net::{
    Addr, Agent, AppRead, LinkInfo, Net, NodeId, RadioControl, Route, Transit, TransitVerdict,
    TransportEvent, TxOpts,
};
use crate::stats::TransportStats;
use crate::time::Time;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Role {
    /// Accepts the client's connection, as the server.
    Up,
    /// Opens the connection to the server, as the client.
    Down,
}

/// One flow through a terminating relay.
pub struct SplitConnection {
    upstream: Box<dyn Agent>,
    downstream: Box<dyn Agent>,
    client: Addr,
    server: Addr,
    buffer: Buffer,
    /// Bytes relayed so far.
    relayed: u64,
}

/// The relay buffer and what the two agents have said through it.
struct Buffer {
    bytes: VecDeque<u8>,
    capacity: usize,
    /// The client's stream has ended (the upstream agent delivered its end).
    upstream_finished: bool,
    /// The upstream agent delivered bytes (or the end) in this callback.
    filled: bool,
    /// The downstream agent took bytes in this callback.
    drained: bool,
    /// The downstream agent found the buffer empty and waits for more.
    downstream_waiting: bool,
    /// Store and forward whole bundles of this many bytes (the stream's last
    /// bundle may be shorter); `None`: forward bytes as they arrive.
    bundle: Option<usize>,
    /// Bytes the upstream agent ever put in, and the downstream one took.
    received: u64,
    taken: u64,
}

impl Buffer {
    /// Bytes the downstream agent may take now: all of them, or only those
    /// of bundles that are complete (or of the last one, once the stream
    /// has ended).
    fn releasable(&self) -> usize {
        match self.bundle {
            Some(b) if !self.upstream_finished => {
                let complete = self.received - self.received % b as u64;
                (complete - self.taken) as usize
            }
            _ => self.bytes.len(),
        }
    }
}

impl SplitConnection {
    /// A relay for the flow from `client` to `server`: `upstream` must accept
    /// a connection (a listening agent), `downstream` must already be aimed
    /// at `server`; `capacity` bounds the relay buffer in bytes.
    pub fn new(
        upstream: Box<dyn Agent>,
        downstream: Box<dyn Agent>,
        (client, server): (Addr, Addr),
        capacity: usize,
    ) -> SplitConnection {
        SplitConnection {
            upstream,
            downstream,
            client,
            server,
            buffer: Buffer {
                bytes: VecDeque::new(),
                capacity: capacity.max(1),
                upstream_finished: false,
                filled: false,
                drained: false,
                downstream_waiting: false,
                bundle: None,
                received: 0,
                taken: 0,
            },
            relayed: 0,
        }
    }

    /// Store and forward whole bundles of `bytes` bytes: the downstream
    /// agent gets a bundle only once all of it is here.
    pub fn with_bundles(mut self, bytes: usize) -> SplitConnection {
        self.buffer.bundle = Some(bytes.max(1));
        self
    }

    /// Bytes waiting in the relay buffer.
    pub fn buffered(&self) -> usize {
        self.buffer.bytes.len()
    }

    /// Bytes relayed so far (taken from the upstream hop).
    pub fn relayed(&self) -> u64 {
        self.relayed
    }

    /// Bytes handed to the downstream hop so far.
    pub fn forwarded(&self) -> u64 {
        self.buffer.taken
    }

    /// Run one callback of one of the two agents through the shim, then let
    /// the other react to what moved through the buffer.
    fn run(
        &mut self,
        net: &mut dyn Net,
        role: Role,
        f: &mut dyn FnMut(&mut dyn Agent, &mut dyn Net),
    ) {
        self.call(net, role, f);
        // Each pass moves data one way; a bounded number settles it (the
        // buffer can fill and drain a few times within one instant).
        for _ in 0..8 {
            if self.buffer.filled && self.buffer.downstream_waiting {
                self.buffer.filled = false;
                self.call(net, Role::Down, &mut |a, n| a.on_app_ready(n));
            } else if self.buffer.drained {
                self.buffer.drained = false;
                self.call(net, Role::Up, &mut |a, n| a.on_app_ready(n));
            } else {
                break;
            }
        }
        self.buffer.filled = false;
        self.buffer.drained = false;
    }

    fn call(
        &mut self,
        net: &mut dyn Net,
        role: Role,
        f: &mut dyn FnMut(&mut dyn Agent, &mut dyn Net),
    ) {
        let before = self.buffer.bytes.len();
        let (agent, local) = match role {
            Role::Up => (self.upstream.as_mut(), self.server),
            Role::Down => (self.downstream.as_mut(), self.client),
        };
        let mut shim = Shim {
            net,
            role,
            local,
            buffer: &mut self.buffer,
        };
        f(agent, &mut shim);
        if role == Role::Up {
            self.relayed += self.buffer.bytes.len().saturating_sub(before) as u64;
        }
    }
}

impl FlowRelay for SplitConnection {
    fn start(&mut self, net: &mut dyn Net) {
        self.run(net, Role::Up, &mut |a, n| a.start(n));
        self.run(net, Role::Down, &mut |a, n| a.start(n));
    }

    fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
        let (role, from) = if t.dst == self.server {
            (Role::Up, self.client)
        } else {
            (Role::Down, self.server)
        };
        let packet: &[u8] = t.packet;
        self.run(net, role, &mut |a, n| a.on_packet(n, from, packet));
        TransitVerdict::Consumed
    }

    fn poll_timeout(&self) -> Option<Time> {
        crate::timer::earliest([self.upstream.poll_timeout(), self.downstream.poll_timeout()])
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        let now = net.now();
        if self.upstream.poll_timeout().is_some_and(|t| t <= now) {
            self.run(net, Role::Up, &mut |a, n| a.on_timeout(n));
        }
        if self.downstream.poll_timeout().is_some_and(|t| t <= now) {
            self.run(net, Role::Down, &mut |a, n| a.on_timeout(n));
        }
    }

    fn stats(&self) -> TransportStats {
        let mut s = self.upstream.stats().clone();
        s.add(self.downstream.stats());
        s
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "relay_buffer" => Some(self.buffer.bytes.len() as f64),
            "relayed" => Some(self.relayed as f64),
            _ => self.downstream.gauge(name),
        }
    }

    fn is_idle(&self) -> bool {
        self.upstream.is_closed() && self.downstream.is_closed()
    }
}

/// What an inner agent sees: the node's `Net`, with its own address and the
/// relay buffer as its application.
struct Shim<'a> {
    net: &'a mut dyn Net,
    role: Role,
    /// The endpoint this agent speaks as.
    local: Addr,
    buffer: &'a mut Buffer,
}

impl Net for Shim<'_> {
    fn now(&self) -> Time {
        self.net.now()
    }
    fn local(&self) -> Addr {
        self.local
    }
    fn send(&mut self, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.net.send_as(self.local, to, packet, opts)
    }
    fn send_as(&mut self, from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.net.send_as(from, to, packet, opts)
    }
    fn previous_hop(&self) -> Option<NodeId> {
        self.net.previous_hop()
    }
    fn packet_buffer(&mut self) -> Vec<u8> {
        self.net.packet_buffer()
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        self.net.rng()
    }
    fn app_read(&mut self, buf: &mut [u8]) -> AppRead {
        // The upstream agent's own sending direction (toward the client)
        // carries nothing: the relay is one-way, as the flow is.
        if self.role == Role::Up {
            return AppRead::Finished;
        }
        let b = &mut *self.buffer;
        let ready = b.releasable();
        if ready == 0 {
            if b.upstream_finished && b.bytes.is_empty() {
                return AppRead::Finished;
            }
            b.downstream_waiting = true;
            return AppRead::Pending;
        }
        b.downstream_waiting = false;
        let n = buf.len().min(ready);
        for (dst, v) in buf.iter_mut().zip(b.bytes.drain(..n)) {
            *dst = v;
        }
        b.taken += n as u64;
        b.drained = true;
        AppRead::Data(n)
    }
    fn app_room(&self) -> Option<usize> {
        match self.role {
            Role::Up => Some(self.buffer.capacity.saturating_sub(self.buffer.bytes.len())),
            Role::Down => None,
        }
    }
    fn deliver(&mut self, data: &[u8]) {
        if self.role == Role::Up {
            self.buffer.bytes.extend(data);
            self.buffer.received += data.len() as u64;
            self.buffer.filled = true;
        }
    }
    fn deliver_finished(&mut self) {
        if self.role == Role::Up {
            self.buffer.upstream_finished = true;
            self.buffer.filled = true;
        }
    }
    /// Milestones of the two hops are the relay's own business, not the
    /// flow's: the endpoints report the flow's.
    fn event(&mut self, _event: TransportEvent) {}
    fn route(&self, dst: NodeId) -> Option<Route> {
        self.net.route(dst)
    }
    fn link(&self, neighbour: NodeId) -> Option<LinkInfo> {
        self.net.link(neighbour)
    }
    fn radio(&mut self) -> &mut dyn RadioControl {
        self.net.radio()
    }
}
