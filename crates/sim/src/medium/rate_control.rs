//! 802.11 bit-rate selection: a fixed data rate (the default), or
//! *SampleRate* (J. Bicket, "Bit-rate selection in wireless networks",
//! MIT MS thesis, 2005; MadWifi's default, the one the Hop paper's §5.9 and
//! §5.10 ran TCP with).
//!
//! SampleRate keeps, per destination and per rate, the average time a
//! delivered frame costs at that rate — every attempt's backoff, DIFS,
//! airtime, SIFS and ACK, divided by the frames acknowledged — and sends at
//! the rate with the lowest. Every 10th frame it samples instead a random
//! other rate that could do better (its lossless time is below the best
//! average) and has not failed 4 times in a row within the last 10 s. A
//! destination starts at the highest rate up to 36 Mbit/s that has not
//! failed and steps down while a rate fails 4 frames in a row. A frame
//! falls back within its own retries as the Atheros hardware's multi-rate
//! retry does under the sample driver's schedules (`series_11g`/`_11a` of
//! the `ath_rate/sample` driver, MadWifi's and FreeBSD's): 4 attempts at
//! its chosen rate, 3 at the next lower, 4 at the one below, 2 at the
//! lowest, and any the retry limit allows beyond those 13 at the lowest
//! too. A frame counts as a success of its chosen rate only if one of its
//! first 4 attempts got through (the driver's `update_stats`). Its only
//! input is link-layer ARQ: how many attempts a frame took and whether it
//! was acknowledged. Frames sent without ARQ (broadcasts, Hop's data) stay
//! at the configured rate.
//!
//! Simplifications against the driver, said here so a reader can weigh
//! them: one packet-size bin (it keeps several); its fallback rates are
//! the next lower rates of our one modulation family (802.11g's schedule
//! also falls to DSSS rates, which our ERP-OFDM PHY does not have); the
//! 10 s statistics window is an exponential decay of 0.95 per frame at
//! that rate (the driver's own smoothing factor); no hold between
//! switches.
//!
//! Loss at each rate comes from the reception model (`per_at_rate`): the
//! scenario's PER curve describes the configured rate, and another rate
//! needs its SNR threshold's difference more or less signal.

use joulenet_proto::{Duration, NodeId, Time};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::phy::{Modulation, Phy};

/// `rate_control` in `[medium]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum RateControl {
    /// Every data frame at the PHY's configured rate.
    #[default]
    Fixed,
    SampleRate,
}

/// SNR (dB) a data rate needs, on a scale where only differences matter.
///
/// DSSS/HR-DSSS (802.11b): the SNR at which a 1000-byte frame is lost half
/// the time under ns-3's `DsssErrorRateModel` (DBPSK and DQPSK in closed
/// form, CCK by its symbol-error integrals; `scripts/dsss-snr-thresholds.py`
/// computes them). OFDM/ERP-OFDM (802.11g): the receiver
/// minimum input sensitivities of IEEE 802.11-2016 Table 17-18 (dBm), whose
/// differences are SNR differences at one noise floor.
const DSSS_SNR_DB: [(u64, f64); 4] = [
    (1_000_000, -4.05),
    (2_000_000, 0.48),
    (5_500_000, 3.10),
    (11_000_000, 6.11),
];
const OFDM_SNR_DB: [(u64, f64); 8] = [
    (6_000_000, -82.0),
    (9_000_000, -81.0),
    (12_000_000, -79.0),
    (18_000_000, -77.0),
    (24_000_000, -74.0),
    (36_000_000, -70.0),
    (48_000_000, -66.0),
    (54_000_000, -65.0),
];

fn table(phy: &Phy) -> &'static [(u64, f64)] {
    match phy.modulation {
        Modulation::Dsss { .. } => &DSSS_SNR_DB,
        Modulation::Ofdm { .. } => &OFDM_SNR_DB,
    }
}

/// The data rates of the PHY's modulation family, slowest first.
pub fn rates_of(phy: &Phy) -> Vec<u64> {
    table(phy).iter().map(|&(r, _)| r).collect()
}

/// How many dB more SNR `rate` needs than the PHY's configured rate (a
/// configured rate off the table counts as its nearest one below).
pub fn extra_snr_db(phy: &Phy, rate: u64) -> f64 {
    let need = |r: u64| {
        let t = table(phy);
        t.iter().rev().find(|&&(x, _)| x <= r).unwrap_or(&t[0]).1
    };
    need(rate) - need(phy.rate_bps)
}

/// PER at a rate that needs `extra_db` more SNR than the rate `per` was
/// measured at, on a logistic PER curve `width_db` wide: the link's SNR
/// margin is read back off the curve and shifted. 0 and 1 stay put (a
/// perfect link or no link at every rate).
pub fn per_at_rate(per: f64, extra_db: f64, width_db: f64) -> f64 {
    if per <= 0.0 || per >= 1.0 || extra_db == 0.0 {
        return per;
    }
    let margin = ((1.0 - per) / per).ln();
    1.0 / (1.0 + (margin - extra_db / width_db).exp())
}

/// Attempts at the chosen rate, at the next lower, at the one below, and
/// at the lowest (the sample driver's retry schedule); attempts beyond
/// them stay at the lowest.
const SCHEDULE: [u32; 4] = [4, 3, 4, 2];
/// Attempts of a frame at its chosen rate (the schedule's first series).
pub const CHAIN_TRIES: u32 = SCHEDULE[0];

/// The rate index attempt `attempt` (0 the first) of a frame chosen at
/// rate index `rate` goes at, under the retry schedule.
pub fn scheduled_rate(rate: usize, attempt: u32) -> usize {
    let mut end = 0;
    for (series, tries) in SCHEDULE.iter().enumerate() {
        end += tries;
        if attempt < end {
            return match series {
                3 => 0,
                k => rate.saturating_sub(k),
            };
        }
    }
    0
}
/// The fastest rate a destination starts at, before any measurement.
const FIRST_RATE_CAP: u64 = 36_000_000;
/// Frames between samples (MadWifi's 10% sample rate).
const SAMPLE_EVERY: u64 = 10;
/// Failures in a row after which a rate is skipped.
const FAILURES: u32 = 4;
/// How long a rate that failed stays skipped.
const STALE_FAILURE: Duration = Duration(10_000_000_000);
/// Weight kept per new frame at a rate.
const DECAY: f64 = 0.95;

#[derive(Clone, Debug, Default)]
struct RateStats {
    /// Decayed sums: time spent on frames at this rate, frames acknowledged.
    time_us: f64,
    acked: f64,
    failures_in_row: u32,
    last_failure: Option<Time>,
}

impl RateStats {
    fn average_us(&self) -> Option<f64> {
        (self.acked > 0.0).then(|| self.time_us / self.acked)
    }

    fn failing(&self, now: Time) -> bool {
        self.failures_in_row >= FAILURES
            && self.last_failure.is_some_and(|t| now < t + STALE_FAILURE)
    }
}

/// One destination's statistics.
#[derive(Clone, Debug)]
struct Destination {
    node: NodeId,
    rates: Vec<RateStats>,
    frames: u64,
}

/// SampleRate's state at one station: every destination it has sent to.
pub struct SampleRate {
    /// Rates slowest first.
    rates: Vec<u64>,
    dests: Vec<Destination>,
    rng: Pcg64Mcg,
}

/// Timing SampleRate charges an attempt with.
#[derive(Clone, Debug)]
pub struct AttemptCost {
    difs: Duration,
    sifs: Duration,
    ack: Duration,
    slot: Duration,
    cw_min: u32,
    cw_max: u32,
}

impl AttemptCost {
    pub fn of(phy: &Phy) -> AttemptCost {
        AttemptCost {
            difs: phy.difs(),
            sifs: phy.sifs,
            ack: phy.ack_airtime(),
            slot: phy.slot,
            cw_min: phy.cw_min,
            cw_max: phy.cw_max,
        }
    }

    /// Time (µs) a frame of `airtime` costs over `tries` attempts: each
    /// one's DIFS, mean backoff of its doubled window, the frame, SIFS and
    /// ACK (or its timeout, as long).
    pub fn frame_us(&self, airtime: Duration, tries: u32) -> f64 {
        self.chain_us(|_| airtime, tries)
    }

    /// The same when attempt k takes `airtime(k)` (the retry schedule).
    pub fn chain_us(&self, airtime: impl Fn(u32) -> Duration, tries: u32) -> f64 {
        let mut cw = self.cw_min;
        let mut t = 0.0;
        for k in 0..tries.max(1) {
            let air = airtime(k);
            let backoff = self.slot.as_secs_f64() * cw as f64 / 2.0;
            t += (self.difs + air + self.sifs + self.ack).as_secs_f64() + backoff;
            cw = (2 * cw + 1).min(self.cw_max);
        }
        t * 1e6
    }
}

impl SampleRate {
    pub fn new(phy: &Phy, rng: Pcg64Mcg) -> SampleRate {
        SampleRate {
            rates: rates_of(phy),
            dests: Vec::new(),
            rng,
        }
    }

    pub fn rates(&self) -> &[u64] {
        &self.rates
    }

    fn fresh(&self, node: NodeId) -> Destination {
        Destination {
            node,
            rates: vec![RateStats::default(); self.rates.len()],
            frames: 0,
        }
    }

    fn dest_index(&mut self, node: NodeId) -> usize {
        match self.dests.iter().position(|d| d.node == node) {
            Some(i) => i,
            None => {
                self.dests.push(self.fresh(node));
                self.dests.len() - 1
            }
        }
    }

    /// The rate index of the lowest average time; without any, the highest
    /// rate up to 36 Mbit/s not failing (the lowest if all are).
    fn best(&self, d: &Destination, now: Time) -> usize {
        let measured = d
            .rates
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.failing(now))
            .filter_map(|(i, s)| s.average_us().map(|a| (i, a)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((i, _)) = measured {
            return i;
        }
        (0..d.rates.len())
            .rev()
            .find(|&i| self.rates[i] <= FIRST_RATE_CAP && !d.rates[i].failing(now))
            .unwrap_or(0)
    }

    /// The rate index the next frame toward `node` would use, without
    /// counting it (for planning a transmit opportunity).
    pub fn peek(&self, node: NodeId, now: Time) -> usize {
        match self.dests.iter().find(|d| d.node == node) {
            Some(d) => self.best(d, now),
            None => self.best(&self.fresh(node), now),
        }
    }

    /// Choose the rate index for a new frame toward `node`; `lossless_us`
    /// gives a rate's time for this frame with one attempt.
    pub fn choose(&mut self, node: NodeId, now: Time, lossless_us: impl Fn(u64) -> f64) -> usize {
        let i = self.dest_index(node);
        self.dests[i].frames += 1;
        let d = &self.dests[i];
        let best = self.best(d, now);
        if !d.frames.is_multiple_of(SAMPLE_EVERY) {
            return best;
        }
        let Some(best_avg) = d.rates[best].average_us() else {
            return best;
        };
        let candidates: Vec<usize> = (0..self.rates.len())
            .filter(|&i| i != best && !d.rates[i].failing(now))
            .filter(|&i| lossless_us(self.rates[i]) < best_avg)
            .collect();
        if candidates.is_empty() {
            return best;
        }
        candidates[self.rng.random_range(0..candidates.len())]
    }

    /// A frame toward `node` at rate index `rate` took `tries` attempts
    /// costing `time_us`, and was acknowledged or given up.
    pub fn report(&mut self, node: NodeId, rate: usize, time_us: f64, acked: bool, now: Time) {
        let i = self.dest_index(node);
        let Some(s) = self.dests[i].rates.get_mut(rate) else {
            return;
        };
        s.time_us = s.time_us * DECAY + time_us;
        s.acked = s.acked * DECAY + if acked { 1.0 } else { 0.0 };
        if acked {
            s.failures_in_row = 0;
        } else {
            s.failures_in_row += 1;
            s.last_failure = Some(now);
        }
    }
}

/// Rate control across a medium's stations: each station's SampleRate,
/// what every rate costs on the air and how much more SNR it needs.
pub struct RateSelection {
    phy: Phy,
    per_station: Vec<SampleRate>,
    rates: Vec<u64>,
    extra_db: Vec<f32>,
    cost: AttemptCost,
    /// Attempts put on the air at each rate.
    attempts: Vec<u64>,
}

/// The configured rate, for frames rate control does not choose for.
pub const CONFIGURED: u8 = u8::MAX;

impl RateSelection {
    /// `None` for a fixed rate. `rng(i)` is station i's sampling stream.
    pub fn new(
        kind: RateControl,
        phy: &Phy,
        n: usize,
        rng: impl Fn(usize) -> Pcg64Mcg,
    ) -> Option<RateSelection> {
        if kind == RateControl::Fixed {
            return None;
        }
        let rates = rates_of(phy);
        Some(RateSelection {
            phy: phy.clone(),
            per_station: (0..n).map(|i| SampleRate::new(phy, rng(i))).collect(),
            extra_db: rates.iter().map(|&r| extra_snr_db(phy, r) as f32).collect(),
            attempts: vec![0; rates.len()],
            rates,
            cost: AttemptCost::of(phy),
        })
    }

    /// Airtime of a PSDU of `bytes` at rate index `rate`.
    pub fn airtime(&self, rate: u8, bytes: u32) -> Duration {
        match self.rates.get(rate as usize) {
            Some(&r) => self.phy.airtime(bytes, r),
            None => self.phy.airtime(bytes, self.phy.rate_bps),
        }
    }

    /// An attempt goes on the air at rate index `rate`.
    pub fn sent(&mut self, rate: u8) {
        if let Some(c) = self.attempts.get_mut(rate as usize) {
            *c += 1;
        }
    }

    /// (rate in bit/s, attempts at it) for every rate.
    pub fn attempts_by_rate(&self) -> Vec<(u64, u64)> {
        self.rates
            .iter()
            .copied()
            .zip(self.attempts.iter().copied())
            .collect()
    }

    /// dB more SNR rate index `rate` needs than the configured rate.
    pub fn extra_db(&self, rate: u8) -> f32 {
        self.extra_db.get(rate as usize).copied().unwrap_or(0.0)
    }

    /// Station `s` picks the rate of a new frame of `bytes` toward `next`.
    pub fn choose(&mut self, s: usize, next: NodeId, bytes: u32, now: Time) -> u8 {
        let (phy, cost) = (&self.phy, &self.cost);
        let lossless = |r: u64| cost.frame_us(phy.airtime(bytes, r), 1);
        self.per_station[s].choose(next, now, lossless) as u8
    }

    /// The rate index station `s`'s next frame toward `next` would get.
    pub fn peek(&self, s: usize, next: NodeId, now: Time) -> u8 {
        self.per_station[s].peek(next, now) as u8
    }

    /// The rate index attempt `attempt` (0 the first) of a frame whose
    /// chosen rate index is `rate` goes at ([`scheduled_rate`]).
    pub fn attempt_rate(rate: u8, attempt: u32) -> u8 {
        match rate {
            CONFIGURED => rate,
            r => scheduled_rate(r as usize, attempt) as u8,
        }
    }

    /// Link-layer ARQ's verdict on a frame of `bytes` sent at `rate` after
    /// `tries` attempts: a success of `rate` if acknowledged within the
    /// chain's first tries.
    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &mut self,
        s: usize,
        next: NodeId,
        rate: u8,
        bytes: u32,
        tries: u32,
        acked: bool,
        now: Time,
    ) {
        if rate == CONFIGURED {
            return;
        }
        let air = |k| self.airtime(Self::attempt_rate(rate, k), bytes);
        let t = self.cost.chain_us(air, tries);
        let acked = acked && tries <= CHAIN_TRIES;
        self.per_station[s].report(next, rate as usize, t, acked, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Streams;

    fn b() -> Phy {
        Phy::preset("802.11b", false).unwrap()
    }

    #[test]
    fn slower_rates_lose_less_and_the_configured_rate_is_unchanged() {
        let phy = b();
        assert_eq!(extra_snr_db(&phy, 11_000_000), 0.0);
        let mut last = 0.0;
        for r in rates_of(&phy) {
            let p = per_at_rate(0.5, extra_snr_db(&phy, r), 1.0);
            assert!(p > last, "PER must grow with the rate: {r} {p}");
            last = p;
        }
        assert!((per_at_rate(0.5, 0.0, 1.0) - 0.5).abs() < 1e-12);
        assert_eq!(per_at_rate(0.0, -10.0, 1.0), 0.0);
        assert_eq!(per_at_rate(1.0, -10.0, 1.0), 1.0);
        // 1 Mbit/s needs about 10 dB less than 11: a 50% link is clean.
        assert!(per_at_rate(0.5, extra_snr_db(&phy, 1_000_000), 1.0) < 1e-4);
        let g = Phy::preset("802.11g-24", false).unwrap();
        assert_eq!(extra_snr_db(&g, 54_000_000), 9.0);
        assert_eq!(extra_snr_db(&g, 6_000_000), -8.0);
    }

    /// The sample driver's 54 Mbit/s schedule: 4 × 54, 3 × 48, 4 × 36,
    /// 2 × the lowest; then the lowest for good.
    #[test]
    fn retries_step_down_the_schedule() {
        let g = Phy::preset("802.11g-24", false).unwrap();
        let rates = rates_of(&g);
        let at = |k| rates[scheduled_rate(7, k)] / 1_000_000;
        let chain: Vec<u64> = (0..15).map(at).collect();
        assert_eq!(
            chain,
            [54, 54, 54, 54, 48, 48, 48, 36, 36, 36, 36, 6, 6, 6, 6]
        );
        assert_eq!(scheduled_rate(0, 5), 0);
        assert_eq!(scheduled_rate(1, 8), 0);
    }

    /// Feed SampleRate frames whose fate is drawn from each rate's PER.
    fn run(per_at_configured: f64, frames: usize, seed: u64) -> Vec<usize> {
        let phy = b();
        let streams = Streams::new(seed);
        let mut sr = SampleRate::new(&phy, streams.stream("rate"));
        let mut loss = streams.stream("loss");
        let cost = AttemptCost::of(&phy);
        let rates = sr.rates().to_vec();
        let mut used = vec![0; rates.len()];
        let mut now = Time::ZERO;
        for _ in 0..frames {
            let air = |r| phy.airtime(1536, r);
            let i = sr.choose(1, now, |r| cost.frame_us(air(r), 1));
            used[i] += 1;
            let per = |r: usize| {
                let p = per_at_rate(per_at_configured, extra_snr_db(&phy, rates[r]), 1.0);
                1.0 - (1.0 - p).powf(1.536)
            };
            let mut tries = 0;
            let mut acked = false;
            while tries < 7 && !acked {
                let r = scheduled_rate(i, tries);
                tries += 1;
                acked = loss.random::<f64>() >= per(r);
            }
            let t = cost.chain_us(|k| air(rates[scheduled_rate(i, k)]), tries);
            now += Duration::from_secs_f64(t * 1e-6);
            sr.report(1, i, t, acked && tries <= CHAIN_TRIES, now);
        }
        used
    }

    #[test]
    fn converges_to_the_top_rate_on_a_clean_link() {
        let used = run(0.0, 2000, 1);
        let total: usize = used.iter().sum();
        // Every 10th frame samples at most; the rest go at 11 Mbit/s.
        assert!(used[3] * 10 >= total * 9, "{used:?}");
    }

    #[test]
    fn falls_back_on_a_lossy_link() {
        // 99% of 1000-byte frames lost at 11 Mbit/s: 11 and 5.5 fail,
        // 1 or 2 Mbit/s carry the traffic.
        let used = run(0.99, 2000, 1);
        let slow = used[0] + used[1];
        assert!(slow * 10 >= 2000 * 8, "{used:?}");
        // A middling link: the choice sits below the top rate.
        let used = run(0.6, 2000, 1);
        assert!(used[3] * 2 < 2000, "{used:?}");
    }

    #[test]
    fn deterministic_per_seed() {
        assert_eq!(run(0.4, 1000, 7), run(0.4, 1000, 7));
    }
}
