//! The destination's PI²/MD sending-rate controller (paper §5.2.1, eqs 9–10).
//!
//! With Ā the mean available path rate (the path monitor's x̄) and δ ≥ 0 the
//! target available rate:
//!
//! * Ā > δ: r(t+1) = r(t) + K_I Ā(t) / r(t), 0 < K_I < 1               (9)
//! * otherwise: r(t+1) = K_D r(t), 0 < K_D < 1                        (10)
//!
//! and the destination also caps the rate at what its application takes.
//! The paper uses δ = 0 (our default).
//!
//! Equation 9 adds a dimensionless Ā/r to a rate, so K_I carries the rate's
//! unit and the unit decides how fast the rate grows. We run the controller
//! in **packets per second** (a unit change multiplies the step by the unit
//! ratio); K_I, K_D, the floor and the ceiling are ours — the paper gives
//! only their ranges (its Lyapunov analysis needs K_I > 0, K_D < 1).

use crate::config_error::ConfigError;

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Pi2MdConfig {
    /// Increase gain K_I, in (0, 1), packets/s.
    pub k_i: f64,
    /// Decrease factor K_D, in (0, 1).
    pub k_d: f64,
    /// Target available rate δ ≥ 0, packets/s.
    pub delta: f64,
    /// The rate never falls below this (> 0, so that eq. 9 never divides by
    /// zero and the source keeps probing), packets/s.
    pub min_rate: f64,
    /// Nor rises above this, packets/s.
    pub max_rate: f64,
}

impl Default for Pi2MdConfig {
    fn default() -> Self {
        Pi2MdConfig {
            k_i: 0.5,
            k_d: 0.5,
            delta: 0.0,
            min_rate: 0.1,
            max_rate: 1e6,
        }
    }
}

impl Pi2MdConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let open = |key, v: f64| {
            if v > 0.0 && v < 1.0 {
                Ok(())
            } else {
                Err(ConfigError::new(key, format!("must be in (0, 1), got {v}")))
            }
        };
        open("k_i", self.k_i)?;
        open("k_d", self.k_d)?;
        if self.delta.is_nan() || self.delta < 0.0 {
            return Err(ConfigError::new("delta", "must be at least 0"));
        }
        if self.min_rate.is_nan() || self.min_rate <= 0.0 {
            return Err(ConfigError::new("min_rate", "must be above 0"));
        }
        if self.max_rate.is_nan() || self.max_rate < self.min_rate {
            return Err(ConfigError::new("max_rate", "must be at least min_rate"));
        }
        Ok(())
    }
}

/// The controller; holds only its tuning (the rate is the caller's).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Pi2Md {
    cfg: Pi2MdConfig,
}

impl Pi2Md {
    pub fn new(cfg: Pi2MdConfig) -> Result<Pi2Md, ConfigError> {
        cfg.validate()?;
        Ok(Pi2Md { cfg })
    }

    pub fn config(&self) -> &Pi2MdConfig {
        &self.cfg
    }

    /// One update: the rate after `rate` given the mean available path rate
    /// `available` (both packets/s), capped by `app_cap` (what the receiving
    /// application takes, if limited) and kept in [min_rate, max_rate].
    pub fn next(&self, rate: f64, available: f64, app_cap: Option<f64>) -> f64 {
        let c = &self.cfg;
        let r = if rate.is_nan() {
            c.min_rate
        } else {
            rate.clamp(c.min_rate, c.max_rate)
        };
        let next = if available > c.delta {
            r + c.k_i * available / r
        } else {
            c.k_d * r
        };
        let capped = app_cap.map_or(next, |cap| next.min(cap));
        capped.clamp(c.min_rate, c.max_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pi2md() -> Pi2Md {
        Pi2Md::new(Pi2MdConfig::default()).unwrap()
    }

    #[test]
    fn increase_and_decrease_by_hand() {
        let c = pi2md();
        // Ā = 20 > 0, r = 10: 10 + 0.5 · 20/10 = 11.
        assert_eq!(c.next(10.0, 20.0, None), 11.0);
        // Ā = 0 ≤ δ: 0.5 · 10 = 5.
        assert_eq!(c.next(10.0, 0.0, None), 5.0);
        // The application takes only 10.5.
        assert_eq!(c.next(10.0, 20.0, Some(10.5)), 10.5);
        // The floor keeps r positive.
        assert_eq!(c.next(0.1, 0.0, None), 0.1);
        let strict = Pi2Md::new(Pi2MdConfig {
            delta: 5.0,
            ..Pi2MdConfig::default()
        })
        .unwrap();
        assert_eq!(strict.next(10.0, 4.0, None), 5.0);
    }

    #[test]
    fn converges_on_a_fixed_capacity_channel() {
        // One flow on a 100 packets/s channel, the available rate being what
        // it leaves idle. From r > K_I, eq. 9 gives r + K_I (100 − r)/r < 100:
        // the rate climbs to capacity from below and never drives the
        // available rate to zero (§2.1.1's congestion avoidance).
        let c = pi2md();
        let mut r: f64 = 1.0;
        for _ in 0..5_000 {
            let available = (100.0 - r).max(0.0);
            let next = c.next(r, available, None);
            assert!(next > r && next < 100.0, "{r} -> {next}");
            r = next;
        }
        assert!(r > 99.9, "{r}");
        // A competing flow takes 60 packets/s: nothing is left, and the rate
        // halves until the path has room again.
        let available = (100.0 - 60.0 - r).max(0.0);
        assert_eq!(c.next(r, available, None), 0.5 * r);
    }

    #[test]
    fn bad_gains_name_the_option() {
        for (cfg, key) in [
            (
                Pi2MdConfig {
                    k_i: 0.0,
                    ..Default::default()
                },
                "k_i",
            ),
            (
                Pi2MdConfig {
                    k_d: 1.0,
                    ..Default::default()
                },
                "k_d",
            ),
            (
                Pi2MdConfig {
                    delta: -1.0,
                    ..Default::default()
                },
                "delta",
            ),
            (
                Pi2MdConfig {
                    min_rate: 0.0,
                    ..Default::default()
                },
                "min_rate",
            ),
            (
                Pi2MdConfig {
                    max_rate: 0.01,
                    ..Default::default()
                },
                "max_rate",
            ),
        ] {
            assert_eq!(Pi2Md::new(cfg).unwrap_err().key, key);
        }
    }
}
