//! Independent bit errors: longer frames are lost more often.

use super::frame_error::bit_error_probability;
use super::{draw_error, frame_rng, FateCounts, FrameInfo, LossProcess};
use joulenet_proto::Time;
use rand_pcg::Pcg64Mcg;

/// Corrupts each bit independently with probability `ber`; a frame is lost
/// if any of its bits is, so P(lost) = 1 − (1 − ber)^bits.
#[derive(Clone, Debug)]
pub struct BitError {
    ber: f64,
    rng: Pcg64Mcg,
    counts: FateCounts,
}

impl BitError {
    pub fn new(ber: f64, frame_seed: u64) -> BitError {
        BitError {
            ber,
            rng: frame_rng(frame_seed),
            counts: FateCounts::default(),
        }
    }
}

impl LossProcess for BitError {
    fn is_lost(&mut self, _now: Time, frame: &FrameInfo) -> bool {
        let lost = draw_error(&mut self.rng, bit_error_probability(self.ber, frame.bits));
        self.counts.record(lost)
    }

    /// Memoryless: the channel has no bad phase to report.
    fn state_at(&mut self, _now: Time, _t: Time) -> u8 {
        0
    }

    fn counts(&self) -> (u64, u64) {
        self.counts.get()
    }
}
