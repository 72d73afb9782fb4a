//! Simulated and real time in integer nanoseconds.
//!
//! Integer time keeps a simulation a pure function of (scenario, seed) on every
//! platform: no float rounding ever decides the order of two events.

use core::fmt;
use core::ops::{Add, AddAssign, Sub, SubAssign};

/// An instant, in nanoseconds since the start of a run.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

// Every frame and segment does time arithmetic in another crate than this
// one; without link-time optimisation (the dev profile) a function that is
// not generic is inlined across crates only when marked `#[inline]`.
impl Time {
    pub const ZERO: Time = Time(0);
    /// An instant that never comes: the value of an unset timer.
    pub const NEVER: Time = Time(u64::MAX);

    #[inline]
    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    #[inline]
    pub const fn from_micros(us: u64) -> Time {
        Time(us * 1_000)
    }
    #[inline]
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1_000_000_000)
    }
    #[inline]
    pub fn from_secs_f64(s: f64) -> Time {
        Time(Duration::from_secs_f64(s).0)
    }
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    #[inline]
    pub const fn is_never(self) -> bool {
        self.0 == u64::MAX
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    #[inline]
    pub const fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    #[inline]
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    #[inline]
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    #[inline]
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative and NaN inputs give zero,
    /// huge ones saturate.
    #[inline]
    pub fn from_secs_f64(s: f64) -> Duration {
        if s.is_nan() || s <= 0.0 {
            return Duration::ZERO;
        }
        let ns = (s * 1e9).round();
        if ns >= u64::MAX as f64 {
            Duration::MAX
        } else {
            Duration(ns as u64)
        }
    }
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    #[inline]
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    #[inline]
    pub const fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    #[inline]
    pub const fn saturating_add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
    #[inline]
    pub const fn saturating_sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
    /// Time to serialise `bits` at `rate_bps`, rounded up to whole nanoseconds
    /// so that a link never carries more than its rate.
    #[inline]
    pub const fn transmission(bits: u64, rate_bps: u64) -> Duration {
        if rate_bps == 0 {
            return Duration::MAX;
        }
        // Every frame a link sends comes here: 64-bit division when the
        // product fits (any frame under ~2 GB), the 128-bit library call
        // (~40 instructions) only beyond. Same value either way.
        if let Some(num) = bits.checked_mul(1_000_000_000) {
            return Duration(num.div_ceil(rate_bps));
        }
        let num = bits as u128 * 1_000_000_000u128;
        let rate = rate_bps as u128;
        Duration(num.div_ceil(rate) as u64)
    }
}

impl From<std::time::Duration> for Duration {
    #[inline]
    fn from(d: std::time::Duration) -> Duration {
        Duration(d.as_nanos().min(u64::MAX as u128) as u64)
    }
}

impl From<Duration> for std::time::Duration {
    #[inline]
    fn from(d: Duration) -> std::time::Duration {
        std::time::Duration::from_nanos(d.0)
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    #[inline]
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Time {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Duration> for Time {
    type Output = Time;
    #[inline]
    fn sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    #[inline]
    fn sub(self, t: Time) -> Duration {
        Duration(self.0.saturating_sub(t.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    #[inline]
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub for Duration {
    type Output = Duration;
    #[inline]
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}
impl SubAssign for Duration {
    #[inline]
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_never() {
            write!(f, "never")
        } else {
            write!(f, "{:.9}s", self.as_secs_f64())
        }
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns >= 1_000_000_000 {
            write!(f, "{:.6}s", self.as_secs_f64())
        } else if ns >= 1_000_000 {
            write!(f, "{:.3}ms", ns as f64 * 1e-6)
        } else if ns >= 1_000 {
            write!(f, "{:.3}us", ns as f64 * 1e-3)
        } else {
            write!(f, "{ns}ns")
        }
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_rounds_up_so_rate_is_never_exceeded() {
        // 1500 bytes at 10 Mbit/s = 1.2 ms exactly.
        assert_eq!(
            Duration::transmission(12_000, 10_000_000),
            Duration::from_micros(1200)
        );
        // 1 bit at 3 bit/s = 333,333,333.33 ns -> 333,333,334 ns.
        assert_eq!(Duration::transmission(1, 3).0, 333_333_334);
        assert_eq!(Duration::transmission(1, 0), Duration::MAX);
        // Past 64 bits the wide path gives the same rounding up.
        let big = u64::MAX / 1000;
        let wide = (big as u128 * 1_000_000_000).div_ceil(7) as u64;
        assert_eq!(Duration::transmission(big, 7).0, wide);
        let edge = u64::MAX / 1_000_000_000;
        assert_eq!(
            Duration::transmission(edge, 3).0,
            (edge as u128 * 1_000_000_000).div_ceil(3) as u64
        );
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Time::NEVER + Duration::from_secs(1), Time::NEVER);
        assert_eq!(Time::ZERO - Duration::from_secs(1), Time::ZERO);
        assert_eq!(Time::from_secs(1) - Time::from_secs(2), Duration::ZERO);
    }

    #[test]
    fn float_conversion_rejects_nan_and_negative() {
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(0.25).0, 250_000_000);
        assert_eq!(Duration::from_secs_f64(1e30), Duration::MAX);
    }
}
