//! A JAVeLEN-like TDMA MAC on the shared medium: every directed link gets a
//! slot of a repeating frame from a pseudo-random, collision-free schedule
//! (links are taken in a seeded random order and greedily given the first
//! slot no link within interference range of either end already holds).
//! Radios sleep outside the slots of their links, waking a guard time before
//! sending. In its slot, a link's sender transmits its oldest frame for that
//! neighbour, with a link ACK; a frame is retried in the link's later slots
//! up to its attempt limit (`TxOpts::link_attempts`, else the retry limit).
//! Per-link estimates of the available rate (unused slots) and of the loss
//! rate are exposed through `Net::link`.

use joulenet_proto::{Duration, NodeId, RadioMode};
use rand::seq::SliceRandom;

use super::csma::Medium;
use super::MediumEvent;
use crate::core::Core;
use crate::event::Event;
use crate::rng::Streams;

/// Largest network packet a slot is sized for.
pub const SLOT_BYTES: usize = 1500;

pub struct Tdma {
    pub slot: Duration,
    pub guard: Duration,
    pub links: Vec<(NodeId, NodeId)>,
    pub frame_len: u32,
    pub by_slot: Vec<Vec<usize>>,
    /// Per link: slots that passed, and slots that carried a frame.
    pub offered: Vec<u64>,
    pub used: Vec<u64>,
}

impl Tdma {
    pub fn link_index(&self, a: NodeId, b: NodeId) -> Option<usize> {
        self.links.iter().position(|&l| l == (a, b))
    }

    /// Capacity of one link (one slot per frame) in bit/s.
    pub fn capacity_bps(&self) -> f64 {
        (SLOT_BYTES * 8) as f64 / (self.slot.as_secs_f64() * self.frame_len as f64)
    }

    pub fn available_bps(&self, link: usize) -> f64 {
        let idle = if self.offered[link] == 0 {
            1.0
        } else {
            1.0 - self.used[link] as f64 / self.offered[link] as f64
        };
        self.capacity_bps() * idle
    }
}

impl Medium {
    /// Build the schedule, put every radio to sleep and start the frame.
    pub(crate) fn start_tdma(&mut self, core: &mut Core, streams: &Streams) {
        let n = self.nodes();
        let mut links: Vec<(NodeId, NodeId)> = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if a != b && self.per_of(a, b) < 1.0 && self.per_of(b, a) < 1.0 {
                    links.push((a as NodeId, b as NodeId));
                }
            }
        }
        links.shuffle(&mut streams.stream("medium/tdma/schedule"));
        let intf = self.spec.interference_range;
        let near =
            |x: NodeId, y: NodeId| x == y || self.spec.distance(x as usize, y as usize) <= intf;
        let conflict = |l: (NodeId, NodeId), m: (NodeId, NodeId)| {
            near(l.0, m.0) || near(l.0, m.1) || near(l.1, m.0) || near(l.1, m.1)
        };
        let mut slot_of = vec![0u32; links.len()];
        let mut frame_len = 1;
        for i in 0..links.len() {
            let mut s = 0;
            while (0..i).any(|j| slot_of[j] == s && conflict(links[i], links[j])) {
                s += 1;
            }
            slot_of[i] = s;
            frame_len = frame_len.max(s + 1);
        }
        let mut by_slot = vec![Vec::new(); frame_len as usize];
        for (i, &s) in slot_of.iter().enumerate() {
            by_slot[s as usize].push(i);
        }
        let phy = &self.spec.phy;
        let guard = self.spec.radio.sleep_to_idle + Duration::from_micros(10);
        let slot = guard
            + phy.data_airtime(SLOT_BYTES)
            + phy.sifs
            + phy.ack_airtime()
            + phy.slot
            + Duration::from_micros(10);
        let k = links.len();
        self.tdma = Some(Tdma {
            slot,
            guard,
            links,
            frame_len,
            by_slot,
            offered: vec![0; k],
            used: vec![0; k],
        });
        for s in 0..n {
            core.radios[self.radio_of(s)].set_mode(core.now, RadioMode::Sleep);
        }
        core.queue.push(
            core.now,
            Event::Medium(MediumEvent::Slot { index: 0, phase: 0 }),
        );
    }

    pub(super) fn slot_event(&mut self, core: &mut Core, index: u32, phase: u8) {
        let Some(t) = self.tdma.as_ref() else {
            return;
        };
        let now = core.now;
        let s = (index % t.frame_len) as usize;
        let links: Vec<(usize, (NodeId, NodeId))> =
            t.by_slot[s].iter().map(|&i| (i, t.links[i])).collect();
        let (slot, guard) = (t.slot, t.guard);
        match phase {
            0 => {
                for &(_, (a, b)) in &links {
                    for x in [a, b] {
                        if self.up[x as usize] && core.nodes[x as usize].alive() {
                            core.radios[self.radio_of(x as usize)].set_mode(now, RadioMode::Awake);
                        }
                    }
                }
                core.queue.push(
                    now + guard,
                    Event::Medium(MediumEvent::Slot { index, phase: 1 }),
                );
            }
            1 => {
                for &(i, (a, b)) in &links {
                    if let Some(t) = self.tdma.as_mut() {
                        t.offered[i] += 1;
                    }
                    if self.tdma_send(core, a as usize, b) {
                        if let Some(t) = self.tdma.as_mut() {
                            t.used[i] += 1;
                        }
                    }
                }
                let end = now - guard + slot;
                core.queue
                    .push(end, Event::Medium(MediumEvent::Slot { index, phase: 2 }));
            }
            _ => {
                for &(_, (a, b)) in &links {
                    for x in [a, b] {
                        if self.up[x as usize] {
                            core.radios[self.radio_of(x as usize)].set_mode(now, RadioMode::Sleep);
                        }
                    }
                }
                core.queue.push(
                    now,
                    Event::Medium(MediumEvent::Slot {
                        index: index.wrapping_add(1),
                        phase: 0,
                    }),
                );
            }
        }
    }
}
