//! The glue between the medium and the rest of the simulator: the hooks
//! `Core::forward`, `Simulation::handle` and `Ctx` call.

use joulenet_proto::{Agent, LinkInfo, NodeId, Route};

use super::{Medium, MediumEvent, MediumSpec, Out};
use crate::core::Core;
use crate::rng::Streams;
use crate::simulation::Simulation;

impl Core {
    /// Route `frame` over the shared medium if `node` is on it; hands the
    /// frame back when the medium has no route (the caller counts it).
    pub(crate) fn medium_forward(
        &mut self,
        node: NodeId,
        frame: crate::frame::Frame,
    ) -> Option<crate::frame::Frame> {
        let Some(mut m) = self.medium.take() else {
            return Some(frame);
        };
        let back = match m.next_hop(node, frame.dst.node) {
            Some(_) if frame.hops >= super::HOP_LIMIT => {
                m.stats.hop_limit_drops += 1;
                self.recycle(frame.packet);
                None
            }
            Some((next, _)) => {
                let mut frame = frame;
                frame.hops += 1;
                m.enqueue(self, node, frame, next);
                None
            }
            None => Some(frame),
        };
        self.medium = Some(m);
        back
    }

    fn with_medium<R>(&mut self, f: impl FnOnce(&mut Medium, &mut Core) -> R) -> Option<R> {
        let mut m = self.medium.take()?;
        let r = f(&mut m, self);
        self.medium = Some(m);
        Some(r)
    }

    /// Hook for node death: the medium drops the node's queue.
    pub(crate) fn medium_kill(&mut self, node: NodeId) {
        self.with_medium(|m, core| m.kill(core, node));
    }

    /// Hook for a radio waking up: the station resumes.
    pub(crate) fn medium_wake(&mut self, node: NodeId) {
        self.with_medium(|m, core| m.wake(core, node));
    }

    pub(crate) fn medium_route(&self, node: NodeId, dst: NodeId) -> Option<Option<Route>> {
        let m = self.medium.as_ref()?;
        Some(
            m.next_hop(node, dst)
                .map(|(next_hop, hops)| Route { next_hop, hops }),
        )
    }

    pub(crate) fn medium_link(&self, node: NodeId, nbr: NodeId) -> Option<Option<LinkInfo>> {
        Some(self.medium.as_ref()?.link_info(node, nbr, self.now))
    }
}

/// Build the medium's radios (one per node) and engine.
pub(crate) fn build(
    spec: &MediumSpec,
    core: &mut Core,
    profiles: &mut Vec<joulenet_channel::radio::RadioProfile>,
    policy: joulenet_channel::radio::RadioPolicy,
    streams: &Streams,
) {
    let mut ids = Vec::with_capacity(spec.positions.len());
    for node in 0..spec.positions.len() {
        let id = core.radios.len() as u32;
        core.radios.push(joulenet_channel::radio::RadioLedger::new(
            spec.radio.clone(),
            policy,
        ));
        core.radio_node.push(node as NodeId);
        profiles.push(spec.radio.clone());
        core.nodes[node].radios.push(id);
        ids.push(id);
    }
    let mut m = Box::new(Medium::new(spec, &ids, streams));
    m.start_dynamics(core, streams);
    core.medium = Some(m);
}

impl Simulation {
    /// Handle one medium event and what it hands back.
    pub(crate) fn medium_event(&mut self, ev: MediumEvent) {
        let Some(mut m) = self.core.medium.take() else {
            return;
        };
        m.handle(&mut self.core, ev);
        let mut out = std::mem::take(&mut m.out);
        self.core.medium = Some(m);
        for o in out.drain(..) {
            match o {
                Out::Deliver(node, frame) => self.receive(node, frame),
                Out::Overheard(node, frame) => {
                    // Every agent on the node that listens: endpoints bound
                    // to its ports and the relays living there. The others
                    // are not visited (a call would do nothing).
                    let agents: Vec<_> = self.core.ports[node as usize]
                        .iter()
                        .map(|&(_, a)| a)
                        .chain(
                            self.core.nodes[node as usize]
                                .relays
                                .iter()
                                .map(|&(_, a)| a),
                        )
                        .filter(|&a| self.agents[a as usize].hears_overheard())
                        .collect();
                    let (src, dst) = (frame.src, frame.dst);
                    for a in agents {
                        self.dispatch_from(a, Some(frame.prev), |agent: &mut dyn Agent, ctx| {
                            agent.on_overheard(ctx, src, dst, &frame.packet)
                        });
                    }
                    self.core.recycle(frame.packet);
                }
            }
        }
        if let Some(m) = self.core.medium.as_mut() {
            if m.out.is_empty() {
                m.out = out;
            }
        }
    }
}
