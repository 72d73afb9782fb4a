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
        let low = wire.wrapping_sub(self.isn);
        // Every segment received is unwrapped (twice with an ACK): below
        // 2^62 the same choice fits 64-bit arithmetic, which costs a
        // fraction of the 128-bit one. Streams never get near that.
        if expected < FAST_LIMIT {
            return nearest_i64(low, expected);
        }
        nearest_i128(low, expected)
    }
}

/// Offsets below which [`nearest_i64`] cannot overflow: `expected + low +
/// WRAP` stays under 2^63.
const FAST_LIMIT: u64 = 1 << 62;

/// [`nearest_i128`] for `expected < FAST_LIMIT`, in 64-bit arithmetic.
fn nearest_i64(low: u32, expected: u64) -> u64 {
    const WRAP64: i64 = 1 << 32;
    let low = low as i64;
    let expected = expected as i64;
    let base = expected & !(WRAP64 - 1);
    let mut best = base + low;
    for candidate in [base + low - WRAP64, base + low + WRAP64] {
        if candidate >= 0 && (candidate - expected).abs() < (best - expected).abs() {
            best = candidate;
        }
    }
    best.max(0) as u64
}

/// The offset with low 32 bits `low` nearest to `expected`, never negative.
fn nearest_i128(low: u32, expected: u64) -> u64 {
    let low = low as i128;
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

    #[test]
    fn both_widths_agree_at_the_fast_limit() {
        for expected in [
            FAST_LIMIT - 1,
            FAST_LIMIT - (1 << 31),
            FAST_LIMIT - (1 << 33),
        ] {
            for low in [0, 1, 0x7fff_ffff, 0x8000_0000, 0x8000_0001, u32::MAX] {
                assert_eq!(
                    nearest_i64(low, expected),
                    nearest_i128(low, expected),
                    "{low} {expected}"
                );
            }
        }
    }

    #[test]
    fn half_a_wrap_away_and_the_first_wrap_agree_with_the_128_bit_path() {
        let half = 1u64 << 31;
        for expected in [
            0,
            1,
            half - 1,
            half,
            half + 1,
            2 * half,
            3 * half,
            3 * half + 1,
        ] {
            for low in [
                0,
                1,
                half as u32 - 1,
                half as u32,
                half as u32 + 1,
                u32::MAX,
            ] {
                assert_eq!(
                    nearest_i64(low, expected),
                    nearest_i128(low, expected),
                    "{low} {expected}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_64_bit_path_is_the_128_bit_one(low: u32, expected in 0..FAST_LIMIT) {
            proptest::prop_assert_eq!(nearest_i64(low, expected), nearest_i128(low, expected));
        }

        #[test]
        fn small_offsets_are_exercised_too(low: u32, expected in 0u64..(1 << 36)) {
            proptest::prop_assert_eq!(nearest_i64(low, expected), nearest_i128(low, expected));
        }
    }
}
