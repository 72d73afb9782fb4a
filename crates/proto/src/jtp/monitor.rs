//! The destination's path monitor: a flip-flop filter (paper §5.1, eqs 7–8).
//!
//! Each sample xᵢ of a path metric (the minimum available rate a data packet
//! carries) updates an EWMA mean x̄ and an EWMA range R̄:
//!
//! * x̄ ← (1 − α) x̄ + α xᵢ, initially x̄ = x₀                          (7)
//! * R̄ ← (1 − β) R̄ + β |xᵢ − xᵢ₋₁|, initially R̄ = x₀ / 2
//! * UCL, LCL = x̄ ± 3 R̄ / 1.128                                       (8)
//!
//! R̄ learns only from samples inside the control limits. Normally the
//! *stable* filter (small α) runs and feedback goes out at the regular
//! period. A run of consecutive outliers means the path changed: the monitor
//! switches to the *agile* filter (large α) so that x̄ catches up, and asks
//! for immediate feedback. The first sample back inside the limits switches
//! back to the stable filter.
//!
//! The paper fixes neither α, β nor the run length; [`FlipFlopConfig`]'s
//! defaults are ours.

use crate::config_error::ConfigError;

/// The filter the monitor runs now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    Stable,
    Agile,
}

/// What one sample meant.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    /// Inside the control limits (or the first sample).
    Inside,
    /// Outside the limits, not (yet) a persistent change.
    Outlier,
    /// The outlier that completed the run: the monitor switched to the agile
    /// filter and the destination should send feedback now.
    Switched,
}

/// The monitor's tuning.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FlipFlopConfig {
    /// EWMA gain of the stable filter, small.
    pub alpha_stable: f64,
    /// EWMA gain of the agile filter, large.
    pub alpha_agile: f64,
    /// EWMA gain of the range.
    pub beta: f64,
    /// Consecutive outliers that mean a persistent change.
    pub outliers_to_switch: u32,
}

impl Default for FlipFlopConfig {
    fn default() -> Self {
        FlipFlopConfig {
            alpha_stable: 0.1,
            alpha_agile: 0.5,
            beta: 0.1,
            outliers_to_switch: 3,
        }
    }
}

impl FlipFlopConfig {
    /// Checks that the gains are in (0, 1], the agile one at least the
    /// stable one, and the run at least one sample long.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let gain = |key, v: f64| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(ConfigError::new(key, format!("must be in (0, 1], got {v}")))
            }
        };
        gain("alpha_stable", self.alpha_stable)?;
        gain("alpha_agile", self.alpha_agile)?;
        gain("beta", self.beta)?;
        if self.alpha_agile < self.alpha_stable {
            return Err(ConfigError::new(
                "alpha_agile",
                "must be at least alpha_stable",
            ));
        }
        if self.outliers_to_switch == 0 {
            return Err(ConfigError::new("outliers_to_switch", "must be at least 1"));
        }
        Ok(())
    }
}

/// The d₂ constant of a moving range of two samples: R̄ / 1.128 estimates σ.
pub const D2: f64 = 1.128;

/// A flip-flop path monitor.
#[derive(Clone, Debug)]
pub struct FlipFlop {
    cfg: FlipFlopConfig,
    /// (x̄, R̄, xᵢ₋₁) once the first sample arrived.
    state: Option<(f64, f64, f64)>,
    filter: Filter,
    run: u32,
}

impl FlipFlop {
    pub fn new(cfg: FlipFlopConfig) -> Result<FlipFlop, ConfigError> {
        cfg.validate()?;
        Ok(FlipFlop {
            cfg,
            state: None,
            filter: Filter::Stable,
            run: 0,
        })
    }

    /// The estimated mean x̄, once a sample arrived.
    pub fn mean(&self) -> Option<f64> {
        self.state.map(|(m, _, _)| m)
    }

    /// The estimated range R̄, once a sample arrived.
    pub fn range(&self) -> Option<f64> {
        self.state.map(|(_, r, _)| r)
    }

    /// The control limits (LCL, UCL), once a sample arrived.
    pub fn limits(&self) -> Option<(f64, f64)> {
        self.state
            .map(|(m, r, _)| (m - 3.0 * r / D2, m + 3.0 * r / D2))
    }

    pub fn filter(&self) -> Filter {
        self.filter
    }

    /// Feeds one sample.
    pub fn observe(&mut self, x: f64) -> Observation {
        if x.is_nan() {
            return Observation::Inside;
        }
        let Some((mean, range, prev)) = self.state else {
            self.state = Some((x, x.abs() / 2.0, x));
            return Observation::Inside;
        };
        let (lcl, ucl) = (mean - 3.0 * range / D2, mean + 3.0 * range / D2);
        let (observation, range) = if (lcl..=ucl).contains(&x) {
            self.run = 0;
            self.filter = Filter::Stable;
            let r = (1.0 - self.cfg.beta) * range + self.cfg.beta * (x - prev).abs();
            (Observation::Inside, r)
        } else {
            self.run = self.run.saturating_add(1);
            if self.filter == Filter::Stable && self.run >= self.cfg.outliers_to_switch {
                self.filter = Filter::Agile;
                (Observation::Switched, range)
            } else {
                (Observation::Outlier, range)
            }
        };
        let alpha = match self.filter {
            Filter::Stable => self.cfg.alpha_stable,
            Filter::Agile => self.cfg.alpha_agile,
        };
        let mean = (1.0 - alpha) * mean + alpha * x;
        self.state = Some((mean, range, x));
        observation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn monitor() -> FlipFlop {
        FlipFlop::new(FlipFlopConfig::default()).unwrap()
    }

    #[test]
    fn first_samples_by_hand() {
        let mut m = monitor();
        assert_eq!(m.observe(100.0), Observation::Inside);
        assert_eq!((m.mean(), m.range()), (Some(100.0), Some(50.0)));
        // Limits 100 ± 3·50/1.128 = 100 ± 132.98.
        let (lcl, ucl) = m.limits().unwrap();
        assert!((ucl - 232.978_723_404).abs() < 1e-6 && (lcl + 32.978_723_404).abs() < 1e-6);
        // 110 is inside: x̄ = 0.9·100 + 0.1·110 = 101, R̄ = 0.9·50 + 0.1·10 = 46.
        assert_eq!(m.observe(110.0), Observation::Inside);
        assert!((m.mean().unwrap() - 101.0).abs() < 1e-12);
        assert!((m.range().unwrap() - 46.0).abs() < 1e-12);
        // 300 is above 101 + 3·46/1.128 = 223.34: an outlier; R̄ is kept.
        assert_eq!(m.observe(300.0), Observation::Outlier);
        assert!((m.range().unwrap() - 46.0).abs() < 1e-12);
        assert!((m.mean().unwrap() - 120.9).abs() < 1e-12);
    }

    fn noisy(rng: &mut rand_pcg::Pcg64Mcg, level: f64) -> f64 {
        level + rng.random_range(-5.0..5.0)
    }

    #[test]
    fn noise_never_switches_a_step_does_at_once_and_settles() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(14);
        let mut m = monitor();
        for i in 0..20_000 {
            let o = m.observe(noisy(&mut rng, 100.0));
            assert_ne!(o, Observation::Switched, "noise switched at sample {i}");
            assert_eq!(m.filter(), Filter::Stable);
        }
        assert!((m.mean().unwrap() - 100.0).abs() < 3.0);
        // The available rate halves.
        let mut switched_at = None;
        let mut stable_again_at = None;
        for i in 0..50 {
            let o = m.observe(noisy(&mut rng, 50.0));
            if o == Observation::Switched {
                assert!(switched_at.is_none(), "one switch per change");
                switched_at = Some(i);
            }
            if switched_at.is_some() && stable_again_at.is_none() && m.filter() == Filter::Stable {
                stable_again_at = Some(i);
            }
        }
        assert_eq!(switched_at, Some(2), "the third outlier switches");
        let back = stable_again_at.expect("back to the stable filter");
        assert!(back <= 10, "settled after {back} samples");
        assert!((m.mean().unwrap() - 50.0).abs() < 5.0);
    }

    #[test]
    fn isolated_spikes_do_not_switch() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let mut m = monitor();
        for i in 0..5_010 {
            // A spike 30 above the level: far outside the limits (about
            // ±9), and it drags the stable mean up by only 3.
            let x = if i % 50 == 49 {
                130.0
            } else {
                noisy(&mut rng, 100.0)
            };
            assert_ne!(m.observe(x), Observation::Switched);
        }
        // Two outliers in a row are still not a change.
        m.observe(400.0);
        assert_ne!(m.observe(400.0), Observation::Switched);
        assert_eq!(m.observe(400.0), Observation::Switched);
    }

    #[test]
    fn bad_tuning_names_the_option() {
        let bad = FlipFlopConfig {
            beta: 0.0,
            ..FlipFlopConfig::default()
        };
        assert_eq!(FlipFlop::new(bad).unwrap_err().key, "beta");
        let bad = FlipFlopConfig {
            alpha_agile: 0.05,
            ..FlipFlopConfig::default()
        };
        assert_eq!(FlipFlop::new(bad).unwrap_err().key, "alpha_agile");
    }
}
