//! The kinetic battery model (KiBaM) of Manwell and McGowan ("Lead acid
//! battery storage model for hybrid energy systems", Solar Energy 50(5),
//! 1993), in energy units at a constant terminal voltage.
//!
//! The charge sits in two wells: a fraction `c` is *available* (y1) and
//! feeds the load directly, the rest is *bound* (y2) and flows into the
//! available well at a rate `k·(h2 − h1)`, the heads being h1 = y1/c and
//! h2 = y2/(1 − c):
//!
//! ```text
//! dy1/dt = −P + k·(h2 − h1)        dy2/dt = −k·(h2 − h1)
//! ```
//!
//! The battery is empty when the available well is, so a heavy load leaves
//! charge stranded in the bound well (the rate-capacity effect) and a pause
//! lets it flow back (the recovery effect). Under a constant load P the
//! equations have the closed form [`Kibam::step`] uses, so a run of
//! constant-load steps is exact whatever their length.

use crate::error::ParamError;

/// KiBaM parameters: the available fraction `c` in (0, 1) and the rate
/// constant `k` in 1/s.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct KibamParams {
    pub c: f64,
    pub k: f64,
}

impl KibamParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.c.is_finite() && self.c > 0.0 && self.c < 1.0) {
            return Err(ParamError::new(
                "battery.c",
                format!("must be in (0, 1), got {}", self.c),
            ));
        }
        if !(self.k.is_finite() && self.k > 0.0) {
            return Err(ParamError::new(
                "battery.k",
                format!("must be finite and positive (1/s), got {}", self.k),
            ));
        }
        Ok(())
    }

    /// k' = k / (c·(1 − c)), the rate at which the heads equalise.
    fn k_prime(&self) -> f64 {
        self.k / (self.c * (1.0 - self.c))
    }
}

/// The two wells, in joules.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Kibam {
    pub params: KibamParams,
    pub available_j: f64,
    pub bound_j: f64,
}

impl Kibam {
    /// A full battery of `capacity_j`, the wells at equal heads.
    pub fn full(params: KibamParams, capacity_j: f64) -> Kibam {
        Kibam {
            params,
            available_j: params.c * capacity_j,
            bound_j: (1.0 - params.c) * capacity_j,
        }
    }

    /// The wells after drawing `power_w` for `secs` (Manwell and McGowan's
    /// closed form). The available well may come out negative: the battery
    /// emptied during the step (see [`Kibam::time_to_empty`]).
    pub fn step(&self, power_w: f64, secs: f64) -> Kibam {
        let KibamParams { c, .. } = self.params;
        let kp = self.params.k_prime();
        let (y1, y2) = (self.available_j, self.bound_j);
        let y0 = y1 + y2;
        let x = kp * secs;
        let e = (-x).exp();
        // 1 − e^{−x} and x − 1 + e^{−x}, kept precise for small x.
        let decay = -(-x).exp_m1();
        let ramp = x + (-x).exp_m1();
        Kibam {
            params: self.params,
            available_j: y1 * e + (y0 * kp * c - power_w) * decay / kp - power_w * c * ramp / kp,
            bound_j: y2 * e + y0 * (1.0 - c) * decay - power_w * (1.0 - c) * ramp / kp,
        }
    }

    /// Seconds until the available well empties under a constant
    /// `power_w`, or `None` if it never does within `horizon_s`. Bisection
    /// on the closed form: the available charge falls monotonically under a
    /// load once it is below its equilibrium share.
    pub fn time_to_empty(&self, power_w: f64, horizon_s: f64) -> Option<f64> {
        if self.available_j <= 0.0 {
            return Some(0.0);
        }
        if power_w <= 0.0 || self.step(power_w, horizon_s).available_j > 0.0 {
            return None;
        }
        let (mut lo, mut hi) = (0.0, horizon_s);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.step(power_w, mid).available_j > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: KibamParams = KibamParams { c: 0.3, k: 1e-3 };

    /// The ODE integrated with a fine RK4, independent of the closed form.
    fn rk4(mut y1: f64, mut y2: f64, load: impl Fn(f64) -> f64, secs: f64) -> (f64, f64) {
        let h = 0.01;
        let (c, k) = (P.c, P.k);
        let steps = (secs / h).round() as u64;
        for i in 0..steps {
            // The load is constant within a step (read at its middle), so a
            // pulse edge on a step boundary is integrated exactly.
            let w = load((i as f64 + 0.5) * h);
            let f = |y1: f64, y2: f64| {
                let flow = k * (y2 / (1.0 - c) - y1 / c);
                (-w + flow, -flow)
            };
            let (a1, a2) = f(y1, y2);
            let (b1, b2) = f(y1 + h / 2.0 * a1, y2 + h / 2.0 * a2);
            let (c1, c2) = f(y1 + h / 2.0 * b1, y2 + h / 2.0 * b2);
            let (d1, d2) = f(y1 + h * c1, y2 + h * c2);
            y1 += h / 6.0 * (a1 + 2.0 * b1 + 2.0 * c1 + d1);
            y2 += h / 6.0 * (a2 + 2.0 * b2 + 2.0 * c2 + d2);
        }
        (y1, y2)
    }

    #[test]
    fn closed_form_matches_the_integrated_equations() {
        let b = Kibam::full(P, 1000.0);
        let after = b.step(1.5, 120.0);
        let (y1, y2) = rk4(300.0, 700.0, |_| 1.5, 120.0);
        assert!((after.available_j - y1).abs() < 1e-6, "{after:?} vs {y1}");
        assert!((after.bound_j - y2).abs() < 1e-6, "{after:?} vs {y2}");
        // Charge is conserved: what left is exactly what the load drew.
        let total = after.available_j + after.bound_j;
        assert!((total - (1000.0 - 1.5 * 120.0)).abs() < 1e-9);
    }

    #[test]
    fn constant_load_steps_compose_exactly() {
        let b = Kibam::full(P, 1000.0);
        let one = b.step(2.0, 100.0);
        let mut many = b;
        for _ in 0..1000 {
            many = many.step(2.0, 0.1);
        }
        assert!((one.available_j - many.available_j).abs() < 1e-8);
        assert!((one.bound_j - many.bound_j).abs() < 1e-8);
    }

    /// Rate capacity: the charge delivered under a constant load, from the
    /// closed form's lifetime, falls with the load, and approaches the full
    /// capacity as the load becomes light (the bound well keeps up).
    #[test]
    fn delivered_charge_falls_with_the_load() {
        let b = Kibam::full(P, 1000.0);
        let delivered = |w: f64| w * b.time_to_empty(w, 1e9).unwrap();
        let (light, medium, heavy) = (delivered(0.01), delivered(1.0), delivered(20.0));
        assert!(light > medium && medium > heavy, "{light} {medium} {heavy}");
        assert!(light > 990.0, "{light}");
        // A load far faster than the flow empties the available well alone.
        assert!((heavy - 300.0).abs() < 30.0, "{heavy}");
        // At the lifetime the integrated equations agree the well is empty.
        let t = b.time_to_empty(1.0, 1e9).unwrap();
        let (y1, _) = rk4(300.0, 700.0, |_| 1.0, t);
        assert!(y1.abs() < 0.01, "{y1}");
    }

    /// Recovery: the same on-power in pulses (50% duty) delivers more charge
    /// before the available well empties than drawn continuously, and the
    /// closed form stepped through the pulses matches the integrated
    /// equations.
    #[test]
    fn pulsed_load_recovers_charge() {
        let (on_w, period) = (5.0, 20.0);
        let b = Kibam::full(P, 1000.0);
        let continuous = on_w * b.time_to_empty(on_w, 1e9).unwrap();
        let (mut state, mut delivered, mut t) = (b, 0.0, 0.0);
        loop {
            match state.time_to_empty(on_w, period / 2.0) {
                Some(dt) => {
                    delivered += on_w * dt;
                    t += dt;
                    break;
                }
                None => {
                    state = state.step(on_w, period / 2.0).step(0.0, period / 2.0);
                    delivered += on_w * period / 2.0;
                    t += period;
                }
            }
        }
        assert!(delivered > continuous * 1.05, "{delivered} vs {continuous}");
        let pulse = |time: f64| {
            if time % period < period / 2.0 {
                on_w
            } else {
                0.0
            }
        };
        let (y1, _) = rk4(300.0, 700.0, pulse, 200.0);
        let mut s = b;
        for _ in 0..10 {
            s = s.step(on_w, period / 2.0).step(0.0, period / 2.0);
        }
        assert!(
            (s.available_j - y1).abs() < 1e-3,
            "{} vs {y1}",
            s.available_j
        );
        assert!(t > 0.0);
    }

    #[test]
    fn parameters_are_checked() {
        assert!(KibamParams { c: 1.0, k: 1e-3 }.validate().is_err());
        assert!(KibamParams { c: 0.5, k: 0.0 }.validate().is_err());
        assert!(P.validate().is_ok());
    }
}
