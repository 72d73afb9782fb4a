//! How long a Gilbert–Elliott channel stays in one state.

use crate::error::ParamError;
use joulenet_proto::Duration;
use rand::Rng;
use rand_distr::Exp1;
use rand_pcg::Pcg64Mcg;

/// The distribution of one sojourn in a channel state.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Sojourn {
    /// Exponentially distributed with this mean (a continuous-time Markov
    /// chain, as in RCP's scenarios).
    Exponential { mean: Duration },
    /// Uniform on [min, max] (as in E2TCP's scenarios).
    Uniform { min: Duration, max: Duration },
}

impl Sojourn {
    /// Draws one sojourn. Never shorter than 1 ns, so the state trajectory
    /// always moves forward in time.
    pub fn sample(self, rng: &mut Pcg64Mcg) -> Duration {
        let ns = match self {
            Sojourn::Exponential { mean } => {
                let unit: f64 = rng.sample(Exp1);
                Duration::from_secs_f64(unit * mean.as_secs_f64()).as_nanos()
            }
            Sojourn::Uniform { min, max } => {
                let (low, high) = (
                    min.as_nanos().min(max.as_nanos()),
                    min.as_nanos().max(max.as_nanos()),
                );
                rng.random_range(low..=high)
            }
        };
        Duration(ns.max(1))
    }

    /// The mean sojourn, in seconds.
    pub fn mean_secs(self) -> f64 {
        match self {
            Sojourn::Exponential { mean } => mean.as_secs_f64(),
            Sojourn::Uniform { min, max } => (min.as_secs_f64() + max.as_secs_f64()) / 2.0,
        }
    }

    /// The variance of one sojourn, in seconds squared.
    pub fn variance_secs2(self) -> f64 {
        match self {
            Sojourn::Exponential { mean } => mean.as_secs_f64().powi(2),
            Sojourn::Uniform { min, max } => (max.as_secs_f64() - min.as_secs_f64()).powi(2) / 12.0,
        }
    }

    pub(crate) fn validate(self, param: &str) -> Result<(), ParamError> {
        match self {
            Sojourn::Exponential { mean } if mean == Duration::ZERO => Err(ParamError::new(
                format!("{param}.mean"),
                "must be positive, got 0",
            )),
            Sojourn::Uniform { min, max } if min > max => Err(ParamError::new(
                format!("{param}.min"),
                format!("must not exceed max ({max}), got {min}"),
            )),
            Sojourn::Uniform { max, .. } if max == Duration::ZERO => Err(ParamError::new(
                format!("{param}.max"),
                "must be positive, got 0",
            )),
            _ => Ok(()),
        }
    }
}
