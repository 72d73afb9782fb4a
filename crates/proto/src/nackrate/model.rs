//! The sender's model of the path, after BBR (Cardwell et al. 2016): a
//! bottleneck rate and a minimum round trip, measured from deliveries, set
//! the pacing rate and a cap on the bytes in flight. Loss never lowers
//! either: a random loss is not a signal of congestion.
//!
//! One change from BBR, and why: BBR's rate sample counts delivered bytes,
//! so with a share p of packets lost at random the rate it measures is
//! (1 − p) of the bottleneck's and pacing at it leaves the link idle for
//! p of the time. Here a sample is the rate at which packets *arrive* at
//! the receiver (on its clock, duplicates included) divided by (1 − p̂),
//! where p̂ is the share of transmissions lost while the round trip shows
//! no queue — random loss, since a queue that drops is a full one. Losses
//! from an overflowing queue are therefore not made up for, and the model
//! still backs off a shared bottleneck the way BBR does: by its in-flight
//! cap and its probing cycle.

use std::collections::VecDeque;

use super::config::NackrateConfig;
use crate::time::{Duration, Time};

/// BBR's start-up gain, 2 / ln 2.
pub const STARTUP_GAIN: f64 = 2.885;
/// BBR's in-flight cap in steady state, in bandwidth-delay products.
pub const CWND_GAIN: f64 = 2.0;
/// BBR's ProbeBW pacing-gain cycle, one phase per minimum round trip.
pub const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Rounds a bandwidth sample stays in the max filter.
pub const BW_WINDOW_ROUNDS: u64 = 10;
/// The weight of one interval's loss share in p̂.
const LOSS_GAIN: f64 = 0.125;
/// How long ProbeRTT holds the in-flight cap at its floor.
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
/// Slack above the minimum round trip that still counts as "no queue":
/// a quarter of it, and a millisecond for the jitter of hosts' timers.
const QUEUE_SLACK: Duration = Duration::from_millis(1);
/// How long the longest gap between ACKs is remembered at least.
pub const ACK_GAP_MEMORY: Duration = Duration::from_secs(1);
/// Loss above the random share that, with a queue on the path, means the
/// queue overflowed (BBRv2's loss threshold, 2%).
const CONGESTIVE_LOSS: f64 = 0.02;

#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Phase {
    Startup,
    Drain,
    ProbeBw { index: usize, since: Time },
    ProbeRtt { until: Option<Time> },
}

/// One measurement of the path over an interval of the receiver's clock.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RateSample {
    /// Transport bytes per second that arrived.
    pub arrival_rate: f64,
    /// Transport bytes per second of transmissions whose successors
    /// arrived, lost ones included: the rate the path passed packets at,
    /// when they are lost after the bottleneck.
    pub transmission_rate: f64,
    /// Share of the interval's transmissions that did not arrive.
    pub loss: f64,
    /// Transmissions in the interval.
    pub transmissions: u64,
}

#[derive(Clone, Debug)]
pub struct Model {
    cfg: NackrateConfig,
    pub phase: Phase,
    /// (round, bytes/s): the max filter's samples, newest last, decreasing.
    bw_samples: VecDeque<(u64, f64)>,
    pub round: u64,
    min_rtt: Option<(Duration, Time)>,
    /// p̂: the random-loss share, and how many samples made it.
    pub random_loss: f64,
    loss_samples: u32,
    full_bw: f64,
    full_bw_rounds: u32,
    pub filled_pipe: bool,
    /// The longest gap between ACK arrivals lately (ACKs lost in a row,
    /// a host's stalls), with the round and the time it was seen at.
    ack_gap: Option<(Duration, u64, Time)>,
    packet: u64,
    /// The smallest round trip ever seen: the path without a queue. The
    /// test of "random loss" is against it, not against the windowed
    /// minimum, which a queue that never drains (a TCP flow keeping it
    /// full) would raise until every loss looked random.
    base_rtt: Option<Duration>,
    /// BBRv2's `inflight_hi`: a bound on the bytes in flight after a round
    /// trip lost more than the random share with a queue on the path.
    inflight_hi: Option<f64>,
    last_cut_round: u64,
    /// Times the congestive-loss bound cut the in-flight cap.
    pub bound_cuts: u64,
    /// The sender's probe timeout (before back-off): a silence shorter
    /// than it is not a stall.
    stall_after: Duration,
    /// The host's late-wake allowance (`late_wake`): a standing queue of
    /// this much time at the bottleneck is allowed in flight.
    late_wake: Duration,
}

impl Model {
    pub fn new(cfg: &NackrateConfig, packet_bytes: u64) -> Model {
        Model {
            cfg: cfg.clone(),
            phase: Phase::Startup,
            bw_samples: VecDeque::new(),
            round: 0,
            min_rtt: None,
            random_loss: 0.0,
            loss_samples: 0,
            full_bw: 0.0,
            full_bw_rounds: 0,
            filled_pipe: false,
            ack_gap: None,
            packet: packet_bytes,
            base_rtt: None,
            inflight_hi: None,
            last_cut_round: 0,
            bound_cuts: 0,
            stall_after: Duration::ZERO,
            late_wake: Duration::ZERO,
        }
    }

    /// The bottleneck rate estimate, transport bytes per second.
    pub fn bw(&self) -> Option<f64> {
        self.bw_samples.front().map(|&(_, b)| b)
    }

    /// The congestive-loss bound on the bytes in flight, if one holds.
    pub fn inflight_hi(&self) -> Option<f64> {
        self.inflight_hi
    }

    /// The longest recent gap between ACK arrivals.
    pub fn ack_gap(&self) -> Option<Duration> {
        self.ack_gap.map(|(g, _, _)| g)
    }

    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt.map(|(d, _)| d)
    }

    /// Bytes the path holds at the estimated rate and round trip.
    fn bdp(&self) -> Option<f64> {
        Some(self.bw()? * self.min_rtt()?.as_secs_f64())
    }

    fn pacing_gain(&self) -> f64 {
        match self.phase {
            Phase::Startup => STARTUP_GAIN,
            Phase::Drain => 1.0 / STARTUP_GAIN,
            Phase::ProbeBw { index, .. } => CYCLE[index],
            Phase::ProbeRtt { .. } => 1.0,
        }
    }

    /// Transport bytes per second to pace at.
    pub fn pacing_rate(&self) -> f64 {
        match self.bw() {
            Some(bw) => self.pacing_gain() * bw,
            None => match self.min_rtt() {
                // BBR's first rate: the initial window over the first RTT.
                Some(rtt) => {
                    STARTUP_GAIN * (self.cfg.initial_window as u64 * self.packet) as f64
                        / rtt.as_secs_f64().max(1e-6)
                }
                None => self.cfg.initial_rate as f64,
            },
        }
    }

    /// The most bytes in flight: a multiple of the bandwidth-delay product
    /// plus what the rate delivers over the longest recent gap between ACKs
    /// (so that a run of lost ACKs does not stop the sender: the pipe keeps
    /// going while the news is late), never below the initial window.
    pub fn cwnd(&self) -> u64 {
        let floor = self.cfg.initial_window as u64 * self.packet;
        if let Phase::ProbeRtt { .. } = self.phase {
            return 4 * self.packet;
        }
        let Some(bdp) = self.bdp() else {
            return floor;
        };
        let gain = match self.phase {
            Phase::Startup | Phase::Drain => STARTUP_GAIN,
            _ => CWND_GAIN,
        };
        // At most a probe timeout's worth (two round trips if more): a
        // longer silence is a stall (the probe timeout's business), and a
        // cap that grew with it would flood the queue once ACKs resume.
        // Not two round trips only: where the minimum round trip is far
        // below what a host's late timers and a run of lost ACKs make of
        // it (26 µs through a token bucket's burst, against ACK gaps of
        // 7–25 ms measured at 30% loss), that bound kept the cap at its
        // floor and the sender stopped a fifth of the time.
        let min_rtt = self.min_rtt().map_or(0.0, |d| d.as_secs_f64());
        let gap = self
            .ack_gap
            .map_or(0.0, |(g, _, _)| g.as_secs_f64())
            .min((2.0 * min_rtt).max(self.stall_after.as_secs_f64()));
        // Packets whose fate cannot be known yet by construction: those
        // within the reordering threshold of the newest arrival, and the
        // ones an ACK waits for, each needing 1 / (1 − p̂) transmissions.
        let undecided = (self.cfg.reorder_threshold + self.cfg.ack_every) as f64
            * self.packet as f64
            / (1.0 - self.random_loss.clamp(0.0, self.cfg.max_loss_compensation));
        let bw = self.bw().unwrap_or(0.0);
        let cap = gain * bdp + bw * gap + bw * self.late_wake.as_secs_f64() + undecided;
        let cap = self.inflight_hi.map_or(cap, |hi| cap.min(hi));
        (cap as u64).max(floor)
    }

    /// A round-trip sample (ACK delay removed).
    pub fn on_rtt(&mut self, now: Time, rtt: Duration) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        let expired = self
            .min_rtt
            .is_some_and(|(_, at)| now.saturating_since(at) > self.cfg.min_rtt_window);
        if self.min_rtt.is_none_or(|(m, _)| rtt <= m) || expired && !self.in_probe_rtt() {
            self.min_rtt = Some((rtt, now));
        }
    }

    fn in_probe_rtt(&self) -> bool {
        matches!(self.phase, Phase::ProbeRtt { .. })
    }

    /// Whether a round trip this long shows no queue on the path but the
    /// one kept on purpose for the host's late wakes (`set_late_wake`):
    /// that one is ours, not congestion, and with it taken for congestion
    /// the congestive-loss bound cut the cap on random loss's noise.
    pub fn uncongested(&self, rtt: Duration) -> bool {
        self.base_rtt
            .is_some_and(|m| rtt <= m + Duration(m.0 / 4) + QUEUE_SLACK + self.late_wake)
    }

    /// The sender's probe timeout before back-off: ACK gaps up to it widen
    /// the in-flight cap.
    pub fn set_stall_after(&mut self, pto: Duration) {
        self.stall_after = pto;
    }

    /// How late the host's wakes have lately been (0 in the simulator):
    /// the in-flight cap lets a queue of that much time stand at the
    /// bottleneck, so that the link does not idle while the sender waits
    /// for a core.
    pub fn set_late_wake(&mut self, allowance: Duration) {
        self.late_wake = allowance;
    }

    /// The time between two ACK arrivals, ending at `now`, for the
    /// in-flight cap. Remembered for ten rounds and at least
    /// [`ACK_GAP_MEMORY`]: where rounds are short (30 µs through a token
    /// bucket's burst) ten of them forgot a gap before the next, and the
    /// cap held a sender back for 8% of a run at 40% loss.
    pub fn on_ack_gap(&mut self, now: Time, gap: Duration) {
        let stale = self.ack_gap.is_some_and(|(_, r, at)| {
            self.round >= r + BW_WINDOW_ROUNDS && now.saturating_since(at) >= ACK_GAP_MEMORY
        });
        if stale || self.ack_gap.is_none_or(|(g, _, _)| gap >= g) {
            self.ack_gap = Some((gap, self.round, now));
        }
    }

    /// A delivery measurement; `latest_rtt` is the round trip of the ACK
    /// that closed it, to tell random loss from a queue's.
    pub fn on_sample(&mut self, s: RateSample, inflight: u64, latest_rtt: Duration) {
        if self.uncongested(latest_rtt) {
            // The mean of the first samples, then a moving average: from
            // 0 with the moving average's gain alone, p̂ took a few dozen
            // samples to reach the loss, and start-up, which builds a
            // queue and so takes few, ended at (1 − p) of the link's rate
            // (2.3 Mbit/s in a host run's first second at 40%).
            self.loss_samples += 1;
            let gain = LOSS_GAIN.max(1.0 / self.loss_samples as f64);
            self.random_loss += gain * (s.loss - self.random_loss);
        } else if s.loss > self.congestive_threshold(s.transmissions)
            && self.round > self.last_cut_round
        {
            // More lost than chance with a queue on the path: the queue
            // overflowed. Bound what is in flight, once per round trip, as
            // BBRv2 does (β = 0.7), so as not to keep a shared queue full.
            self.last_cut_round = self.round;
            self.bound_cuts += 1;
            let hi = 0.7 * inflight.max(4 * self.packet) as f64;
            self.inflight_hi = Some(self.inflight_hi.map_or(hi, |h| h.min(hi)));
        }
        let p = self.random_loss.clamp(0.0, self.cfg.max_loss_compensation);
        // What arrived, made up for random loss — but never more than was
        // sent through: the arrival count is noisy (binomial), the count
        // of transmissions is not, and the max filter would keep the noise.
        let bw = (s.arrival_rate / (1.0 - p)).min(s.transmission_rate);
        // Max filter over the last rounds: drop what the new sample beats
        // and what has aged out.
        while self.bw_samples.back().is_some_and(|&(_, b)| b <= bw) {
            self.bw_samples.pop_back();
        }
        self.bw_samples.push_back((self.round, bw));
        while self
            .bw_samples
            .front()
            .is_some_and(|&(r, _)| r + BW_WINDOW_ROUNDS <= self.round)
        {
            self.bw_samples.pop_front();
        }
    }

    /// The loss share above which a sample is not chance: the random share
    /// plus three standard errors of a binomial sample of this size, plus
    /// BBRv2's 2%.
    fn congestive_threshold(&self, n: u64) -> f64 {
        let p = self.random_loss.clamp(0.0, 1.0);
        p + 3.0 * (p * (1.0 - p) / n.max(1) as f64).sqrt() + CONGESTIVE_LOSS
    }

    /// A round trip ended.
    pub fn on_round(&mut self) {
        self.round += 1;
        // The bound grows back by a packet per round trip (additive
        // increase) until it no longer binds.
        if let Some(hi) = self.inflight_hi {
            let hi = hi + self.packet as f64;
            self.inflight_hi = (hi < 4.0 * self.bdp().unwrap_or(f64::MAX)).then_some(hi);
        }
        while self
            .bw_samples
            .front()
            .is_some_and(|&(r, _)| r + BW_WINDOW_ROUNDS <= self.round)
        {
            self.bw_samples.pop_front();
        }
    }

    /// Start-up's check that the pipe is full: the rate grew by less than
    /// a quarter three times in a row. BBR checks once per round trip;
    /// the sender checks once per round trip *and* per rate sample's worth
    /// of transmissions, since a round trip of a few packets (26 µs
    /// through a token bucket's burst) measures nothing at 40% loss, and
    /// three such rounds of noise ended start-up at a fraction of the
    /// link's rate (1.8 Mbit/s in a host run's first second).
    pub fn check_full_pipe(&mut self) {
        if self.filled_pipe {
            return;
        }
        let Some(bw) = self.bw() else { return };
        if bw >= 1.25 * self.full_bw {
            self.full_bw = bw;
            self.full_bw_rounds = 0;
        } else {
            self.full_bw_rounds += 1;
            if self.full_bw_rounds >= 3 {
                self.filled_pipe = true;
            }
        }
    }

    /// Move between phases; `inflight` is the bytes in flight now and
    /// `start_index` the ProbeBW phase to begin in (random, as BBR's, so
    /// that flows sharing a bottleneck do not probe in step).
    pub fn advance(&mut self, now: Time, inflight: u64, start_index: usize) {
        let bdp = self.bdp().unwrap_or(0.0);
        let min_rtt = self.min_rtt().unwrap_or(Duration::from_millis(1));
        match self.phase {
            Phase::Startup if self.filled_pipe => self.phase = Phase::Drain,
            Phase::Drain if inflight as f64 <= bdp => {
                self.phase = Phase::ProbeBw {
                    index: start_index % CYCLE.len(),
                    since: now,
                }
            }
            Phase::ProbeBw { index, since } => {
                let elapsed = now.saturating_since(since) >= min_rtt;
                let next = match index {
                    // Probe until a round trip passed and the extra is in
                    // flight; drain until a round trip passed or the queue
                    // is gone.
                    0 => elapsed && inflight as f64 >= 1.25 * bdp,
                    1 => elapsed || inflight as f64 <= bdp,
                    _ => elapsed,
                };
                if next {
                    self.phase = Phase::ProbeBw {
                        index: (index + 1) % CYCLE.len(),
                        since: now,
                    };
                }
            }
            Phase::ProbeRtt { until: None } if inflight <= 4 * self.packet => {
                self.phase = Phase::ProbeRtt {
                    until: Some(now + PROBE_RTT_TIME.max(min_rtt)),
                };
            }
            Phase::ProbeRtt { until: Some(t) } if now >= t => {
                if let Some((d, _)) = self.min_rtt {
                    self.min_rtt = Some((d, now));
                }
                self.phase = if self.filled_pipe {
                    Phase::ProbeBw {
                        index: start_index % CYCLE.len(),
                        since: now,
                    }
                } else {
                    Phase::Startup
                };
            }
            _ => {}
        }
        let expired = self
            .min_rtt
            .is_some_and(|(_, at)| now.saturating_since(at) > self.cfg.min_rtt_window);
        if expired && !self.in_probe_rtt() {
            self.phase = Phase::ProbeRtt { until: None };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        Model::new(&NackrateConfig::default(), 1420)
    }

    impl Model {
        fn on_sample_test(&mut self, s: RateSample, rtt: Duration) {
            self.on_sample(s, 0, rtt)
        }
    }

    fn sample(rate: f64, loss: f64) -> RateSample {
        RateSample {
            arrival_rate: rate,
            transmission_rate: rate / (1.0 - loss),
            loss,
            transmissions: 100,
        }
    }

    #[test]
    fn random_loss_is_made_up_for_and_a_queues_is_not() {
        let mut m = model();
        m.on_rtt(Time::ZERO, Duration::from_millis(10));
        // 30% of transmissions lost with no queue: p̂ converges to 0.3 and
        // the rate estimate to arrivals / 0.7.
        for _ in 0..100 {
            m.on_sample_test(sample(700_000.0, 0.3), Duration::from_millis(10));
        }
        assert!((m.random_loss - 0.3).abs() < 0.01, "{}", m.random_loss);
        assert!((m.bw().unwrap() - 1_000_000.0).abs() < 15_000.0);
        // A full queue (round trip tripled) drops half: p̂ stays put.
        for _ in 0..100 {
            m.on_sample_test(sample(700_000.0, 0.5), Duration::from_millis(30));
        }
        assert!((m.random_loss - 0.3).abs() < 0.01);
    }

    #[test]
    fn the_rate_is_a_max_over_ten_rounds_and_loss_never_lowers_it() {
        let mut m = model();
        m.on_rtt(Time::ZERO, Duration::from_millis(10));
        m.on_sample_test(sample(1_000_000.0, 0.0), Duration::from_millis(10));
        for _ in 0..9 {
            m.on_round();
            m.on_sample_test(sample(400_000.0, 0.0), Duration::from_millis(10));
        }
        assert_eq!(m.bw(), Some(1_000_000.0));
        m.on_round();
        m.on_sample_test(sample(400_000.0, 0.0), Duration::from_millis(10));
        assert_eq!(m.bw(), Some(400_000.0));
        let cwnd = m.cwnd();
        // Heavy loss reported while uncongested raises p̂, and so the
        // estimate, never lowers the cap.
        for _ in 0..50 {
            m.on_sample_test(sample(400_000.0, 0.4), Duration::from_millis(10));
        }
        assert!(m.cwnd() >= cwnd);
        assert!(m.bw().unwrap() > 600_000.0);
    }

    #[test]
    fn startup_ends_when_the_rate_stops_growing_then_drains_and_cycles() {
        let mut m = model();
        m.on_rtt(Time::ZERO, Duration::from_millis(10));
        let mut rate = 100_000.0;
        let mut t = Time::ZERO;
        for _ in 0..5 {
            m.on_sample_test(sample(rate, 0.0), Duration::from_millis(10));
            m.on_round();
            m.check_full_pipe();
            rate *= 2.0;
        }
        assert_eq!(m.phase, Phase::Startup);
        // The first round at the top still grew by half; three more do not.
        for _ in 0..4 {
            m.on_sample_test(sample(rate, 0.0), Duration::from_millis(10));
            m.on_round();
            m.check_full_pipe();
        }
        assert!(m.filled_pipe);
        m.advance(t, 1_000_000, 2);
        assert_eq!(m.phase, Phase::Drain);
        assert!(m.pacing_rate() < m.bw().unwrap());
        m.advance(t, 0, 2);
        assert!(matches!(m.phase, Phase::ProbeBw { index: 2, .. }));
        for _ in 0..6 {
            t += Duration::from_millis(11);
            m.advance(t, 0, 0);
        }
        assert!(matches!(m.phase, Phase::ProbeBw { index: 0, .. }));
        assert!((m.pacing_rate() / m.bw().unwrap() - 1.25).abs() < 1e-9);
        // ProbeRTT after the minimum round trip goes stale.
        t += Duration::from_secs(11);
        m.advance(t, 0, 0);
        assert_eq!(m.phase, Phase::ProbeRtt { until: None });
        assert_eq!(m.cwnd(), 4 * 1420);
    }

    #[test]
    fn lost_acks_widen_the_cap() {
        let mut m = model();
        m.on_rtt(Time::ZERO, Duration::from_millis(10));
        m.on_sample_test(sample(1_000_000.0, 0.0), Duration::from_millis(10));
        let before = m.cwnd();
        m.on_ack_gap(Time::ZERO, Duration::from_millis(20));
        assert!(m.cwnd().abs_diff(before + 20_000) <= 1);
    }
}
