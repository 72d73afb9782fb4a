//! Out-of-order data held by the receiver until the hole before it fills,
//! and the SACK blocks (RFC 2018) that describe it.
//!
//! In-order data enters here only when the application has no room for it
//! ([`crate::Net::app_room`], a relay's bounded buffer): otherwise the agent
//! hands it to the application straight from the packet. Pieces are stored without overlap (a duplicate
//! byte is kept once); adjacent pieces form one SACK block.

use std::collections::{BTreeMap, VecDeque};

/// How many recently changed blocks we remember for SACK ordering; more than
/// the 4 an option can carry, so that merged blocks do not empty the list.
const RECENT: usize = 8;

/// How many emptied piece buffers are kept for the next out-of-order
/// segments. A piece is one segment's bytes (~1.5 KB), above the
/// allocator's per-thread cache, so a fresh one cost a `malloc` and a
/// `free` of ~500 instructions together; sixteen cover a window's worth
/// of holes on the benchmark (docs/PERFORMANCE.md) and bound what a
/// receiver keeps after its holes have filled (~24 KB).
const SPARE: usize = 16;

#[derive(Clone, Debug, Default)]
pub(crate) struct Reassembly {
    /// Start offset → bytes; non-overlapping.
    pieces: BTreeMap<u64, Vec<u8>>,
    bytes: usize,
    /// Offsets of the most recently received out-of-order segments, newest
    /// first: RFC 2018 §4 wants the block holding the newest one first.
    recent: VecDeque<u64>,
    /// Emptied piece buffers, reused before allocating (`SPARE`).
    spare: Vec<Vec<u8>>,
}

impl Reassembly {
    pub(crate) fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Stores `data` at `start`, keeping only bytes not already held.
    /// Returns the number of new bytes.
    pub(crate) fn insert(&mut self, start: u64, data: &[u8]) -> usize {
        let end = start + data.len() as u64;
        let mut cursor = start;
        let mut added = 0;
        let overlapping: Vec<(u64, u64)> = self
            .pieces
            .range(..end)
            .rev()
            .take_while(|(&s, v)| s + v.len() as u64 > start)
            .map(|(&s, v)| (s, s + v.len() as u64))
            .collect();
        for (s, e) in overlapping.into_iter().rev() {
            if s > cursor {
                added += self.put(
                    cursor,
                    &data[(cursor - start) as usize..(s - start) as usize],
                );
            }
            cursor = cursor.max(e);
        }
        if cursor < end {
            added += self.put(cursor, &data[(cursor - start) as usize..]);
        }
        self.recent.retain(|&r| r != start);
        self.recent.push_front(start);
        self.recent.truncate(RECENT);
        added
    }

    fn put(&mut self, at: u64, data: &[u8]) -> usize {
        self.bytes += data.len();
        let mut piece = self.spare.pop().unwrap_or_default();
        piece.extend_from_slice(data);
        self.pieces.insert(at, piece);
        data.len()
    }

    /// Keeps a delivered piece's buffer for a later one.
    fn recycle(&mut self, mut piece: Vec<u8>) {
        if self.spare.len() < SPARE {
            piece.clear();
            self.spare.push(piece);
        }
    }

    /// Hands the application what continues the stream at `*rcv_nxt`, as
    /// far as its room allows ([`crate::Net::app_room`]); what does not fit
    /// stays held. Returns the bytes delivered.
    pub(crate) fn deliver_ready(&mut self, rcv_nxt: &mut u64, net: &mut dyn crate::Net) -> u64 {
        let mut room = net.app_room().unwrap_or(usize::MAX);
        let mut delivered = 0;
        while room > 0 {
            let Some(piece) = self.pop_in_order(*rcv_nxt) else {
                break;
            };
            let n = piece.len().min(room);
            net.deliver(&piece[..n]);
            *rcv_nxt += n as u64;
            delivered += n as u64;
            room -= n;
            if n < piece.len() {
                self.insert(*rcv_nxt, &piece[n..]);
            }
            self.recycle(piece);
        }
        delivered
    }

    /// Removes and returns the piece that continues the stream at `rcv_nxt`
    /// (trimmed of bytes before it), discarding pieces wholly before it.
    pub(crate) fn pop_in_order(&mut self, rcv_nxt: u64) -> Option<Vec<u8>> {
        loop {
            let (&start, piece) = self.pieces.iter().next()?;
            if start > rcv_nxt {
                return None;
            }
            let end = start + piece.len() as u64;
            let mut piece = self.pieces.remove(&start)?;
            self.bytes -= piece.len();
            if end > rcv_nxt {
                piece.drain(..(rcv_nxt - start) as usize);
                return Some(piece);
            }
            self.recycle(piece);
        }
    }

    /// Up to `max` SACK blocks `[left, right)` above `rcv_nxt`, the block
    /// with the newest segment first, then other recently changed blocks.
    pub(crate) fn sack_blocks(&mut self, rcv_nxt: u64, max: usize) -> Vec<(u64, u64)> {
        self.recent.retain(|&r| r >= rcv_nxt);
        let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(max);
        for &r in &self.recent {
            if blocks.len() >= max {
                break;
            }
            if let Some(b) = self.block_containing(r) {
                if !blocks.contains(&b) {
                    blocks.push(b);
                }
            }
        }
        blocks
    }

    /// The maximal run of adjacent pieces that holds `at`.
    fn block_containing(&self, at: u64) -> Option<(u64, u64)> {
        let (&s, v) = self.pieces.range(..=at).next_back()?;
        let mut left = s;
        let mut right = s + v.len() as u64;
        if right <= at {
            return None;
        }
        for (&s, v) in self.pieces.range(..left).rev() {
            if s + v.len() as u64 != left {
                break;
            }
            left = s;
        }
        for (&s, v) in self.pieces.range(right..) {
            if s != right {
                break;
            }
            right = s + v.len() as u64;
        }
        Some((left, right))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_inserts_keep_each_byte_once() {
        let mut r = Reassembly::default();
        assert_eq!(r.insert(10, b"abcde"), 5);
        assert_eq!(r.insert(8, b"xyabcdefg"), 4);
        assert_eq!(r.insert(10, b"abc"), 0);
        assert_eq!(r.bytes(), 9);
        let mut out = Vec::new();
        let mut nxt = 8;
        while let Some(p) = r.pop_in_order(nxt) {
            nxt += p.len() as u64;
            out.extend(p);
        }
        assert_eq!(out, b"xyabcdefg");
        assert!(r.is_empty());
    }

    #[test]
    fn pop_trims_bytes_already_delivered() {
        let mut r = Reassembly::default();
        r.insert(5, b"hello");
        assert_eq!(r.pop_in_order(4), None);
        assert_eq!(r.pop_in_order(7).unwrap(), b"llo");
        r.insert(20, b"ab");
        assert_eq!(r.pop_in_order(30), None);
        assert!(r.is_empty());
    }

    #[test]
    fn a_reused_buffer_holds_only_its_new_piece() {
        let mut r = Reassembly::default();
        r.insert(5, b"hello");
        assert_eq!(r.pop_in_order(20), None, "wholly delivered: dropped");
        assert_eq!(r.spare.len(), 1, "its buffer is kept");
        r.insert(30, b"ab");
        assert!(r.spare.is_empty(), "and reused");
        assert_eq!(r.pop_in_order(30).unwrap(), b"ab");
        assert_eq!(r.bytes(), 0);
    }

    #[test]
    fn sack_blocks_newest_first_and_merged() {
        let mut r = Reassembly::default();
        r.insert(10, b"aa");
        r.insert(20, b"bb");
        r.insert(30, b"cc");
        assert_eq!(r.sack_blocks(0, 4), vec![(30, 32), (20, 22), (10, 12)]);
        r.insert(12, b"aaaaaaaa"); // joins 10..12 and 20..22
        assert_eq!(r.sack_blocks(0, 4), vec![(10, 22), (30, 32)]);
        assert_eq!(r.sack_blocks(0, 1), vec![(10, 22)]);
    }

    #[test]
    fn sack_blocks_forget_delivered_ranges() {
        let mut r = Reassembly::default();
        r.insert(10, b"aa");
        r.insert(20, b"bb");
        r.pop_in_order(10);
        assert_eq!(r.sack_blocks(12, 4), vec![(20, 22)]);
    }
}
