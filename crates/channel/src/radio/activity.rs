//! A set of activity intervals (a radio transmitting, or receiving) kept as
//! disjoint, sorted intervals.
//!
//! The energy model only asks whether the radio is transmitting (or
//! receiving) at all, so overlapping or touching intervals are merged on
//! insertion. Intervals nearly always arrive in time order, so insertion
//! scans from the back and is O(1) in practice; `advance` only looks at the
//! front. This replaced a binary heap of edges that cost a logarithmic
//! sift per edge on the simulator's hottest path.

use std::collections::VecDeque;

use joulenet_proto::Time;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ActivitySet {
    /// Disjoint, non-touching intervals [start, end), sorted by start.
    intervals: VecDeque<(Time, Time)>,
}

impl ActivitySet {
    pub(crate) fn insert(&mut self, start: Time, end: Time) {
        if end <= start {
            return;
        }
        let q = &mut self.intervals;
        let mut i = q.len();
        while i > 0 && q[i - 1].0 > start {
            i -= 1;
        }
        let k = if i > 0 && q[i - 1].1 >= start {
            q[i - 1].1 = q[i - 1].1.max(end);
            i - 1
        } else {
            q.insert(i, (start, end));
            i
        };
        while k + 1 < q.len() && q[k + 1].0 <= q[k].1 {
            q[k].1 = q[k].1.max(q[k + 1].1);
            q.remove(k + 1);
        }
    }

    /// The first start or end strictly after `cursor`, if any.
    pub(crate) fn next_edge(&self, cursor: Time) -> Option<Time> {
        let &(start, end) = self.intervals.front()?;
        Some(if start > cursor { start } else { end })
    }

    /// Drop intervals that have ended by `t`.
    pub(crate) fn forget_ended(&mut self, t: Time) {
        while self.intervals.front().is_some_and(|&(_, end)| end <= t) {
            self.intervals.pop_front();
        }
    }

    /// Active at `t`, given that every interval ending by `t` was forgotten.
    pub(crate) fn active_at(&self, t: Time) -> bool {
        self.intervals
            .front()
            .is_some_and(|&(start, end)| start <= t && t < end)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.intervals.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[(u64, u64)]) -> ActivitySet {
        let mut s = ActivitySet::default();
        for &(a, b) in items {
            s.insert(Time(a), Time(b));
        }
        s
    }

    #[test]
    fn overlapping_and_touching_intervals_merge() {
        let s = set(&[(10, 20), (15, 30), (30, 40), (50, 60)]);
        assert_eq!(
            s.intervals,
            VecDeque::from([(Time(10), Time(40)), (Time(50), Time(60))])
        );
    }

    #[test]
    fn out_of_order_insertion_keeps_order_and_bridges_gaps() {
        let s = set(&[(50, 60), (10, 20), (30, 40), (18, 52)]);
        assert_eq!(s.intervals, VecDeque::from([(Time(10), Time(60))]));
        let s = set(&[(50, 60), (10, 20), (30, 40)]);
        assert_eq!(s.len(), 3);
        assert_eq!(s.intervals[1], (Time(30), Time(40)));
    }

    #[test]
    fn edges_and_activity_follow_the_front() {
        let mut s = set(&[(10, 20), (30, 40)]);
        assert_eq!(s.next_edge(Time(0)), Some(Time(10)));
        assert!(!s.active_at(Time(5)));
        assert_eq!(s.next_edge(Time(10)), Some(Time(20)));
        assert!(s.active_at(Time(10)));
        s.forget_ended(Time(20));
        assert!(!s.active_at(Time(20)));
        assert_eq!(s.next_edge(Time(20)), Some(Time(30)));
        s.forget_ended(Time(40));
        assert_eq!(s.next_edge(Time(40)), None);
        let mut e = ActivitySet::default();
        e.insert(Time(5), Time(5));
        assert_eq!(e.len(), 0, "empty intervals are ignored");
    }
}
