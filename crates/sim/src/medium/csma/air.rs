//! Transmissions on the air: who hears, senses and suffers each one and
//! when (with propagation delay, per-receiver arrival and departure), the
//! capture rule, and decoding at each receiver when a frame ends.

use joulenet_proto::{Duration, NodeId, Time};
use rand::Rng;

use super::*;

impl Medium {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_air(
        &mut self,
        core: &mut Core,
        s: usize,
        kind: Kind,
        dst: NodeId,
        (bytes, airtime): (u32, Duration),
        nav_end: Time,
        seq: u16,
        wants_ack: bool,
    ) {
        let now = core.now;
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
        let ledger = &mut core.radios[self.st[s].radio as usize];
        ledger.advance(now);
        ledger.add_tx(now, end);
        self.st[s].tx_airtime += airtime;
        self.st[s].tx_active = true;
        self.st[s].last_air = id;
        if let Some(a) = self.st[s].locked.take() {
            spoil(&mut self.air, a, s as NodeId);
        }
        let mut sensed = self.sensed_pool.pop().unwrap_or_default();
        sensed.extend_from_slice(&self.near[s]);
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
            pending: 0,
            stash: None,
        });
        core.queue.push(end, Event::Medium(MediumEvent::TxEnd(id)));
        let mut touched = std::mem::take(&mut self.scratch);
        for &(r, fl) in &sensed {
            match self.delay_to(s, r) {
                Duration::ZERO => {
                    self.arrive(core, id, r as usize, fl);
                    if fl & CS != 0 {
                        touched.push(r);
                    }
                }
                d => core.queue.push(
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
            self.update_sense(core, r as usize);
        }
        touched.clear();
        self.scratch = touched;
        self.update_sense(core, s);
    }

    /// Propagation delay from `a` to `b` (zero unless modelled).
    pub(super) fn delay_to(&self, a: usize, b: NodeId) -> Duration {
        match self.delay.is_empty() {
            true => Duration::ZERO,
            false => Duration(self.delay[a * self.n + b as usize] as u64),
        }
    }

    /// Received power at `r` of a transmission from `a` (relative, linear).
    fn power(&self, a: usize, r: usize) -> f64 {
        self.power[a * self.n + r] as f64
    }

    /// Whether a reception from `src` at `r` survives interference of total
    /// power `interference` (capture), or there is none.
    fn clear_of(&self, src: usize, r: usize, interference: f64) -> bool {
        match self.spec.capture_db {
            _ if interference <= 0.0 => true,
            None => false,
            Some(db) => 10.0 * (self.power(src, r) / interference).log10() >= db,
        }
    }

    /// Transmission `id` begins to reach `r`: `r` locks onto it if free,
    /// senses it, and suffers it as interference.
    pub(super) fn arrive(&mut self, core: &mut Core, id: u32, r: usize, fl: u8) {
        let now = core.now;
        let Some(air) = self.air[id as usize].as_ref() else {
            return;
        };
        let (src, dst) = (air.src as usize, air.dst);
        let end = air.end + self.delay_to(src, r as NodeId);
        let capture = self.spec.capture_db.is_some();
        let before = self.st[r].intf;
        let quiet = if capture {
            self.clear_of(src, r, self.intf_power[r])
        } else {
            before == 0
        };
        // With capture, a frame far enough above everything else on the air
        // at `r` takes the receiver over from a weaker one it was locked on.
        if fl & INTF != 0 {
            self.st[r].intf += 1;
            if capture {
                self.intf_power[r] += self.power(src, r);
            }
            if let Some(a) = self.st[r].locked {
                let takes_over = capture && fl & RX != 0 && quiet;
                let survives = !takes_over
                    && capture
                    && self.air[a as usize].as_ref().is_some_and(|l| {
                        let own = self.power(l.src as usize, r);
                        self.clear_of(l.src as usize, r, self.intf_power[r] - own)
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

    pub(super) fn tx_end(&mut self, core: &mut Core, id: u32) {
        let Some(mut air) = self.air.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        let s = air.src as usize;
        self.st[s].tx_active = false;
        if air.dst_missed && core.nodes[air.dst as usize].alive() {
            self.stats.collisions += 1;
            if air.kind == Kind::Data {
                self.stats.data_collisions += 1;
            }
        }
        let mut touched = std::mem::take(&mut self.scratch);
        let sensed = std::mem::take(&mut air.sensed);
        if self.delay.is_empty() {
            self.decode_all(core, id, &air, |_| true);
            for &(r, fl) in &sensed {
                self.unsense(r as usize, s, fl);
                if fl & CS != 0 {
                    touched.push(r);
                }
            }
        } else {
            for &(r, fl) in &sensed {
                air.pending += 1;
                core.queue.push(
                    core.now + self.delay_to(s, r),
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
        self.park(core, id, air);
        match kind {
            Kind::Data if wants_ack => {
                self.arm_timeout(core, s, self.ack_t);
            }
            Kind::Data => self.complete(core, s, false),
            Kind::Rts => self.arm_timeout(core, s, self.cts_t),
            Kind::Ack | Kind::Cts => {}
        }
        for &r in &touched {
            self.update_sense(core, r as usize);
        }
        touched.clear();
        self.scratch = touched;
        self.update_sense(core, s);
        self.flood_pending(core);
    }

    /// Transmission `id` stops reaching `r` (propagation delay modelled).
    pub(super) fn depart(&mut self, core: &mut Core, id: u32, r: usize, fl: u8) {
        let Some(mut air) = self.air.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        self.decode_all(core, id, &air, |x| x == r as NodeId);
        self.unsense(r, air.src as usize, fl);
        air.pending -= 1;
        self.park(core, id, air);
        if fl & CS != 0 {
            self.update_sense(core, r);
        }
        self.flood_pending(core);
    }

    /// Put a transmission back while receivers still hear it, else free it.
    fn park(&mut self, core: &mut Core, id: u32, mut air: Air) {
        if air.pending > 0 {
            self.air[id as usize] = Some(air);
            return;
        }
        self.free.push(id);
        if let Some((frame, _)) = air.stash.take() {
            core.recycle(frame.packet);
        }
        let (mut rx, mut sensed) = (air.rx, air.sensed);
        rx.clear();
        sensed.clear();
        self.rx_pool.push(rx);
        self.sensed_pool.push(sensed);
    }

    /// `r` no longer senses or suffers a transmission from `src`.
    fn unsense(&mut self, r: usize, src: usize, fl: u8) {
        if fl & INTF != 0 {
            self.st[r].intf -= 1;
            if self.spec.capture_db.is_some() {
                self.intf_power[r] = match self.st[r].intf {
                    0 => 0.0,
                    _ => self.intf_power[r] - self.power(src, r),
                };
            }
        }
        if fl & CS != 0 {
            self.st[r].busy -= 1;
        }
    }

    /// Receivers locked onto `air` (those `which` selects) decode it or not.
    fn decode_all(&mut self, core: &mut Core, id: u32, air: &Air, which: impl Fn(NodeId) -> bool) {
        let now = core.now;
        let s = air.src as usize;
        for &(r, ok) in air.rx.iter().filter(|x| which(x.0)) {
            let ri = r as usize;
            if self.st[ri].locked == Some(id) {
                self.st[ri].locked = None;
            }
            let intended = air.dst == r;
            if !ok {
                if intended {
                    self.stats.collisions += 1;
                    if air.kind == Kind::Data {
                        self.stats.data_collisions += 1;
                    }
                }
                self.st[ri].eifs = true;
                continue;
            }
            if !core.nodes[ri].alive() || !core.radios[self.st[ri].radio as usize].usable_at(now) {
                continue;
            }
            let mut p = self.per[s * self.n + ri] as f64;
            if !self.per_bad.is_empty() && self.link_bad(s as NodeId, r, now) {
                p = self.per_bad[s * self.n + ri] as f64;
            }
            if p > 0.0 {
                let loss = 1.0 - (1.0 - p).powf(air.bytes as f64 / 1000.0);
                if self.st[ri].loss_rng.random::<f64>() < loss {
                    if intended {
                        self.stats.channel_losses += 1;
                    }
                    self.st[ri].eifs = true;
                    continue;
                }
            }
            self.st[ri].eifs = false;
            if let Some(ls) = self.ls.as_mut() {
                ls.heard(ri, s, now);
            }
            self.receive(core, ri, air);
        }
    }

    fn flood_pending(&mut self, core: &mut Core) {
        for (r, bytes) in std::mem::take(&mut self.lsa_flood) {
            self.stats.lsa_forwarded += 1;
            self.enqueue_lsa(core, r, bytes);
        }
    }
}

pub(super) fn spoil(air: &mut [Option<Air>], a: u32, r: NodeId) {
    if let Some(Some(f)) = air.get_mut(a as usize) {
        if let Some(x) = f.rx.iter_mut().find(|x| x.0 == r) {
            x.1 = false;
        }
    }
}

/// Speed of light, m/s.
pub(super) const LIGHT: f64 = 299_792_458.0;

/// Propagation delay in ns between every ordered pair within interference
/// or carrier-sense range; empty when the medium neglects it.
pub(super) fn delay_matrix(spec: &MediumSpec) -> Vec<u32> {
    if !spec.propagation_delay {
        return Vec::new();
    }
    let n = spec.positions.len();
    let mut d = vec![0u32; n * n];
    for a in 0..n {
        for b in 0..n {
            d[a * n + b] = (spec.distance(a, b) / LIGHT * 1e9)
                .round()
                .min(u32::MAX as f64) as u32;
        }
    }
    d
}

/// Received power per ordered pair relative to 1 m, from the path-loss
/// exponent (the reception model's, 3 under `disc`); empty without capture.
pub(super) fn power_matrix(spec: &MediumSpec) -> Vec<f32> {
    if spec.capture_db.is_none() {
        return Vec::new();
    }
    let exponent = match spec.reception {
        crate::medium::Reception::LogDistance { exponent, .. } => exponent,
        crate::medium::Reception::Disc => 3.0,
    };
    let n = spec.positions.len();
    let mut p = vec![0f32; n * n];
    for a in 0..n {
        for b in 0..n {
            if a != b {
                p[a * n + b] = spec.distance(a, b).max(1.0).powf(-exponent) as f32;
            }
        }
    }
    p
}

/// Who hears (RX), senses (CS) and is interfered with by (INTF) each node.
pub(super) fn near_lists(spec: &MediumSpec, per: &[f32]) -> Vec<Vec<(NodeId, u8)>> {
    let n = spec.positions.len();
    let mut near = vec![Vec::new(); n];
    for (a, list) in near.iter_mut().enumerate() {
        for b in 0..n {
            if a == b {
                continue;
            }
            let d = spec.distance(a, b);
            let mut fl = 0;
            if per[a * n + b] < 1.0 {
                fl |= RX | INTF;
            }
            if d <= spec.cs_range {
                fl |= CS;
            }
            if d <= spec.interference_range {
                fl |= INTF;
            }
            if fl != 0 {
                list.push((b as NodeId, fl));
            }
        }
    }
    near
}
