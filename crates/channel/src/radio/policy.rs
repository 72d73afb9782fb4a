//! How the idle gaps between a radio's activities are charged.

use super::RadioError;
use crate::error::check_probability;

/// What the radio does when it is awake but neither sending nor receiving.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum RadioPolicy {
    /// Stays awake and idle (listening) for the whole gap.
    AlwaysActive,
    /// An oracle that knows when the next activity starts: it sleeps through
    /// a gap g when that is cheaper, paying the wake-up transition t_w at the
    /// end, so the gap costs min(idle_w·g, sleep_w·(g − t_w) + transition_w·t_w).
    /// A gap shorter than t_w cannot be slept through.
    Ideal,
    /// The weighted average w·AlwaysActive + (1 − w)·Ideal of every gap; the
    /// E2TCP paper's "intermediate radio" is w = 0.5.
    Intermediate { active_weight: f64 },
}

impl RadioPolicy {
    /// The weight of AlwaysActive in the charge of a gap, clamped to [0, 1].
    pub fn active_weight(self) -> f64 {
        match self {
            RadioPolicy::AlwaysActive => 1.0,
            RadioPolicy::Ideal => 0.0,
            RadioPolicy::Intermediate { active_weight } if active_weight.is_nan() => 0.5,
            RadioPolicy::Intermediate { active_weight } => active_weight.clamp(0.0, 1.0),
        }
    }

    pub fn validate(self) -> Result<(), RadioError> {
        match self {
            RadioPolicy::Intermediate { active_weight } => {
                check_probability("radio_policy.intermediate.active_weight", active_weight)
            }
            _ => Ok(()),
        }
    }
}
