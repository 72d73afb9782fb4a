//! The simulator's implementation of [`Net`]: what an agent sees while one of
//! its callbacks runs.

use joulenet_proto::{
    Addr, AppRead, LinkInfo, Net, NodeId, RadioControl, RadioMode, Route, Time, TransportEvent,
    TxOpts,
};

use crate::core::Core;
use crate::endpoint::Endpoint;
use crate::frame::Frame;

pub struct Ctx<'a> {
    pub core: &'a mut Core,
    pub ep: &'a mut Endpoint,
    /// The neighbour the packet being handled came from, if any.
    pub prev: Option<NodeId>,
}

impl Ctx<'_> {
    fn send_frame(&mut self, src: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        let frame = self.frame(src, to, packet, opts);
        self.core.send_from(self.ep.addr.node, frame);
    }

    fn frame(&self, src: Addr, to: Addr, packet: Vec<u8>, mut opts: TxOpts) -> Frame {
        if let Some(ac) = self.ep.access_class {
            opts.access_class = ac;
        }
        Frame {
            packet,
            src,
            dst: to,
            opts,
            sent_at: self.core.now,
            hops: 0,
            prev: self.ep.addr.node,
            relay: self.ep.relay_class,
            flow: Some(self.ep.flow),
            origin: Some(self.ep.side),
        }
    }

    /// Relays have no application: what an agent would read or deliver
    /// there is nobody's (a relay that calls them is counted, not crashed).
    fn is_relay(&self) -> bool {
        self.ep.side == crate::endpoint::Side::Relay
    }
}

impl Net for Ctx<'_> {
    fn now(&self) -> Time {
        self.core.now
    }

    fn local(&self) -> Addr {
        self.ep.addr
    }

    fn send(&mut self, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.send_frame(self.ep.addr, to, packet, opts);
    }

    fn send_as(&mut self, from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.send_frame(from, to, packet, opts);
    }

    fn send_link_local(
        &mut self,
        via: NodeId,
        from: Addr,
        to: Addr,
        packet: Vec<u8>,
        opts: TxOpts,
    ) {
        let frame = self.frame(from, to, packet, opts);
        self.core.send_link_local(self.ep.addr.node, via, frame);
    }

    fn previous_hop(&self) -> Option<NodeId> {
        self.prev
    }

    fn packet_buffer(&mut self) -> Vec<u8> {
        self.core.buffer()
    }

    fn rng(&mut self) -> &mut dyn rand::RngCore {
        &mut self.ep.rng
    }

    fn app_read(&mut self, buf: &mut [u8]) -> AppRead {
        if self.is_relay() {
            self.core.nodes[self.ep.addr.node as usize].relay_app_calls += 1;
            return AppRead::Finished;
        }
        let log = &mut self.core.flows[self.ep.flow as usize].logs[self.ep.side as usize];
        self.ep.source.read(self.core.now, buf, log)
    }

    fn deliver(&mut self, data: &[u8]) {
        if self.is_relay() {
            self.core.nodes[self.ep.addr.node as usize].relay_app_calls += 1;
            return;
        }
        let log = &mut self.core.flows[self.ep.flow as usize].logs[1 - self.ep.side as usize];
        self.ep.sink.consume(self.core.now, data, log);
    }

    fn deliver_finished(&mut self) {
        if self.is_relay() {
            self.core.nodes[self.ep.addr.node as usize].relay_app_calls += 1;
            return;
        }
        self.ep.sink.finish(self.core.now);
        // A receive-only application closes its side when the peer is done.
        if self.ep.source.closes_with_peer() {
            self.ep.source.finish();
            self.ep.app_ready_pending = true;
        }
    }

    fn event(&mut self, event: TransportEvent) {
        let now = Some(self.core.now);
        match event {
            TransportEvent::Established => self.ep.established_at = self.ep.established_at.or(now),
            TransportEvent::Closed => self.ep.closed_at = self.ep.closed_at.or(now),
            TransportEvent::Aborted => self.ep.aborted_at = self.ep.aborted_at.or(now),
        }
    }

    fn route(&self, dst: NodeId) -> Option<Route> {
        if let Some(route) = self.core.medium_route(self.ep.addr.node, dst) {
            return route;
        }
        let node = self.ep.addr.node as usize;
        let l = (*self.core.next_link.get(node)?.get(dst as usize)?)?;
        let hops = self.core.hop_count[node][dst as usize];
        Some(Route {
            next_hop: self.core.links[l as usize].to,
            hops,
        })
    }

    fn link(&self, neighbour: NodeId) -> Option<LinkInfo> {
        if let Some(info) = self.core.medium_link(self.ep.addr.node, neighbour) {
            return info;
        }
        let node = &self.core.nodes[self.ep.addr.node as usize];
        let l = node
            .links_out
            .iter()
            .copied()
            .find(|&l| self.core.links[l as usize].to == neighbour)?;
        let link = &self.core.links[l as usize];
        let c = &link.counters;
        let measured = (c.attempts > 0).then(|| c.attempts_lost as f64 / c.attempts as f64);
        // Agents that asked for it see the channel state now (a signal-
        // strength reading) instead of the long-run ratio: `link_hooks`.
        let loss = self.ep.hooks.channel_loss.or(measured);
        Some(LinkInfo {
            rate_bps: link.params.rate_bps,
            up: !link.params.down.is_down(self.core.now),
            queue_len: link.queue_len(),
            loss_estimate: loss,
            available_rate_bps: None,
            etx: loss.filter(|&p| p < 1.0).map(|p| 1.0 / (1.0 - p)),
        })
    }

    fn radio(&mut self) -> &mut dyn RadioControl {
        self
    }

    /// Per node and relay class: the flows' ends and the relays of one
    /// protocol configuration share it (a flow without a relay class has
    /// none).
    fn node_shared(&mut self) -> Option<&mut Option<Box<dyn std::any::Any>>> {
        let class = self.ep.relay_class?;
        Some(
            self.core.nodes[self.ep.addr.node as usize]
                .shared
                .slot(class),
        )
    }
}

impl RadioControl for Ctx<'_> {
    fn set_mode(&mut self, mode: RadioMode) {
        self.core.set_radio_mode(self.ep.addr.node, mode);
    }

    fn mode(&self) -> RadioMode {
        let node = &self.core.nodes[self.ep.addr.node as usize];
        node.radios
            .first()
            .map_or(RadioMode::Awake, |&r| self.core.radios[r as usize].mode())
    }
}
