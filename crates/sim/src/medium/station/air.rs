//! Transmissions on the air: who hears, senses and suffers each one and
//! when (with propagation delay, per-receiver arrival and departure), the
//! capture rule, and decoding at each receiver when a frame ends.

use joulenet_proto::{Duration, NodeId, Time};
use rand::Rng;

use super::*;
use crate::core::Core;
use crate::medium::geometry::{Geometry, INTF, RX};
use crate::medium::tx_kind::TxKind;
use crate::medium::BROADCAST;
use joulenet_channel::radio::FrameRole;

impl<A: Access> Stations<A> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_air(
        &mut self,
        cx: &mut Cx<'_>,
        s: usize,
        kind: Kind,
        dst: NodeId,
        (bytes, airtime): (u32, Duration),
        nav_end: Time,
        seq: u16,
        wants_ack: bool,
    ) {
        let now = cx.core.now;
        let end = now + airtime;
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.air.push(None);
                self.air.len() as u32 - 1
            }
        };
        // Integrate up to now before registering, so a ledger never holds
        // more than the activity still ahead of it (bounded memory).
        let ledger = &mut cx.core.radios[self.st[s].radio as usize];
        ledger.advance(now);
        ledger.add_tx(now, end);
        let mut joules = ledger.tx_energy_j(airtime);
        if kind == Kind::Data {
            let role = match dst {
                BROADCAST => FrameRole::SendBroadcast,
                _ => FrameRole::Send,
            };
            joules += ledger.add_frame(role, bytes, airtime);
        }
        let what = match kind {
            Kind::Data => self.head_kind(s),
            Kind::Ack | Kind::Rts | Kind::Cts => TxKind::LinkControl,
        };
        self.st[s].tx_by_kind.add(what, joules);
        self.st[s].tx_airtime += airtime;
        self.st[s].tx_active = true;
        self.st[s].last_air = id;
        if let Some(a) = self.st[s].locked.take() {
            spoil(&mut self.air, a, s as NodeId);
        }
        let mut sensed = self.sensed_pool.pop().unwrap_or_default();
        sensed.extend_from_slice(&cx.geo.near[s]);
        self.air[id as usize] = Some(Air {
            src: s as NodeId,
            dst,
            kind,
            nav_end,
            bytes,
            seq,
            wants_ack,
            dst_missed: false,
            rx: self.rx_pool.pop().unwrap_or_default(),
            sensed: Vec::new(),
            end,
            airtime,
            pending: 0,
            stash: None,
            extra_db: 0.0,
        });
        cx.core
            .queue
            .push(end, Event::Medium(MediumEvent::TxEnd(id)));
        let mut touched = std::mem::take(&mut self.scratch);
        for &(r, fl) in &sensed {
            match cx.geo.delay_to(s, r) {
                Duration::ZERO => {
                    self.arrive(cx.core, cx.geo, id, r as usize, fl);
                    if fl & CS != 0 {
                        touched.push(r);
                    }
                }
                d => cx.core.queue.push(
                    now + d,
                    Event::Medium(MediumEvent::Arrive {
                        id,
                        node: r,
                        flags: fl,
                    }),
                ),
            }
        }
        if let Some(air) = self.air[id as usize].as_mut() {
            air.sensed = sensed;
        }
        for &r in &touched {
            self.update_sense(cx.core, r as usize);
        }
        touched.clear();
        self.scratch = touched;
        self.update_sense(cx.core, s);
    }

    /// What `s`'s head frame (the one it is putting on the air) is.
    fn head_kind(&self, s: usize) -> TxKind {
        let st = &self.st[s];
        st.acs[st.cur]
            .queue
            .front()
            .map_or(TxKind::Network, |q| TxKind::of_frame(q.frame.origin, q.lsa))
    }

    /// Transmission `id` begins to reach `r`: `r` locks onto it if free,
    /// senses it, and suffers it as interference.
    #[inline(always)]
    pub(super) fn arrive(&mut self, core: &mut Core, geo: &Geometry, id: u32, r: usize, fl: u8) {
        let now = core.now;
        let Some(air) = self.air[id as usize].as_ref() else {
            return;
        };
        let (src, dst) = (air.src as usize, air.dst);
        let end = match self.delayed {
            true => air.end + geo.delay_to(src, r as NodeId),
            false => air.end,
        };
        let capture = self.capture;
        let before = self.st[r].intf;
        let quiet = if capture {
            geo.clear_of(src, r, self.intf_power[r])
        } else {
            before == 0
        };
        // With capture, a frame far enough above everything else on the air
        // at `r` takes the receiver over from a weaker one it was locked on.
        if fl & INTF != 0 {
            self.st[r].intf += 1;
            if capture {
                self.intf_power[r] += geo.power(src, r);
            }
            if let Some(a) = self.st[r].locked {
                let takes_over = capture && fl & RX != 0 && quiet;
                let survives = !takes_over
                    && capture
                    && self.air[a as usize].as_ref().is_some_and(|l| {
                        let own = geo.power(l.src as usize, r);
                        geo.clear_of(l.src as usize, r, self.intf_power[r] - own)
                    });
                if !survives {
                    spoil(&mut self.air, a, r as NodeId);
                }
                if takes_over {
                    self.st[r].locked = None;
                }
            }
        }
        let stn = &mut self.st[r];
        if fl & RX != 0
            && !stn.tx_active
            && stn.locked.is_none()
            && core.nodes[r].alive()
            && core.radios[stn.radio as usize].usable_at(now)
        {
            stn.locked = Some(id);
            let ledger = &mut core.radios[stn.radio as usize];
            ledger.advance(now);
            ledger.add_rx(now, end);
            if let Some(air) = self.air[id as usize].as_mut() {
                air.rx.push((r as NodeId, quiet));
            }
        } else if fl & RX != 0 && r as NodeId == dst {
            if let Some(air) = self.air[id as usize].as_mut() {
                air.dst_missed = true;
            }
        }
        if fl & CS != 0 {
            self.st[r].busy += 1;
        }
    }

    pub(super) fn tx_end(&mut self, cx: &mut Cx<'_>, id: u32) {
        let Some(mut air) = self.air.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        let s = air.src as usize;
        self.st[s].tx_active = false;
        if air.dst_missed && cx.core.nodes[air.dst as usize].alive() {
            self.stats.collisions += 1;
            if air.kind == Kind::Data {
                self.stats.data_collisions += 1;
            }
        }
        let mut touched = std::mem::take(&mut self.scratch);
        let sensed = std::mem::take(&mut air.sensed);
        if !cx.geo.delayed() {
            self.decode_all(cx, id, &air, |_| true);
            for &(r, fl) in &sensed {
                self.unsense(cx.geo, r as usize, s, fl);
                if fl & CS != 0 {
                    touched.push(r);
                }
            }
        } else {
            for &(r, fl) in &sensed {
                air.pending += 1;
                cx.core.queue.push(
                    cx.core.now + cx.geo.delay_to(s, r),
                    Event::Medium(MediumEvent::Depart {
                        id,
                        node: r,
                        flags: fl,
                    }),
                );
            }
        }
        air.sensed = sensed;
        let kind = air.kind;
        let wants_ack = air.wants_ack;
        self.park(cx, id, air);
        match kind {
            Kind::Data if wants_ack => {
                self.arm_timeout(cx, s, self.ack_t);
            }
            Kind::Data => self.complete(cx, s, false),
            Kind::Rts => self.arm_timeout(cx, s, self.cts_t),
            Kind::Ack | Kind::Cts => {}
        }
        for &r in &touched {
            self.update_sense(cx.core, r as usize);
        }
        touched.clear();
        self.scratch = touched;
        self.update_sense(cx.core, s);
    }

    /// Transmission `id` stops reaching `r` (propagation delay modelled).
    pub(super) fn depart(&mut self, cx: &mut Cx<'_>, id: u32, r: usize, fl: u8) {
        let Some(mut air) = self.air.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        self.decode_all(cx, id, &air, |x| x == r as NodeId);
        self.unsense(cx.geo, r, air.src as usize, fl);
        air.pending -= 1;
        self.park(cx, id, air);
        if fl & CS != 0 {
            self.update_sense(cx.core, r);
        }
    }

    /// Put a transmission back while receivers still hear it, else free it.
    fn park(&mut self, cx: &mut Cx<'_>, id: u32, mut air: Air) {
        if air.pending > 0 {
            self.air[id as usize] = Some(air);
            return;
        }
        self.free.push(id);
        if let Some((frame, _)) = air.stash.take() {
            cx.core.recycle(frame.packet);
        }
        let (mut rx, mut sensed) = (air.rx, air.sensed);
        rx.clear();
        sensed.clear();
        self.rx_pool.push(rx);
        self.sensed_pool.push(sensed);
    }

    /// `r` no longer senses or suffers a transmission from `src`.
    fn unsense(&mut self, geo: &Geometry, r: usize, src: usize, fl: u8) {
        if fl & INTF != 0 {
            self.st[r].intf -= 1;
            if self.capture {
                self.intf_power[r] = match self.st[r].intf {
                    0 => 0.0,
                    _ => self.intf_power[r] - geo.power(src, r),
                };
            }
        }
        if fl & CS != 0 {
            self.st[r].busy -= 1;
        }
    }

    /// Receivers locked onto `air` (those `which` selects) decode it or not.
    fn decode_all(&mut self, cx: &mut Cx<'_>, id: u32, air: &Air, which: impl Fn(NodeId) -> bool) {
        let now = cx.core.now;
        let s = air.src as usize;
        for &(r, ok) in air.rx.iter().filter(|x| which(x.0)) {
            let ri = r as usize;
            if self.st[ri].locked == Some(id) {
                self.st[ri].locked = None;
            }
            let intended = air.dst == r;
            let radio = self.st[ri].radio;
            if !ok {
                charge_reception(cx.core, radio, air, r, false);
                if intended {
                    self.stats.collisions += 1;
                    if air.kind == Kind::Data {
                        self.stats.data_collisions += 1;
                    }
                }
                self.st[ri].eifs = true;
                continue;
            }
            if !cx.core.nodes[ri].alive()
                || !cx.core.radios[self.st[ri].radio as usize].usable_at(now)
            {
                continue;
            }
            let mut p = cx.geo.per_now(s, ri, now);
            if let (Some(width), true) = (self.width_db, air.extra_db != 0.0) {
                p = super::super::rate_control::per_at_rate(p, air.extra_db as f64, width);
            }
            if p > 0.0 {
                let loss = 1.0 - (1.0 - p).powf(air.bytes as f64 / 1000.0);
                if self.st[ri].loss_rng.random::<f64>() < loss {
                    charge_reception(cx.core, radio, air, r, false);
                    if intended {
                        self.stats.channel_losses += 1;
                    }
                    self.st[ri].eifs = true;
                    continue;
                }
            }
            self.st[ri].eifs = false;
            charge_reception(cx.core, radio, air, r, true);
            if cx.decoded.track_heard {
                cx.decoded.heard.push((r, s as NodeId));
            }
            self.receive(cx, ri, air);
        }
    }
}

/// Charges receiver `r`'s radio for a data frame it was locked onto, by
/// what became of it: spoiled (by a collision or the channel) is discarded;
/// decoded is received, a broadcast received, or overheard. Control frames
/// cost only their airtime (the per-packet lines include the exchange).
fn charge_reception(core: &mut Core, radio: u32, air: &Air, r: NodeId, intact: bool) {
    if air.kind != Kind::Data {
        return;
    }
    let role = match (intact, air.dst) {
        (false, _) => FrameRole::Discarded,
        (true, BROADCAST) => FrameRole::ReceiveBroadcast,
        (true, dst) if dst == r => FrameRole::Receive,
        (true, _) => FrameRole::Overheard,
    };
    core.radios[radio as usize].add_frame(role, air.bytes, air.airtime);
}

pub(super) fn spoil(air: &mut [Option<Air>], a: u32, r: NodeId) {
    if let Some(Some(f)) = air.get_mut(a as usize) {
        if let Some(x) = f.rx.iter_mut().find(|x| x.0 == r) {
            x.1 = false;
        }
    }
}
