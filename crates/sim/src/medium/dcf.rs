//! 802.11 DCF and EDCA: stations contend for the medium. Before each
//! frame a station waits DIFS (AIFS under EDCA) then a backoff of uniform
//! [0, CW] slots, frozen while the medium is busy (physical or virtual
//! carrier sense through the NAV); EIFS after a frame that could not be
//! decoded; binary exponential backoff on a missing ACK/CTS, up to the
//! frame's attempt limit; post-backoff after every exchange; immediate
//! access when a frame arrives at an idle station whose medium has been
//! idle for DIFS. With `edca`, four access categories per station contend
//! separately (internal collisions resolved in favour of the higher one).
//! A transmit opportunity (`txop`, or [`BURST_TXOP`] for frames sent with
//! `TxOpts::burst`) lets a station send its next frames SIFS apart.
//!
//! The frame exchanges themselves (RTS/CTS, data, ACK, timeouts) are the
//! shared station code's (`station.rs`); this file is the contention.

use joulenet_proto::{Duration, LinkInfo, NodeId, Time};
use rand::Rng;

use super::mac::{Cx, LinkCounts, Mac};
use super::station::{Access, Stations};
use super::{MediumEvent, MediumStats, BROADCAST};
use crate::core::Core;
use crate::event::Event;
use crate::frame::Frame;
use crate::rng::Streams;

/// Longest burst for frames sent with `TxOpts::burst` when the medium has
/// no TXOP limit of its own (the Hop paper's 8160 µs).
pub const BURST_TXOP: Duration = Duration::from_micros(8160);

/// The contention policy: DCF/EDCA backoff.
pub struct Contention;

/// The 802.11 DCF/EDCA MAC.
pub type Dcf = Stations<Contention>;

impl Access for Contention {
    #[inline]
    fn kick(x: &mut Dcf, cx: &mut Cx<'_>, s: usize, ac: usize) {
        x.kick(cx, s, ac);
    }

    #[inline(always)]
    fn medium_idle(x: &mut Dcf, core: &mut Core, s: usize) {
        // Only a pending backoff that is not counting down resumes
        // (`schedule`'s own test, made here from the station's first cache
        // line: most stations have none, and their entities stay untouched).
        let st = &x.st[s];
        let mut resume = st.backoffs() & !st.counting();
        while resume != 0 {
            let ac = resume.trailing_zeros() as usize;
            resume &= resume - 1;
            x.schedule(core, s, ac);
        }
    }

    #[inline(always)]
    fn medium_busy(x: &mut Dcf, core: &mut Core, s: usize) {
        x.freeze(core, s);
    }

    /// The next frame fits in the TXOP (the category's limit, else the
    /// burst limit if the frame asks for a burst).
    #[inline]
    fn txop_continues(x: &Dcf, now: Time, s: usize, ac: usize, start: Time) -> bool {
        let a = &x.st[s].acs[ac];
        let Some(q) = a.queue.front() else {
            return false;
        };
        let limit = if a.p.txop > Duration::ZERO {
            a.p.txop
        } else if q.frame.opts.burst {
            BURST_TXOP
        } else {
            Duration::ZERO
        };
        let mut exchange = x.sifs + x.planned_airtime(now, s, q);
        if q.next != BROADCAST && q.attempts > 1 {
            exchange += x.sifs + x.ack_t;
        }
        limit > Duration::ZERO && now + exchange <= start + limit
    }

    /// Post-backoff for `ac`; categories whose frames arrived during the
    /// exchange contend too.
    #[inline]
    fn exchange_over(x: &mut Dcf, cx: &mut Cx<'_>, s: usize, ac: usize) {
        let b = x.draw(s, ac);
        x.st[s].set_backoff(ac, Some(b));
        x.update_sense(cx.core, s);
        x.schedule(cx.core, s, ac);
        for other in 0..4 {
            x.kick(cx, s, other);
        }
    }

    /// Retry with a doubled window (reset after a drop).
    #[inline]
    fn attempt_failed(x: &mut Dcf, cx: &mut Cx<'_>, s: usize, ac: usize, dropped: bool) {
        let a = &mut x.st[s].acs[ac];
        if dropped {
            a.cw = a.p.cw_min;
        } else {
            a.cw = (2 * a.cw + 1).min(a.p.cw_max);
        }
        a.gen = a.gen.wrapping_add(1);
        x.st[s].unschedule(ac, &mut cx.core.queue);
        let b = x.draw(s, ac);
        x.st[s].set_backoff(ac, Some(b));
        x.schedule(cx.core, s, ac);
    }
}

impl Mac for Dcf {
    fn start(&mut self, _cx: &mut Cx<'_>, _streams: &Streams) {}

    fn enqueue(&mut self, cx: &mut Cx<'_>, node: NodeId, frame: Frame, next: NodeId, advert: bool) {
        Stations::enqueue(self, cx, node, frame, next, advert);
    }

    fn handle(&mut self, cx: &mut Cx<'_>, ev: MediumEvent) {
        match ev {
            MediumEvent::Access { node, ac, gen } => {
                self.access(cx, node as usize, ac as usize, gen)
            }
            ev => Stations::handle(self, cx, ev),
        }
    }

    fn wake(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        Stations::wake(self, cx, node);
    }

    fn kill(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        Stations::kill(self, cx, node);
    }

    /// With the rate left toward `nbr`, from the service time of the
    /// station's frames (`super::service`).
    fn link(&self, node: NodeId, nbr: NodeId, in_range: bool, now: Time) -> Option<LinkInfo> {
        self.link_info(node, nbr, in_range, || {
            self.st.get(node as usize)?.service.available_bps(nbr, now)
        })
    }

    fn link_counts(&self, node: NodeId, nbr: NodeId) -> Option<LinkCounts> {
        Stations::link_counts(self, node, nbr)
    }

    fn visit_links(&self, f: &mut dyn FnMut(usize, NodeId, LinkCounts)) {
        Stations::visit_links(self, f);
    }

    fn stats(&self) -> MediumStats {
        self.snapshot()
    }
}

impl Stations<Contention> {
    fn draw(&mut self, s: usize, ac: usize) -> u32 {
        let st = &mut self.st[s];
        let cw = st.acs[ac].cw;
        st.rng.random_range(0..=cw)
    }

    /// A frame is queued in `ac`: access at once if the medium has been idle
    /// for AIFS and nothing is pending, else start (or keep) a backoff.
    fn kick(&mut self, cx: &mut Cx<'_>, s: usize, ac: usize) {
        let now = cx.core.now;
        let st = &self.st[s];
        if st.acs[ac].queue.is_empty() || st.acs[ac].backoff.is_some() || !self.usable(cx, s) {
            return;
        }
        let others_pending = st.backoffs() != 0;
        if !others_pending
            && self.sensed_idle(s, now)
            && st.sensing_idle
            && now >= st.idle_since + st.acs[ac].aifs
        {
            self.st[s].txop_start = Some(now);
            self.transmit_head(cx, s, ac, false);
            return;
        }
        let b = self.draw(s, ac);
        self.st[s].set_backoff(ac, Some(b));
        self.schedule(cx.core, s, ac);
    }

    fn schedule(&mut self, core: &mut Core, s: usize, ac: usize) {
        let now = core.now;
        let (slot, eifs) = (self.slot, self.eifs);
        let st = &mut self.st[s];
        let use_eifs = st.eifs;
        let (idle, idle_since) = (st.sensing_idle, st.idle_since);
        if !idle || st.scheduled(ac) {
            return;
        }
        let a = &mut st.acs[ac];
        let Some(backoff) = a.backoff else {
            return;
        };
        // EIFS replaces DIFS; under EDCA it is EIFS - DIFS + AIFS.
        let ifs = if use_eifs {
            eifs - self.phy.difs() + a.aifs
        } else {
            a.aifs
        };
        let start = (idle_since + ifs).max(now);
        a.countdown_start = start;
        a.access_at = start + slot.saturating_mul(backoff as u64);
        a.gen = a.gen.wrapping_add(1);
        let key = core.queue.push_keyed(
            a.access_at,
            Event::Medium(MediumEvent::Access {
                node: s as u32,
                ac: ac as u8,
                gen: a.gen,
            }),
        );
        st.start_countdown(ac, key);
    }

    /// The medium turned busy for `s`: count the idle slots that passed.
    /// The frozen backoff's `Access` event is taken back from the queue:
    /// at a thousand contending stations nine in ten of these events used
    /// to be popped only to be found stale.
    #[inline(always)]
    fn freeze(&mut self, core: &mut Core, s: usize) {
        let now = core.now;
        let slot = self.slot.0.max(1);
        let st = &mut self.st[s];
        // Only the categories counting down, read from the station's first
        // cache line: a station with none touches no entity.
        let mut counting = st.counting();
        while counting != 0 {
            let ac = counting.trailing_zeros() as usize;
            counting &= counting - 1;
            let a = &mut st.acs[ac];
            if a.access_at == now {
                // A backoff ending in this very slot goes ahead (and collides).
                continue;
            }
            let elapsed = now.saturating_since(a.countdown_start);
            let slots = (elapsed.0 / slot) as u32;
            if let Some(b) = a.backoff.as_mut() {
                *b -= slots.min(*b);
            }
            a.gen = a.gen.wrapping_add(1);
            st.unschedule(ac, &mut core.queue);
        }
    }

    /// A backoff of `ac` at `s` expired.
    fn access(&mut self, cx: &mut Cx<'_>, s: usize, ac: usize, gen: u32) {
        let now = cx.core.now;
        let st = &mut self.st[s];
        if gen != st.acs[ac].gen || !st.scheduled(ac) {
            // A frozen backoff cancels its event: none is left to go stale.
            debug_assert!(false, "stale Access event popped at {now:?}");
            return;
        }
        st.countdown_over(ac);
        // Another category of this station won the same slot: an internal
        // collision, which the loser treats as a failed attempt.
        let higher_wins = (0..ac).any(|h| {
            let x = &st.acs[h];
            st.scheduled(h) && x.access_at == now && !x.queue.is_empty()
        });
        let exchange_now = st.exchange && st.exchange_start == now;
        if (higher_wins || exchange_now) && !st.acs[ac].queue.is_empty() {
            self.stats.internal_collisions += 1;
            self.failed_attempt(cx, s, ac);
            return;
        }
        let st = &mut self.st[s];
        if st.tx_active || st.response.is_some() || st.exchange {
            st.set_backoff(ac, Some(0));
            return;
        }
        st.set_backoff(ac, None);
        st.eifs = false;
        if st.acs[ac].queue.is_empty() {
            return;
        }
        if !self.usable(cx, s) {
            return;
        }
        self.st[s].txop_start = Some(now);
        self.transmit_head(cx, s, ac, false);
    }
}
