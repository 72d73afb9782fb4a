//! The Gilbert–Elliott channel in continuous time: a good and a bad state
//! alternating with random sojourns, each with its own frame error rate.

use super::{draw_error, frame_rng, FateCounts, FrameError, FrameInfo, LossProcess, Sojourn};
use joulenet_proto::Time;
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// One state of a Gilbert–Elliott channel: how long it lasts and how frames
/// fare while it does.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct GeState {
    pub sojourn: Sojourn,
    pub loss: FrameError,
}

/// A Gilbert–Elliott loss process. Its state trajectory comes only from the
/// state seed and is generated lazily in time order, so it is the same
/// trajectory whichever frames (and in whichever order) it is asked about.
#[derive(Clone, Debug)]
pub struct GilbertElliott {
    good: GeState,
    bad: GeState,
    trajectory: StateTrajectory,
    frame_rng: Pcg64Mcg,
    counts: FateCounts,
}

impl GilbertElliott {
    pub fn new(
        good: GeState,
        bad: GeState,
        start_bad: bool,
        state_seed: u64,
        frame_seed: u64,
    ) -> GilbertElliott {
        GilbertElliott {
            good,
            bad,
            trajectory: StateTrajectory::new(state_seed, good.sojourn, bad.sojourn, start_bad),
            frame_rng: frame_rng(frame_seed),
            counts: FateCounts::default(),
        }
    }
}

impl LossProcess for GilbertElliott {
    fn is_lost(&mut self, now: Time, frame: &FrameInfo) -> bool {
        let bad = self.trajectory.is_bad_at(now, frame.tx_start);
        let state = if bad { self.bad } else { self.good };
        let lost = draw_error(&mut self.frame_rng, state.loss.probability(frame.bits));
        self.counts.record(lost)
    }

    fn state_at(&mut self, now: Time, t: Time) -> u8 {
        u8::from(self.trajectory.is_bad_at(now, t))
    }

    fn counts(&self) -> (u64, u64) {
        self.counts.get()
    }
}

/// The alternating good/bad trajectory, as far as it has been needed.
///
/// `segments[i]` is (start, is_bad); segment i lasts until segment i + 1
/// starts, and the last one until `horizon`. Segments that end at or before
/// the caller's `now` can never be asked about again and are dropped, so
/// memory stays proportional to how far ahead of `now` callers look.
#[derive(Clone, Debug)]
struct StateTrajectory {
    rng: Pcg64Mcg,
    good: Sojourn,
    bad: Sojourn,
    segments: VecDeque<(Time, bool)>,
    horizon: Time,
}

impl StateTrajectory {
    fn new(state_seed: u64, good: Sojourn, bad: Sojourn, start_bad: bool) -> StateTrajectory {
        let mut trajectory = StateTrajectory {
            rng: super::seeded(state_seed),
            good,
            bad,
            segments: VecDeque::new(),
            horizon: Time::ZERO,
        };
        trajectory.push(start_bad);
        trajectory
    }

    /// Whether the channel is bad at `t` (t >= now). Generation costs one
    /// sojourn draw per state change between the last generated one and `t`.
    fn is_bad_at(&mut self, now: Time, t: Time) -> bool {
        self.forget_before(now);
        while self.horizon <= t && !self.horizon.is_never() {
            let next_bad = !self.segments.back().is_some_and(|&(_, bad)| bad);
            self.push(next_bad);
        }
        // A caller breaking the t >= now contract gets the oldest state kept
        // rather than a panic.
        let index = self.segments.partition_point(|&(start, _)| start <= t);
        self.segments[index.saturating_sub(1)].1
    }

    /// Appends a sojourn in the given state, starting at the horizon.
    fn push(&mut self, bad: bool) {
        let sojourn = if bad { self.bad } else { self.good };
        let length = sojourn.sample(&mut self.rng);
        self.segments.push_back((self.horizon, bad));
        self.horizon += length;
    }

    fn forget_before(&mut self, now: Time) {
        while self.segments.len() >= 2 && self.segments[1].0 <= now {
            self.segments.pop_front();
        }
    }
}
