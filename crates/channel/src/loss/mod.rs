//! Per-frame loss on one direction of one link.
//!
//! A [`LossSpec`] is plain data from a scenario; [`LossSpec::build`] turns it
//! into a [`LossProcess`] that decides the fate of each frame. Every model
//! with a channel *state* (Gilbert–Elliott sojourns, On/Off phases, loss
//! intervals) makes that state a pure function of time and of the state
//! seed, so two protocols run with the same seed face the same channel, and
//! the two directions of one wireless link can share one channel state by
//! building with the same state seed.
//!
//! The state that decides a frame is the state at the frame's `tx_start`:
//! a frame is judged by the channel it starts into. (Deciding at the end, or
//! integrating over the frame, would make the loss of a long frame depend on
//! state changes a real receiver could not have synchronised to before the
//! preamble; the start is also the one instant every model can evaluate
//! without looking ahead.)

mod bernoulli;
mod bit_error;
mod frame_error;
mod gilbert_elliott;
mod no_loss;
mod on_off_phases;
mod sojourn;
mod spec;
mod trace;

pub use bernoulli::Bernoulli;
pub use bit_error::BitError;
pub use frame_error::FrameError;
pub use gilbert_elliott::{GeState, GilbertElliott};
pub use no_loss::NoLoss;
pub use on_off_phases::OnOffPhases;
pub use sojourn::Sojourn;
pub use spec::LossSpec;
pub use trace::{LossTrace, TraceReplay};

use joulenet_proto::Time;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Validation and parse errors of loss models name the parameter or line.
pub type LossError = crate::error::ParamError;

/// One frame on the air, as a loss model needs to see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    pub tx_start: Time,
    pub tx_end: Time,
    pub bits: u64,
}

/// A loss model for one link direction.
pub trait LossProcess: Send {
    /// Decide the fate of one frame transmitted over [tx_start, tx_end].
    /// `now` is the caller's current time, always <= frame.tx_start, and
    /// nondecreasing across calls; frame.tx_start may be in the future and is
    /// NOT monotone across calls (link-layer ARQ decides future attempts
    /// early), but is always >= now.
    fn is_lost(&mut self, now: Time, frame: &FrameInfo) -> bool;
    /// Channel state at time t >= now for time series: 0 = good / error-free
    /// phase, 1 = bad / error phase.
    fn state_at(&mut self, now: Time, t: Time) -> u8;
    /// Frames decided so far and how many were lost (for tests and reports).
    fn counts(&self) -> (u64, u64);
}

/// Frames decided and lost, kept by every model.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FateCounts {
    decided: u64,
    lost: u64,
}

impl FateCounts {
    /// Records one fate and passes it through.
    pub(crate) fn record(&mut self, lost: bool) -> bool {
        self.decided += 1;
        self.lost += u64::from(lost);
        lost
    }

    pub(crate) fn get(&self) -> (u64, u64) {
        (self.decided, self.lost)
    }
}

/// Draws one per-frame error with probability `p`. Exactly one number is
/// drawn per frame whatever `p` is, so the k-th frame always uses the k-th
/// draw of the frame stream and fates stay aligned between runs that differ
/// only in channel state.
pub(crate) fn draw_error(rng: &mut Pcg64Mcg, p: f64) -> bool {
    rng.random::<f64>() < p
}

/// The per-frame error stream of a model built with `frame_seed`.
pub(crate) fn frame_rng(frame_seed: u64) -> Pcg64Mcg {
    seeded(frame_seed)
}

/// A generator for a 64-bit seed. `seed_from_u64` spreads the seed over the
/// whole 128-bit state; `Pcg64Mcg::new(seed as u128)` would not, and since
/// the multiplicative generator forces its two low bits to 1, seeds 40..=43
/// would all give the same stream.
pub(crate) fn seeded(seed: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(seed)
}

#[cfg(test)]
mod tests;
