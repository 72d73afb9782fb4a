//! A perfect channel.

use super::{FateCounts, FrameInfo, LossProcess};
use joulenet_proto::Time;

/// Loses nothing; still counts the frames it was asked about.
#[derive(Clone, Debug, Default)]
pub struct NoLoss {
    counts: FateCounts,
}

impl LossProcess for NoLoss {
    fn is_lost(&mut self, _now: Time, _frame: &FrameInfo) -> bool {
        self.counts.record(false)
    }

    fn state_at(&mut self, _now: Time, _t: Time) -> u8 {
        0
    }

    fn counts(&self) -> (u64, u64) {
        self.counts.get()
    }
}
