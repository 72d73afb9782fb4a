//! The receiver's record of what it has requested and not yet received:
//! one entry per segment, with the order in which requests were issued.
//!
//! Loss detection follows the paper's §3.3.5: a hole is lost once
//! `dupthresh` segments requested after it have arrived — the same rule for
//! every hole, and for a retransmission request too (no timeout is needed
//! when a retransmission is lost). Requests are numbered as they are issued,
//! so in-order arrivals cost nothing: only holes requested earlier than the
//! arriving segment are visited.

use std::collections::BTreeMap;

use crate::time::{Duration, Time};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub start: u64,
    pub end: u64,
    pub requested_at: Time,
    /// Issue number of the latest request for it.
    pub id: u64,
    /// Requested more than once (no RTT sample from it: Karn).
    pub retransmitted: bool,
    /// Declared lost and waiting to be requested again.
    pub lost: bool,
    /// Arrivals of later requests since this one was issued.
    pub later: u32,
}

impl Segment {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// What one arrival told us.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Arrival {
    /// The segment was outstanding (requested and not yet received).
    pub expected: bool,
    /// Bytes of that segment.
    pub bytes: u64,
    pub rtt: Option<Duration>,
    /// Segments newly declared lost by this arrival, by start.
    pub lost: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
#[allow(dead_code)] // `get`, `contains`, `forget_below` serve multi-path users
pub(crate) struct Requests {
    segs: BTreeMap<u64, Segment>,
    /// Issue number -> segment start, for segments not declared lost.
    by_id: BTreeMap<u64, u64>,
    next_id: u64,
    /// Bytes requested, not received, not declared lost: the "pipe".
    flight: u64,
    lost_bytes: u64,
    dupthresh: u32,
}

#[allow(dead_code)]
impl Requests {
    pub fn new(dupthresh: u32) -> Requests {
        Requests {
            dupthresh: dupthresh.max(1),
            ..Requests::default()
        }
    }

    pub fn flight(&self) -> u64 {
        self.flight
    }
    /// Every byte requested and not received, lost or not.
    pub fn outstanding(&self) -> u64 {
        self.flight + self.lost_bytes
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn contains(&self, start: u64) -> bool {
        self.segs.contains_key(&start)
    }
    pub fn get(&self, start: u64) -> Option<&Segment> {
        self.segs.get(&start)
    }
    /// Start of the lowest tracked segment (lost or not).
    pub fn lowest(&self) -> Option<u64> {
        self.segs.keys().next().copied()
    }
    pub fn has_lost(&self) -> bool {
        self.lost_bytes > 0
    }

    /// Record a first request of `[start, end)`.
    pub fn request(&mut self, start: u64, end: u64, now: Time) {
        let id = self.next_id;
        self.next_id += 1;
        self.segs.insert(
            start,
            Segment {
                start,
                end,
                requested_at: now,
                id,
                retransmitted: false,
                lost: false,
                later: 0,
            },
        );
        self.by_id.insert(id, start);
        self.flight += end - start;
    }

    /// Request a lost segment again; returns it.
    pub fn rerequest(&mut self, start: u64, now: Time) -> Option<Segment> {
        let id = self.next_id;
        let s = self.segs.get_mut(&start)?;
        if !s.lost {
            return None;
        }
        self.next_id += 1;
        s.lost = false;
        s.retransmitted = true;
        s.requested_at = now;
        s.id = id;
        s.later = 0;
        let seg = *s;
        self.lost_bytes -= seg.len();
        self.flight += seg.len();
        self.by_id.insert(id, start);
        Some(seg)
    }

    /// The lowest segment waiting to be requested again.
    pub fn first_lost(&self) -> Option<Segment> {
        if self.lost_bytes == 0 {
            return None;
        }
        self.segs.values().find(|s| s.lost).copied()
    }

    /// Declare a segment lost (ELN, timeout, sleep). Returns whether it was
    /// outstanding and not already lost.
    pub fn mark_lost(&mut self, start: u64) -> bool {
        let Some(s) = self.segs.get_mut(&start) else {
            return false;
        };
        if s.lost {
            return false;
        }
        s.lost = true;
        let (id, len) = (s.id, s.len());
        self.by_id.remove(&id);
        self.flight -= len;
        self.lost_bytes += len;
        true
    }

    /// Declare everything outstanding lost (timeout, waking from sleep).
    pub fn mark_all_lost(&mut self) {
        let starts: Vec<u64> = self.by_id.values().copied().collect();
        for s in starts {
            self.mark_lost(s);
        }
    }

    /// A data segment `[start, end)` arrived.
    pub fn arrive(&mut self, start: u64, end: u64, now: Time) -> Arrival {
        let mut out = Arrival::default();
        let Some(seg) = self.segs.get(&start).copied() else {
            return out;
        };
        if seg.end != end {
            return out;
        }
        self.segs.remove(&start);
        out.expected = true;
        out.bytes = seg.len();
        if seg.lost {
            self.lost_bytes -= seg.len();
        } else {
            self.by_id.remove(&seg.id);
            self.flight -= seg.len();
            if !seg.retransmitted {
                out.rtt = Some(now.saturating_since(seg.requested_at));
            }
        }
        // Holes requested before this one: one more later arrival each.
        let earlier: Vec<u64> = self.by_id.range(..seg.id).map(|(_, &s)| s).collect();
        for s in earlier {
            let hole = self.segs.get_mut(&s).expect("indexed segment exists");
            hole.later += 1;
            if hole.later >= self.dupthresh {
                self.mark_lost(s);
                out.lost.push(s);
            }
        }
        out
    }

    /// Stop tracking one segment (its data is now another pipe's job).
    pub fn remove(&mut self, start: u64) -> Option<Segment> {
        let seg = self.segs.remove(&start)?;
        if seg.lost {
            self.lost_bytes -= seg.len();
        } else {
            self.by_id.remove(&seg.id);
            self.flight -= seg.len();
        }
        Some(seg)
    }

    /// Starts of every tracked segment.
    pub fn starts(&self) -> Vec<u64> {
        self.segs.keys().copied().collect()
    }

    /// Forget segments wholly below `upto` (received through another path).
    pub fn forget_below(&mut self, upto: u64) {
        let starts: Vec<u64> = self.segs.range(..upto).map(|(&s, _)| s).collect();
        for s in starts {
            if let Some(seg) = self.segs.remove(&s) {
                if seg.lost {
                    self.lost_bytes -= seg.len();
                } else {
                    self.by_id.remove(&seg.id);
                    self.flight -= seg.len();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn third_later_arrival_declares_every_hole_lost() {
        let mut r = Requests::new(3);
        for k in 0..8 {
            r.request(k * 10, k * 10 + 10, t(0));
        }
        // Segments 0 and 2 are missing.
        assert!(r.arrive(10, 20, t(5)).lost.is_empty());
        assert!(r.arrive(30, 40, t(5)).lost.is_empty());
        let a = r.arrive(40, 50, t(5));
        assert_eq!(a.lost, vec![0], "hole 0 has seen 1, 3, 4 arrive");
        let a = r.arrive(50, 60, t(5));
        assert_eq!(a.lost, vec![20], "hole 2 has seen 3, 4, 5 arrive");
        assert_eq!(r.flight(), 20);
        assert_eq!(r.outstanding(), 40);
        // A retransmission is judged by the same rule.
        assert_eq!(r.first_lost().map(|s| s.start), Some(0));
        r.rerequest(0, t(6));
        r.rerequest(20, t(6));
        r.request(80, 90, t(6));
        r.request(90, 100, t(6));
        r.request(100, 110, t(6));
        assert!(r.arrive(20, 30, t(9)).lost.is_empty());
        assert!(r.arrive(80, 90, t(9)).lost.is_empty());
        // 60 and 70 never came either: they are holes by the same rule,
        // reported in request order.
        assert_eq!(r.arrive(90, 100, t(9)).lost, vec![60, 70, 0]);
    }

    #[test]
    fn rtt_only_from_first_requests() {
        let mut r = Requests::new(3);
        r.request(0, 10, t(0));
        assert_eq!(r.arrive(0, 10, t(7)).rtt, Some(Duration::from_millis(7)));
        r.request(10, 20, t(7));
        r.mark_lost(10);
        r.rerequest(10, t(8));
        assert_eq!(r.arrive(10, 20, t(20)).rtt, None);
        assert!(r.is_empty());
        assert_eq!((r.flight(), r.outstanding()), (0, 0));
    }
}
