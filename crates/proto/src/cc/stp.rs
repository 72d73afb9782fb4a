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

use super::NewReno;

/// The STP-like controller: NewReno's rules with byte counting for sparse
/// feedback (no per-ACK cap in slow start, every whole window counted in
/// congestion avoidance).
pub type StpLike = NewReno;

impl NewReno {
    /// `initial_window` and `initial_ssthresh` are in bytes.
    pub fn stp_like(mss: u64, initial_window: u64, initial_ssthresh: u64) -> NewReno {
        let mut cc = NewReno::new(mss, initial_window, initial_ssthresh);
        cc.sparse_feedback = true;
        cc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CongestionControl;
    use crate::time::Time;

    #[test]
    fn sparse_feedback_still_doubles_per_round_trip() {
        // One feedback per four segments: NewReno's ABC cap would grow by
        // two segments per feedback (1.5x per RTT); this grows 2x.
        let mss = 1000;
        let mut cc = StpLike::stp_like(mss, 8 * mss, u64::MAX);
        for _ in 0..2 {
            cc.on_ack(Time::ZERO, 4 * mss, None, 0);
        }
        assert_eq!(cc.window(), 16 * mss);
    }

    #[test]
    fn halves_on_loss_and_grows_linearly_after() {
        let mss = 1000;
        let mut cc = StpLike::stp_like(mss, 20 * mss, u64::MAX);
        let ss = cc.on_congestion_event(Time::ZERO, 20 * mss);
        cc.set_window(ss);
        assert_eq!(cc.window(), 10 * mss);
        cc.on_ack(Time::ZERO, 10 * mss, None, 0);
        assert_eq!(cc.window(), 11 * mss);
    }
}
