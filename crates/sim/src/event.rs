//! The event queue, ordered by (time, insertion sequence): a calendar
//! queue (`event/calendar.rs`) that pops in exactly a binary heap's order.
//!
//! Ties at the same nanosecond are broken by insertion order, so a run is a
//! pure function of (scenario, seed). The queue asserts that time never runs
//! backwards.

use joulenet_proto::Time;

mod calendar;
use calendar::Calendar;

/// Index of an agent in the simulation.
pub type AgentIndex = u32;
/// Index of one direction of a link.
pub type LinkIndex = u32;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The frame being transmitted on a link direction has left the sender
    /// (including its link-layer acknowledgement exchange).
    TransmitDone(LinkIndex),
    /// The oldest frame propagating on a link direction reaches its receiver.
    Arrival(LinkIndex),
    /// A frame sent by a node to itself.
    Loopback,
    /// An agent's earliest timer deadline (it may have moved since).
    Timer(AgentIndex),
    /// A flow's client and server start.
    FlowStart(u32),
    /// An application produces data, or reaches its stop time.
    AppWake(AgentIndex),
    /// Check whether a node's battery is empty.
    BatteryCheck(u32),
    /// Take one sample of every requested time series.
    Sample,
    /// The scenario's hard stop.
    Stop,
    /// An event of the shared wireless medium.
    Medium(crate::medium::MediumEvent),
    /// A frame lost on a wireless hop reaches its destination's link layer
    /// corrupted, and is reported for explicit loss notification.
    Corrupted,
}

/// Names a queued event for [`EventQueue::cancel`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EventKey(u128);

/// A reserved place in the order of events: [`EventQueue::reserve`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    key: u128,
}

impl Slot {
    pub fn time(self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    calendar: Calendar<Event>,
    last_popped: Time,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    /// Schedule `event` at `time`, which must not be in the past.
    pub fn push(&mut self, time: Time, event: Event) {
        self.push_keyed(time, event);
    }

    /// [`Self::push`], returning the key that can take it back.
    pub fn push_keyed(&mut self, time: Time, event: Event) -> EventKey {
        debug_assert!(
            time >= self.last_popped,
            "event scheduled in the past: {time:?} < {:?}",
            self.last_popped
        );
        let time = time.max(self.last_popped);
        EventKey(self.calendar.push(time.0, event))
    }

    /// Take back an event that would do nothing when it came (a backoff
    /// that froze): it is never popped or counted. It must still be queued.
    pub fn cancel(&mut self, key: EventKey) {
        self.calendar.cancel(key.0);
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let (t, event) = self.calendar.pop()?;
        Some((self.advance(Time(t)), event))
    }

    /// Take the place in the order of events that `push(time, …)` would
    /// give now, for an event that may be handled without being queued
    /// (the next frame in flight on a link, `Simulation::arrivals`).
    pub fn reserve(&mut self, time: Time) -> Slot {
        debug_assert!(time >= self.last_popped, "event reserved in the past");
        let time = time.max(self.last_popped);
        Slot {
            key: self.calendar.reserve(time.0),
        }
    }

    /// Queue `event` at its reserved place: it is ordered exactly as if it
    /// had been pushed when the place was reserved.
    pub fn push_reserved(&mut self, slot: Slot, event: Event) {
        self.calendar.push_at(slot.key, event);
    }

    /// True if nothing queued comes before `slot`: it would be popped next.
    /// (Mutable because the calendar may open its next slot to know.)
    pub fn is_next(&mut self, slot: Slot) -> bool {
        self.calendar.least_key().is_none_or(|k| slot.key < k)
    }

    /// Handle the event of `slot` without queueing it (it must be next):
    /// counted and timed as a pop. Returns its time.
    pub fn take(&mut self, slot: Slot) -> Time {
        debug_assert!(self.is_next(slot));
        self.advance(slot.time())
    }

    /// Time moves to the event being handled, which is counted.
    fn advance(&mut self, time: Time) -> Time {
        assert!(time >= self.last_popped, "time ran backwards");
        self.last_popped = time;
        self.popped += 1;
        time
    }

    pub fn len(&self) -> usize {
        self.calendar.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calendar.is_empty()
    }

    /// Events handled so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(Time(5), Event::Sample);
        q.push(Time(1), Event::Stop);
        q.push(Time(5), Event::Arrival(1));
        q.push(Time(5), Event::Arrival(2));
        q.push(Time(3), Event::TransmitDone(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Time(1), Event::Stop),
                (Time(3), Event::TransmitDone(0)),
                (Time(5), Event::Sample),
                (Time(5), Event::Arrival(1)),
                (Time(5), Event::Arrival(2)),
            ]
        );
        assert_eq!(q.popped(), 5);
    }
    /// The pops of a queue where event `b` was pushed at `reserved_at`'s
    /// turn, against one where its place was reserved then and it was
    /// pushed later or taken directly when next.
    #[test]
    fn a_reserved_event_keeps_the_place_it_was_given() {
        let reference = {
            let mut q = EventQueue::new();
            q.push(Time(5), Event::Sample);
            q.push(Time(5), Event::Arrival(9)); // the reserved one
            q.push(Time(5), Event::Arrival(1));
            q.push(Time(2), Event::Stop);
            std::iter::from_fn(|| q.pop()).collect::<Vec<_>>()
        };
        let mut q = EventQueue::new();
        q.push(Time(5), Event::Sample);
        let slot = q.reserve(Time(5));
        q.push(Time(5), Event::Arrival(1));
        q.push(Time(2), Event::Stop);
        assert!(!q.is_next(slot), "earlier events come first");
        q.push_reserved(slot, Event::Arrival(9));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, reference);
        // Taken directly when nothing comes before it, counted as a pop.
        let mut q = EventQueue::new();
        q.push(Time(9), Event::Stop);
        let slot = q.reserve(Time(7));
        q.push(Time(7), Event::Sample); // same instant, pushed later: after it
        assert!(q.is_next(slot));
        assert_eq!(q.take(slot), Time(7));
        assert_eq!(q.popped(), 1);
        assert_eq!(q.pop(), Some((Time(7), Event::Sample)));
        // An event of the same instant pushed before the reservation wins.
        let mut q = EventQueue::new();
        q.push(Time(7), Event::Sample);
        let slot = q.reserve(Time(7));
        assert!(!q.is_next(slot));
    }
}
