//! 64-bit stream offsets inside the agent, 32-bit sequence numbers on the
//! wire. Comparing raw `u32` sequence numbers is never done: a wire value is
//! unwrapped to the offset nearest the one expected (as quinn-proto decodes
//! packet numbers), then all arithmetic is plain `u64`.

/// One direction's sequence space: offset 0 is the SYN, data byte `i` is at
/// offset `1 + i`, the FIN follows the last data byte.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SeqSpace {
    isn: u32,
}

const WRAP: i128 = 1 << 32;

impl SeqSpace {
    pub(crate) const fn new(isn: u32) -> SeqSpace {
        SeqSpace { isn }
    }

    pub(crate) fn to_wire(self, offset: u64) -> u32 {
        self.isn.wrapping_add(offset as u32)
    }

    /// The offset whose wire value is `wire` and which lies nearest to
    /// `expected`; never negative.
    pub(crate) fn unwrap(self, wire: u32, expected: u64) -> u64 {
        let low = wire.wrapping_sub(self.isn) as i128;
        let expected = expected as i128;
        let base = expected & !(WRAP - 1);
        let mut best = base + low;
        for candidate in [base + low - WRAP, base + low + WRAP] {
            if candidate >= 0 && (candidate - expected).abs() < (best - expected).abs() {
                best = candidate;
            }
        }
        best.clamp(0, u64::MAX as i128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_near_the_expected_offset() {
        let s = SeqSpace::new(0xffff_fff0);
        for off in [0u64, 1, 15, 16, 17, 1 << 32, (1 << 32) + 5, 10 << 32] {
            assert_eq!(s.unwrap(s.to_wire(off), off), off);
            assert_eq!(s.unwrap(s.to_wire(off), off + 1000), off);
            assert_eq!(s.unwrap(s.to_wire(off), off.saturating_sub(1000)), off);
        }
    }

    #[test]
    fn picks_the_nearest_wrap() {
        let s = SeqSpace::new(0);
        // Just behind the expected value across a wrap boundary.
        assert_eq!(s.unwrap(0xffff_ff00, 1 << 32), (1 << 32) - 0x100);
        // Just ahead.
        assert_eq!(s.unwrap(0x10, (1 << 32) - 0x10), (1 << 32) + 0x10);
        // Never negative.
        assert_eq!(s.unwrap(0xffff_ff00, 0), 0xffff_ff00);
    }
}
