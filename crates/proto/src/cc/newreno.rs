//! RFC 5681 AIMD window growth, as used by Tahoe, Reno, NewReno and SACK.

use super::{half_flight, slow_start, CongestionControl};
use crate::time::{Duration, Time};

#[derive(Clone, Debug)]
pub struct NewReno {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged in congestion avoidance since the window last grew:
    /// the window grows one MSS per window's worth of acknowledged bytes
    /// (RFC 3465 byte counting), which is SMSS·SMSS/cwnd per byte without
    /// rounding loss.
    ca_acked: u64,
    /// Feedback is sparse (STP-like, see `stp.rs`): count every acknowledged
    /// byte in slow start and every whole window in congestion avoidance.
    pub(super) sparse_feedback: bool,
    /// Grow per ACK rather than per byte (`Growth::PerAck`): one MSS per
    /// ACK in slow start, MSS²/cwnd per ACK in congestion avoidance. ACKs
    /// are counted in whole segments, the remainder carried (ns-3's
    /// `m_bytesAckedNotProcessed`).
    per_ack: bool,
    carried: u64,
}

impl NewReno {
    /// `initial_window` and `initial_ssthresh` are in bytes.
    pub fn new(mss: u64, initial_window: u64, initial_ssthresh: u64) -> NewReno {
        let mss = mss.max(1);
        NewReno {
            mss,
            cwnd: initial_window.max(mss),
            ssthresh: initial_ssthresh,
            ca_acked: 0,
            sparse_feedback: false,
            per_ack: false,
            carried: 0,
        }
    }

    /// Per-ACK growth (ns-3 TcpNewReno, BSD, ns-2) instead of byte counting.
    pub fn with_per_ack_growth(mut self) -> NewReno {
        self.per_ack = true;
        self
    }

    /// ns-3's `TcpNewReno::IncreaseWindow`: slow start takes one segment
    /// of the ACK for one MSS; what is left, once past ssthresh, grows the
    /// window by MSS²/cwnd (at least one byte) — once per ACK either way.
    fn grow_per_ack(&mut self, acked_bytes: u64) {
        let total = self.carried + acked_bytes;
        let mut segments = total / self.mss;
        self.carried = total % self.mss;
        if segments == 0 {
            return;
        }
        if self.in_slow_start() {
            self.cwnd += self.mss;
            segments -= 1;
        }
        if !self.in_slow_start() && segments > 0 {
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        }
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        if self.sparse_feedback {
            "stp"
        } else {
            "newreno"
        }
    }
    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn set_window(&mut self, bytes: u64) {
        self.cwnd = bytes.max(self.mss);
    }

    fn on_ack(&mut self, _now: Time, acked_bytes: u64, _rtt: Option<Duration>, _flight: u64) {
        if self.per_ack {
            return self.grow_per_ack(acked_bytes);
        }
        if self.in_slow_start() {
            self.cwnd = if self.sparse_feedback {
                self.cwnd.saturating_add(acked_bytes)
            } else {
                slow_start(self.cwnd, acked_bytes, self.mss)
            };
            return;
        }
        self.ca_acked += acked_bytes;
        // One MSS per window of acknowledged bytes; with sparse feedback one
        // report may cover several windows.
        while self.ca_acked >= self.cwnd {
            self.ca_acked -= self.cwnd;
            self.cwnd += self.mss;
            if !self.sparse_feedback {
                break;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: Time, bytes_in_flight: u64) -> u64 {
        self.ssthresh = half_flight(bytes_in_flight, self.mss);
        self.ca_acked = 0;
        self.ssthresh
    }

    fn on_timeout(&mut self, _now: Time, bytes_in_flight: u64) {
        self.ssthresh = half_flight(bytes_in_flight, self.mss);
        self.cwnd = self.mss;
        self.ca_acked = 0;
    }

    fn undo_reduction(&mut self, prior_cwnd: u64, prior_ssthresh: u64) {
        self.cwnd = self.cwnd.max(prior_cwnd);
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// One round trip of per-segment ACKs for the whole window.
    fn one_rtt(cc: &mut NewReno) {
        let segments = cc.window() / MSS;
        for _ in 0..segments {
            cc.on_ack(Time::ZERO, MSS, None, cc.window());
        }
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut cc = NewReno::new(MSS, 2 * MSS, u64::MAX);
        for expect in [4, 8, 16, 32] {
            one_rtt(&mut cc);
            assert_eq!(cc.window(), expect * MSS);
        }
    }

    #[test]
    fn abc_limits_growth_per_ack_to_two_segments() {
        let mut cc = NewReno::new(MSS, 10 * MSS, u64::MAX);
        cc.on_ack(Time::ZERO, 8 * MSS, None, 0);
        assert_eq!(cc.window(), 12 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_rtt() {
        let mut cc = NewReno::new(MSS, 10 * MSS, 10 * MSS);
        for expect in 11..15 {
            one_rtt(&mut cc);
            assert_eq!(cc.window(), expect * MSS);
        }
    }

    #[test]
    fn congestion_avoidance_counts_bytes_across_ack_sizes() {
        // 10 000 bytes acknowledged in odd-sized pieces grow cwnd exactly once.
        let mut cc = NewReno::new(MSS, 10 * MSS, 10 * MSS);
        for _ in 0..7 {
            cc.on_ack(Time::ZERO, 1_300, None, 0);
        }
        assert_eq!(cc.window(), 10 * MSS);
        cc.on_ack(Time::ZERO, 900, None, 0);
        assert_eq!(cc.window(), 11 * MSS);
    }

    #[test]
    fn congestion_event_halves_the_flight_with_a_floor() {
        let mut cc = NewReno::new(MSS, 20 * MSS, u64::MAX);
        assert_eq!(cc.on_congestion_event(Time::ZERO, 20 * MSS), 10 * MSS);
        assert_eq!(cc.window(), 20 * MSS, "the caller sets the window");
        assert_eq!(cc.on_congestion_event(Time::ZERO, 3 * MSS), 2 * MSS);
    }

    #[test]
    fn per_ack_growth_ignores_how_much_an_ack_covers() {
        // Slow start: a delayed ACK of two segments grows one MSS, not two.
        let mut cc = NewReno::new(MSS, 10 * MSS, u64::MAX).with_per_ack_growth();
        cc.on_ack(Time::ZERO, 2 * MSS, None, 0);
        assert_eq!(cc.window(), 11 * MSS);
        // Less than a segment is carried, not lost.
        cc.on_ack(Time::ZERO, MSS / 2, None, 0);
        assert_eq!(cc.window(), 11 * MSS);
        cc.on_ack(Time::ZERO, MSS / 2, None, 0);
        assert_eq!(cc.window(), 12 * MSS);
        // Congestion avoidance: MSS²/cwnd bytes per ACK, whatever it covers.
        let mut cc = NewReno::new(MSS, 10 * MSS, 10 * MSS).with_per_ack_growth();
        cc.on_ack(Time::ZERO, 4 * MSS, None, 0);
        assert_eq!(cc.window(), 10 * MSS + MSS / 10);
        let mut bytes = NewReno::new(MSS, 10 * MSS, 10 * MSS);
        bytes.on_ack(Time::ZERO, 4 * MSS, None, 0);
        assert_eq!(bytes.window(), 10 * MSS, "byte counting waits for a window");
    }

    #[test]
    fn timeout_collapses_to_one_segment() {
        let mut cc = NewReno::new(MSS, 20 * MSS, u64::MAX);
        cc.on_timeout(Time::ZERO, 16 * MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 8 * MSS));
        assert!(cc.in_slow_start());
    }
}
