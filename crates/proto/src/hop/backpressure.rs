//! Backpressure (§3.3): a node buffers at most H complete blocks of a flow
//! beyond what it has moved on to the next hop (at the destination: handed
//! to the application), and withholds the BACK for any further block until
//! one moves on. The upstream sender, unanswered, keeps its block and stops,
//! and so on up to the source: no rate control, no end-to-end feedback.
//!
//! Besides the H complete blocks, one block at a time may be arriving, so a
//! flow never holds more than H + 1 blocks at a node.

use std::collections::BTreeMap;

/// One flow's buffer accounting at one node.
#[derive(Clone, Debug)]
pub struct Backpressure {
    /// H; `None`: off (every block admitted, every BSYN answered).
    limit: Option<usize>,
    /// Blocks admitted and not moved on; true once whole here.
    held: BTreeMap<u32, bool>,
    /// Most blocks held at once.
    pub peak: usize,
}

impl Backpressure {
    pub fn new(limit: Option<usize>) -> Backpressure {
        Backpressure {
            limit,
            held: BTreeMap::new(),
            peak: 0,
        }
    }

    /// Blocks held (admitted, not moved on).
    pub fn buffered(&self) -> usize {
        self.held.len()
    }

    pub fn holds(&self, block: u32) -> bool {
        self.held.contains_key(&block)
    }

    /// May frames of `block` be stored here? Admits it if there is room.
    pub fn admit(&mut self, block: u32) -> bool {
        if self.held.contains_key(&block) {
            return true;
        }
        let room = self.limit.is_none_or(|h| self.held.len() < h + 1);
        if room {
            self.held.insert(block, false);
            self.peak = self.peak.max(self.held.len());
        }
        room
    }

    /// May a BSYN for `block` be answered now? A block still arriving is
    /// answered if it is (or can be) admitted; a whole one only while it is
    /// among the first H whole blocks held (older blocks first).
    pub fn may_answer(&mut self, block: u32) -> bool {
        let Some(h) = self.limit else {
            self.admit(block);
            return true;
        };
        match self.held.get(&block) {
            None => self.admit(block),
            Some(false) => true,
            Some(true) => {
                let rank = self.held.range(..block).filter(|(_, c)| **c).count();
                rank < h
            }
        }
    }

    /// What [`Backpressure::may_answer`] would say, without admitting.
    pub fn would_answer(&self, block: u32) -> bool {
        let Some(h) = self.limit else {
            return true;
        };
        match self.held.get(&block) {
            None => self.held.len() < h + 1,
            Some(false) => true,
            Some(true) => self.held.range(..block).filter(|(_, c)| **c).count() < h,
        }
    }

    /// Held here and counted whole ([`Backpressure::complete`]).
    pub fn is_complete(&self, block: u32) -> bool {
        self.held.get(&block).copied().unwrap_or(false)
    }

    /// `block` is whole here.
    pub fn complete(&mut self, block: u32) {
        if let Some(c) = self.held.get_mut(&block) {
            *c = true;
        }
    }

    /// `block` has moved on (whole at the next hop, or delivered): its
    /// room frees. Returns the whole blocks whose BACK may now be sent.
    pub fn moved_on(&mut self, block: u32) -> Vec<u32> {
        let before: Vec<u32> = self.answerable();
        self.held.remove(&block);
        self.answerable()
            .into_iter()
            .filter(|b| !before.contains(b))
            .collect()
    }

    fn answerable(&self) -> Vec<u32> {
        let h = self.limit.unwrap_or(usize::MAX);
        self.held
            .iter()
            .filter(|(_, c)| **c)
            .map(|(b, _)| *b)
            .take(h)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h_complete_blocks_then_backs_are_withheld_until_one_moves_on() {
        let mut bp = Backpressure::new(Some(1));
        assert!(bp.may_answer(0));
        bp.complete(0);
        assert!(bp.may_answer(0), "the first whole block is acknowledged");
        // Block 1 may arrive while block 0 moves on, but not be answered
        // while block 0 is still here.
        assert!(bp.admit(1));
        assert!(!bp.may_answer(2), "no third block");
        assert!(!bp.admit(2));
        assert!(bp.may_answer(1), "block 1 is still arriving");
        bp.complete(1);
        assert!(!bp.may_answer(1), "two whole blocks: BACK withheld");
        assert_eq!(bp.buffered(), 2);
        assert_eq!(bp.moved_on(0), vec![1]);
        assert!(bp.may_answer(1));
        assert!(bp.admit(2));
        assert_eq!(bp.peak, 2);
    }

    #[test]
    fn a_larger_h_holds_more() {
        let mut bp = Backpressure::new(Some(3));
        for b in 0..3 {
            assert!(bp.may_answer(b));
            bp.complete(b);
        }
        assert!(bp.admit(3));
        bp.complete(3);
        assert!(!bp.may_answer(3));
        assert!(!bp.admit(4));
        assert_eq!(bp.moved_on(1), vec![3]);
    }

    #[test]
    fn off_admits_everything() {
        let mut bp = Backpressure::new(None);
        for b in 0..100 {
            assert!(bp.may_answer(b));
            bp.complete(b);
        }
        assert_eq!(bp.buffered(), 100);
    }
}
