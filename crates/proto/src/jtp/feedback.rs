//! The destination's regular feedback period (paper §5.1).
//!
//! T = max(T_lb, n / SendingRate), n ≥ 1: the destination never sends
//! feedback faster than one ACK per `n` packets, and never more often than
//! T_lb. T_lb must leave SNACKed packets time to still be in the caches:
//! T_lb ≤ C / SendingRate − RTT for an effective cache of C packets.

use crate::time::Duration;

/// The paper's default lower bound (Table 1).
pub const DEFAULT_LOWER_BOUND: Duration = Duration::from_secs(10);

/// T = max(`lower_bound`, `n` / `rate_pps`), the rate in packets per
/// second. A rate of zero (or below, or NaN) gives [`Duration::MAX`]: nothing
/// is being sent, so no feedback is due.
pub fn feedback_period(lower_bound: Duration, n: u32, rate_pps: f64) -> Duration {
    if rate_pps.is_nan() || rate_pps <= 0.0 {
        return Duration::MAX;
    }
    let per_rate = Duration::from_secs_f64(n.max(1) as f64 / rate_pps);
    per_rate.max(lower_bound)
}

/// The largest lower bound the caches allow: C / `rate_pps` − RTT for a
/// cache of `cache_packets`; `None` when the caches drain faster than a
/// round trip (no period lets every SNACKed packet still be cached).
pub fn max_lower_bound(cache_packets: usize, rate_pps: f64, rtt: Duration) -> Option<Duration> {
    if rate_pps.is_nan() || rate_pps <= 0.0 {
        return Some(Duration::MAX);
    }
    let drain = cache_packets as f64 / rate_pps;
    let left = drain - rtt.as_secs_f64();
    (left > 0.0).then(|| Duration::from_secs_f64(left))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_by_hand() {
        // 4 packets/s, n = 1: 0.25 s, below the 10 s bound.
        assert_eq!(
            feedback_period(DEFAULT_LOWER_BOUND, 1, 4.0),
            Duration::from_secs(10)
        );
        // n = 100 at 4 packets/s: 25 s.
        assert_eq!(
            feedback_period(DEFAULT_LOWER_BOUND, 100, 4.0),
            Duration::from_secs(25)
        );
        // A 1 s bound and 50 packets at 100 packets/s: 1 s (equal).
        assert_eq!(
            feedback_period(Duration::from_secs(1), 50, 100.0),
            Duration::from_millis(1000)
        );
        // n = 0 counts as 1.
        assert_eq!(
            feedback_period(Duration::ZERO, 0, 8.0),
            Duration::from_millis(125)
        );
        assert_eq!(feedback_period(Duration::ZERO, 1, 0.0), Duration::MAX);
    }

    #[test]
    fn the_cache_bounds_the_lower_bound() {
        // 1000 packets drain in 50 s at 20 packets/s; minus a 2 s RTT: 48 s.
        assert_eq!(
            max_lower_bound(1000, 20.0, Duration::from_secs(2)),
            Some(Duration::from_secs(48))
        );
        // 10 packets at 20 packets/s drain in 0.5 s, under a 1 s RTT.
        assert_eq!(max_lower_bound(10, 20.0, Duration::from_secs(1)), None);
    }
}
