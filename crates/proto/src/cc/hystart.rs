//! HyStart's delay test (Ha & Rhee 2011, as Linux's CUBIC runs it in
//! `hystart_update` and ns-3's `TcpCubic::HystartUpdate`): leave slow start
//! when the RTT of a round's first ACKs rises clearly above the smallest
//! RTT seen, before the queue overflows. How far above is where the two
//! stacks differ ([`HyStartFlavour`]). The ACK-train test is not modelled.

use crate::time::Duration;

/// Slow start below this many segments is left alone (`hystart_low_window`).
const LOW_WINDOW: u64 = 16;
/// RTT samples taken at the start of each round (`HYSTART_MIN_SAMPLES`).
const MIN_SAMPLES: u32 = 8;

/// Whose delay threshold the test uses.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum HyStartFlavour {
    /// Linux's `HYSTART_DELAY_THRESH`: an eighth of the minimum RTT,
    /// clamped to 4–16 ms.
    #[default]
    Linux,
    /// ns-3's `TcpCubic::HystartDelayThresh(m_delayMin)`: the minimum RTT
    /// itself, clamped to `HyStartDelayMin`–`HyStartDelayMax` (4 ms–1 s).
    Ns3,
}

impl HyStartFlavour {
    /// How far above the minimum RTT a round's RTT must rise.
    fn threshold(self, min: Duration) -> Duration {
        match self {
            HyStartFlavour::Linux => {
                Duration(min.0 / 8).clamp(Duration::from_millis(4), Duration::from_millis(16))
            }
            HyStartFlavour::Ns3 => min.clamp(Duration::from_millis(4), Duration::from_secs(1)),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct HyStart {
    flavour: HyStartFlavour,
    /// Smallest RTT of the connection.
    delay_min: Option<Duration>,
    /// Bytes acknowledged in this round, and the window when it began.
    round_acked: u64,
    round_len: u64,
    /// Smallest of this round's first samples, and how many were taken.
    curr_rtt: Option<Duration>,
    samples: u32,
}

impl HyStart {
    pub(crate) fn new(flavour: HyStartFlavour) -> HyStart {
        HyStart {
            flavour,
            ..HyStart::default()
        }
    }

    /// Forget the minimum RTT and the round (a timeout: Linux's
    /// `bictcp_hystart_reset`, ns-3's `HystartReset` and `CubicReset`).
    pub(crate) fn reset(&mut self) {
        *self = HyStart::new(self.flavour);
    }

    /// One ACK in slow start; true when slow start should end now.
    pub(crate) fn on_ack(
        &mut self,
        cwnd: u64,
        mss: u64,
        acked: u64,
        rtt: Option<Duration>,
    ) -> bool {
        self.round_acked += acked;
        if self.round_acked >= self.round_len {
            // A round is a window's worth of ACKs (Linux: past end_seq).
            self.round_acked = 0;
            self.round_len = cwnd;
            self.curr_rtt = None;
            self.samples = 0;
        }
        let Some(rtt) = rtt else { return false };
        let min = *self.delay_min.get_or_insert(rtt);
        self.delay_min = Some(min.min(rtt));
        if cwnd < LOW_WINDOW * mss {
            return false;
        }
        if self.samples < MIN_SAMPLES {
            self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
            self.samples += 1;
            return false;
        }
        let min = self.delay_min.unwrap_or(rtt);
        let thresh = self.flavour.threshold(min);
        self.curr_rtt
            .is_some_and(|c| c > min.saturating_add(thresh))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(h: &mut HyStart, cwnd: u64, rtt_ms: u64) -> bool {
        (0..cwnd / 1000).any(|_| h.on_ack(cwnd, 1000, 1000, Some(Duration::from_millis(rtt_ms))))
    }

    #[test]
    fn a_rising_rtt_ends_slow_start_and_a_flat_one_does_not() {
        let mut h = HyStart::default();
        assert!(!round(&mut h, 32_000, 100));
        assert!(!round(&mut h, 32_000, 110), "10 ms is within 100/8");
        assert!(round(&mut h, 32_000, 120), "20 ms above the minimum");
        // Small windows are left to slow start.
        let mut h = HyStart::default();
        assert!(!round(&mut h, 8_000, 100));
        assert!(!round(&mut h, 8_000, 200));
    }

    #[test]
    fn ns3_waits_for_a_rise_of_the_whole_minimum_rtt() {
        // 100 ms minimum: Linux leaves at 16 ms above it, ns-3 at 100 ms.
        let mut linux = HyStart::new(HyStartFlavour::Linux);
        let mut ns3 = HyStart::new(HyStartFlavour::Ns3);
        for h in [&mut linux, &mut ns3] {
            assert!(!round(h, 32_000, 100));
        }
        assert!(round(&mut linux, 32_000, 150));
        assert!(!round(&mut ns3, 32_000, 150), "50 ms is within ns-3's 100");
        assert!(round(&mut ns3, 32_000, 210));
        // Below 4 ms both floor the threshold at 4 ms.
        let mut ns3 = HyStart::new(HyStartFlavour::Ns3);
        assert!(!round(&mut ns3, 32_000, 1));
        assert!(!round(&mut ns3, 32_000, 4));
        assert!(round(&mut ns3, 32_000, 6));
    }
}
