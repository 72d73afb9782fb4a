//! The paper's `pending` (§4.3.1): the connection's data bound to no pipe
//! now — the never-requested frontier, ranges below it skipped by rank
//! scheduling, and holes (ranges whose binding was lost: declared lost on
//! their pipe, or their pipe died). Ranges are cut at multiples of the MSS
//! in the stream's offset space, as RCP's requests are, except where a
//! sender's request limit cuts one short (a slow source).

use std::collections::BTreeMap;

/// How far one pipe may ask now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reach {
    /// RCV.NXT plus the receive buffer.
    pub horizon: u64,
    /// The pipe's sender's request limit (SND.LIM as last heard).
    pub limit: u64,
}

impl Reach {
    /// The end of `[s, e)` the pipe may request: all of it, or, when
    /// `partial` and the sender's limit is all there is, the part below
    /// the limit. The receive buffer never cuts a range short (silly
    /// window avoidance, as the RCP receiver).
    fn fit(&self, s: u64, e: u64, partial: bool) -> Option<u64> {
        if e > self.horizon {
            return None;
        }
        if e <= self.limit {
            Some(e)
        } else if partial && s < self.limit {
            Some(self.limit)
        } else {
            None
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Pending {
    mss: u64,
    /// Next byte never bound to any pipe.
    frontier: u64,
    /// End of the stream, once a sender told it.
    end: Option<u64>,
    /// Start -> end of ranges below the frontier never bound.
    skipped: BTreeMap<u64, u64>,
    /// Start -> end of ranges whose binding was lost.
    holes: BTreeMap<u64, u64>,
}

impl Pending {
    pub fn new(mss: u64) -> Pending {
        Pending {
            mss: mss.max(1),
            ..Pending::default()
        }
    }

    pub fn frontier(&self) -> u64 {
        self.frontier
    }

    pub fn end(&self) -> Option<u64> {
        self.end
    }

    /// A sender announced the end of the stream.
    pub fn set_end(&mut self, end: u64) {
        self.end = Some(self.end.map_or(end, |e| e.min(end)));
    }

    /// Anything left to bind.
    pub fn has_any(&self) -> bool {
        !self.holes.is_empty()
            || !self.skipped.is_empty()
            || self.end.is_none_or(|e| self.frontier < e)
    }

    /// The range starting at frontier-side offset `s`: up to the next
    /// multiple of the MSS, or the end of the stream.
    fn range_at(&self, s: u64) -> (u64, u64) {
        let e = (s / self.mss + 1) * self.mss;
        (s, self.end.map_or(e, |end| e.min(end)))
    }

    /// A binding was lost: `[s, e)` waits to be bound again.
    pub fn release(&mut self, s: u64, e: u64) {
        self.holes.insert(s, e);
    }

    /// Data starting at `s` arrived: it is no longer pending.
    pub fn received(&mut self, s: u64) {
        self.holes.remove(&s);
        self.skipped.remove(&s);
    }

    /// The lowest hole, if it fits; holes already `held` are dropped.
    pub fn take_hole(
        &mut self,
        reach: Reach,
        held: impl Fn(u64, u64) -> bool,
    ) -> Option<(u64, u64)> {
        while let Some((&s, &e)) = self.holes.iter().next() {
            if held(s, e) {
                self.holes.remove(&s);
                continue;
            }
            let e = reach.fit(s, e, false)?;
            self.holes.remove(&s);
            return Some((s, e));
        }
        None
    }

    /// Unbound ranges in stream order: the skipped ones (whole), then the
    /// frontier's (which a sender's limit may cut short).
    fn candidates(&self) -> impl Iterator<Item = (u64, u64, bool)> + '_ {
        let frontier = std::iter::successors(Some(self.range_at(self.frontier)), move |&(_, e)| {
            Some(self.range_at(e))
        })
        .take_while(move |&(s, _)| self.end.is_none_or(|end| s < end))
        .map(|(s, e)| (s, e, true));
        self.skipped
            .iter()
            .map(|(&s, &e)| (s, e, false))
            .chain(frontier)
    }

    /// The `rank`-th unbound range (from 0) that fits `reach`, or the last
    /// one that fits; ranges of the frontier passed over are skipped.
    pub fn take_rank(&mut self, rank: usize, reach: Reach) -> Option<(u64, u64)> {
        let mut chosen = None;
        for (i, (s, e, partial)) in self.candidates().enumerate() {
            let Some(fit) = reach.fit(s, e, partial) else {
                break;
            };
            chosen = Some((s, fit));
            // A range the limit cut short is the last there is.
            if i == rank || fit < e {
                break;
            }
        }
        let (s, e) = chosen?;
        self.take(s, e);
        Some((s, e))
    }

    /// Application-level striping: the first unbound range that `owns`
    /// (skipped first, then the frontier), if it fits.
    pub fn take_owned(&mut self, reach: Reach, owns: impl Fn(u64) -> bool) -> Option<(u64, u64)> {
        let (s, e, partial) = match self.skipped.iter().find(|(&s, _)| owns(s)) {
            Some((&s, &e)) => (s, e, false),
            None => {
                let first = std::iter::successors(Some(self.range_at(self.frontier)), |&(_, e)| {
                    Some(self.range_at(e))
                })
                .find(|&(s, _)| owns(s) || self.end.is_some_and(|end| s >= end))?;
                (first.0, first.1, true)
            }
        };
        if self.end.is_some_and(|end| s >= end) {
            return None;
        }
        let e = reach.fit(s, e, partial)?;
        self.take(s, e);
        Some((s, e))
    }

    /// Bind `[s, e)`: out of `skipped`, or off the frontier, whose ranges
    /// passed over become skipped.
    fn take(&mut self, s: u64, e: u64) {
        if s < self.frontier {
            self.skipped.remove(&s);
            return;
        }
        let mut t = self.frontier;
        while t < s {
            let (_, te) = self.range_at(t);
            self.skipped.insert(t, te);
            t = te;
        }
        self.frontier = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const FAR: Reach = Reach {
        horizon: u64::MAX,
        limit: u64::MAX,
    };

    #[test]
    fn rank_counts_past_a_skipped_set_of_exactly_rank_entries() {
        let mut p = Pending::new(MSS);
        // Rank 2 from the frontier skips two ranges.
        assert_eq!(p.take_rank(2, FAR), Some((2000, 3000)));
        // The skipped set now holds exactly two entries: the third unbound
        // range (rank 2) is the frontier's, not the last skipped one.
        assert_eq!(p.take_rank(2, FAR), Some((3000, 4000)));
        assert_eq!(p.take_rank(0, FAR), Some((0, 1000)));
        assert_eq!(p.take_rank(1, FAR), Some((4000, 5000)));
    }

    #[test]
    fn the_last_fitting_range_when_the_rank_is_beyond_reach() {
        let mut p = Pending::new(MSS);
        let reach = Reach {
            horizon: 3000,
            limit: u64::MAX,
        };
        assert_eq!(p.take_rank(5, reach), Some((2000, 3000)));
        assert_eq!(p.take_rank(5, reach), Some((1000, 2000)));
        assert_eq!(p.take_rank(0, reach), Some((0, 1000)));
        assert_eq!(p.take_rank(0, reach), None);
    }

    #[test]
    fn a_slow_senders_limit_cuts_the_frontier_range_short_but_not_the_buffer() {
        let mut p = Pending::new(MSS);
        let reach = Reach {
            horizon: 10_000,
            limit: 1500,
        };
        assert_eq!(p.take_rank(0, reach), Some((0, 1000)));
        assert_eq!(p.take_rank(0, reach), Some((1000, 1500)));
        assert_eq!(p.take_rank(0, reach), None, "nothing beyond the limit");
        let reach = Reach {
            horizon: 10_000,
            limit: 2600,
        };
        // Past the short range, the grid of MSS multiples again.
        assert_eq!(p.take_rank(0, reach), Some((1500, 2000)));
        assert_eq!(p.take_rank(0, reach), Some((2000, 2600)));
        // The receive buffer's edge never cuts a range short.
        let reach = Reach {
            horizon: 3500,
            limit: u64::MAX,
        };
        assert_eq!(p.take_rank(0, reach), Some((2600, 3000)));
        assert_eq!(p.take_rank(0, reach), None);
    }

    #[test]
    fn holes_come_back_whole_and_held_ones_are_dropped() {
        let mut p = Pending::new(MSS);
        p.release(3000, 4000);
        p.release(1000, 1500);
        let reach = Reach {
            horizon: 10_000,
            limit: 1200,
        };
        assert_eq!(p.take_hole(reach, |_, _| false), None, "not cut short");
        assert_eq!(p.take_hole(FAR, |s, _| s == 1000), Some((3000, 4000)));
        assert!(!p.has_any() || p.end().is_none());
    }

    #[test]
    fn striping_takes_owned_ranges_and_skips_the_others() {
        let mut p = Pending::new(MSS);
        p.set_end(6500);
        let odd = |s: u64| (s / MSS) % 2 == 1;
        assert_eq!(p.take_owned(FAR, odd), Some((1000, 2000)));
        assert_eq!(p.take_owned(FAR, odd), Some((3000, 4000)));
        assert_eq!(p.take_owned(FAR, |s| !odd(s)), Some((0, 1000)));
        assert_eq!(p.take_owned(FAR, odd), Some((5000, 6000)));
        assert_eq!(p.take_owned(FAR, odd), None, "the stream ends at 6500");
        assert_eq!(p.take_owned(FAR, |s| !odd(s)), Some((2000, 3000)));
    }
}
