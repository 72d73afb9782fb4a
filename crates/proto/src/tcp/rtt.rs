//! Retransmission timer (RFC 6298): SRTT/RTTVAR, clock granularity G = 1 ms,
//! bounded RTO, exponential backoff kept until a fresh sample arrives
//! (Karn's algorithm: the caller never samples a retransmitted segment).

use crate::time::Duration;

const GRANULARITY: Duration = Duration::from_millis(1);
/// Backoff beyond 2^16 cannot matter: max_rto caps long before.
const MAX_BACKOFF_SHIFT: u32 = 16;

#[derive(Clone, Debug)]
pub(crate) struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// RTO before backoff.
    base_rto: Duration,
    backoff: u32,
    min_rto: Duration,
    max_rto: Duration,
}

impl RttEstimator {
    pub(crate) fn new(initial: Duration, min_rto: Duration, max_rto: Duration) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            base_rto: initial,
            backoff: 0,
            min_rto,
            max_rto,
        }
    }

    /// RFC 6298 §2.2–2.3; a new sample also ends any backoff (§5.7).
    pub(crate) fn sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = Duration(rtt.0 / 2);
            }
            Some(srtt) => {
                let err = if srtt > rtt { srtt - rtt } else { rtt - srtt };
                self.rttvar = Duration((3 * (self.rttvar.0 / 4)).saturating_add(err.0 / 4));
                self.srtt = Some(Duration((7 * (srtt.0 / 8)).saturating_add(rtt.0 / 8)));
            }
        }
        let srtt = self.srtt.unwrap_or(rtt);
        let var = self.rttvar.saturating_mul(4).max(GRANULARITY);
        self.base_rto = srtt.saturating_add(var);
        self.backoff = 0;
    }

    /// §5.5: double the timer.
    pub(crate) fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF_SHIFT);
    }

    pub(crate) fn rto(&self) -> Duration {
        let rto = self.base_rto.max(self.min_rto).min(self.max_rto);
        rto.saturating_mul(1 << self.backoff).min(self.max_rto)
    }

    /// The RTO before exponential backoff, within the configured bounds.
    pub(crate) fn base_rto(&self) -> Duration {
        self.base_rto.max(self.min_rto).min(self.max_rto)
    }

    pub(crate) fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = est();
        e.sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        // 100 + 4 * 50 = 300 ms.
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn later_samples_smooth_with_one_eighth_and_one_quarter() {
        let mut e = est();
        e.sample(Duration::from_millis(100));
        e.sample(Duration::from_millis(200));
        assert_eq!(e.srtt(), Some(Duration::from_nanos(112_500_000)));
        // rttvar = 3/4 * 50 + 1/4 * 100 = 62.5 ms; rto = 112.5 + 250.
        assert_eq!(e.rto(), Duration::from_micros(362_500));
    }

    #[test]
    fn rto_is_bounded_and_backs_off_exponentially() {
        let mut e = est();
        e.sample(Duration::from_millis(1));
        assert_eq!(e.rto(), Duration::from_millis(200));
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(800));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.sample(Duration::from_millis(1));
        assert_eq!(e.rto(), Duration::from_millis(200));
    }
}
