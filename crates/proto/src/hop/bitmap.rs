//! Which frames of a block a node holds (§3.1): the receiver's state, the
//! BACK bitmap on the wire, and the missing set a sender resends next round.

use joulenet_wire::hop::bitmap_len;

/// One bit per frame of a block, frame 0 first. Its length grows when a
/// frame beyond it is marked (a relay may see frames before the BSYN that
/// tells the block's frame count).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameBitmap {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl FrameBitmap {
    /// `len` frames, none held.
    pub fn new(len: usize) -> FrameBitmap {
        FrameBitmap {
            words: vec![0; len.div_ceil(64)],
            len,
            ones: 0,
        }
    }

    /// `len` frames, all held.
    pub fn full(len: usize) -> FrameBitmap {
        let mut b = FrameBitmap::new(len);
        for i in 0..len {
            b.set(i);
        }
        b
    }

    /// Frames the bitmap covers.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Frames held.
    pub fn count(&self) -> usize {
        self.ones
    }

    /// Every frame held (and there is at least one).
    pub fn is_full(&self) -> bool {
        self.len > 0 && self.ones == self.len
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Marks frame `i` held, growing the bitmap to cover it; true if it was
    /// not held before.
    pub fn set(&mut self, i: usize) -> bool {
        if i >= self.len {
            self.resize(i + 1);
        }
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if self.words[w] & bit != 0 {
            return false;
        }
        self.words[w] |= bit;
        self.ones += 1;
        true
    }

    /// Covers exactly `len` frames: grows with frames not held, or forgets
    /// the frames at `len` and beyond.
    pub fn resize(&mut self, len: usize) {
        if len < self.len {
            for i in len..self.len {
                if self.get(i) {
                    self.ones -= 1;
                }
            }
            self.words.truncate(len.div_ceil(64));
            if !len.is_multiple_of(64) {
                if let Some(last) = self.words.last_mut() {
                    *last &= (1u64 << (len % 64)) - 1;
                }
            }
        } else {
            self.words.resize(len.div_ceil(64), 0);
        }
        self.len = len;
    }

    /// Frames held, in order.
    pub fn held(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&i| self.get(i))
    }

    /// Frames not held, in order: what a sender resends next round.
    pub fn missing(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&i| !self.get(i))
    }

    /// The BACK bitmap: `bitmap_len(len)` bytes, frame 0 in the most
    /// significant bit of the first byte, padding bits zero.
    pub fn to_back(&self) -> Vec<u8> {
        let frames = u16::try_from(self.len).unwrap_or(u16::MAX);
        let mut out = vec![0u8; bitmap_len(frames)];
        for i in self.held().take(frames as usize) {
            out[i / 8] |= 0x80 >> (i % 8);
        }
        out
    }

    /// Reads a BACK bitmap of `frames` frames (as parsed by the wire crate,
    /// which has checked its length and padding).
    pub fn from_back(frames: u16, bytes: &[u8]) -> FrameBitmap {
        let mut b = FrameBitmap::new(frames as usize);
        for i in 0..frames as usize {
            if bytes
                .get(i / 8)
                .is_some_and(|byte| byte & (0x80 >> (i % 8)) != 0)
            {
                b.set(i);
            }
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn set_grows_and_counts_once() {
        let mut b = FrameBitmap::new(3);
        assert!(b.set(1));
        assert!(!b.set(1));
        assert!(b.set(70));
        assert_eq!(b.len(), 71);
        assert_eq!(b.count(), 2);
        assert_eq!(b.held().collect::<Vec<_>>(), vec![1, 70]);
        assert!(!b.is_full());
        assert!(FrameBitmap::full(5).is_full());
        assert!(!FrameBitmap::new(0).is_full());
    }

    #[test]
    fn resize_forgets_frames_beyond() {
        let mut b = FrameBitmap::full(130);
        b.resize(65);
        assert_eq!(b.count(), 65);
        b.resize(130);
        assert_eq!(b.count(), 65);
        assert_eq!(b.missing().next(), Some(65));
    }

    #[test]
    fn back_bytes_are_msb_first() {
        let mut b = FrameBitmap::new(10);
        for i in [0, 1, 9] {
            b.set(i);
        }
        assert_eq!(b.to_back(), vec![0xc0, 0x40]);
        assert_eq!(FrameBitmap::from_back(10, &[0xc0, 0x40]), b);
        assert_eq!(b.missing().count(), 7);
    }

    proptest! {
        #[test]
        fn back_round_trips_through_the_wire(held in proptest::collection::vec(any::<bool>(), 1..700)) {
            let mut b = FrameBitmap::new(held.len());
            for (i, h) in held.iter().enumerate() {
                if *h {
                    b.set(i);
                }
            }
            let bytes = b.to_back();
            let frames = held.len() as u16;
            let repr = joulenet_wire::hop::HopRepr {
                flow_id: 1,
                block_num: 2,
                ttl: 0,
                message: joulenet_wire::hop::HopMessage::Back { frames, bitmap: &bytes },
            };
            let mut wire = Vec::new();
            repr.emit_to_vec(&mut wire);
            let parsed = joulenet_wire::hop::HopRepr::parse(
                &joulenet_wire::hop::HopPacket::new_checked(&wire[..]).unwrap(),
            ).unwrap();
            let joulenet_wire::hop::HopMessage::Back { bitmap, .. } = parsed.message else {
                panic!("not a BACK");
            };
            prop_assert_eq!(FrameBitmap::from_back(frames, bitmap), b.clone());
            prop_assert_eq!(b.count() + b.missing().count(), held.len());
        }
    }
}
