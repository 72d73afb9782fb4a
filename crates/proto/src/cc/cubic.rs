//! CUBIC (RFC 9438): window growth as a cubic function of the real time
//! since the last congestion event, with a Reno-friendly floor.
//!
//! The window is kept as `f64` segments internally because the cubic curve
//! and the per-ACK increments are fractional; `window()` reports bytes.

use super::cubic_linux::LinuxCubic;
use super::hystart::{HyStart, HyStartFlavour};
use super::{slow_start, CongestionControl};
use crate::time::{Duration, Time};

/// RFC 9438 §5.1 constants.
pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;
/// Additive increase of the Reno-friendly estimate (§4.3), segments per RTT.
const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

#[derive(Clone, Debug)]
pub struct Cubic {
    mss: u64,
    /// Window, segments.
    cwnd: f64,
    ssthresh: u64,
    /// Window just before the last reduction, segments.
    w_max: f64,
    /// Start of the current congestion-avoidance epoch and the values fixed
    /// at its start: K (seconds) and the curve's plateau (segments).
    epoch: Option<Epoch>,
    /// Reno-friendly window estimate, segments.
    w_est: f64,
    /// HyStart's delay test in slow start (`hystart.rs`), when enabled.
    hystart: Option<HyStart>,
    /// A reduction counts the window in whole segments, as ns-3's
    /// `TcpCubic::GetSsThresh` does (`with_whole_segment_reduction`).
    whole_segments: bool,
    /// Congestion avoidance, reduction and reset as Linux's
    /// `tcp_cubic.c` computes them (`cubic_linux.rs`), when enabled.
    linux: Option<LinuxCubic>,
}

#[derive(Copy, Clone, Debug)]
struct Epoch {
    start: Time,
    k: f64,
    origin: f64,
}

impl Cubic {
    /// `initial_window` and `initial_ssthresh` are in bytes.
    pub fn new(mss: u64, initial_window: u64, initial_ssthresh: u64) -> Cubic {
        let mss = mss.max(1);
        Cubic {
            mss,
            cwnd: (initial_window.max(mss) as f64) / mss as f64,
            ssthresh: initial_ssthresh,
            w_max: 0.0,
            epoch: None,
            w_est: 0.0,
            hystart: None,
            whole_segments: false,
            linux: None,
        }
    }

    /// Grow, reduce and reset as Linux's `tcp_cubic.c` does, in whole
    /// segments, with its rate limit on recomputing the increment
    /// (`cubic_linux.rs`); `jiffy` is the kernel's tick (`None`: exact).
    pub fn with_linux_arithmetic(mut self, jiffy: Option<Duration>) -> Cubic {
        self.linux = Some(LinuxCubic::new(jiffy));
        self
    }

    /// ns-3's `TcpCubic::GetSsThresh` (3.44): the window in whole segments
    /// (`GetCwndInSegments`), W_max truncated to whole segments, and
    /// ssthresh = max(⌊segments · β⌋, 2) segments, so a 4-segment window
    /// halves to 2 where RFC 9438 gives 2.8.
    pub fn with_whole_segment_reduction(mut self) -> Cubic {
        self.whole_segments = true;
        self
    }

    /// Leave slow start on HyStart's delay test (on by default in Linux
    /// and in ns-3, with their own thresholds).
    pub fn with_hystart(mut self, flavour: HyStartFlavour) -> Cubic {
        self.hystart = Some(HyStart::new(flavour));
        self
    }

    /// W_cubic(t) of RFC 9438 eq. (1), segments, for the current epoch.
    fn w_cubic(epoch: &Epoch, t: f64) -> f64 {
        C * (t - epoch.k).powi(3) + epoch.origin
    }

    /// Starts an epoch at the first ACK of congestion avoidance (§4.2).
    fn begin_epoch(&mut self, now: Time) -> Epoch {
        let (k, origin) = if self.cwnd < self.w_max {
            (((self.w_max - self.cwnd) / C).cbrt(), self.w_max)
        } else {
            (0.0, self.cwnd)
        };
        self.w_est = self.cwnd;
        let epoch = Epoch {
            start: now,
            k,
            origin,
        };
        self.epoch = Some(epoch);
        epoch
    }

    fn congestion_avoidance(&mut self, now: Time, acked_bytes: u64, rtt: Option<Duration>) {
        if let Some(linux) = &mut self.linux {
            let cwnd = self.cwnd.floor() as u64;
            self.cwnd = linux.on_ack(now, cwnd, acked_bytes.div_ceil(self.mss)) as f64;
            return;
        }
        let epoch = match self.epoch {
            Some(e) => e,
            None => self.begin_epoch(now),
        };
        let acked = acked_bytes as f64 / self.mss as f64;
        let t = now.saturating_since(epoch.start).as_secs_f64();
        let rtt = rtt.map_or(0.0, |r| r.as_secs_f64());

        // §4.3: once the estimate passes W_max, Reno grows at 1 segment/RTT.
        let alpha = if self.w_est >= self.w_max { 1.0 } else { ALPHA };
        self.w_est += alpha * acked / self.cwnd;

        let w_cubic = Self::w_cubic(&epoch, t);
        if w_cubic < self.w_est {
            // Reno-friendly region (§4.3).
            self.cwnd = self.w_est;
        } else {
            // Concave/convex regions (§4.4, §4.5): aim for W_cubic one RTT
            // ahead, bounded to 1.5·cwnd, approached per acknowledged segment.
            let target = Self::w_cubic(&epoch, t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
            self.cwnd += (target - self.cwnd) / self.cwnd * acked;
        }
    }

    /// §4.6 and §4.7: remember W_max (reduced further under fast
    /// convergence) and set ssthresh to β·cwnd.
    fn reduce(&mut self) -> u64 {
        if let Some(linux) = &mut self.linux {
            self.ssthresh = linux.reduce(self.cwnd.floor() as u64) * self.mss;
            return self.ssthresh;
        }
        if self.whole_segments {
            return self.reduce_whole_segments();
        }
        self.w_max = if self.cwnd < self.w_max {
            self.cwnd * (1.0 + BETA) / 2.0
        } else {
            self.cwnd
        };
        self.epoch = None;
        let ssthresh = (self.cwnd * BETA * self.mss as f64) as u64;
        self.ssthresh = ssthresh.max(2 * self.mss);
        self.ssthresh
    }

    fn reduce_whole_segments(&mut self) -> u64 {
        let segments = self.cwnd.floor();
        self.w_max = if segments < self.w_max {
            (segments * (1.0 + BETA) / 2.0).floor()
        } else {
            segments
        };
        self.epoch = None;
        self.ssthresh = ((segments * BETA).floor() as u64).max(2) * self.mss;
        self.ssthresh
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn window(&self) -> u64 {
        (self.cwnd * self.mss as f64) as u64
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn set_window(&mut self, bytes: u64) {
        self.cwnd = bytes.max(self.mss) as f64 / self.mss as f64;
    }

    fn on_ack(&mut self, now: Time, acked_bytes: u64, rtt: Option<Duration>, _flight: u64) {
        if let (Some(linux), Some(rtt)) = (&mut self.linux, rtt) {
            linux.on_rtt(now, rtt);
        }
        if self.in_slow_start() {
            let (cwnd, mss) = (self.window(), self.mss);
            if let Some(h) = &mut self.hystart {
                if h.on_ack(cwnd, mss, acked_bytes, rtt) {
                    // Linux sets ssthresh to cwnd: congestion avoidance
                    // starts here, before any loss.
                    self.ssthresh = cwnd;
                    return;
                }
            }
            let bytes = slow_start(self.window(), acked_bytes, self.mss);
            self.set_window(bytes);
            return;
        }
        self.congestion_avoidance(now, acked_bytes, rtt);
    }

    fn on_congestion_event(&mut self, _now: Time, _bytes_in_flight: u64) -> u64 {
        self.reduce()
    }

    /// §4.8: after a timeout the first congestion avoidance starts a
    /// fresh curve from the window it reaches (K = 0, W_max = that
    /// window), as Linux's and ns-3's reset of the state on entering Loss
    /// do; HyStart starts afresh too.
    fn on_timeout(&mut self, _now: Time, _bytes_in_flight: u64) {
        self.reduce();
        self.w_max = 0.0;
        self.cwnd = 1.0;
        if let Some(h) = &mut self.hystart {
            h.reset();
        }
        if let Some(linux) = &mut self.linux {
            linux.reset();
        }
    }

    /// Only the window and ssthresh come back: Linux's CUBIC keeps the
    /// curve it reset on entering Loss (`cubictcp_state`).
    fn undo_reduction(&mut self, prior_cwnd: u64, prior_ssthresh: u64) {
        let cwnd = self.window().max(prior_cwnd);
        self.set_window(cwnd);
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Runs congestion avoidance with per-segment ACKs spread evenly over
    /// each RTT, until `until`; returns the window (segments) at the end.
    fn run(cc: &mut Cubic, start: Time, until: Time, rtt: Duration) -> f64 {
        let mut now = start;
        while now < until {
            let segments = (cc.window() / MSS).max(1);
            let step = Duration(rtt.0 / segments);
            for _ in 0..segments {
                now += step;
                cc.on_ack(now, MSS, Some(rtt), cc.window());
            }
        }
        cc.cwnd
    }

    fn after_loss_at(w: u64) -> Cubic {
        let mut cc = Cubic::new(MSS, w * MSS, u64::MAX);
        let ssthresh = cc.on_congestion_event(Time::ZERO, w * MSS);
        cc.set_window(ssthresh);
        cc
    }

    #[test]
    fn ns3_reduces_whole_segments() {
        let mut exact = Cubic::new(MSS, 4 * MSS + MSS / 2, u64::MAX);
        let mut ns3 = exact.clone().with_whole_segment_reduction();
        assert_eq!(exact.on_congestion_event(Time::ZERO, 0), 3150);
        // ⌊4 · 0.7⌋ = 2 segments.
        assert_eq!(ns3.on_congestion_event(Time::ZERO, 0), 2 * MSS);
    }

    #[test]
    fn reduction_is_beta_times_window() {
        let mut cc = Cubic::new(MSS, 100 * MSS, u64::MAX);
        assert_eq!(cc.on_congestion_event(Time::ZERO, 0), 70 * MSS);
        assert_eq!(cc.w_max, 100.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_still_below_it() {
        let mut cc = after_loss_at(100);
        cc.on_congestion_event(Time::ZERO, 0);
        // cwnd 70 < W_max 100: W_max = 70 · (1 + 0.7) / 2.
        assert!((cc.w_max - 59.5).abs() < 1e-9);
    }

    #[test]
    fn window_follows_the_cubic_curve() {
        // With a 100 ms RTT and W_max = 100 the
        // cubic term dominates the Reno estimate everywhere we sample.
        let rtt = Duration::from_millis(100);
        let k = (30.0f64 / C).cbrt();
        for t in [1.0, 2.0, 4.0, 6.0, 8.0] {
            let mut cc = after_loss_at(100);
            let start = Time::from_secs(1);
            let w = run(&mut cc, start, start + Duration::from_secs_f64(t), rtt);
            let expect = C * (t - k).powi(3) + 100.0;
            let err = (w - expect).abs() / expect;
            assert!(err < 0.05, "t={t}: cwnd {w:.2} vs W_cubic {expect:.2}");
        }
    }

    #[test]
    fn plateau_near_w_max_at_k() {
        let rtt = Duration::from_millis(100);
        let k = (30.0f64 / C).cbrt();
        let mut cc = after_loss_at(100);
        let w = run(
            &mut cc,
            Time::ZERO,
            Time::ZERO + Duration::from_secs_f64(k),
            rtt,
        );
        assert!((w - 100.0).abs() < 2.0, "{w}");
    }

    #[test]
    fn reno_friendly_region_with_short_rtt() {
        // With a 1 ms RTT Reno grows far faster in time than the cubic curve;
        // CUBIC must follow W_est = 70 + α·(RTTs) while below W_max.
        let rtt = Duration::from_millis(1);
        let mut cc = after_loss_at(100);
        let w = run(&mut cc, Time::ZERO, Time::from_millis(40), rtt);
        let epoch = cc.epoch.unwrap();
        let cubic = Cubic::w_cubic(&epoch, 0.04);
        assert!(w > cubic + 10.0, "cwnd {w} should exceed W_cubic {cubic}");
        let expect = 70.0 + ALPHA * 40.0;
        assert!(
            (w - expect).abs() < 2.0,
            "cwnd {w} vs Reno estimate {expect}"
        );
    }

    #[test]
    fn timeout_resets_epoch_and_window() {
        let mut cc = after_loss_at(100);
        run(
            &mut cc,
            Time::ZERO,
            Time::from_secs(1),
            Duration::from_millis(100),
        );
        cc.on_timeout(Time::from_secs(1), 0);
        assert_eq!(cc.window(), MSS);
        assert!(cc.epoch.is_none());
        assert!(cc.in_slow_start());
    }

    #[test]
    fn after_a_timeout_the_curve_starts_at_the_window_not_the_old_w_max() {
        let mut cc = after_loss_at(100);
        cc.on_timeout(Time::from_secs(1), 0);
        // Slow start up to ssthresh, then the first ACK of congestion
        // avoidance begins an epoch with K = 0 from where the window is.
        cc.set_window(cc.ssthresh());
        cc.on_ack(Time::from_secs(2), MSS, Some(Duration::from_millis(100)), 0);
        let epoch = cc.epoch.unwrap();
        assert_eq!(epoch.k, 0.0);
        assert!((epoch.origin - 49.0).abs() < 1.0, "origin {}", epoch.origin);
    }

    #[test]
    fn slow_start_uses_byte_counting() {
        let mut cc = Cubic::new(MSS, 2 * MSS, u64::MAX);
        cc.on_ack(Time::ZERO, 5 * MSS, None, 0);
        assert_eq!(cc.window(), 4 * MSS);
    }
}
