//! Relay agents on intermediate nodes: where a packet in transit meets
//! protocol code before it is forwarded.
//!
//! A flow whose protocol runs relays ([`joulenet_registry::Protocol::relay`])
//! belongs to a *relay class*: flows with the same protocol and options
//! share one, so one relay agent per node serves all of them (an iJTP cache
//! or a Hop scheduler is per node, not per flow). Every packet such a flow's
//! agents send carries its class. When it reaches a node that is neither
//! its source nor its destination, and the class runs relays there, the
//! node's relay agent for the class sees it first ([`Agent::on_transit`]);
//! the agent is made the first time that happens, and dropped once it holds
//! nothing (closed, no timer armed). Packets of classless flows, the usual
//! case, pay one branch.

use joulenet_proto::{Agent, NodeId, Time, Transit, TransitVerdict, TransportStats};

use crate::endpoint::{Endpoint, Side};
use crate::event::AgentIndex;
use crate::frame::Frame;
use crate::simulation::Simulation;

pub use joulenet_registry::{RelayNodes, RelaySpec};

/// One relay class: a protocol configuration whose flows share relays.
pub(crate) struct RelayClass {
    /// The protocol configuration it stands for (flows with equal keys share
    /// the class).
    pub key: String,
    /// The first flow of the class (the relay endpoints' bookkeeping flow).
    pub flow: u32,
    pub spec: RelaySpec,
}

/// A relay agent that was dropped once it held nothing: it keeps what the
/// agent had counted, for the run's totals, and does nothing else.
pub(crate) struct Forgotten {
    protocol: &'static str,
    stats: TransportStats,
    /// What the agent accounted per flow ([`Agent::flow_stats`]), by the
    /// flow's two ends.
    by_flow: Vec<((joulenet_proto::Addr, joulenet_proto::Addr), TransportStats)>,
}

impl Agent for Forgotten {
    fn protocol(&self) -> &'static str {
        self.protocol
    }
    fn start(&mut self, _net: &mut dyn joulenet_proto::Net) {}
    fn on_packet(&mut self, _: &mut dyn joulenet_proto::Net, _: joulenet_proto::Addr, _: &[u8]) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _net: &mut dyn joulenet_proto::Net) {}
    fn stats(&self) -> &TransportStats {
        &self.stats
    }
    fn flow_stats(
        &self,
        a: joulenet_proto::Addr,
        b: joulenet_proto::Addr,
    ) -> Option<TransportStats> {
        self.by_flow
            .iter()
            .find(|(ends, _)| *ends == (a, b))
            .map(|(_, s)| s.clone())
    }
    fn is_closed(&self) -> bool {
        true
    }
}

/// What became of a packet in transit.
pub(crate) enum Passage {
    /// No relay here, or the relay passed it on: forward it.
    Forward(Frame),
    /// A relay took or dropped it.
    Ended,
}

impl Simulation {
    /// The class a flow's protocol belongs to, made on first use; `None` if
    /// the protocol runs no relays.
    pub(crate) fn relay_class_of(&mut self, flow: u32) -> Option<u16> {
        let protocol = &self.spec.flows[flow as usize].protocol;
        let spec = protocol.relay()?;
        let key = protocol.relay_key();
        if let Some(i) = self.relay_classes.iter().position(|c| c.key == key) {
            return Some(i as u16);
        }
        self.relay_classes.push(RelayClass { key, flow, spec });
        Some((self.relay_classes.len() - 1) as u16)
    }

    /// The relay agent of `class` at `node` and whether it is new (not yet
    /// started), made now if the class runs relays there and none lives
    /// there yet.
    fn relay_at(&mut self, node: NodeId, class: u16) -> Option<(AgentIndex, bool)> {
        let here = &self.core.nodes[node as usize];
        if let Some(&(_, a)) = here.relays.iter().find(|(c, _)| *c == class) {
            return Some((a, false));
        }
        let c = self.relay_classes.get(class as usize)?;
        if !c.spec.nodes.contains(node) || !here.alive() {
            return None;
        }
        let agent = (c.spec.make)();
        let flow = c.flow;
        let index = self.agents.len() as AgentIndex;
        let addr = joulenet_proto::Addr::new(node, 0);
        let rng = self
            .streams
            .stream(&format!("relay/{class}/{node}/{}", self.relays_made));
        self.relays_made += 1;
        let mut ep = Endpoint::new(
            index,
            addr,
            flow,
            Side::Relay,
            rng,
            crate::app::Source::receive_only(),
        );
        // Never among the agents a run waits for.
        ep.done = true;
        ep.relay_class = Some(class);
        // A relay's packets travel in the flow's access category, as the
        // ends' do.
        ep.access_class = self.spec.flows[flow as usize].access_class;
        self.endpoints.push(ep);
        let hears = agent.hears_overheard();
        self.agents.push(agent);
        self.core.nodes[node as usize].relays.push((class, index));
        self.core.overhearing[node as usize] += hears as u32;
        Some((index, true))
    }

    /// A frame of relay class `class` crossing `node`: its relay there, if
    /// any, decides.
    pub(crate) fn transit(&mut self, node: NodeId, class: u16, mut frame: Frame) -> Passage {
        let Some((a, fresh)) = self.relay_at(node, class) else {
            return Passage::Forward(frame);
        };
        let prev = frame.prev;
        let mut verdict = TransitVerdict::Forward;
        self.dispatch_from(a, Some(prev), |agent, ctx| {
            // Started and handed its first packet in one callback: a relay
            // that holds nothing after a callback is dropped.
            if fresh {
                agent.start(ctx);
            }
            let mut t = Transit {
                src: frame.src,
                dst: frame.dst,
                previous_hop: prev,
                packet: &mut frame.packet,
                opts: &mut frame.opts,
            };
            verdict = agent.on_transit(ctx, &mut t);
        });
        let counters = &mut self.core.nodes[node as usize];
        match verdict {
            TransitVerdict::Forward => {
                counters.transit_forwarded += 1;
                return Passage::Forward(frame);
            }
            TransitVerdict::Consumed => counters.transit_consumed += 1,
            TransitVerdict::Drop => counters.transit_dropped += 1,
        }
        self.core.recycle(frame.packet);
        Passage::Ended
    }

    /// After a relay's callback: a relay that holds nothing and waits for
    /// nothing is dropped; the next packet of its class makes a new one.
    pub(crate) fn forget_if_idle(&mut self, a: AgentIndex) {
        let agent = &self.agents[a as usize];
        if !agent.is_closed() || agent.poll_timeout().is_some() {
            return;
        }
        let node = self.endpoints[a as usize].addr.node as usize;
        self.core.nodes[node].relays.retain(|&(_, r)| r != a);
        self.core.overhearing[node] -= agent.hears_overheard() as u32;
        let by_flow = self
            .flow_agents
            .iter()
            .filter_map(|&(c, s)| {
                let ends = (
                    self.endpoints[c as usize].addr,
                    self.endpoints[s as usize].addr,
                );
                agent.flow_stats(ends.0, ends.1).map(|st| (ends, st))
            })
            .collect();
        let forgotten = Forgotten {
            protocol: agent.protocol(),
            stats: agent.stats().clone(),
            by_flow,
        };
        self.agents[a as usize] = Box::new(forgotten);
    }

    /// Run `make`'s relay agents for `flow` on `nodes`, in place of any its
    /// protocol runs: a way to try relay code (a research prototype, a
    /// test) on any flow. Flows registered with equal `key`s share relays.
    pub fn register_relay(
        &mut self,
        flow: u32,
        key: &str,
        nodes: RelayNodes,
        make: Box<dyn Fn() -> Box<dyn Agent>>,
    ) -> u16 {
        let key = format!("custom/{key}");
        let class = match self.relay_classes.iter().position(|c| c.key == key) {
            Some(i) => i as u16,
            None => {
                self.relay_classes.push(RelayClass {
                    key,
                    flow,
                    spec: RelaySpec { nodes, make },
                });
                (self.relay_classes.len() - 1) as u16
            }
        };
        let (c, s) = self.flow_agents[flow as usize];
        self.endpoints[c as usize].relay_class = Some(class);
        self.endpoints[s as usize].relay_class = Some(class);
        class
    }

    /// What relays that terminate flow `f` (split-connection proxies)
    /// sent and received for it, summed over nodes.
    pub(crate) fn relay_flow_stats(&self, f: usize) -> TransportStats {
        let (c, s) = self.flow_agents[f];
        let (a, b) = (
            self.endpoints[c as usize].addr,
            self.endpoints[s as usize].addr,
        );
        let mut total = TransportStats::default();
        for (ep, agent) in self.endpoints.iter().zip(&self.agents) {
            if ep.side == Side::Relay {
                if let Some(st) = agent.flow_stats(a, b) {
                    total.add(&st);
                }
            }
        }
        total
    }

    /// Relay agents' counters, summed per node (forgotten ones included).
    pub fn relay_stats(&self, node: NodeId) -> TransportStats {
        let mut total = TransportStats::default();
        for (ep, agent) in self.endpoints.iter().zip(&self.agents) {
            if ep.side == Side::Relay && ep.addr.node == node {
                total.add(agent.stats());
            }
        }
        total
    }
}
