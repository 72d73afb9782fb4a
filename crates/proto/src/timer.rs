//! Timers owned by the agent that arms them.
//!
//! Each agent keeps a [`TimerTable`] of deadlines, indexed by the small
//! integers it chooses ([`TimerId`]); the driver asks the agent for its
//! earliest deadline ([`crate::Agent::poll_timeout`]) after every callback and
//! calls [`crate::Agent::on_timeout`] when the clock reaches it. This is
//! quinn-proto's model: the driver holds no timer state of its own, so an
//! agent may have as many timers as it needs (one per R²CP pipe, one per flow
//! a relay serves) and an agent that wraps others (a split proxy, a relay)
//! composes their deadlines by taking the earliest.

use crate::time::Time;

/// One of an agent's timers; the agent chooses the meaning of each index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId(pub u16);

/// Deadlines by [`TimerId`]: grows to the largest id armed, never shrinks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimerTable {
    at: Vec<Time>,
}

impl TimerTable {
    pub const fn new() -> TimerTable {
        TimerTable { at: Vec::new() }
    }

    /// Arm `id` to expire at `at`, replacing any earlier setting.
    /// `Time::NEVER` disarms.
    pub fn set(&mut self, id: TimerId, at: Time) {
        let i = id.0 as usize;
        if i >= self.at.len() {
            if at.is_never() {
                return;
            }
            self.at.resize(i + 1, Time::NEVER);
        }
        self.at[i] = at;
    }

    /// Disarm `id`; a no-op if it is not armed.
    pub fn cancel(&mut self, id: TimerId) {
        if let Some(slot) = self.at.get_mut(id.0 as usize) {
            *slot = Time::NEVER;
        }
    }

    /// When `id` expires, if it is armed.
    pub fn get(&self, id: TimerId) -> Option<Time> {
        self.at
            .get(id.0 as usize)
            .copied()
            .filter(|t| !t.is_never())
    }

    pub fn is_armed(&self, id: TimerId) -> bool {
        self.get(id).is_some()
    }

    /// The earliest deadline, if any timer is armed.
    pub fn next(&self) -> Option<Time> {
        let t = self.at.iter().copied().min()?;
        (!t.is_never()).then_some(t)
    }

    /// Disarm and return the earliest timer due at or before `now` (the
    /// lowest id among equal deadlines), so that an agent handles expired
    /// timers in deadline order.
    pub fn pop_expired(&mut self, now: Time) -> Option<TimerId> {
        let (i, _) = self
            .at
            .iter()
            .enumerate()
            .filter(|(_, t)| **t <= now && !t.is_never())
            .min_by_key(|(i, t)| (**t, *i))?;
        self.at[i] = Time::NEVER;
        Some(TimerId(i as u16))
    }

    /// Disarm every timer.
    pub fn clear(&mut self) {
        self.at.iter_mut().for_each(|t| *t = Time::NEVER);
    }
}

/// The earliest of several optional deadlines (for agents that wrap others).
pub fn earliest(deadlines: impl IntoIterator<Item = Option<Time>>) -> Option<Time> {
    deadlines.into_iter().flatten().min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_timers_come_out_in_deadline_order_then_by_id() {
        let mut t = TimerTable::new();
        t.set(TimerId(3), Time(30));
        t.set(TimerId(1), Time(10));
        t.set(TimerId(2), Time(10));
        t.set(TimerId(40), Time(50));
        assert_eq!(t.next(), Some(Time(10)));
        assert_eq!(t.pop_expired(Time(30)), Some(TimerId(1)));
        assert_eq!(t.pop_expired(Time(30)), Some(TimerId(2)));
        assert_eq!(t.pop_expired(Time(30)), Some(TimerId(3)));
        assert_eq!(t.pop_expired(Time(30)), None);
        assert_eq!(t.next(), Some(Time(50)));
    }

    #[test]
    fn rearming_replaces_and_cancel_disarms() {
        let mut t = TimerTable::new();
        t.set(TimerId(0), Time(10));
        t.set(TimerId(0), Time(20));
        assert_eq!(t.get(TimerId(0)), Some(Time(20)));
        t.cancel(TimerId(0));
        assert_eq!(t.next(), None);
        t.cancel(TimerId(99));
        t.set(TimerId(500), Time::NEVER);
        assert_eq!(t.next(), None, "arming NEVER is disarming");
    }

    #[test]
    fn no_fixed_limit_on_ids() {
        let mut t = TimerTable::new();
        for i in 0..1000u16 {
            t.set(TimerId(i), Time(1000 - i as u64));
        }
        assert_eq!(t.pop_expired(Time(1)), Some(TimerId(999)));
        assert_eq!(
            earliest([None, Some(Time(5)), Some(Time(3))]),
            Some(Time(3))
        );
    }
}
