//! A battery: a store of joules that a radio drains, ideal ([`BatteryModel::Ideal`])
//! or with the rate-capacity and recovery effects of real cells (the kinetic
//! battery model, [`kibam`]; Peukert's law, [`peukert`]), and presets for a
//! few common cells ([`cells`]).
//!
//! Depletion is an event, not a crash. Power is piecewise constant and never
//! above the radio's `max_power_w`, so with `remaining_j` available the
//! battery cannot run dry sooner than `remaining_j / max_power_w` from now
//! (for Peukert, the effective drain of `max_power_w`). The simulator
//! schedules depletion checks with that bound:
//!
//! 1. at a check, advance the radio's ledger to now and hand the battery
//!    the energy consumed so far ([`Battery::draw`]); the battery charges
//!    the energy drawn since the last check at its mean power;
//! 2. if the available energy cannot sustain `max_power_w` for 1 ns more,
//!    the battery is depleted now: switch the radio off;
//! 3. otherwise schedule the next check after [`Battery::next_check`]: the
//!    bound above, and for the non-ideal models at most [`Battery::STEP`],
//!    so that the mean power of a step follows the load.
//!
//! Each check lands no later than the true depletion instant, and the gap
//! shrinks with the remaining energy, so the checks converge on it (to the
//! nanosecond) while costing few events when the battery is far from empty.

pub mod cells;
pub mod kibam;
pub mod peukert;

use crate::error::ParamError;
use joulenet_proto::Duration;
pub use kibam::{Kibam, KibamParams};
pub use peukert::PeukertParams;

/// How a battery turns the energy drawn from it into charge lost.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum BatteryModel {
    /// Delivers exactly its capacity whatever the load.
    Ideal,
    Kibam(KibamParams),
    Peukert(PeukertParams),
}

impl BatteryModel {
    pub fn name(&self) -> &'static str {
        match self {
            BatteryModel::Ideal => "ideal",
            BatteryModel::Kibam(_) => "kibam",
            BatteryModel::Peukert(_) => "peukert",
        }
    }
}

/// An energy store of `capacity_j` joules and its state of charge.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Battery {
    pub capacity_j: f64,
    pub model: BatteryModel,
    /// The cell preset it was made from, if any.
    pub cell: Option<&'static str>,
    /// Energy the load had drawn at the last [`Battery::draw`], and when.
    drawn_j: f64,
    drawn_at_s: f64,
    /// KiBaM's wells.
    wells: Option<Kibam>,
    /// Peukert's effective energy drained.
    effective_j: f64,
}

/// Validation errors of battery parameters name the parameter.
pub type BatteryError = ParamError;

impl Battery {
    /// The longest step over which a non-ideal battery averages the load.
    pub const STEP: Duration = Duration::from_secs(1);

    /// An ideal battery holding `capacity_j` joules (finite and positive).
    pub fn new(capacity_j: f64) -> Result<Battery, BatteryError> {
        Battery::with_model(capacity_j, BatteryModel::Ideal)
    }

    /// A full battery of `capacity_j` under `model`.
    pub fn with_model(capacity_j: f64, model: BatteryModel) -> Result<Battery, BatteryError> {
        let battery = Battery {
            capacity_j,
            model,
            cell: None,
            drawn_j: 0.0,
            drawn_at_s: 0.0,
            wells: None,
            effective_j: 0.0,
        };
        battery.validate()?;
        let wells = match model {
            BatteryModel::Kibam(p) => Some(Kibam::full(p, capacity_j)),
            _ => None,
        };
        Ok(Battery { wells, ..battery })
    }

    pub fn validate(&self) -> Result<(), BatteryError> {
        if !(self.capacity_j.is_finite() && self.capacity_j > 0.0) {
            return Err(ParamError::new(
                "battery.capacity_j",
                format!("must be finite and positive, got {}", self.capacity_j),
            ));
        }
        match self.model {
            BatteryModel::Ideal => Ok(()),
            BatteryModel::Kibam(p) => p.validate(),
            BatteryModel::Peukert(p) => p.validate(),
        }
    }

    /// Joules left after `consumed_j`, never negative, for an ideal store.
    pub fn remaining(&self, consumed_j: f64) -> f64 {
        (self.capacity_j - consumed_j).max(0.0)
    }

    /// The load has drawn `consumed_j` in all by `now_s`: charge what it drew
    /// since the last call at its mean power over the interval (an interval
    /// of no time takes it from the available charge at once).
    pub fn draw(&mut self, consumed_j: f64, now_s: f64) {
        let energy = (consumed_j - self.drawn_j).max(0.0);
        let secs = (now_s - self.drawn_at_s).max(0.0);
        self.drawn_j = self.drawn_j.max(consumed_j);
        self.drawn_at_s = self.drawn_at_s.max(now_s);
        match self.model {
            BatteryModel::Ideal => {}
            BatteryModel::Kibam(_) => {
                if let Some(w) = self.wells.as_mut() {
                    if secs > 0.0 {
                        *w = w.step(energy / secs, secs);
                    } else {
                        w.available_j -= energy;
                    }
                }
            }
            BatteryModel::Peukert(p) => {
                self.effective_j += match secs > 0.0 {
                    true => p.effective_w(energy / secs, self.capacity_j) * secs,
                    false => energy,
                };
            }
        }
    }

    /// Energy the load can still draw before the battery is empty: the
    /// available well under KiBaM.
    pub fn available_j(&self) -> f64 {
        match self.model {
            BatteryModel::Ideal => self.remaining(self.drawn_j),
            BatteryModel::Kibam(_) => self.wells.map_or(0.0, |w| w.available_j.max(0.0)),
            BatteryModel::Peukert(_) => (self.capacity_j - self.effective_j).max(0.0),
        }
    }

    /// Energy left in the battery, usable or not (KiBaM's bound well counts:
    /// what a dead node strands there is the rate-capacity effect).
    pub fn residual_j(&self) -> f64 {
        match (self.model, self.wells) {
            (BatteryModel::Kibam(_), Some(w)) => w.available_j.max(0.0) + w.bound_j.max(0.0),
            _ => self.available_j(),
        }
    }

    /// The fastest the available energy can fall under `max_power_w`.
    fn drain_bound_w(&self, max_power_w: f64) -> f64 {
        match self.model {
            BatteryModel::Peukert(p) => p.effective_w(max_power_w, self.capacity_j),
            _ => max_power_w,
        }
    }

    /// Whether the battery cannot sustain `max_power_w` for 1 ns more.
    pub fn depleted(&self, max_power_w: f64) -> bool {
        Battery::is_depleted(self.available_j(), self.drain_bound_w(max_power_w))
    }

    /// When to check again: the earliest possible depletion, and at most
    /// [`Battery::STEP`] for the models that average the load per step.
    pub fn next_check(&self, max_power_w: f64) -> Duration {
        let bound = Battery::next_check_after(self.available_j(), self.drain_bound_w(max_power_w));
        match self.model {
            BatteryModel::Ideal => bound,
            _ => bound.min(Battery::STEP),
        }
    }

    /// Whether `remaining_j` cannot sustain `max_power_w` for 1 ns more.
    pub fn is_depleted(remaining_j: f64, max_power_w: f64) -> bool {
        remaining_j <= max_power_w * 1e-9
    }

    /// The earliest time from now at which depletion could occur:
    /// `remaining_j / max_power_w`, rounded down to whole nanoseconds and at
    /// least 1 ns so that checks always make progress. A radio that draws
    /// nothing never depletes the battery: `Duration::MAX`.
    pub fn next_check_after(remaining_j: f64, max_power_w: f64) -> Duration {
        // No usable power bound (zero, negative or NaN): no depletion check.
        if max_power_w.is_nan() || max_power_w <= 0.0 || remaining_j.is_nan() {
            return Duration::MAX;
        }
        let ns = (remaining_j.max(0.0) / max_power_w * 1e9).floor();
        if ns >= u64::MAX as f64 {
            Duration::MAX
        } else {
            Duration((ns as u64).max(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_must_be_positive_and_finite() {
        assert!(Battery::new(100.0).is_ok());
        let err = Battery::new(0.0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "battery.capacity_j: must be finite and positive, got 0"
        );
        assert!(Battery::new(f64::NAN).is_err());
        assert!(Battery::new(-1.0).is_err());
        assert!(Battery::new(f64::INFINITY).is_err());
    }

    #[test]
    fn remaining_never_goes_negative() {
        let battery = Battery::new(10.0).unwrap();
        assert_eq!(battery.remaining(4.0), 6.0);
        assert_eq!(battery.remaining(12.0), 0.0);
    }

    #[test]
    fn next_check_is_the_earliest_possible_depletion() {
        assert_eq!(Battery::next_check_after(2.0, 1.0), Duration::from_secs(2));
        assert_eq!(Battery::next_check_after(0.0, 1.0), Duration::from_nanos(1));
        assert_eq!(
            Battery::next_check_after(1e-12, 1.0),
            Duration::from_nanos(1)
        );
        assert_eq!(Battery::next_check_after(5.0, 0.0), Duration::MAX);
        assert_eq!(Battery::next_check_after(f64::NAN, 1.0), Duration::MAX);
    }

    /// The documented scheme, run against a constant 1.5 W drain, finds the
    /// depletion instant to within a nanosecond in a handful of checks.
    #[test]
    fn checks_converge_on_the_depletion_instant() {
        let (battery, power, max_power) = (Battery::new(3.0).unwrap(), 1.5, 2.0);
        let mut now_ns: u64 = 0;
        let mut checks = 0;
        loop {
            checks += 1;
            let remaining = battery.remaining(power * now_ns as f64 * 1e-9);
            if Battery::is_depleted(remaining, max_power) {
                break;
            }
            now_ns += Battery::next_check_after(remaining, max_power).as_nanos();
            assert!(
                now_ns <= 2_000_000_000,
                "a check overshot depletion: {now_ns}"
            );
        }
        assert!(now_ns >= 1_999_999_998, "stopped early at {now_ns}");
        assert!(checks < 100, "{checks} checks");
    }

    /// An ideal battery under a constant load lasts capacity / power, found
    /// by the documented check scheme through `draw`.
    #[test]
    fn ideal_lifetime_is_capacity_over_mean_power() {
        let lifetime = drive(Battery::new(90.0).unwrap(), |_| 1.5, 2.0);
        assert!((lifetime - 60.0).abs() < 1e-6, "{lifetime}");
    }

    /// A KiBaM battery under a heavy constant load dies when its available
    /// well empties, as the closed form predicts, well before capacity / power.
    #[test]
    fn kibam_lifetime_matches_the_closed_form() {
        let params = KibamParams { c: 0.3, k: 1e-3 };
        let battery = Battery::with_model(1000.0, BatteryModel::Kibam(params)).unwrap();
        let lifetime = drive(battery, |_| 5.0, 5.0);
        let closed = Kibam::full(params, 1000.0).time_to_empty(5.0, 1e9).unwrap();
        assert!((lifetime - closed).abs() < 1e-3, "{lifetime} vs {closed}");
        assert!(lifetime < 0.5 * 1000.0 / 5.0);
    }

    #[test]
    fn peukert_lifetime_follows_the_law() {
        let p = PeukertParams {
            exponent: 1.2,
            rated_s: 1000.0,
        };
        let battery = Battery::with_model(1000.0, BatteryModel::Peukert(p)).unwrap();
        let lifetime = drive(battery, |_| 4.0, 4.0);
        assert!(
            (lifetime - p.lifetime_s(4.0, 1000.0)).abs() < 1e-3,
            "{lifetime}"
        );
    }

    /// Runs the simulator's check loop against a load `power(t)` bounded by
    /// `max_power`; returns the time of depletion in seconds.
    fn drive(mut battery: Battery, power: impl Fn(f64) -> f64, max_power: f64) -> f64 {
        let (mut now_ns, mut consumed) = (0u64, 0.0);
        for _ in 0..10_000 {
            battery.draw(consumed, now_ns as f64 * 1e-9);
            if battery.depleted(max_power) {
                return now_ns as f64 * 1e-9;
            }
            let step = battery.next_check(max_power).as_nanos();
            consumed += power(now_ns as f64 * 1e-9) * step as f64 * 1e-9;
            now_ns += step;
        }
        panic!("never depleted");
    }
}
