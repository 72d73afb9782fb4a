//! The host's late wakes, as the sender's pacer sees them, and the
//! allowance the sender makes for them (ours, issue 18).
//!
//! A host's event loop does not always run when its pacing timer is due:
//! on a loaded machine the process waits for a core, for tens of
//! milliseconds at times (41 wakes over 10 ms late in 10 s at load 11 on 2
//! cores). A sender paced at the link's rate with no queue at the
//! bottleneck leaves the link idle for every such stall. So the sender
//! measures how late its pacer wakes — the largest lateness over the last
//! one to two `window`s, at most `max` — and allows for it twice:
//!
//! - its pacer is a token bucket of that depth: after a late wake it may
//!   send at once what it should have sent meanwhile, so a stall costs the
//!   link nothing if the bottleneck's queue held enough to cover it;
//! - that burst leaves a standing queue of about one allowance at the
//!   bottleneck (pacing at the bottleneck's rate keeps it), which covers
//!   the next stall: the bottleneck's queue, not the host's scheduler,
//!   absorbs the jitter. The in-flight cap and the probe timeout grow by
//!   the allowance so as to let it stand.
//!
//! The simulator's timers are never late, so there the allowance is 0 and
//! nothing changes.

use crate::time::{Duration, Time};

#[derive(Clone, Debug)]
pub struct LateWakes {
    window: Duration,
    max: Duration,
    window_start: Time,
    /// Largest lateness in the current window and in the one before.
    current: Duration,
    previous: Duration,
}

impl LateWakes {
    pub fn new(window: Duration, max: Duration) -> LateWakes {
        LateWakes {
            window,
            max,
            window_start: Time::ZERO,
            current: Duration::ZERO,
            previous: Duration::ZERO,
        }
    }

    /// A wake `late` after its deadline, at `now`.
    pub fn record(&mut self, now: Time, late: Duration) {
        self.roll(now);
        self.current = self.current.max(late);
    }

    fn roll(&mut self, now: Time) {
        let since = now.saturating_since(self.window_start);
        if since < self.window {
            return;
        }
        // A window with no wakes recorded forgets the one before it too.
        self.previous = if since < Duration(2 * self.window.0) {
            self.current
        } else {
            Duration::ZERO
        };
        self.current = Duration::ZERO;
        self.window_start = now;
    }

    /// How late the host's wakes have lately been, at most `max`: the
    /// pacer's bucket depth and the standing queue allowed at the
    /// bottleneck.
    pub fn allowance(&self, now: Time) -> Duration {
        let since = now.saturating_since(self.window_start);
        let seen = if since >= Duration(2 * self.window.0) {
            Duration::ZERO
        } else if since >= self.window {
            self.current
        } else {
            self.current.max(self.previous)
        };
        seen.min(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Duration {
        Duration::from_millis(m)
    }
    fn at(m: u64) -> Time {
        Time::ZERO + ms(m)
    }

    #[test]
    fn the_allowance_is_the_largest_recent_lateness_bounded() {
        let mut w = LateWakes::new(ms(1000), ms(50));
        assert_eq!(w.allowance(at(0)), Duration::ZERO);
        w.record(at(10), ms(3));
        w.record(at(20), ms(12));
        w.record(at(30), ms(1));
        assert_eq!(w.allowance(at(40)), ms(12));
        // Bounded by max.
        w.record(at(50), ms(80));
        assert_eq!(w.allowance(at(60)), ms(50));
    }

    #[test]
    fn a_late_wake_is_remembered_for_one_to_two_windows() {
        let mut w = LateWakes::new(ms(1000), ms(50));
        w.record(at(500), ms(20));
        // The next window still holds it ...
        w.record(at(1200), ms(2));
        assert_eq!(w.allowance(at(1900)), ms(20));
        // ... the one after does not.
        w.record(at(2300), ms(2));
        assert_eq!(w.allowance(at(2400)), ms(2));
        // Long quiet: nothing recorded for two windows forgets everything.
        assert_eq!(w.allowance(at(5000)), Duration::ZERO);
        w.record(at(5000), ms(1));
        assert_eq!(w.allowance(at(5001)), ms(1));
    }
}
