//! How the ATP-like source follows the rate the path reports (after ATP's
//! rate adaptation: decrease at once, increase in steps and only past a
//! threshold, so that a flow does not chase every fluctuation upward).
//!
//! With S the current rate and R the reported one:
//! * R < S: S ← R (the path has less room than we use);
//! * R > S·(1 + φ): S ← S + γ·(R − S);
//! * otherwise S stays;
//!
//! and S never falls below the floor. φ = `increase_threshold`,
//! γ = `increase_gain`.

use super::config::AtpConfig;

/// The next sending rate, bits/s, from the current and the reported rate.
pub fn next_rate(current_bps: f64, reported_bps: f64, cfg: &AtpConfig) -> f64 {
    let next = if reported_bps < current_bps {
        reported_bps
    } else if reported_bps > current_bps * (1.0 + cfg.increase_threshold) {
        current_bps + cfg.increase_gain * (reported_bps - current_bps)
    } else {
        current_bps
    };
    next.max(cfg.min_rate_bps())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_by_hand() {
        let c = AtpConfig::default();
        // Down at once.
        assert_eq!(next_rate(100_000.0, 60_000.0, &c), 60_000.0);
        // Within 20% above: unchanged.
        assert_eq!(next_rate(100_000.0, 119_000.0, &c), 100_000.0);
        // 200k reported at 100k: a quarter of the gap, 125k.
        assert_eq!(next_rate(100_000.0, 200_000.0, &c), 125_000.0);
        // A report of nothing: the floor, one 824-byte packet per second.
        assert_eq!(next_rate(100_000.0, 0.0, &c), 6_592.0);
    }
}
