//! The simulator's bookkeeping for one agent: address, timers, random
//! stream, application, and connection milestones.

use joulenet_proto::{Addr, Time};
use rand_pcg::Pcg64Mcg;

use crate::app::{Sink, Source};
use crate::event::{AgentIndex, Event, EventQueue};

/// Which end of a flow an agent is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    Client = 0,
    Server = 1,
    /// A relay on an intermediate node (see `crate::relays`): it has no
    /// application of its own.
    Relay = 2,
}

pub struct Endpoint {
    pub index: AgentIndex,
    pub addr: Addr,
    pub flow: u32,
    pub side: Side,
    /// The time of the timer event pending in the queue for this agent
    /// (`NEVER`: none). The agent owns its deadlines; this only keeps one
    /// event in the queue at or before the earliest.
    scheduled: Time,
    pub rng: Pcg64Mcg,
    pub source: Source,
    pub sink: Sink,
    pub established_at: Option<Time>,
    pub closed_at: Option<Time>,
    pub aborted_at: Option<Time>,
    /// The agent reported `is_closed()`.
    pub done: bool,
    /// The application changed state inside a callback (end of stream): the
    /// agent gets `on_app_ready` once the callback returns.
    pub app_ready_pending: bool,
    /// Link-layer hooks this agent asked for (see `crate::link_hooks`).
    pub hooks: crate::link_hooks::LinkHooks,
    /// The flow's access category, stamped on every packet it sends.
    pub access_class: Option<joulenet_proto::AccessClass>,
    /// The relay class stamped on every packet it sends, if its protocol
    /// runs relays.
    pub relay_class: Option<u16>,
}

impl Endpoint {
    pub fn new(
        index: AgentIndex,
        addr: Addr,
        flow: u32,
        side: Side,
        rng: Pcg64Mcg,
        source: Source,
    ) -> Endpoint {
        Endpoint {
            index,
            addr,
            flow,
            side,
            scheduled: Time::NEVER,
            rng,
            source,
            sink: Sink::default(),
            established_at: None,
            closed_at: None,
            aborted_at: None,
            done: false,
            app_ready_pending: false,
            hooks: Default::default(),
            access_class: None,
            relay_class: None,
        }
    }

    /// The agent's earliest deadline after a callback: make sure an event
    /// is queued at or before it. Postponing a deadline (TCP does it on
    /// every ACK) costs no queue operation: the pending event finds the
    /// later deadline when it fires and re-schedules itself.
    pub fn schedule_timer(&mut self, queue: &mut EventQueue, deadline: Option<Time>, now: Time) {
        if let Some(at) = deadline {
            let at = at.max(now);
            if at < self.scheduled {
                self.scheduled = at;
                queue.push(at, Event::Timer(self.index));
            }
        }
    }

    /// A timer event popped at `now`: true if it is the one pending (not
    /// superseded by an earlier one). The agent then handles what is due;
    /// either way the next callback's `schedule_timer` re-arms.
    pub fn timer_event(&mut self, now: Time) -> bool {
        if self.scheduled != now {
            return false;
        }
        self.scheduled = Time::NEVER;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn ep() -> Endpoint {
        Endpoint::new(
            0,
            Addr::new(0, 1),
            0,
            Side::Client,
            Pcg64Mcg::seed_from_u64(1),
            Source::receive_only(),
        )
    }

    #[test]
    fn postponing_a_deadline_pushes_nothing_and_the_event_finds_it_later() {
        let (mut e, mut q) = (ep(), EventQueue::new());
        e.schedule_timer(&mut q, Some(Time(10)), Time(0));
        e.schedule_timer(&mut q, Some(Time(30)), Time(0));
        e.schedule_timer(&mut q, Some(Time(50)), Time(0));
        assert_eq!(q.len(), 1, "postponing pushes nothing");
        let (t, ev) = q.pop().unwrap();
        assert_eq!((t, ev), (Time(10), Event::Timer(0)));
        assert!(e.timer_event(t), "the pending event fires");
        // The agent finds nothing due at 10 and reports 50 again.
        e.schedule_timer(&mut q, Some(Time(50)), t);
        assert_eq!(q.pop(), Some((Time(50), Event::Timer(0))));
    }

    #[test]
    fn an_earlier_deadline_supersedes_the_pending_event() {
        let (mut e, mut q) = (ep(), EventQueue::new());
        e.schedule_timer(&mut q, Some(Time(50)), Time(0));
        e.schedule_timer(&mut q, Some(Time(20)), Time(0));
        let (t, _) = q.pop().unwrap();
        assert_eq!(t, Time(20));
        assert!(e.timer_event(t));
        let (t, _) = q.pop().unwrap();
        assert!(!e.timer_event(t), "the event at 50 was superseded");
    }

    #[test]
    fn no_deadline_no_event_and_a_past_one_fires_now() {
        let (mut e, mut q) = (ep(), EventQueue::new());
        e.schedule_timer(&mut q, None, Time(5));
        assert_eq!(q.len(), 0);
        e.schedule_timer(&mut q, Some(Time(1)), Time(5));
        assert_eq!(q.pop(), Some((Time(5), Event::Timer(0))));
    }
}
