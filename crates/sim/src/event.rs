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
        let time = Time(t);
        assert!(time >= self.last_popped, "time ran backwards");
        self.last_popped = time;
        self.popped += 1;
        Some((time, event))
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
}
