//! The error every validating constructor in this crate returns.

use core::fmt;

/// A parameter failed validation: `param` names it the way a scenario file
/// spells it (`gilbert_elliott.bad.loss`, `radio.tx_w`, `trace line 7`), and
/// `reason` says what was wrong, including the offending value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub param: String,
    pub reason: String,
}

impl ParamError {
    pub fn new(param: impl Into<String>, reason: impl Into<String>) -> ParamError {
        ParamError {
            param: param.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.param, self.reason)
    }
}

impl std::error::Error for ParamError {}

/// Checks that `value` is a probability: finite and within [0, 1].
pub(crate) fn check_probability(param: &str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(ParamError::new(
            param,
            format!("must be in [0, 1], got {value}"),
        ))
    }
}

/// Checks that `value` is finite and not negative (powers, energies).
pub(crate) fn check_non_negative(param: &str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(
            param,
            format!("must be finite and non-negative, got {value}"),
        ))
    }
}
