//! The source's back-off for packets recovered inside the network (§4.1).
//!
//! Relays that retransmit from their caches send on the source's behalf, so
//! the flow's traffic exceeds the rate the destination granted. When an ACK
//! lists N locally recovered packets of sizes s₁ … s_N and grants rate r(t),
//! the source pauses for
//!
//! t_b = Σⱼ sⱼ / r(t)
//!
//! — the time those bytes would have taken at the granted rate.

use crate::time::Duration;

/// t_b for packets of `sizes` bytes at `rate_bps` bits per second; `None`
/// when the rate is zero (or not a number): no finite pause makes up for it.
pub fn backoff(sizes: impl IntoIterator<Item = usize>, rate_bps: f64) -> Option<Duration> {
    if rate_bps.is_nan() || rate_bps <= 0.0 {
        return None;
    }
    let bits: f64 = sizes.into_iter().map(|s| s as f64 * 8.0).sum();
    Some(Duration::from_secs_f64(bits / rate_bps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_is_the_recovered_bytes_at_the_granted_rate() {
        // 800 + 800 + 400 bytes = 16 000 bits at 16 kb/s: 1 s.
        assert_eq!(
            backoff([800, 800, 400], 16_000.0),
            Some(Duration::from_secs(1))
        );
        // One 828-byte packet at 64 kb/s: 103.5 ms.
        assert_eq!(
            backoff([828], 64_000.0),
            Some(Duration::from_micros(103_500))
        );
        assert_eq!(backoff([], 64_000.0), Some(Duration::ZERO));
        assert_eq!(backoff([800], 0.0), None);
    }
}
