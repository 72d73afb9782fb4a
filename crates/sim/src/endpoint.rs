//! The simulator's bookkeeping for one agent: address, timers, random
//! stream, application, and connection milestones.

use joulenet_proto::{Addr, Time, MAX_TIMERS};
use rand_pcg::Pcg64Mcg;

use crate::app::{Sink, Source};
use crate::event::{AgentIndex, Event, EventQueue};

/// Which end of a flow an agent is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    Client = 0,
    Server = 1,
    /// The proxy in the middle of a split flow.
    Relay = 2,
}

pub struct Endpoint {
    pub index: AgentIndex,
    pub addr: Addr,
    pub flow: u32,
    pub side: Side,
    /// When each timer should fire (`NEVER` when disarmed).
    timers: [Time; MAX_TIMERS],
    /// The time of the queue event currently pending for each timer.
    scheduled: [Time; MAX_TIMERS],
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
            timers: [Time::NEVER; MAX_TIMERS],
            scheduled: [Time::NEVER; MAX_TIMERS],
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
        }
    }

    /// Arm a timer. Postponing an armed timer costs no queue operation: the
    /// pending event finds the new time when it fires and re-schedules itself.
    pub fn set_timer(&mut self, queue: &mut EventQueue, key: u8, at: Time) {
        let k = key as usize % MAX_TIMERS;
        self.timers[k] = at;
        if at < self.scheduled[k] {
            self.scheduled[k] = at;
            queue.push(at, Event::Timer(self.index, k as u8));
        }
    }

    pub fn cancel_timer(&mut self, key: u8) {
        self.timers[key as usize % MAX_TIMERS] = Time::NEVER;
    }

    /// A timer event for `key` popped at `now`: true if the timer is due.
    pub fn timer_due(&mut self, queue: &mut EventQueue, key: u8, now: Time) -> bool {
        let k = key as usize;
        if self.scheduled[k] != now {
            return false; // superseded by an earlier event
        }
        self.scheduled[k] = Time::NEVER;
        let at = self.timers[k];
        if at == now {
            self.timers[k] = Time::NEVER;
            return true;
        }
        if !at.is_never() {
            // Postponed (or moved earlier than this event, which cannot be:
            // an earlier time would have been scheduled). Wait for it.
            let at = at.max(now);
            self.scheduled[k] = at;
            queue.push(at, Event::Timer(self.index, key));
        }
        false
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

    fn fire_all(e: &mut Endpoint, q: &mut EventQueue) -> Vec<Time> {
        let mut fired = vec![];
        while let Some((t, ev)) = q.pop() {
            if let Event::Timer(_, k) = ev {
                if e.timer_due(q, k, t) {
                    fired.push(t);
                }
            }
        }
        fired
    }

    #[test]
    fn postponed_timer_fires_once_at_the_new_time() {
        let (mut e, mut q) = (ep(), EventQueue::new());
        e.set_timer(&mut q, 0, Time(10));
        e.set_timer(&mut q, 0, Time(30));
        e.set_timer(&mut q, 0, Time(50));
        assert_eq!(q.len(), 1, "postponing pushes nothing");
        assert_eq!(fire_all(&mut e, &mut q), vec![Time(50)]);
    }

    #[test]
    fn advanced_timer_fires_early_and_stale_event_is_ignored() {
        let (mut e, mut q) = (ep(), EventQueue::new());
        e.set_timer(&mut q, 0, Time(50));
        e.set_timer(&mut q, 0, Time(20));
        assert_eq!(fire_all(&mut e, &mut q), vec![Time(20)]);
    }

    #[test]
    fn cancelled_timer_never_fires() {
        let (mut e, mut q) = (ep(), EventQueue::new());
        e.set_timer(&mut q, 3, Time(50));
        e.cancel_timer(3);
        assert!(fire_all(&mut e, &mut q).is_empty());
    }

    #[test]
    fn rearm_to_the_same_instant_after_firing_fires_again() {
        let (mut e, mut q) = (ep(), EventQueue::new());
        e.set_timer(&mut q, 1, Time(10));
        let (t, ev) = q.pop().unwrap();
        let Event::Timer(_, k) = ev else { panic!() };
        assert!(e.timer_due(&mut q, k, t));
        e.set_timer(&mut q, 1, Time(10));
        assert_eq!(fire_all(&mut e, &mut q), vec![Time(10)]);
    }
}
