//! nackrate's parameters. The gains and windows are BBR's (Cardwell et al.,
//! "BBR: Congestion-Based Congestion Control", ACM Queue 2016), which the
//! delivery model follows; the rest are ours and documented in
//! docs/nackrate.md.

use crate::config_error::ConfigError;
use crate::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct NackrateConfig {
    /// Payload bytes per data packet.
    pub mss: u16,
    /// Packets sent before the first round-trip measurement, and the floor
    /// of the in-flight cap.
    pub initial_window: u32,
    /// Pacing rate before the first measurement, bytes per second.
    pub initial_rate: u64,
    /// The receiver acknowledges every this many data packets ...
    pub ack_every: u32,
    /// ... or this long after the first unacknowledged one.
    pub ack_delay: Duration,
    /// Most missing ranges one ACK lists (the span is cut to fit).
    pub max_ranges: usize,
    /// A missing packet is lost once this many later ones arrived.
    pub reorder_threshold: u32,
    /// Floor and ceiling of the probe timeout.
    pub min_pto: Duration,
    pub max_pto: Duration,
    /// Give up after this many probe timeouts in a row.
    pub max_probes: u32,
    /// The largest random-loss share the sender makes up for in its rate
    /// estimate (1 / (1 − p) at most 1 / (1 − this)).
    pub max_loss_compensation: f64,
    /// How long a minimum round trip stays valid before the sender drains
    /// its queue to measure it again (BBR's ProbeRTT, 10 s).
    pub min_rtt_window: Duration,
    /// The most a host's late wakes are allowed for (`late_wake`): the
    /// depth of the pacer's token bucket and the standing queue kept at
    /// the bottleneck, at most. 0 turns the allowance off.
    pub max_late_wake: Duration,
}

impl Default for NackrateConfig {
    fn default() -> Self {
        NackrateConfig {
            mss: 1400,
            initial_window: 10,
            // 10 packets per 100 ms: QUIC's initial window over its initial
            // RTT guess (RFC 9002 §6.2.2, §7.2).
            initial_rate: 140_000,
            ack_every: 2,
            ack_delay: Duration::from_millis(5),
            max_ranges: 64,
            reorder_threshold: 3,
            min_pto: Duration::from_millis(10),
            max_pto: Duration::from_secs(2),
            max_probes: 40,
            max_loss_compensation: 0.6,
            min_rtt_window: Duration::from_secs(10),
            // Covers the stalls measured on the loaded 2-core machine
            // (27 wakes over 20 ms late in 10 s at load 11) within a
            // rate limiter's usual queue (the namespace link's holds
            // 100 ms); the simulator's timers are never late.
            max_late_wake: Duration::from_millis(50),
        }
    }
}

impl NackrateConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mss == 0 {
            return Err(ConfigError::new("mss", "must be positive"));
        }
        if self.initial_window < 2 {
            return Err(ConfigError::new(
                "initial_window",
                "must be at least 2 packets",
            ));
        }
        if self.initial_rate == 0 {
            return Err(ConfigError::new("initial_rate", "must be positive"));
        }
        if self.ack_every == 0 {
            return Err(ConfigError::new("ack_every", "must be at least 1"));
        }
        if self.max_ranges == 0 || self.max_ranges > u16::MAX as usize {
            return Err(ConfigError::new(
                "max_ranges",
                "must be between 1 and 65535",
            ));
        }
        if self.reorder_threshold == 0 {
            return Err(ConfigError::new("reorder_threshold", "must be at least 1"));
        }
        if self.min_pto == Duration::ZERO || self.min_pto > self.max_pto {
            return Err(ConfigError::new(
                "min_pto",
                "must be positive and at most max_pto",
            ));
        }
        if self.max_probes == 0 {
            return Err(ConfigError::new("max_probes", "must be at least 1"));
        }
        if !(0.0..0.95).contains(&self.max_loss_compensation) {
            return Err(ConfigError::new(
                "max_loss_compensation",
                "must be in [0, 0.95)",
            ));
        }
        if self.min_rtt_window == Duration::ZERO {
            return Err(ConfigError::new("min_rtt_window", "must be positive"));
        }
        if self.max_late_wake > Duration::from_secs(1) {
            return Err(ConfigError::new(
                "max_late_wake",
                "must be at most 1 s (a longer stall is the probe timeout's business)",
            ));
        }
        Ok(())
    }
}
