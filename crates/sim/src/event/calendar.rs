//! A calendar queue that pops in exactly a binary heap's order: by
//! (time, insertion sequence).
//!
//! Why not one heap: at a thousand flows the queue holds ~3,000 events,
//! two thirds of them TCP retransmission timers a second or more ahead
//! that almost never fire, and every pop of the medium's microsecond-scale
//! events sifted through all of them (22% of the CPU, issue 18). Here only
//! the events of the current time slot live in a heap (`near`, tens of
//! entries); later ones wait unsorted in a wheel of slots (`SLOTS` slots of
//! `2^SLOT_SHIFT` ns), and those beyond the wheel's span in `far`, which is
//! sorted into the wheel once per turn. A push is a `Vec` push; each event
//! enters the small heap once, when its slot opens.
//!
//! Invariants (`h` = `horizon`, the first slot not yet opened):
//! * `near` holds only events in slots `< h`;
//! * the wheel holds only events in slots `[h, h + SLOTS)`, slot `a` at
//!   index `a % SLOTS` (so one index never holds two slots' events);
//! * `far` holds only events in slots `>= refill_at`, and `h <= refill_at`.
//!
//! So while `near` is not empty its least key is the least of all, and the
//! order is the heap's exactly: keys are unique and never compared across
//! structures except through `near`.
//!
//! An item can be taken back before it is due ([`Calendar::cancel`]): from
//! its slot or `far` at once (neither is ordered), or, if its slot is
//! already open, by noting its key so that `pop` skips it.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A slot is 2^16 ns = 65.5 µs: a few 802.11 backoff slots, so the
/// current slot holds only the medium's events of the moment.
const SLOT_SHIFT: u32 = 16;
/// 4,096 slots span 268 ms: the medium's and links' events, not the
/// retransmission timers (a second by default), which wait in `far`.
const SLOTS: usize = 1 << 12;
const WORDS: usize = SLOTS / 64;

/// A queued item. `key` is (time << 64 | insertion sequence), so one
/// integer comparison orders by time and breaks ties by insertion.
#[derive(Copy, Clone, Debug)]
struct Entry<T> {
    key: u128,
    item: T,
}

impl<T> Entry<T> {
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }

    fn slot(&self) -> u64 {
        self.time() >> SLOT_SHIFT
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

#[derive(Debug)]
pub struct Calendar<T> {
    near: BinaryHeap<Entry<T>>,
    wheel: Vec<Vec<Entry<T>>>,
    /// One bit per wheel index: set while that slot holds events.
    occupied: [u64; WORDS],
    in_wheel: usize,
    far: Vec<Entry<T>>,
    /// Cancelled keys still in `near`, skipped when popped (a few at most).
    cancelled: Vec<u128>,
    /// Emptied slots' storage, reused by the next slot to fill: the wheel
    /// holds about as much memory as the most events queued at once, not
    /// as every slot's busiest moment.
    spare: Vec<Vec<Entry<T>>>,
    horizon: u64,
    refill_at: u64,
    next_seq: u64,
}

impl<T> Default for Calendar<T> {
    fn default() -> Self {
        Calendar {
            near: BinaryHeap::new(),
            wheel: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            in_wheel: 0,
            far: Vec::new(),
            cancelled: Vec::new(),
            spare: Vec::new(),
            horizon: 0,
            refill_at: SLOTS as u64,
            next_seq: 0,
        }
    }
}

impl<T> Calendar<T> {
    /// Queue `item` at `time` (ns), after every item already queued at
    /// the same time. The key names it for [`Calendar::cancel`].
    pub fn push(&mut self, time: u64, item: T) -> u128 {
        let key = self.reserve(time);
        self.push_at(key, item);
        key
    }

    /// A key for an item to be queued later with [`Calendar::push_at`]
    /// (or never): ordered as if pushed now.
    pub fn reserve(&mut self, time: u64) -> u128 {
        let key = (time as u128) << 64 | self.next_seq as u128;
        self.next_seq += 1;
        key
    }

    /// Queue `item` under a key from [`Calendar::reserve`]. Its slot may
    /// already be open (it then goes to `near`): the order stays the keys'.
    pub fn push_at(&mut self, key: u128, item: T) {
        self.place(Entry { key, item });
    }

    /// The least key queued, opening the next slot if `near` is empty and
    /// dropping cancelled items from its top.
    pub fn least_key(&mut self) -> Option<u128> {
        loop {
            if self.near.is_empty() {
                self.open_next(false);
            }
            let key = self.near.peek()?.key;
            match self.cancelled.iter().position(|&k| k == key) {
                Some(at) => {
                    self.cancelled.swap_remove(at);
                    self.near.pop();
                }
                None => return Some(key),
            }
        }
    }

    /// Take back the item pushed with `key`, which must still be queued
    /// (not popped, not cancelled).
    pub fn cancel(&mut self, key: u128) {
        let slot = (key >> 64) as u64 >> SLOT_SHIFT;
        if slot < self.horizon {
            self.cancelled.push(key);
            return;
        }
        // In its wheel slot, unless it was pushed beyond the wheel's span
        // and still waits in `far`.
        if slot < self.horizon + SLOTS as u64 {
            let i = slot as usize % SLOTS;
            let events = &mut self.wheel[i];
            if let Some(at) = events.iter().position(|e| e.key == key) {
                events.swap_remove(at);
                self.in_wheel -= 1;
                if events.is_empty() {
                    self.occupied[i / 64] &= !(1 << (i % 64));
                    let emptied = std::mem::take(events);
                    self.spare.push(emptied);
                }
                return;
            }
        }
        match self.far.iter().position(|e| e.key == key) {
            Some(at) => {
                self.far.swap_remove(at);
            }
            None => debug_assert!(false, "cancelled an item not queued"),
        }
    }

    fn place(&mut self, entry: Entry<T>) {
        let slot = entry.slot();
        if slot < self.horizon {
            self.near.push(entry);
        } else if slot < self.horizon + SLOTS as u64 {
            let i = slot as usize % SLOTS;
            let bit = 1 << (i % 64);
            if self.occupied[i / 64] & bit == 0 {
                self.occupied[i / 64] |= bit;
                if let Some(v) = self.spare.pop() {
                    self.wheel[i] = v;
                }
            }
            self.wheel[i].push(entry);
            self.in_wheel += 1;
        } else {
            self.far.push(entry);
        }
    }

    /// The earliest item and its time; ties in insertion order.
    pub fn pop(&mut self) -> Option<(u64, T)> {
        loop {
            if self.near.is_empty() {
                if let Some(e) = self.open_next(true) {
                    return Some((e.time(), e.item));
                }
            }
            let e = self.near.pop()?;
            if let Some(at) = self.cancelled.iter().position(|&k| k == e.key) {
                self.cancelled.swap_remove(at);
                continue;
            }
            return Some((e.time(), e.item));
        }
    }

    pub fn len(&self) -> usize {
        self.near.len() - self.cancelled.len() + self.in_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `near` is empty: move the earliest non-empty slot into it. With
    /// `take_lone`, a slot holding a single item hands it back instead:
    /// it is the least of all, and on a sparse queue (a link's frames are
    /// tens of slots apart) most slots hold one, which then skips the
    /// heap's push and pop. It cannot have been cancelled: `cancelled`
    /// names only items of slots already opened.
    fn open_next(&mut self, take_lone: bool) -> Option<Entry<T>> {
        loop {
            if self.in_wheel == 0 {
                let first = self.far.iter().map(Entry::slot).min()?;
                self.horizon = first;
                self.refill();
                continue;
            }
            let slot = self.next_occupied();
            if slot >= self.refill_at {
                // `far` may hold events of slots before `slot`.
                self.horizon = self.refill_at;
                self.refill();
                continue;
            }
            let i = slot as usize % SLOTS;
            self.occupied[i / 64] &= !(1 << (i % 64));
            let mut events = std::mem::take(&mut self.wheel[i]);
            self.in_wheel -= events.len();
            self.horizon = slot + 1;
            let lone = match take_lone && events.len() == 1 {
                true => events.pop(),
                false => {
                    self.near.extend(events.drain(..));
                    None
                }
            };
            self.spare.push(events);
            return lone;
        }
    }

    /// The first occupied slot at or after `horizon` (the wheel is not
    /// empty): a cyclic scan of the bitmap from `horizon`'s index.
    fn next_occupied(&self) -> u64 {
        let start = self.horizon as usize % SLOTS;
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        if first != 0 {
            return self.horizon + (first.trailing_zeros() as usize - b0) as u64;
        }
        for k in 1..=WORDS {
            let w = (w0 + k) % WORDS;
            let bits = match k {
                WORDS => self.occupied[w] & !(!0u64 << b0),
                _ => self.occupied[w],
            };
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (i + SLOTS - start) % SLOTS;
                return self.horizon + ahead as u64;
            }
        }
        unreachable!("next_occupied called on an empty wheel")
    }

    /// Move `far`'s events that now fall within the wheel's span into it.
    fn refill(&mut self) {
        self.refill_at = self.horizon + SLOTS as u64;
        let far = std::mem::take(&mut self.far);
        let mut keep = Vec::with_capacity(far.len());
        for e in far {
            if e.slot() < self.refill_at {
                self.place(e);
            } else {
                keep.push(e);
            }
        }
        self.far = keep;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;

    /// The queue this replaced: one heap of (time, sequence), whose
    /// cancelled items were popped and ignored (stale) by their handler.
    #[derive(Default)]
    struct Reference {
        heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
        stale: std::collections::HashSet<u32>,
        seq: u64,
    }

    impl Reference {
        fn push(&mut self, t: u64, item: u32) {
            self.heap.push(Reverse((t, self.seq, item)));
            self.seq += 1;
        }
        fn pop(&mut self) -> Option<(u64, u32)> {
            loop {
                let (t, x) = self.heap.pop().map(|Reverse((t, _, x))| (t, x))?;
                if !self.stale.remove(&x) {
                    return Some((t, x));
                }
            }
        }
        fn len(&self) -> usize {
            self.heap.len() - self.stale.len()
        }
        fn reserve(&mut self) -> u64 {
            self.seq += 1;
            self.seq - 1
        }
        fn push_at(&mut self, t: u64, seq: u64, item: u32) {
            self.heap.push(Reverse((t, seq, item)));
        }
        /// The least (time, sequence) not cancelled.
        fn least(&mut self) -> Option<(u64, u64)> {
            loop {
                let Reverse((t, seq, x)) = *self.heap.peek()?;
                if !self.stale.remove(&x) {
                    return Some((t, seq));
                }
                self.heap.pop();
            }
        }
    }

    const SLOT: u64 = 1 << SLOT_SHIFT;
    const SPAN: u64 = SLOT * SLOTS as u64;

    /// How far ahead of now an event is pushed: the same instant, within
    /// the slot, within the wheel, at its edges, beyond it, far beyond.
    fn ahead() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0),
            0..SLOT,
            0..SPAN,
            (SPAN - 2 * SLOT)..(SPAN + 2 * SLOT),
            SPAN..(20 * SPAN),
            Just(SLOT * 4 - 1),
            Just(SLOT * 4),
        ]
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(u64),
        Pop,
        /// Cancel one of the queued items, chosen by this index.
        Cancel(usize),
        /// Reserve a place this far ahead, for an item pushed later.
        Reserve(u64),
        /// Push one of the reserved items, chosen by this index.
        PushReserved(usize),
        /// Ask for the least key without popping.
        Peek,
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![
                3 => ahead().prop_map(Op::Push),
                2 => Just(Op::Pop),
                1 => any::<usize>().prop_map(Op::Cancel),
                1 => ahead().prop_map(Op::Reserve),
                1 => any::<usize>().prop_map(Op::PushReserved),
                1 => Just(Op::Peek),
            ],
            0..600,
        )
    }

    proptest! {
        #[test]
        fn pops_in_exactly_the_heaps_order(ops in ops()) {
            let (mut cal, mut reference) = (Calendar::default(), Reference::default());
            // Items queued and not cancelled, with their keys.
            let mut queued: Vec<(u32, u128)> = Vec::new();
            // Places reserved and not yet pushed: (item, key, time, sequence).
            let mut reserved: Vec<(u32, u128, u64, u64)> = Vec::new();
            let mut now = 0;
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Push(d) => {
                        let key = cal.push(now + d, n as u32);
                        reference.push(now + d, n as u32);
                        queued.push((n as u32, key));
                    }
                    Op::Pop => {
                        let got = cal.pop();
                        prop_assert_eq!(got, reference.pop());
                        if let Some((t, x)) = got {
                            now = t;
                            queued.retain(|q| q.0 != x);
                        }
                    }
                    Op::Cancel(i) if !queued.is_empty() => {
                        let (x, key) = queued.swap_remove(i % queued.len());
                        cal.cancel(key);
                        reference.stale.insert(x);
                    }
                    Op::Cancel(_) => {}
                    Op::Reserve(d) => {
                        let key = cal.reserve(now + d);
                        let seq = reference.reserve();
                        prop_assert_eq!(key, ((now + d) as u128) << 64 | seq as u128);
                        reserved.push((n as u32, key, now + d, seq));
                    }
                    Op::PushReserved(i) if !reserved.is_empty() => {
                        let (x, key, t, seq) = reserved.swap_remove(i % reserved.len());
                        cal.push_at(key, x);
                        reference.push_at(t, seq, x);
                        queued.push((x, key));
                    }
                    Op::PushReserved(_) => {}
                    Op::Peek => {
                        let want = reference
                            .least()
                            .map(|(t, seq)| (t as u128) << 64 | seq as u128);
                        prop_assert_eq!(cal.least_key(), want);
                    }
                }
                prop_assert_eq!(cal.len(), reference.len());
            }
            prop_assert_eq!(cal.len(), queued.len());
            while let Some(want) = reference.pop() {
                prop_assert_eq!(cal.pop(), Some(want));
            }
            prop_assert_eq!(cal.pop(), None);
            prop_assert!(cal.is_empty());
        }
    }

    #[test]
    fn ties_keep_insertion_order_across_slots_and_far() {
        let mut cal = Calendar::default();
        let far = 3 * SPAN + 5;
        cal.push(far, 0);
        cal.push(7, 1);
        cal.push(far, 2);
        cal.push(7, 3);
        cal.push(SLOT, 4);
        assert_eq!(cal.pop(), Some((7, 1)));
        cal.push(far, 5);
        cal.push(7, 6);
        let rest: Vec<_> = std::iter::from_fn(|| cal.pop()).collect();
        assert_eq!(
            rest,
            vec![(7, 3), (7, 6), (SLOT, 4), (far, 0), (far, 2), (far, 5)]
        );
    }
}
