//! Link-state advertisements on the air: origination, reception and
//! flooding (the views themselves live in `medium/link_state.rs`).

use joulenet_proto::NodeId;

use super::*;

impl Medium {
    pub(super) fn head_is_lsa(&self, air: &Air) -> bool {
        self.on_air(air).is_some_and(|(_, lsa)| lsa)
    }

    /// `r` decoded an advertisement: news is installed, routes recomputed
    /// and the advertisement flooded on (after the transmission ends).
    pub(super) fn lsa_received(&mut self, core: &mut Core, r: usize, air: &Air) {
        let Some((frame, _)) = self.on_air(air) else {
            return;
        };
        let Some(lsa) = crate::medium::link_state::Lsa::decode(&frame.packet) else {
            return;
        };
        let mut bytes = core.buffer();
        bytes.extend_from_slice(&frame.packet);
        let Some(ls) = self.ls.as_mut() else {
            core.recycle(bytes);
            return;
        };
        if ls.install(r, lsa) {
            ls.route_row(r, &mut self.routes);
            self.lsa_flood.push((r, bytes));
        } else {
            core.recycle(bytes);
        }
    }

    /// ETX of `a`'s link toward `b`: measured (attempts per ACK) once the
    /// link has carried `min_samples` frames, else from the model's PER
    /// both ways.
    pub(in crate::medium) fn etx_toward(&self, a: usize, b: usize, min_samples: u64) -> f32 {
        if let Some(x) = self.st[a].nbrs.iter().find(|x| x.node == b as NodeId) {
            if x.attempts >= min_samples {
                return (x.attempts as f64 / x.acked.max(1) as f64).min(100.0) as f32;
            }
        }
        let (f, r) = (self.per_of(a, b) as f64, self.per_of(b, a) as f64);
        if f >= 1.0 {
            return 100.0;
        }
        (1.0 / ((1.0 - f) * (1.0 - r).max(0.01))).min(100.0) as f32
    }

    /// Node `u` originates its advertisement: the neighbours it heard
    /// within the dead interval, broadcast to be flooded.
    pub(super) fn advertise(&mut self, core: &mut Core, u: usize) {
        let (crate::medium::Routing::LinkState { min_samples, .. }, Some(ls)) =
            (self.spec.routing, self.ls.as_ref())
        else {
            return;
        };
        let interval = ls.interval;
        core.queue.push(
            core.now + interval,
            Event::Medium(MediumEvent::Advertise { node: u as u32 }),
        );
        if !self.up[u] || !core.nodes[u].alive() {
            return;
        }
        let live: Vec<usize> = ls.live_neighbours(u, core.now).collect();
        let links = live
            .into_iter()
            .map(|v| (v as NodeId, self.etx_toward(u, v, min_samples)))
            .collect();
        let ls = self.ls.as_mut().expect("checked above");
        let lsa = ls.originate(u, links);
        ls.route_row(u, &mut self.routes);
        self.stats.lsa_originated += 1;
        let mut bytes = core.buffer();
        lsa.encode(&mut bytes);
        self.enqueue_lsa(core, u, bytes);
    }

    /// Queue an advertisement for broadcast at `node` (voice category under
    /// EDCA, as routing control usually is).
    pub(super) fn enqueue_lsa(&mut self, core: &mut Core, node: usize, bytes: Vec<u8>) {
        let mut opts = joulenet_proto::TxOpts::ipv4(crate::medium::link_state::IP_PROTOCOL);
        opts.access_class = joulenet_proto::AccessClass::Voice;
        let frame = Frame {
            packet: bytes,
            src: joulenet_proto::Addr::new(node as NodeId, 0),
            dst: joulenet_proto::Addr::new(BROADCAST, 0),
            opts,
            sent_at: core.now,
            hops: 0,
            prev: node as NodeId,
            relay: None,
        };
        let ac = if self.spec.edca { 0 } else { 2 };
        let st = &mut self.st[node];
        if st.acs[ac].queue.len() >= self.spec.queue_limit {
            self.stats.queue_drops += 1;
            core.recycle(frame.packet);
            return;
        }
        let seq = st.next_seq;
        st.next_seq = st.next_seq.wrapping_add(1);
        st.acs[ac].queue.push_back(Queued {
            frame,
            next: BROADCAST,
            seq,
            attempts: 1,
            lsa: true,
        });
        self.kick(core, node, ac);
    }
}
