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
    fn timeout_collapses_to_one_segment() {
        let mut cc = NewReno::new(MSS, 20 * MSS, u64::MAX);
        cc.on_timeout(Time::ZERO, 16 * MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 8 * MSS));
        assert!(cc.in_slow_start());
    }
}
