//! Link-state advertisements on the air: origination, reception and
//! flooding (the views themselves live in `link_state.rs`). Routing and the
//! MAC meet here: an advertisement is a broadcast frame the MAC sends like
//! any other, and what the MAC decodes comes back through
//! [`super::mac::Decoded`] once the event is over.

use joulenet_proto::NodeId;

use super::link_state::{Lsa, IP_PROTOCOL};
use super::{Mac, Medium, MediumEvent, Routing, BROADCAST};
use crate::core::Core;
use crate::event::Event;
use crate::frame::Frame;

impl Medium {
    /// After a MAC event: record who heard whom, install the advertisements
    /// decoded (news recomputes the node's routes) and flood the news on.
    pub(super) fn after_decoding(&mut self, core: &mut Core) {
        let d = &mut self.decoded;
        if d.heard.is_empty() && d.adverts.is_empty() {
            return;
        }
        let heard = std::mem::take(&mut d.heard);
        let mut adverts = std::mem::take(&mut d.adverts);
        if let Some(ls) = self.router.ls.as_mut() {
            for &(u, v) in &heard {
                ls.heard(u as usize, v as usize, core.now);
            }
        }
        let mut news = Vec::new();
        for (r, bytes) in adverts.drain(..) {
            let news_here = match (Lsa::decode(&bytes), self.router.ls.as_mut()) {
                (Some(lsa), Some(ls)) => {
                    let new = ls.install(r, lsa);
                    if new {
                        ls.route_row(r, &mut self.router.routes);
                    }
                    new
                }
                _ => false,
            };
            match news_here {
                true => news.push((r, bytes)),
                false => core.recycle(bytes),
            }
        }
        for (r, bytes) in news {
            self.stats.lsa_forwarded += 1;
            self.enqueue_lsa(core, r, bytes);
        }
        // Give the buffers back for the next event.
        let d = &mut self.decoded;
        let mut heard = heard;
        heard.clear();
        d.heard = heard;
        d.adverts = adverts;
    }

    /// ETX of `a`'s link toward `b`: measured (attempts per ACK) once the
    /// link has carried `min_samples` frames, else from the model's PER
    /// both ways.
    pub(in crate::medium) fn etx_toward(&self, a: usize, b: usize, min_samples: u64) -> f32 {
        if let Some(x) = self.mac.link_counts(a as NodeId, b as NodeId) {
            if x.attempts >= min_samples {
                return (x.attempts as f64 / x.acked.max(1) as f64).min(100.0) as f32;
            }
        }
        let (f, r) = (self.geo.per_of(a, b) as f64, self.geo.per_of(b, a) as f64);
        if f >= 1.0 {
            return 100.0;
        }
        (1.0 / ((1.0 - f) * (1.0 - r).max(0.01))).min(100.0) as f32
    }

    /// Node `u` originates its advertisement: the neighbours it heard
    /// within the dead interval, broadcast to be flooded.
    pub(super) fn advertise(&mut self, core: &mut Core, u: usize) {
        let (Routing::LinkState { min_samples, .. }, Some(ls)) =
            (self.router.mode, self.router.ls.as_ref())
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
        let ls = self.router.ls.as_mut().expect("checked above");
        let lsa = ls.originate(u, links);
        ls.route_row(u, &mut self.router.routes);
        self.stats.lsa_originated += 1;
        let mut bytes = core.buffer();
        lsa.encode(&mut bytes);
        self.enqueue_lsa(core, u, bytes);
    }

    /// Queue an advertisement for broadcast at `node` (voice category under
    /// EDCA, as routing control usually is; one attempt, as broadcasts).
    pub(super) fn enqueue_lsa(&mut self, core: &mut Core, node: usize, bytes: Vec<u8>) {
        let mut opts = joulenet_proto::TxOpts::ipv4(IP_PROTOCOL);
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
            flow: None,
            origin: None,
        };
        let (mac, mut cx) = self.split(core);
        mac.enqueue(&mut cx, node as NodeId, frame, BROADCAST, true);
    }
}
