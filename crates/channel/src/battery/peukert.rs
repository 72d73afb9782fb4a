//! Peukert's law: a battery rated `capacity` over `rated_hours` delivers
//! less at a higher drain. At a constant power P its lifetime is
//! `H · (P_r / P)^n`, P_r = capacity / H being the rated power and n ≥ 1
//! the exponent (1 is an ideal store). For a varying load we drain an
//! effective energy at the rate `P · (P / P_r)^(n − 1)`, which gives that
//! lifetime at a constant load, from the mean power of each step (so the
//! rate effect of bursts shorter than a step is averaged away).

use crate::error::ParamError;

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PeukertParams {
    /// n ≥ 1.
    pub exponent: f64,
    /// The discharge time at which the rated capacity holds, seconds.
    pub rated_s: f64,
}

impl PeukertParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.exponent.is_finite() && self.exponent >= 1.0) {
            return Err(ParamError::new(
                "battery.exponent",
                format!("must be at least 1, got {}", self.exponent),
            ));
        }
        if !(self.rated_s.is_finite() && self.rated_s > 0.0) {
            return Err(ParamError::new(
                "battery.rated_hours",
                format!("must be positive, got {} s", self.rated_s),
            ));
        }
        Ok(())
    }

    /// The rate at which a load of `power_w` drains the rated capacity.
    pub fn effective_w(&self, power_w: f64, capacity_j: f64) -> f64 {
        if power_w <= 0.0 {
            return 0.0;
        }
        let rated_w = capacity_j / self.rated_s;
        power_w * (power_w / rated_w).powf(self.exponent - 1.0)
    }

    /// Seconds a full battery lasts at a constant `power_w`.
    pub fn lifetime_s(&self, power_w: f64, capacity_j: f64) -> f64 {
        capacity_j / self.effective_w(power_w, capacity_j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetime_follows_peukerts_law() {
        let p = PeukertParams {
            exponent: 1.2,
            rated_s: 20.0 * 3600.0,
        };
        let capacity = 7.0 * 12.0 * 3600.0; // 7 Ah at 12 V
        let rated_w = capacity / p.rated_s;
        // At the rated power the rated time.
        assert!((p.lifetime_s(rated_w, capacity) - p.rated_s).abs() < 1e-6);
        // At four times the power: H · 4^-1.2, less than a quarter.
        let t4 = p.lifetime_s(4.0 * rated_w, capacity);
        assert!((t4 - p.rated_s * 4f64.powf(-1.2)).abs() < 1e-6);
        assert!(t4 < p.rated_s / 4.0);
        // Exponent 1 is the ideal store.
        let ideal = PeukertParams { exponent: 1.0, ..p };
        assert!((ideal.lifetime_s(3.0, capacity) - capacity / 3.0).abs() < 1e-6);
    }

    #[test]
    fn parameters_are_checked() {
        let bad = PeukertParams {
            exponent: 0.9,
            rated_s: 1.0,
        };
        assert_eq!(bad.validate().unwrap_err().param, "battery.exponent");
    }
}
