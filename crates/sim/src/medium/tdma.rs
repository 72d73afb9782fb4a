//! A JAVeLEN-like TDMA MAC on the shared medium: pseudo-random,
//! collision-free slot schedules regenerated every frame, in the spirit of
//! the link-activation schedules JAVeLEN builds on (Bao & Garcia-Luna-Aceves).
//!
//! Every directed link in range has a priority per frame, a hash of (the
//! run's seed, the link, the frame number) that every node can compute.
//! Links are taken in priority order and greedily given the first slot that
//! no conflicting link (one with an end within interference range of either
//! of its ends) holds; a frame is as long as that colouring needs, or
//! `tdma_slots` if longer, the extra slots filled greedily by fresh
//! priorities. So each link gets at least one slot per frame, no two
//! conflicting links ever share a slot, and which slot it gets changes from
//! frame to frame. Radios sleep outside the slots of their links, waking a
//! guard time before them. In its slot, a link's sender transmits its
//! oldest frame for that neighbour, with a link ACK; a frame is retried in
//! the link's later slots up to its attempt limit (`TxOpts::link_attempts`,
//! else the retry limit). Per-link estimates of the available rate (unused
//! slots) and of the loss rate are exposed through `Net::link`.

use joulenet_proto::{Duration, LinkInfo, NodeId, RadioMode, Time};

use super::mac::{Cx, LinkCounts, Mac};
use super::station::{Access, Stations};
use super::{MediumEvent, MediumSpec, MediumStats};
use crate::core::Core;
use crate::event::Event;
use crate::frame::Frame;
use crate::rng::{splitmix64, Streams};

/// Largest network packet a slot is sized for.
pub const SLOT_BYTES: usize = 1500;

/// The slot schedule: which links may send in which slot of each frame,
/// and how much of its recent slots each link left unused.
pub struct Schedule {
    pub slot: Duration,
    pub guard: Duration,
    pub links: Vec<(NodeId, NodeId)>,
    /// Per link, the links it may not share a slot with.
    pub conflicts: Vec<Vec<usize>>,
    /// Seed of the schedules.
    base: u64,
    /// Shortest frame (`tdma_slots`).
    min_slots: u32,
    /// The current frame: its number, first slot index, length and links
    /// per slot.
    pub epoch: u64,
    frame_first: u32,
    pub frame_len: u32,
    pub by_slot: Vec<Vec<usize>>,
    /// Per link: slots that passed.
    pub offered: Vec<u64>,
    /// Per link: how it used its recent slots.
    pub recent: Vec<RecentUse>,
    /// Slots that passed in all.
    pub slots_elapsed: u64,
}

/// How a link used its recent slots (EWMAs with gain [`IDLE_GAIN`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RecentUse {
    /// The share of its slots left unused, per slot offered (1 before any).
    pub idle: f64,
    /// The mean network size of the frames it sent in its slots, per frame
    /// ([`SLOT_BYTES`] before any). A slot carries one frame, so this, not
    /// the slot's size, is what a slot of the link carries.
    pub frame_bytes: f64,
}

/// EWMA gain of a link's recent idle share, per slot of the link: the
/// estimate follows about the link's last 1 / IDLE_GAIN = 32 slots, so a
/// link that became saturated reports (almost) no rate left within a few
/// dozen frames, not after as long as it was idle before.
pub const IDLE_GAIN: f64 = 1.0 / 32.0;

/// Priority of link `link` in frame `epoch` (and extra slot `slot`).
fn priority(base: u64, link: (NodeId, NodeId), epoch: u64, slot: u64) -> u64 {
    let key = ((link.0 as u64) << 32) | link.1 as u64;
    splitmix64(base ^ splitmix64(key ^ splitmix64(epoch ^ splitmix64(slot))))
}

/// The schedule of frame `epoch`: links per slot, collision-free.
pub fn frame_schedule(
    links: &[(NodeId, NodeId)],
    conflicts: &[Vec<usize>],
    base: u64,
    epoch: u64,
    min_slots: u32,
) -> Vec<Vec<usize>> {
    let by_priority = |slot: u64| {
        let mut order: Vec<usize> = (0..links.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(priority(base, links[i], epoch, slot)), i));
        order
    };
    let mut slot_of = vec![u32::MAX; links.len()];
    let mut frame: Vec<Vec<usize>> = Vec::new();
    let mut taken = Vec::new();
    for i in by_priority(u64::MAX) {
        taken.clear();
        taken.extend(
            conflicts[i]
                .iter()
                .map(|&j| slot_of[j])
                .filter(|&s| s != u32::MAX),
        );
        taken.sort_unstable();
        let mut s = 0;
        for &t in &taken {
            if t == s {
                s += 1;
            } else if t > s {
                break;
            }
        }
        slot_of[i] = s;
        if frame.len() <= s as usize {
            frame.resize(s as usize + 1, Vec::new());
        }
        frame[s as usize].push(i);
    }
    let colours = frame.len().max(1);
    frame.resize(colours.max(min_slots as usize), Vec::new());
    for (k, slot) in frame.iter_mut().enumerate().skip(colours) {
        for i in by_priority(k as u64) {
            if slot.iter().all(|&j| !conflicts[i].contains(&j)) {
                slot.push(i);
            }
        }
    }
    frame
}

impl Schedule {
    pub fn link_index(&self, a: NodeId, b: NodeId) -> Option<usize> {
        self.links.iter().position(|&l| l == (a, b))
    }

    /// Capacity of one link in bit/s: its share of the slots so far (of
    /// the current frame before any passed) times what one of its slots
    /// carries — one frame of the size it has been sending (a slot sized
    /// for 1500 bytes carrying JTP's 850-byte frames carries 850, and
    /// counting 1500 promised the flows 1.8 times the rate the link served,
    /// which filled its queue: issue 14).
    pub fn capacity_bps(&self, link: usize) -> f64 {
        let share = if self.slots_elapsed == 0 {
            self.by_slot.iter().filter(|s| s.contains(&link)).count() as f64 / self.frame_len as f64
        } else {
            self.offered[link] as f64 / self.slots_elapsed as f64
        };
        share * self.recent[link].frame_bytes * 8.0 / self.slot.as_secs_f64()
    }

    /// The rate a link has left: its capacity times the share of its
    /// recent slots that went unused (what JTP stamps, §2.1.1).
    pub fn available_bps(&self, link: usize) -> f64 {
        self.capacity_bps(link) * self.recent[link].idle
    }

    /// Move to the frame holding slot `index` if it has begun; the local
    /// slot within the frame.
    fn local_slot(&mut self, index: u32) -> usize {
        while index.wrapping_sub(self.frame_first) >= self.frame_len {
            self.frame_first = self.frame_first.wrapping_add(self.frame_len);
            self.epoch += 1;
            self.by_slot = frame_schedule(
                &self.links,
                &self.conflicts,
                self.base,
                self.epoch,
                self.min_slots,
            );
            self.frame_len = self.by_slot.len() as u32;
        }
        index.wrapping_sub(self.frame_first) as usize
    }
}

/// The slotted policy: stations send only in their links' slots, so none
/// of the contention hooks does anything.
pub struct Slots;

impl Access for Slots {
    #[inline]
    fn kick(_: &mut Stations<Slots>, _: &mut Cx<'_>, _: usize, _: usize) {}
    #[inline]
    fn medium_idle(_: &mut Stations<Slots>, _: &mut Core, _: usize) {}
    #[inline]
    fn medium_busy(_: &mut Stations<Slots>, _: &mut Core, _: usize) {}
    /// One frame per slot.
    #[inline]
    fn txop_continues(_: &Stations<Slots>, _: Time, _: usize, _: usize, _: Time) -> bool {
        false
    }
    #[inline]
    fn exchange_over(x: &mut Stations<Slots>, cx: &mut Cx<'_>, s: usize, _: usize) {
        x.update_sense(cx.core, s);
    }
    /// Retried in the link's next slot.
    #[inline]
    fn attempt_failed(_: &mut Stations<Slots>, _: &mut Cx<'_>, _: usize, _: usize, _: bool) {}
}

impl Stations<Slots> {
    /// In the slot of link s→b, send the oldest frame for b (whether a
    /// frame went out).
    /// Sends `s`'s first frame for `b` in this slot; its network size if
    /// one was sent.
    fn slot_send(&mut self, cx: &mut Cx<'_>, s: usize, b: NodeId) -> Option<usize> {
        let st = &mut self.st[s];
        if st.exchange || st.tx_active || !cx.up[s] || !cx.core.nodes[s].alive() {
            return None;
        }
        let q = &mut st.acs[2].queue;
        let i = q.iter().position(|x| x.next == b)?;
        if i > 0 {
            let f = q.remove(i).expect("index from position");
            q.push_front(f);
        }
        let bytes = q.front().map_or(SLOT_BYTES, |f| f.frame.network_len());
        st.txop_start = None;
        self.transmit_head(cx, s, 2, true);
        Some(bytes)
    }
}

/// The TDMA MAC: 802.11-style stations (link ACKs, retries) sending in
/// the slots of a per-frame schedule.
pub struct Tdma {
    x: Stations<Slots>,
    /// Built when the run starts (it needs the run's seed).
    sched: Option<Schedule>,
    /// Shortest frame (`tdma_slots`).
    min_slots: u32,
    /// Radios wake this long before their slots.
    guard: Duration,
}

impl Tdma {
    /// `radios[i]` is node i's radio in the core's ledgers.
    pub fn new(spec: &MediumSpec, radios: &[u32], streams: &Streams) -> Tdma {
        Tdma {
            x: Stations::new(spec, radios, streams),
            sched: None,
            min_slots: spec.tdma_slots,
            guard: spec.radio.sleep_to_idle + Duration::from_micros(10),
        }
    }

    fn slot_event(&mut self, cx: &mut Cx<'_>, index: u32, phase: u8) {
        let Some(t) = self.sched.as_mut() else {
            return;
        };
        let now = cx.core.now;
        let s = t.local_slot(index);
        let links: Vec<(usize, (NodeId, NodeId))> =
            t.by_slot[s].iter().map(|&i| (i, t.links[i])).collect();
        let (slot, guard) = (t.slot, t.guard);
        match phase {
            0 => {
                for &(_, (a, b)) in &links {
                    for x in [a, b] {
                        if cx.up[x as usize] && cx.core.nodes[x as usize].alive() {
                            let r = self.x.radio_of(x as usize);
                            cx.core.radios[r].set_mode(now, RadioMode::Awake);
                        }
                    }
                }
                cx.core.queue.push(
                    now + guard,
                    Event::Medium(MediumEvent::Slot { index, phase: 1 }),
                );
            }
            1 => {
                t.slots_elapsed += 1;
                for &(i, (a, b)) in &links {
                    if let Some(t) = self.sched.as_mut() {
                        t.offered[i] += 1;
                    }
                    let sent = self.x.slot_send(cx, a as usize, b);
                    if let Some(t) = self.sched.as_mut() {
                        let idle = if sent.is_some() { 0.0 } else { 1.0 };
                        let r = &mut t.recent[i];
                        r.idle += IDLE_GAIN * (idle - r.idle);
                        if let Some(bytes) = sent {
                            r.frame_bytes += IDLE_GAIN * (bytes as f64 - r.frame_bytes);
                        }
                    }
                }
                let end = now - guard + slot;
                cx.core
                    .queue
                    .push(end, Event::Medium(MediumEvent::Slot { index, phase: 2 }));
            }
            _ => {
                for &(_, (a, b)) in &links {
                    for x in [a, b] {
                        if cx.up[x as usize] {
                            let r = self.x.radio_of(x as usize);
                            cx.core.radios[r].set_mode(now, RadioMode::Sleep);
                        }
                    }
                }
                cx.core.queue.push(
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

impl Mac for Tdma {
    /// Build the schedule, put every radio to sleep and start the frame.
    fn start(&mut self, cx: &mut Cx<'_>, streams: &Streams) {
        let n = self.x.n;
        let geo = &*cx.geo;
        let mut links: Vec<(NodeId, NodeId)> = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if a != b && geo.per_of(a, b) < 1.0 && geo.per_of(b, a) < 1.0 {
                    links.push((a as NodeId, b as NodeId));
                }
            }
        }
        let intf = geo.spec.interference_range;
        let near = |x: NodeId, y: NodeId| x == y || geo.distance(x as usize, y as usize) <= intf;
        let conflict = |l: (NodeId, NodeId), m: (NodeId, NodeId)| {
            near(l.0, m.0) || near(l.0, m.1) || near(l.1, m.0) || near(l.1, m.1)
        };
        let conflicts: Vec<Vec<usize>> = (0..links.len())
            .map(|i| {
                (0..links.len())
                    .filter(|&j| j != i && conflict(links[i], links[j]))
                    .collect()
            })
            .collect();
        let base = streams.seed("medium/tdma/schedule");
        let min_slots = self.min_slots;
        let by_slot = frame_schedule(&links, &conflicts, base, 0, min_slots);
        let phy = &self.x.phy;
        let guard = self.guard;
        let slot = guard
            + phy.data_airtime(SLOT_BYTES)
            + phy.sifs
            + phy.ack_airtime()
            + phy.slot
            + Duration::from_micros(10);
        let k = links.len();
        self.sched = Some(Schedule {
            slot,
            guard,
            links,
            conflicts,
            base,
            min_slots,
            epoch: 0,
            frame_first: 0,
            frame_len: by_slot.len() as u32,
            by_slot,
            offered: vec![0; k],
            recent: vec![
                RecentUse {
                    idle: 1.0,
                    frame_bytes: SLOT_BYTES as f64,
                };
                k
            ],
            slots_elapsed: 0,
        });
        for s in 0..n {
            let r = self.x.radio_of(s);
            cx.core.radios[r].set_mode(cx.core.now, RadioMode::Sleep);
        }
        cx.core.queue.push(
            cx.core.now,
            Event::Medium(MediumEvent::Slot { index: 0, phase: 0 }),
        );
    }

    /// Queued per link; sent in the link's next slot.
    fn enqueue(&mut self, cx: &mut Cx<'_>, node: NodeId, frame: Frame, next: NodeId, advert: bool) {
        self.x.enqueue(cx, node, frame, next, advert);
    }

    fn handle(&mut self, cx: &mut Cx<'_>, ev: MediumEvent) {
        match ev {
            MediumEvent::Slot { index, phase } => self.slot_event(cx, index, phase),
            ev => self.x.handle(cx, ev),
        }
    }

    fn wake(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        self.x.wake(cx, node);
    }

    fn kill(&mut self, cx: &mut Cx<'_>, node: NodeId) {
        self.x.kill(cx, node);
    }

    /// With the link's available rate: its share of the slots times the
    /// fraction of its recent slots it left unused.
    fn link(&self, node: NodeId, nbr: NodeId, in_range: bool, _now: Time) -> Option<LinkInfo> {
        self.x.link_info(node, nbr, in_range, || {
            let t = self.sched.as_ref()?;
            Some(t.available_bps(t.link_index(node, nbr)?))
        })
    }

    fn link_counts(&self, node: NodeId, nbr: NodeId) -> Option<LinkCounts> {
        self.x.link_counts(node, nbr)
    }

    fn visit_links(&self, f: &mut dyn FnMut(usize, NodeId, LinkCounts)) {
        self.x.visit_links(f);
    }

    fn stats(&self) -> MediumStats {
        self.x.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 6-node chain's directed links; links conflict when any of their
    /// ends are within `reach` hops of each other.
    fn chain(nodes: u32, reach: u32) -> (Vec<(NodeId, NodeId)>, Vec<Vec<usize>>) {
        let mut links = Vec::new();
        for a in 0..nodes - 1 {
            links.push((a, a + 1));
            links.push((a + 1, a));
        }
        let near = |x: NodeId, y: NodeId| x.abs_diff(y) <= reach;
        let conflicts = (0..links.len())
            .map(|i| {
                let l: (NodeId, NodeId) = links[i];
                (0..links.len())
                    .filter(|&j| {
                        let m: (NodeId, NodeId) = links[j];
                        j != i
                            && (near(l.0, m.0)
                                || near(l.0, m.1)
                                || near(l.1, m.0)
                                || near(l.1, m.1))
                    })
                    .collect()
            })
            .collect();
        (links, conflicts)
    }

    #[test]
    fn every_frame_is_collision_free_and_serves_every_link() {
        let (links, conflicts) = chain(7, 2);
        let mut seen_first_slot = std::collections::HashSet::new();
        for epoch in 0..50 {
            for min in [0, 20] {
                let frame = frame_schedule(&links, &conflicts, 99, epoch, min);
                assert!(frame.len() >= min as usize);
                for slot in &frame {
                    for &i in slot {
                        for &j in slot {
                            assert!(!conflicts[i].contains(&j), "{i} and {j} share a slot");
                        }
                    }
                }
                for i in 0..links.len() {
                    assert!(frame.iter().any(|s| s.contains(&i)), "link {i} starves");
                }
                if min == 0 {
                    let first = frame.iter().position(|s| s.contains(&0)).unwrap();
                    seen_first_slot.insert(first);
                }
            }
        }
        // Link 0's slot moves from frame to frame.
        assert!(seen_first_slot.len() > 3, "{seen_first_slot:?}");
    }

    #[test]
    fn schedules_are_a_function_of_seed_and_frame() {
        let (links, conflicts) = chain(7, 2);
        let a = frame_schedule(&links, &conflicts, 1, 5, 0);
        assert_eq!(a, frame_schedule(&links, &conflicts, 1, 5, 0));
        assert_ne!(a, frame_schedule(&links, &conflicts, 1, 6, 0));
        assert_ne!(a, frame_schedule(&links, &conflicts, 2, 5, 0));
        // Extra slots carry more links, never fewer.
        let long = frame_schedule(&links, &conflicts, 1, 5, 30);
        assert_eq!(&long[..a.len()], &a[..]);
        assert!(long[a.len()..].iter().all(|s| !s.is_empty()));
    }
}
