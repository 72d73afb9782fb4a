//! The effective available rate (paper §2.1.1, §2.2.2).
//!
//! A hop's available rate (idle TDMA slots toward the next node) is shared
//! by the MAC attempts each packet takes, so the rate a flow can actually
//! use is the available rate divided by the mean number of attempts. Each
//! hop stamps the smaller of its own effective rate and the one already in
//! the packet, so the destination reads the path's bottleneck.

use joulenet_wire::jtp::RATE_UNKNOWN;

/// Mean MAC attempts per packet on a link whose single attempt fails with
/// probability `p`, when the MAC stops after the first success or after
/// `max_attempts`: Σₖ₌₀^{M−1} pᵏ = (1 − pᴹ)/(1 − p); `M` when `p = 1`.
pub fn mean_attempts(p: f64, max_attempts: u8) -> f64 {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    let m = max_attempts.max(1) as i32;
    if p >= 1.0 {
        m as f64
    } else {
        (1.0 - p.powi(m)) / (1.0 - p)
    }
}

/// The available rate normalised by the mean number of MAC attempts, bits/s.
pub fn effective_available_rate(available_bps: f64, p: f64, max_attempts: u8) -> f64 {
    available_bps.max(0.0) / mean_attempts(p, max_attempts)
}

/// The value to stamp: the smaller of the packet's field and this hop's
/// effective rate (rounded down to whole bits/s, and kept below
/// [`RATE_UNKNOWN`], which an unstamped packet carries).
pub fn stamp_min(field: u32, effective_bps: f64) -> u32 {
    let own = if effective_bps.is_nan() {
        0
    } else if effective_bps >= (RATE_UNKNOWN - 1) as f64 {
        RATE_UNKNOWN - 1
    } else {
        effective_bps.max(0.0) as u32
    };
    field.min(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_attempts_by_hand() {
        assert_eq!(mean_attempts(0.0, 5), 1.0);
        // p = 0.5, M = 2: 1 + 0.5.
        assert_eq!(mean_attempts(0.5, 2), 1.5);
        // p = 0.2, M = 3: 1 + 0.2 + 0.04.
        assert!((mean_attempts(0.2, 3) - 1.24).abs() < 1e-12);
        assert_eq!(mean_attempts(1.0, 5), 5.0);
        assert_eq!(mean_attempts(0.3, 1), 1.0);
    }

    #[test]
    fn effective_rate_divides_by_the_mean_attempts() {
        assert!((effective_available_rate(120_000.0, 0.5, 2) - 80_000.0).abs() < 1e-9);
        assert_eq!(effective_available_rate(100_000.0, 1.0, 5), 20_000.0);
        assert_eq!(effective_available_rate(-5.0, 0.1, 5), 0.0);
    }

    #[test]
    fn the_path_keeps_its_minimum() {
        // Three hops with effective rates 80k, 50k, 65.5k: the packet ends
        // with 50k; an unstamped packet takes the first hop's value.
        let mut field = RATE_UNKNOWN;
        for own in [80_000.9, 50_000.0, 65_500.0] {
            field = stamp_min(field, own);
        }
        assert_eq!(field, 50_000);
        assert_eq!(stamp_min(RATE_UNKNOWN, f64::INFINITY), RATE_UNKNOWN - 1);
        assert_eq!(stamp_min(7, f64::NAN), 0);
    }
}
