//! Serial-number arithmetic for WWP's 24-bit segment and probe numbers
//! (RFC 1982 style): the ends keep 64-bit counts that never wrap and the
//! wire carries their low 24 bits, so a transfer of more than 2^24
//! segments goes on instead of stalling at the end of the number space.

use joulenet_wire::wwp::SEQ_MAX;

/// The size of the wire's number space.
const SPACE: u64 = SEQ_MAX as u64 + 1;

/// The wire form of a count: its low 24 bits.
pub fn to_wire(n: u64) -> u32 {
    (n & SEQ_MAX as u64) as u32
}

/// The count a 24-bit wire number stands for: of all counts with those low
/// bits, the one nearest `near` (within half the space either side, as
/// RFC 1982 compares serial numbers). Never below zero.
pub fn from_wire(wire: u32, near: u64) -> u64 {
    let half = SPACE / 2;
    let base = near.saturating_sub(half);
    let offset = (wire as u64).wrapping_sub(base) & SEQ_MAX as u64;
    base + offset
}

/// How far wire number `a` is after wire number `b`, as RFC 1982 reads it:
/// negative when `a` comes before `b`.
pub fn diff(a: u32, b: u32) -> i32 {
    let d = a.wrapping_sub(b) & SEQ_MAX;
    if d as u64 >= SPACE / 2 {
        d as i32 - SPACE as i32
    } else {
        d as i32
    }
}

/// The next wire number after `n`.
pub fn next(n: u32) -> u32 {
    n.wrapping_add(1) & SEQ_MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_numbers_unwrap_near_the_reference() {
        let top = SEQ_MAX as u64;
        assert_eq!(from_wire(5, 10), 5);
        assert_eq!(from_wire(SEQ_MAX, top + 3), top);
        assert_eq!(from_wire(2, top - 1), top + 3);
        assert_eq!(from_wire(to_wire(3 * SPACE + 7), 3 * SPACE), 3 * SPACE + 7);
        // Near zero nothing unwraps below zero.
        assert_eq!(from_wire(SEQ_MAX, 1), top);
    }

    #[test]
    fn serial_difference_wraps() {
        assert_eq!(diff(5, 3), 2);
        assert_eq!(diff(3, 5), -2);
        assert_eq!(diff(1, SEQ_MAX), 2);
        assert_eq!(diff(SEQ_MAX, 1), -2);
        assert_eq!(next(SEQ_MAX), 0);
    }
}
