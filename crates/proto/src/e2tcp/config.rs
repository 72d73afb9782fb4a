//! E2TCP parameters and the dissection switches of the paper's Table 1.

use crate::config_error::ConfigError;
use crate::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct E2tcpConfig {
    /// Payload bytes per segment.
    pub mss: u16,
    /// Window limits, in segments.
    pub max_window: u32,
    pub min_window: u32,
    /// The window after a burst error is detected.
    pub burst_window: u32,
    /// Newly reported losses in one ACK at or above which a burst is assumed.
    pub error_limit: u32,
    /// Compact header (true) or every field on every segment behind a 20-byte
    /// IPv4 header (false): the "without header compression" variant.
    pub compression: bool,
    /// E2TCP's window rules (true) or TCP-like AIMD with slow start over the
    /// same SACK and immediate retransmission (false).
    pub window_management: bool,
    pub initial_rto: Duration,
    pub min_rto: Duration,
    pub max_rto: Duration,
    /// Give up after this many consecutive timeouts.
    pub max_timeouts: u32,
    /// Random losses shrink the window at most once per round trip (true,
    /// ours) or on every ACK that reports new ones (false: the paper's
    /// text, "each acknowledgement is analyzed"). Per ACK, two random
    /// losses of one window reported by two ACKs halve it twice, as TCP
    /// Reno did before NewReno's one reduction per window.
    pub reduce_once_per_round_trip: bool,
}

impl Default for E2tcpConfig {
    fn default() -> Self {
        E2tcpConfig {
            mss: 1000,
            max_window: 32,
            min_window: 4,
            burst_window: 1,
            error_limit: 3,
            compression: true,
            window_management: true,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(20),
            max_rto: Duration::from_secs(4),
            max_timeouts: 1000,
            reduce_once_per_round_trip: true,
        }
    }
}

impl E2tcpConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mss == 0 {
            return Err(ConfigError::new("mss", "must be positive"));
        }
        if self.min_window == 0 {
            return Err(ConfigError::new(
                "min_window",
                "must be at least one segment",
            ));
        }
        if self.burst_window == 0 {
            return Err(ConfigError::new(
                "burst_window",
                "must be at least one segment",
            ));
        }
        if self.min_window > self.max_window {
            return Err(ConfigError::new("min_window", "must not exceed max_window"));
        }
        if self.burst_window > self.max_window {
            return Err(ConfigError::new(
                "burst_window",
                "must not exceed max_window",
            ));
        }
        // SACK edges are 16-bit offsets from the ACK number.
        if self.max_window as u64 * self.mss as u64 > 65_000 {
            return Err(ConfigError::new(
                "max_window",
                "max_window × mss must stay within 65 000 bytes (16-bit SACK offsets)",
            ));
        }
        if self.error_limit == 0 {
            return Err(ConfigError::new("error_limit", "must be at least 1"));
        }
        if self.min_rto > self.max_rto {
            return Err(ConfigError::new("max_rto", "must be at least min_rto"));
        }
        Ok(())
    }
}
