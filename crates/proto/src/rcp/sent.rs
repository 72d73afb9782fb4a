//! The sender's record of which stream bytes it has ever sent, so that a
//! first sending counts as data and a repeat as a retransmission even when
//! pulls arrive out of order (R²CP's rank scheduling asks one sender for
//! segments above ones another sender serves). Bytes below SEG.DEQ are
//! forgotten: the receiver holds them and never asks again, so the record
//! stays within the send buffer.

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub(crate) struct SentRanges {
    /// Start -> end of disjoint, non-adjacent ranges sent.
    ranges: BTreeMap<u64, u64>,
}

impl SentRanges {
    /// Record `[s, e)` as sent; returns how many of its bytes were new.
    pub fn insert(&mut self, s: u64, e: u64) -> u64 {
        let (mut lo, mut hi) = (s, e);
        let mut covered = 0;
        // Every range touching [s, e) merges into it.
        let touching: Vec<(u64, u64)> = self
            .ranges
            .range(..=e)
            .rev()
            .take_while(|&(_, &re)| re >= s)
            .map(|(&rs, &re)| (rs, re))
            .collect();
        for (rs, re) in touching {
            covered += re.min(e).saturating_sub(rs.max(s));
            lo = lo.min(rs);
            hi = hi.max(re);
            self.ranges.remove(&rs);
        }
        self.ranges.insert(lo, hi);
        (e - s) - covered
    }

    /// Forget everything below `upto` (SEG.DEQ).
    pub fn forget_below(&mut self, upto: u64) {
        while let Some((&s, &e)) = self.ranges.iter().next() {
            if s >= upto {
                break;
            }
            self.ranges.remove(&s);
            if e > upto {
                self.ranges.insert(upto, e);
                break;
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.ranges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_first_sendings_are_new_and_repeats_are_not() {
        let mut r = SentRanges::default();
        assert_eq!(r.insert(2000, 3000), 1000);
        assert_eq!(r.insert(0, 1000), 1000, "below the highest sent, yet new");
        assert_eq!(r.insert(0, 1000), 0);
        assert_eq!(r.insert(500, 2500), 1000, "only the gap is new");
        assert_eq!(r.len(), 1);
        assert_eq!(r.insert(4000, 5000), 1000);
        r.forget_below(4500);
        assert_eq!(r.len(), 1);
        assert_eq!(r.insert(4500, 5000), 0);
        assert_eq!(r.insert(5000, 6000), 1000);
        assert_eq!(r.len(), 1, "adjacent ranges merge");
    }
}
