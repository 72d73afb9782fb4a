//! The receiver's rules for the next wave level.

use super::config::{Behaviour, WwpConfig};
use crate::time::Duration;

/// The paper's wave rule (§3.2): with measured time T and baseline B for a
/// wave at L levels, T in [(j−1)·B, j·B) for j = 1..=L gives level L+1−j;
/// an incomplete wave, or T ≥ L·B, gives 0. The aggressive behaviour jumps
/// to L whenever the conservative rule would give any non-zero level.
pub fn after_wave(cfg: &WwpConfig, complete: bool, measured: Duration, size: usize) -> u8 {
    if !complete {
        return 0;
    }
    let top = cfg.top() as u64;
    let b = cfg.baseline(size).0;
    let j = measured.0.checked_div(b).map_or(1, |k| k + 1);
    if j > top {
        return 0;
    }
    match cfg.behaviour {
        Behaviour::Conservative => (top + 1 - j) as u8,
        Behaviour::Aggressive => top as u8,
    }
}

/// What the receiver learned in one probe cycle.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ProbeCycle {
    /// PR1 ACK → the PROBE2 that answered it; none when the PROBE2 that
    /// arrived was resent on PROBE_T (its delay includes the timeout).
    pub rtt1: Option<Duration>,
    /// PR2 ACK → the PROBE3 that answered it; none as for `rtt1`.
    pub rtt2: Option<Duration>,
    /// The path's RTT as earlier probe cycles measured it (smoothed); the
    /// first cycle's own smaller RTT.
    pub reference_rtt: Duration,
    /// Probes the sender sent in this cycle that never arrived (gaps in
    /// the probe sequence numbers; a probe resent because its
    /// acknowledgment was lost arrived, and is not counted).
    pub lost_probes: u32,
    /// The level the last wave decided (0 if that wave went wrong).
    pub last_wave_level: u8,
}

/// The end-of-probe-cycle rule. The paper leaves it unstandardised ("a set
/// of rules has been developed, implemented and calibrated"); ours:
///
/// * r = (max(RTT1, RTT2) + |RTT1 − RTT2|) / reference RTT: delay plus
///   jitter against what earlier cycles measured (smoothed), the reference
///   no smaller than the configured RTT granularity (host timing noise is
///   not path state). r ≤ 1.5 → L,
///   ≤ 2.5 → L−1, ≤ 4 → 1, else 0. With one RTT measured it stands for
///   both (no jitter); with none the cycle learned nothing: 0, probe again.
/// * Conservative: minus one level per lost probe; with `gradual_resume`
///   also at most one level above the last wave's decision (at least 1).
/// * Aggressive: a clear cycle (no lost probe, r ≤ 2.5) goes straight to L;
///   otherwise 0 (probe again).
pub fn after_probes(cfg: &WwpConfig, p: &ProbeCycle) -> u8 {
    let Some(r) = delay_ratio(cfg, p) else {
        return 0;
    };
    let top = cfg.top();
    let by_rtt = if r <= 1.5 {
        top
    } else if r <= 2.5 {
        top.saturating_sub(1).max(1)
    } else if r <= 4.0 {
        1
    } else {
        0
    };
    match cfg.behaviour {
        Behaviour::Conservative => {
            let lossy = by_rtt.saturating_sub(p.lost_probes.min(255) as u8);
            if cfg.gradual_resume {
                lossy.min(p.last_wave_level.saturating_add(1).max(1))
            } else {
                lossy
            }
        }
        Behaviour::Aggressive => {
            if p.lost_probes == 0 && r <= 2.5 {
                top
            } else {
                0
            }
        }
    }
}

/// (max RTT + jitter) / reference RTT, from the RTTs the cycle measured.
fn delay_ratio(cfg: &WwpConfig, p: &ProbeCycle) -> Option<f64> {
    let (r1, r2) = match (p.rtt1, p.rtt2) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) | (None, Some(a)) => (a, a),
        (None, None) => return None,
    };
    let hi = r1.max(r2);
    let jitter = if r1 > r2 { r1 - r2 } else { r2 - r1 };
    let base = p.reference_rtt.max(cfg.rtt_granularity).0.max(1) as f64;
    Some((hi.0 + jitter.0) as f64 / base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn wave_rule_follows_the_paper() {
        let cfg = WwpConfig::default();
        // 36 segments: B = 35 KB / 40 KB/s = 875 ms.
        let b = cfg.baseline(36);
        assert_eq!(b, ms(875));
        assert_eq!(after_wave(&cfg, true, ms(100), 36), 3);
        assert_eq!(after_wave(&cfg, true, ms(874), 36), 3);
        assert_eq!(after_wave(&cfg, true, ms(875), 36), 2);
        assert_eq!(after_wave(&cfg, true, ms(1800), 36), 1);
        assert_eq!(after_wave(&cfg, true, ms(2625), 36), 0);
        assert_eq!(after_wave(&cfg, false, ms(1), 36), 0);
        let agg = WwpConfig {
            behaviour: Behaviour::Aggressive,
            ..cfg
        };
        assert_eq!(after_wave(&agg, true, ms(1800), 36), 3);
        assert_eq!(after_wave(&agg, true, ms(2700), 36), 0);
    }

    #[test]
    fn probe_rule_uses_rtt_jitter_and_losses() {
        let cfg = WwpConfig::default();
        let clear = ProbeCycle {
            rtt1: Some(ms(100)),
            rtt2: Some(ms(100)),
            reference_rtt: ms(100),
            lost_probes: 0,
            last_wave_level: 3,
        };
        assert_eq!(after_probes(&cfg, &clear), 3);
        let jittery = ProbeCycle {
            rtt1: Some(ms(100)),
            rtt2: Some(ms(180)),
            ..clear
        };
        assert_eq!(after_probes(&cfg, &jittery), 1);
        let lossy = ProbeCycle {
            lost_probes: 1,
            ..clear
        };
        assert_eq!(after_probes(&cfg, &lossy), 2);
        let after_failure = ProbeCycle {
            last_wave_level: 0,
            ..clear
        };
        // As the paper: a clear cycle after a failed wave resumes high.
        assert_eq!(after_probes(&cfg, &after_failure), 3);
        let gradual = WwpConfig {
            gradual_resume: true,
            ..cfg.clone()
        };
        assert_eq!(after_probes(&gradual, &after_failure), 1);
        assert_eq!(after_probes(&gradual, &clear), 3);
        let one_rtt = ProbeCycle {
            rtt1: None,
            ..clear
        };
        assert_eq!(after_probes(&cfg, &one_rtt), 3);
        let none = ProbeCycle {
            rtt2: None,
            ..one_rtt
        };
        assert_eq!(after_probes(&cfg, &none), 0);
        let slow = ProbeCycle {
            rtt2: Some(ms(500)),
            rtt1: Some(ms(500)),
            ..clear
        };
        assert_eq!(after_probes(&cfg, &slow), 0);
        let agg = WwpConfig {
            behaviour: Behaviour::Aggressive,
            ..cfg
        };
        assert_eq!(after_probes(&agg, &after_failure), 3);
        assert_eq!(after_probes(&agg, &lossy), 0);
    }

    /// A 10 µs base RTT with 0.3 ms of host jitter is a clear path, not a
    /// 60-fold delay; above the granularity the rule is unchanged.
    #[test]
    fn probe_rule_ignores_jitter_below_the_rtt_granularity() {
        let us = Duration::from_micros;
        let cfg = WwpConfig::default();
        let loopback = ProbeCycle {
            rtt1: Some(us(300)),
            rtt2: Some(us(10)),
            reference_rtt: us(10),
            lost_probes: 0,
            last_wave_level: 3,
        };
        assert_eq!(after_probes(&cfg, &loopback), 3);
        let exact = WwpConfig {
            rtt_granularity: Duration::ZERO,
            ..cfg.clone()
        };
        assert_eq!(after_probes(&exact, &loopback), 0);
        let wide_area = ProbeCycle {
            rtt1: Some(ms(100)),
            rtt2: Some(ms(180)),
            reference_rtt: ms(100),
            ..loopback
        };
        assert_eq!(
            after_probes(&cfg, &wide_area),
            after_probes(&exact, &wide_area)
        );
    }
}
