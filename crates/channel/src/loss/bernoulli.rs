//! Independent per-frame loss.

use super::{draw_error, frame_rng, FateCounts, FrameInfo, LossProcess};
use joulenet_proto::Time;
use rand_pcg::Pcg64Mcg;

/// Loses each frame independently with probability `loss`.
#[derive(Clone, Debug)]
pub struct Bernoulli {
    loss: f64,
    rng: Pcg64Mcg,
    counts: FateCounts,
}

impl Bernoulli {
    pub fn new(loss: f64, frame_seed: u64) -> Bernoulli {
        Bernoulli {
            loss,
            rng: frame_rng(frame_seed),
            counts: FateCounts::default(),
        }
    }
}

impl LossProcess for Bernoulli {
    fn is_lost(&mut self, _now: Time, _frame: &FrameInfo) -> bool {
        let lost = draw_error(&mut self.rng, self.loss);
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
