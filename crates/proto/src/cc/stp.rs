//! A congestion controller for long-delay, asymmetric (satellite) paths in
//! the spirit of STP (Henderson & Katz): feedback is sparse there — STP
//! answers periodic polls instead of acknowledging every segment — so window
//! growth must count every byte a feedback covers rather than one increment
//! per feedback packet. Slow start doubles the window per round trip however
//! few feedbacks arrive (byte counting without RFC 3465's per-ACK cap), and
//! congestion avoidance adds one segment per window of delivered bytes;
//! losses halve the flight as in NewReno.
//!
//! RCP-STP pairs this controller with a receiver that requests new data in
//! batches (`RcpConfig::request_every`), which is what relieves the
//! congested reverse path; the sender is the unchanged RCP sender.

use super::{half_flight, CongestionControl};
use crate::time::{Duration, Time};

#[derive(Clone, Debug)]
pub struct StpLike {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    ca_acked: u64,
}

impl StpLike {
    /// `initial_window` and `initial_ssthresh` are in bytes.
    pub fn new(mss: u64, initial_window: u64, initial_ssthresh: u64) -> StpLike {
        let mss = mss.max(1);
        StpLike {
            mss,
            cwnd: initial_window.max(mss),
            ssthresh: initial_ssthresh,
            ca_acked: 0,
        }
    }
}

impl CongestionControl for StpLike {
    fn name(&self) -> &'static str {
        "stp"
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
    fn on_ack(&mut self, _now: Time, acked: u64, _rtt: Option<Duration>, _flight: u64) {
        if self.in_slow_start() {
            // Every delivered byte counts, but never past ssthresh by more
            // than one feedback's worth.
            self.cwnd = self.cwnd.saturating_add(acked);
            return;
        }
        self.ca_acked += acked;
        while self.ca_acked >= self.cwnd {
            self.ca_acked -= self.cwnd;
            self.cwnd += self.mss;
        }
    }
    fn on_congestion_event(&mut self, _now: Time, flight: u64) -> u64 {
        self.ssthresh = half_flight(flight, self.mss);
        self.ca_acked = 0;
        self.ssthresh
    }
    fn on_timeout(&mut self, _now: Time, flight: u64) {
        self.ssthresh = half_flight(flight, self.mss);
        self.cwnd = self.mss;
        self.ca_acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_feedback_still_doubles_per_round_trip() {
        // One feedback per four segments: NewReno's ABC cap would grow by
        // two segments per feedback (1.5x per RTT); this grows 2x.
        let mss = 1000;
        let mut cc = StpLike::new(mss, 8 * mss, u64::MAX);
        for _ in 0..2 {
            cc.on_ack(Time::ZERO, 4 * mss, None, 0);
        }
        assert_eq!(cc.window(), 16 * mss);
    }

    #[test]
    fn halves_on_loss_and_grows_linearly_after() {
        let mss = 1000;
        let mut cc = StpLike::new(mss, 20 * mss, u64::MAX);
        let ss = cc.on_congestion_event(Time::ZERO, 20 * mss);
        cc.set_window(ss);
        assert_eq!(cc.window(), 10 * mss);
        cc.on_ack(Time::ZERO, 10 * mss, None, 0);
        assert_eq!(cc.window(), 11 * mss);
    }
}
