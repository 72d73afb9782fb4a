//! Deterministic alternating error phases (the Wave & Probing paper's
//! PHASE_DROP): frames are dropped at random during On phases only.

use super::{draw_error, frame_rng, FateCounts, FrameInfo, LossProcess};
use joulenet_proto::{Duration, Time};
use rand_pcg::Pcg64Mcg;

/// On phases of length `on` alternate with Off phases of length `off`.
///
/// The pattern is periodic with period `on + off` and shifted by `offset`:
/// the first phase (On if `start_on`, else Off) begins at time `offset`, and
/// times before `offset` lie in the periodic extension of the pattern. Phase
/// boundaries are therefore a pure function of time, with no randomness.
#[derive(Clone, Debug)]
pub struct OnOffPhases {
    on: Duration,
    off: Duration,
    drop_rate: f64,
    start_on: bool,
    offset: Duration,
    rng: Pcg64Mcg,
    counts: FateCounts,
}

impl OnOffPhases {
    pub fn new(
        on: Duration,
        off: Duration,
        drop_rate: f64,
        start_on: bool,
        offset: Duration,
        frame_seed: u64,
    ) -> OnOffPhases {
        OnOffPhases {
            on,
            off,
            drop_rate,
            start_on,
            offset,
            rng: frame_rng(frame_seed),
            counts: FateCounts::default(),
        }
    }

    /// Whether `t` falls in an On (error) phase.
    pub fn is_on(&self, t: Time) -> bool {
        let period = u128::from(self.on.as_nanos()) + u128::from(self.off.as_nanos());
        if period == 0 {
            return false;
        }
        let shift = u128::from(self.offset.as_nanos()) % period;
        let position = (u128::from(t.as_nanos()) + period - shift) % period;
        let first = if self.start_on { self.on } else { self.off };
        let in_first_phase = position < u128::from(first.as_nanos());
        in_first_phase == self.start_on
    }
}

impl LossProcess for OnOffPhases {
    fn is_lost(&mut self, _now: Time, frame: &FrameInfo) -> bool {
        let p = if self.is_on(frame.tx_start) {
            self.drop_rate
        } else {
            0.0
        };
        let lost = draw_error(&mut self.rng, p);
        self.counts.record(lost)
    }

    fn state_at(&mut self, _now: Time, t: Time) -> u8 {
        u8::from(self.is_on(t))
    }

    fn counts(&self) -> (u64, u64) {
        self.counts.get()
    }
}
