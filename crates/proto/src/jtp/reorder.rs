//! A destination's sequence state over JTP-format packets (JTP's and the
//! ATP-like baseline's): packets above a hole wait until it fills, or, for
//! a loss-tolerant JTP destination, until it is given up on.

use std::collections::BTreeMap;

/// Packets beyond the cumulative ACK the destination accepts; a sequence
/// number further ahead is not from a source it granted a rate to (and
/// would make a tolerant receiver walk billions of holes). Ours.
pub const MAX_AHEAD: u32 = 1 << 16;

#[derive(Debug, Default)]
pub struct Reorder {
    /// The next packet to deliver: the cumulative ACK.
    next: u32,
    /// Packets above a hole, waiting.
    waiting: BTreeMap<u32, Vec<u8>>,
    highest: Option<u32>,
}

impl Reorder {
    pub fn next(&self) -> u32 {
        self.next
    }

    pub fn highest(&self) -> Option<u32> {
        self.highest
    }

    /// Too far beyond the cumulative ACK to be accepted ([`MAX_AHEAD`]).
    pub fn too_far(&self, seq: u32) -> bool {
        seq >= self.next.saturating_add(MAX_AHEAD)
    }

    /// Already delivered, given up on or waiting.
    pub fn is_duplicate(&self, seq: u32) -> bool {
        seq < self.next || self.waiting.contains_key(&seq)
    }

    pub fn insert(&mut self, seq: u32, payload: &[u8]) {
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        self.waiting.insert(seq, payload.to_vec());
    }

    /// The next packet in order, if it has arrived.
    pub fn pop_in_order(&mut self) -> Option<Vec<u8>> {
        let payload = self.waiting.remove(&self.next)?;
        self.next += 1;
        Some(payload)
    }

    /// Gives up on the next packet (a hole a tolerant destination skips).
    pub fn skip(&mut self) {
        self.next += 1;
    }

    /// Up to `room` holes between the cumulative ACK and the highest packet
    /// received: the SNACK.
    pub fn holes(&self, room: usize) -> Vec<u32> {
        let Some(top) = self.highest else {
            return Vec::new();
        };
        (self.next..top)
            .filter(|s| !self.waiting.contains_key(s))
            .take(room)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_in_order_names_holes_and_refuses_far_or_old_packets() {
        let mut r = Reorder::default();
        r.insert(2, b"c");
        r.insert(4, b"e");
        assert_eq!(r.pop_in_order(), None);
        assert_eq!(r.holes(10), [0, 1, 3]);
        assert_eq!(r.holes(2), [0, 1]);
        r.insert(0, b"a");
        assert_eq!(r.pop_in_order().as_deref(), Some(&b"a"[..]));
        r.skip();
        assert_eq!(r.pop_in_order().as_deref(), Some(&b"c"[..]));
        assert_eq!((r.next(), r.highest()), (3, Some(4)));
        assert!(r.is_duplicate(1) && r.is_duplicate(4) && !r.is_duplicate(3));
        assert!(r.too_far(3 + MAX_AHEAD) && !r.too_far(2 + MAX_AHEAD));
    }
}
