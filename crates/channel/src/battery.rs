//! A battery: a store of joules that a radio drains.
//!
//! Depletion is an event, not a crash. Power is piecewise constant and never
//! above the radio's `max_power_w`, so with `remaining_j` left the battery
//! cannot run dry sooner than `remaining_j / max_power_w` from now. The
//! simulator schedules depletion checks with that bound:
//!
//! 1. at a check, advance the radio's ledger to now and compute
//!    `remaining = battery.remaining(ledger.consumed_j())`;
//! 2. if `remaining <= max_power_w · 1 ns`, the battery is depleted now
//!    (it could not last another nanosecond): switch the radio off;
//! 3. otherwise schedule the next check after
//!    `next_check_after(remaining, max_power_w)`.
//!
//! Each check lands no later than the true depletion instant, and the gap
//! shrinks with the remaining energy, so the checks converge on it (to the
//! nanosecond) while costing few events when the battery is far from empty.

use crate::error::ParamError;
use joulenet_proto::Duration;

/// An energy store of `capacity_j` joules.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Battery {
    pub capacity_j: f64,
}

/// Validation errors of battery parameters name the parameter.
pub type BatteryError = ParamError;

impl Battery {
    /// A battery holding `capacity_j` joules (finite and positive).
    pub fn new(capacity_j: f64) -> Result<Battery, BatteryError> {
        let battery = Battery { capacity_j };
        battery.validate()?;
        Ok(battery)
    }

    pub fn validate(&self) -> Result<(), BatteryError> {
        if self.capacity_j.is_finite() && self.capacity_j > 0.0 {
            Ok(())
        } else {
            Err(ParamError::new(
                "battery.capacity_j",
                format!("must be finite and positive, got {}", self.capacity_j),
            ))
        }
    }

    /// Joules left after `consumed_j`, never negative.
    pub fn remaining(&self, consumed_j: f64) -> f64 {
        (self.capacity_j - consumed_j).max(0.0)
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
}
