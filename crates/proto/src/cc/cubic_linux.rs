//! CUBIC's congestion avoidance as Linux's `tcp_cubic.c` computes it
//! (kernel 6.x, after "tcp_cubic: switch ca->last_time to usec
//! resolution", 2024): integer segments, a per-ACK increment `cnt`
//! (`bictcp_update`) applied by `tcp_cong_avoid_ai`, the reduction of
//! `cubictcp_recalc_ssthresh` (β = 717/1024, fast convergence) and the
//! reset of `cubictcp_state` on a timeout.
//!
//! Where it differs from RFC 9438's continuous curve (`cubic.rs`), and
//! why it is modelled: `bictcp_update` recomputes `cnt` at most once per
//! 1/32 s while the window has not changed since its last computation.
//! A reduction ends the epoch, but when the window after it equals the
//! window of the last computation (at small windows it does: the floor
//! of two segments), the first ACKs of congestion avoidance return early
//! and keep the previous epoch's `cnt` — after a computation at the
//! curve's plateau, 100 · cwnd, i.e. no growth — for up to 31.25 ms. On a
//! path with a few ms of RTT and a loss every few tens of ms the window
//! then stays at its floor; the kernel trace diff found kernel CUBIC
//! at two segments most of the time on `validation/linux`'s 10 % link.
//!
//! Not modelled: `cubictcp_cwnd_event`'s shift of the epoch after idle
//! (the bulk sender is never idle), and `cubic_root`'s table-and-Newton
//! approximation (about 0.2 % error; an exact integer cube root is used).

use crate::time::{Duration, Time};

/// β in 1/1024 (`beta`).
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// `BICTCP_HZ`: the curve's time unit is 1/1024 s.
const BICTCP_HZ: u32 = 10;
/// `cube_rtt_scale = bic_scale * 10`, C = 410/1024.
const CUBE_RTT_SCALE: u128 = 41 * 10;
/// `beta_scale = 8 · (1024 + β) / 3 / (1024 − β)`, integer, = 15.
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// `cnt` is recomputed at most this often while the window is unchanged.
const UPDATE_INTERVAL: Duration = Duration::from_nanos(1_000_000_000 / 32);
/// …and at most once per millisecond in any case.
const MIN_UPDATE_GAP: Duration = Duration::from_millis(1);

/// `struct bictcp`, the fields `bictcp_update` uses (all cleared by
/// `bictcp_reset`), plus the sender's `snd_cwnd_cnt`.
#[derive(Clone, Debug, Default)]
pub(crate) struct LinuxCubic {
    /// Segments acknowledged per window increment.
    cnt: u64,
    last_max_cwnd: u64,
    /// Window and time of the last computation of `cnt`.
    last_cwnd: u64,
    last_time: Option<Time>,
    origin: u64,
    /// K in 1/1024 s.
    bic_k: u64,
    delay_min: Option<Duration>,
    epoch_start: Option<Time>,
    ack_cnt: u64,
    /// Reno-friendly estimate, segments.
    tcp_cwnd: u64,
    /// `tp->snd_cwnd_cnt`: acknowledged segments towards the next increment.
    cwnd_cnt: u64,
    /// The kernel's tick (the epoch is counted in jiffies); `None`: exact.
    jiffy: Option<Duration>,
}

impl LinuxCubic {
    pub(crate) fn new(jiffy: Option<Duration>) -> LinuxCubic {
        LinuxCubic {
            jiffy,
            ..LinuxCubic::default()
        }
    }

    /// `cubictcp_acked`: the smallest RTT, except in the first second of
    /// an epoch ("discard delay samples right after fast recovery").
    pub(crate) fn on_rtt(&mut self, now: Time, rtt: Duration) {
        if self
            .epoch_start
            .is_some_and(|e| now.saturating_since(e) < Duration::from_secs(1))
        {
            return;
        }
        let rtt = rtt.max(Duration::from_micros(1));
        self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
    }

    /// `cubictcp_cong_avoid` past slow start: `bictcp_update` and
    /// `tcp_cong_avoid_ai`. Returns the new window, segments.
    pub(crate) fn on_ack(&mut self, now: Time, cwnd: u64, acked: u64) -> u64 {
        let cwnd = cwnd.max(1);
        self.update(now, cwnd, acked);
        self.cong_avoid_ai(cwnd, acked)
    }

    /// `tcp_cong_avoid_ai(tp, cnt, acked)`.
    fn cong_avoid_ai(&mut self, mut cwnd: u64, acked: u64) -> u64 {
        let w = self.cnt.max(1);
        // Credits accumulated at a higher w are applied gently now.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            cwnd += delta;
        }
        cwnd
    }

    /// `bictcp_update`: sets `cnt`.
    fn update(&mut self, now: Time, cwnd: u64, acked: u64) {
        self.ack_cnt += acked;
        let since = self.last_time.map(|t| now.saturating_since(t));
        // The rate limit: an unchanged window keeps the last `cnt` for
        // 1/32 s (`delta <= USEC_PER_SEC / 32`; a reset clears last_time
        // to 0, which the kernel's µs clock has long passed).
        if self.last_cwnd == cwnd && since.is_some_and(|d| d <= UPDATE_INTERVAL) {
            return;
        }
        if self.epoch_start.is_none() || since.is_none_or(|d| d >= MIN_UPDATE_GAP) {
            self.last_cwnd = cwnd;
            self.last_time = Some(now);
            self.cubic_cnt(now, cwnd, acked);
        }
        self.friendliness(cwnd);
    }

    /// The curve's part of `bictcp_update`: a new epoch if none, then
    /// `cnt` to reach the curve's target one update later.
    fn cubic_cnt(&mut self, now: Time, cwnd: u64, acked: u64) {
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.origin = cwnd;
                } else {
                    // cube_factor = 2^40 / 410: K in 1/1024 s.
                    let cube_factor = (1u128 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
                    self.bic_k = icbrt(cube_factor * (self.last_max_cwnd - cwnd) as u128);
                    self.origin = self.last_max_cwnd;
                }
                now
            }
        };
        let t = self.curve_time(now, epoch) as u128;
        let k = self.bic_k as u128;
        let offs = t.abs_diff(k);
        let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u32;
        // u32 arithmetic as the kernel's.
        let origin = self.origin as u32;
        let target = if t < k {
            origin.wrapping_sub(delta)
        } else {
            origin.wrapping_add(delta)
        } as u64;
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd // very small increment
        };
        // Before any loss, at least 5 % per RTT.
        if self.last_max_cwnd == 0 {
            self.cnt = self.cnt.min(20);
        }
    }

    /// t of the curve in 1/1024 s: jiffies since the epoch plus the
    /// minimum RTT rounded up to jiffies (`usecs_to_jiffies`).
    fn curve_time(&self, now: Time, epoch: Time) -> u64 {
        let delay = self.delay_min.unwrap_or(Duration::ZERO);
        let nanos = match self.jiffy {
            Some(j) if j.0 > 0 => {
                let jiffies = now.as_nanos() / j.0 - epoch.as_nanos() / j.0 + delay.0.div_ceil(j.0);
                jiffies * j.0
            }
            _ => now.saturating_since(epoch).0 + delay.0,
        };
        ((nanos as u128) << BICTCP_HZ).div_euclid(1_000_000_000) as u64
    }

    /// `tcp_friendliness`: no slower than Reno with β = 0.7 would grow.
    fn friendliness(&mut self, cwnd: u64) {
        let delta = ((cwnd * FRIENDLY_SCALE) >> 3).max(1);
        if self.ack_cnt > delta {
            let n = (self.ack_cnt - 1) / delta;
            self.ack_cnt -= n * delta;
            self.tcp_cwnd += n;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // At most 1.5× per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_recalc_ssthresh`: ends the epoch, remembers W_max
    /// (lowered by fast convergence) and returns ssthresh, segments.
    pub(crate) fn reduce(&mut self, cwnd: u64) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        // `tcp_init_cwnd_reduction` / `tcp_enter_loss` clear snd_cwnd_cnt.
        self.cwnd_cnt = 0;
        (cwnd * BETA / BETA_SCALE).max(2)
    }

    /// `cubictcp_state(TCP_CA_Loss)`: `bictcp_reset`.
    pub(crate) fn reset(&mut self) {
        *self = LinuxCubic::new(self.jiffy);
    }
}

/// ⌊∛x⌋.
fn icbrt(x: u128) -> u64 {
    let mut r = (x as f64).cbrt() as u128;
    while r * r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: Duration = Duration::from_millis(4);

    /// One ACK per segment of the window, spread over one RTT.
    fn round(cc: &mut LinuxCubic, now: &mut Time, cwnd: u64) -> u64 {
        let mut w = cwnd;
        for _ in 0..cwnd {
            *now += Duration(RTT.0 / cwnd);
            w = cc.on_ack(*now, w, 1);
        }
        w
    }

    #[test]
    fn reduction_is_717_over_1024_with_fast_convergence() {
        let mut cc = LinuxCubic::new(None);
        assert_eq!(cc.reduce(100), 70);
        assert_eq!(cc.last_max_cwnd, 100);
        // Below the last W_max: W_max = 70 · 1741 / 2048.
        assert_eq!(cc.reduce(70), 49);
        assert_eq!(cc.last_max_cwnd, 59);
        assert_eq!(cc.reduce(2), 2);
    }

    #[test]
    fn after_a_cut_the_window_holds_for_a_32nd_of_a_second() {
        // A cut at the floor of two segments (W_max 2, as on the 10 %
        // link): the new epoch's first ACK finds the curve flat (K = 0,
        // target = cwnd, cnt = 100 · cwnd), and while the window stays at
        // two the next ACKs keep that cnt for 31.25 ms.
        let mut cc = LinuxCubic::new(Some(Duration::from_millis(4)));
        let mut now = Time::from_secs(1);
        let mut w = cc.reduce(2);
        assert_eq!(w, 2);
        let start = now;
        w = cc.on_ack(now, w, 1);
        assert_eq!(cc.cnt, 200, "a flat curve: 100 · cwnd");
        while now.saturating_since(start) < Duration::from_millis(28) {
            w = round(&mut cc, &mut now, w);
        }
        assert_eq!(w, 2, "growth frozen while cnt is stale");
        // Past 1/32 s the Reno-friendly estimate (ACKs counted all along)
        // sets cnt = 2: 1.5× per RTT until the window meets it.
        for _ in 0..4 {
            w = round(&mut cc, &mut now, w);
        }
        assert!(w >= 5, "grows once cnt is recomputed: {w}");
    }

    #[test]
    fn rfc_9438s_curve_grows_in_the_same_30_ms() {
        // The same cut in `cubic.rs`'s continuous model, which the other
        // profiles run: the Reno-friendly region grows the window at once.
        use crate::cc::{CongestionControl, Cubic};
        let mss = 1000;
        let mut cc = Cubic::new(mss, 3 * mss, u64::MAX);
        let ssthresh = cc.on_congestion_event(Time::ZERO, 3 * mss);
        cc.set_window(ssthresh);
        let mut now = Time::from_secs(1);
        let start = now;
        while now.saturating_since(start) < Duration::from_millis(28) {
            now += Duration(RTT.0 / 2);
            cc.on_ack(now, mss, Some(RTT), cc.window());
        }
        assert!(cc.window() >= 3 * mss, "{}", cc.window());
    }

    #[test]
    fn the_curve_returns_to_w_max_after_k() {
        // W_max 100, cwnd 70 after the cut: K = ∛(30 / 0.4) ≈ 4.2 s; at a
        // 100 ms RTT the curve, not the friendly estimate, leads.
        let mut cc = LinuxCubic::new(Some(Duration::from_millis(4)));
        let mut w = cc.reduce(100);
        let mut now = Time::from_secs(1);
        let start = now;
        while now.saturating_since(start) < Duration::from_secs_f64(4.2) {
            // One round: the window's worth of ACKs over 100 ms.
            let acks = w;
            for _ in 0..acks {
                now += Duration(Duration::from_millis(100).0 / acks);
                w = cc.on_ack(now, w, 1);
            }
        }
        assert!((97..=103).contains(&w), "{w}");
        assert_eq!(cc.origin, 100);
    }

    #[test]
    fn a_timeout_forgets_the_curve() {
        let mut cc = LinuxCubic::new(None);
        cc.reduce(50);
        cc.on_ack(Time::from_secs(1), 35, 1);
        cc.reset();
        assert_eq!(cc.last_max_cwnd, 0);
        assert!(cc.epoch_start.is_none() && cc.last_time.is_none());
    }

    #[test]
    fn integer_cube_root() {
        assert_eq!(icbrt(0), 0);
        assert_eq!(icbrt(26), 2);
        assert_eq!(icbrt(27), 3);
        assert_eq!(icbrt(1 << 60), 1 << 20);
    }
}
