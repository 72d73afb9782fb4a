//! Pluggable congestion control.
//!
//! A controller owns only the window arithmetic: the TCP sender (and RCP's
//! receiver, which runs the same controllers) decides when a loss happened and
//! tells the controller through these calls. Loss recovery that temporarily
//! inflates or deflates the window (Reno fast recovery) does so with
//! [`CongestionControl::set_window`].

use crate::time::{Duration, Time};

mod cubic;
mod cubic_linux;
mod hystart;
mod newreno;
pub mod pftk;
mod stp;

pub use cubic::Cubic;
pub use hystart::HyStartFlavour;
pub use newreno::NewReno;
pub use pftk::pftk_rate;
pub use stp::StpLike;

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// Congestion window, bytes.
    fn window(&self) -> u64;
    /// Slow-start threshold, bytes (`u64::MAX` until the first loss).
    fn ssthresh(&self) -> u64;
    /// Overrides the window; used by loss recovery (Reno inflation/deflation).
    fn set_window(&mut self, bytes: u64);
    fn in_slow_start(&self) -> bool {
        self.window() < self.ssthresh()
    }
    /// New data acknowledged outside loss recovery: grow.
    fn on_ack(&mut self, now: Time, acked_bytes: u64, rtt: Option<Duration>, bytes_in_flight: u64);
    /// A loss detected without timeout: multiplicative decrease. Sets
    /// ssthresh and returns it; the caller decides the window.
    fn on_congestion_event(&mut self, now: Time, bytes_in_flight: u64) -> u64;
    /// Retransmission timeout: ssthresh from the flight, window to the loss
    /// window (1 MSS).
    fn on_timeout(&mut self, now: Time, bytes_in_flight: u64);
    /// The reduction was spurious (F-RTO, `tcp/frto.rs`): the window and
    /// ssthresh go back up to at least what they were before it (Linux
    /// `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`, which CUBIC
    /// uses too).
    fn undo_reduction(&mut self, prior_cwnd: u64, prior_ssthresh: u64);
}

/// Slow-start growth with appropriate byte counting (RFC 3465, L = 2):
/// one ACK may grow the window by at most two segments, so ACK division or
/// stretch ACKs cannot make it burst. Returns the new window.
pub(crate) fn slow_start(cwnd: u64, acked_bytes: u64, mss: u64) -> u64 {
    cwnd.saturating_add(acked_bytes.min(2 * mss))
}

/// RFC 5681 eq. (4): half the flight, but never below two segments.
pub(crate) fn half_flight(bytes_in_flight: u64, mss: u64) -> u64 {
    (bytes_in_flight / 2).max(2 * mss)
}
