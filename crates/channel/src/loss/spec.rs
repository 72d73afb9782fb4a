//! The scenario-level description of a loss model.

use super::{
    Bernoulli, BitError, GeState, GilbertElliott, LossError, LossProcess, LossTrace, NoLoss,
    OnOffPhases, TraceReplay,
};
use crate::error::check_probability;
use joulenet_proto::Duration;
use std::sync::Arc;

/// Which loss model a link direction uses, with its parameters: plain data,
/// checked by [`LossSpec::validate`] and turned into a process by
/// [`LossSpec::build`].
#[derive(Clone, Debug, PartialEq)]
pub enum LossSpec {
    /// A perfect channel.
    None,
    /// Each frame lost independently with probability `loss`.
    Bernoulli { loss: f64 },
    /// Each bit corrupted independently: P(lost) = 1 − (1 − ber)^bits.
    BitError { ber: f64 },
    /// Continuous-time Gilbert–Elliott channel.
    GilbertElliott {
        good: GeState,
        bad: GeState,
        start_bad: bool,
    },
    /// Deterministic On (lossy) / Off (error-free) phases.
    OnOffPhases {
        on: Duration,
        off: Duration,
        drop_rate: f64,
        start_on: bool,
        offset: Duration,
    },
    /// A recorded or hand-written trace.
    Trace(Arc<LossTrace>),
}

impl LossSpec {
    /// Checks every parameter; the error names the first bad one the way a
    /// scenario spells it, e.g. `gilbert_elliott.bad.loss: must be in [0, 1], got 1.5`.
    pub fn validate(&self) -> Result<(), LossError> {
        match self {
            LossSpec::None => Ok(()),
            LossSpec::Bernoulli { loss } => check_probability("bernoulli.loss", *loss),
            LossSpec::BitError { ber } => check_probability("bit_error.ber", *ber),
            LossSpec::GilbertElliott { good, bad, .. } => {
                validate_ge_state("gilbert_elliott.good", good)?;
                validate_ge_state("gilbert_elliott.bad", bad)
            }
            LossSpec::OnOffPhases {
                on, off, drop_rate, ..
            } => {
                check_probability("on_off_phases.drop_rate", *drop_rate)?;
                if on.as_nanos() == 0 && off.as_nanos() == 0 {
                    return Err(LossError::new(
                        "on_off_phases.on",
                        "on + off must be positive, got 0 for both",
                    ));
                }
                Ok(())
            }
            LossSpec::Trace(trace) => trace.validate(),
        }
    }

    /// Validates, then builds.
    pub fn try_build(
        &self,
        state_seed: u64,
        frame_seed: u64,
    ) -> Result<Box<dyn LossProcess>, LossError> {
        self.validate()?;
        Ok(self.build(state_seed, frame_seed))
    }

    /// Builds the loss process. Channel state (Gilbert–Elliott sojourns)
    /// draws only from a generator seeded with `state_seed`; per-frame error
    /// draws only from one seeded with `frame_seed`. Call
    /// [`LossSpec::validate`] first: an invalid spec does not panic, but its
    /// out-of-range values act clamped (probabilities to [0, 1], sojourns to
    /// at least 1 ns).
    pub fn build(&self, state_seed: u64, frame_seed: u64) -> Box<dyn LossProcess> {
        match self {
            LossSpec::None => Box::new(NoLoss::default()),
            LossSpec::Bernoulli { loss } => Box::new(Bernoulli::new(*loss, frame_seed)),
            LossSpec::BitError { ber } => Box::new(BitError::new(*ber, frame_seed)),
            LossSpec::GilbertElliott {
                good,
                bad,
                start_bad,
            } => Box::new(GilbertElliott::new(
                *good, *bad, *start_bad, state_seed, frame_seed,
            )),
            LossSpec::OnOffPhases {
                on,
                off,
                drop_rate,
                start_on,
                offset,
            } => Box::new(OnOffPhases::new(
                *on, *off, *drop_rate, *start_on, *offset, frame_seed,
            )),
            LossSpec::Trace(trace) => Box::new(TraceReplay::new(Arc::clone(trace), frame_seed)),
        }
    }

    /// The analytic long-run per-frame loss, where it does not depend on
    /// frame sizes or traffic timing: Bernoulli `loss`; Gilbert–Elliott with
    /// per-frame error rates (m_G·e_G + m_B·e_B)/(m_G + m_B), m being the
    /// mean sojourns (frames sampling the channel at times independent of
    /// it see each state in proportion to its share of time); On/Off
    /// `drop_rate·on/(on + off)`; a repeating frame trace its loss fraction.
    pub fn stationary_loss(&self) -> Option<f64> {
        match self {
            LossSpec::None => Some(0.0),
            LossSpec::Bernoulli { loss } => Some(*loss),
            LossSpec::BitError { .. } => None,
            LossSpec::GilbertElliott { good, bad, .. } => {
                let (e_good, e_bad) = (good.loss.packet_rate()?, bad.loss.packet_rate()?);
                let (m_good, m_bad) = (good.sojourn.mean_secs(), bad.sojourn.mean_secs());
                let total = m_good + m_bad;
                (total > 0.0).then(|| (m_good * e_good + m_bad * e_bad) / total)
            }
            LossSpec::OnOffPhases {
                on, off, drop_rate, ..
            } => {
                let period = on.as_secs_f64() + off.as_secs_f64();
                (period > 0.0).then(|| drop_rate * on.as_secs_f64() / period)
            }
            LossSpec::Trace(trace) => trace.stationary_loss(),
        }
    }
}

fn validate_ge_state(param: &str, state: &GeState) -> Result<(), LossError> {
    state.sojourn.validate(&format!("{param}.sojourn"))?;
    state.loss.validate(&format!("{param}.loss"))
}
