//! Retransmission timer (RFC 6298): SRTT/RTTVAR, clock granularity G = 1 ms,
//! bounded RTO, exponential backoff kept until a fresh sample arrives
//! (Karn's algorithm: the caller never samples a retransmitted segment).

use super::profile::RtoFormula;
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
    /// Clock granularity G (TCP profiles' `clock_tick`).
    tick: Duration,
    formula: RtoFormula,
    max_backoff_shift: u32,
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
            tick: GRANULARITY,
            formula: RtoFormula::Rfc6298,
            max_backoff_shift: MAX_BACKOFF_SHIFT,
        }
    }

    /// A TCP profile's timer rules: its clock tick, RTO formula and
    /// back-off cap (`profile.rs`).
    pub(crate) fn with_rules(
        mut self,
        tick: Duration,
        formula: RtoFormula,
        max_backoff_shift: u32,
    ) -> RttEstimator {
        self.tick = tick.max(GRANULARITY);
        self.formula = formula;
        self.max_backoff_shift = max_backoff_shift.min(MAX_BACKOFF_SHIFT);
        self
    }

    /// A sample as a clock of `tick` granularity counts it: whole ticks,
    /// rounded up, at least one.
    fn in_ticks(&self, rtt: Duration) -> Duration {
        let t = self.tick.as_nanos().max(1);
        let n = rtt.as_nanos().div_ceil(t).max(1);
        Duration::from_nanos(n.saturating_mul(t))
    }

    /// RFC 6298 §2.2–2.3; a new sample also ends any backoff (§5.7).
    pub(crate) fn sample(&mut self, rtt: Duration) {
        let rtt = if self.tick > GRANULARITY {
            self.in_ticks(rtt)
        } else {
            rtt
        };
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
        let four_var = self.rttvar.saturating_mul(4);
        let var = match self.formula {
            RtoFormula::Rfc6298 => four_var.max(self.tick),
            RtoFormula::LinuxRttvarFloor => four_var.max(self.min_rto),
        };
        self.base_rto = srtt.saturating_add(var);
        if self.tick > GRANULARITY {
            self.base_rto = self.in_ticks(self.base_rto);
        }
        self.backoff = 0;
    }

    /// §5.5: double the timer.
    pub(crate) fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(self.max_backoff_shift);
    }

    /// Ends the back-off without a new sample (ns-3's `NewAck`).
    pub(crate) fn clear_backoff(&mut self) {
        self.backoff = 0;
    }

    pub(crate) fn rto(&self) -> Duration {
        let rto = self.base_rto();
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

    #[test]
    fn linux_floors_the_variation_term_not_the_rto() {
        // SRTT 300 ms with no variation: RFC 6298 gives max(200, 300 + G),
        // Linux 300 + 200.
        let steady = |formula| {
            let mut e = est().with_rules(GRANULARITY, formula, MAX_BACKOFF_SHIFT);
            for _ in 0..60 {
                e.sample(Duration::from_millis(300));
            }
            e.rto()
        };
        assert!(steady(RtoFormula::Rfc6298) < Duration::from_millis(310));
        assert_eq!(
            steady(RtoFormula::LinuxRttvarFloor),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn a_coarse_clock_counts_samples_and_the_rto_in_whole_ticks() {
        let tick = Duration::from_millis(500);
        let mut e = est().with_rules(tick, RtoFormula::Rfc6298, MAX_BACKOFF_SHIFT);
        e.sample(Duration::from_millis(40));
        // One tick of RTT (500 ms), variation 250 ms: 500 + 1000 = 1.5 s.
        assert_eq!(e.srtt(), Some(tick));
        assert_eq!(e.rto(), Duration::from_millis(1500));
        let mut fine = est();
        fine.sample(Duration::from_millis(40));
        assert_eq!(fine.srtt(), Some(Duration::from_millis(40)));
    }

    #[test]
    fn back_off_stops_at_the_cap_and_a_new_ack_may_clear_it() {
        let mut e = est().with_rules(GRANULARITY, RtoFormula::Rfc6298, 6);
        e.sample(Duration::from_millis(1));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_millis(200 * 64));
        e.clear_backoff();
        assert_eq!(e.rto(), Duration::from_millis(200));
    }
}
