//! Settings of the ATP-like baseline. Where JTP's Table 1 has a value for
//! the same thing (packet size, MAC attempts) it is the default; the rest
//! are ours, said so per field.

use joulenet_wire::jtp::Format;

use crate::config_error::ConfigError;
use crate::jtp::attempts::MAX_ATTEMPTS;
use crate::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct AtpConfig {
    /// Header layout, as JTP's (compact, or the paper's 28/200 bytes).
    pub format: Format,
    /// Payload bytes per data packet (Table 1: 800).
    pub packet_size: usize,
    /// Connection id carried in every header.
    pub flow: u16,
    /// Sending rate before the first feedback, bits/s (JTP's default).
    pub initial_rate_bps: f64,
    /// The receiver's constant feedback period. The paper: "larger than
    /// RTT as suggested for ATP"; ours: 1 s (RTTs of the paper's paths are
    /// tens to hundreds of ms).
    pub feedback_period: Duration,
    /// Link attempts the MAC makes per packet (Table 1: 5); a node divides
    /// its link's available rate by the mean attempts at this limit.
    pub max_attempts: u8,
    /// The source raises its rate only when the reported rate exceeds it by
    /// more than this fraction. Ours.
    pub increase_threshold: f64,
    /// It then closes this fraction of the gap per feedback. Ours.
    pub increase_gain: f64,
    /// The source never goes below this many packets per second. Ours.
    pub min_rate_pps: f64,
    /// The source calls feedback late after two periods plus this. Ours.
    pub ack_grace: Duration,
    /// Factor the source multiplies its rate by when feedback is late.
    /// Ours (JTP's).
    pub late_backoff: f64,
    /// Most SNACK entries in one feedback (JTP's default). Ours.
    pub max_snack: usize,
}

impl Default for AtpConfig {
    fn default() -> Self {
        AtpConfig {
            format: Format::Compact,
            packet_size: 800,
            flow: 1,
            initial_rate_bps: 64_000.0,
            feedback_period: Duration::from_secs(1),
            max_attempts: MAX_ATTEMPTS,
            increase_threshold: 0.2,
            increase_gain: 0.25,
            min_rate_pps: 1.0,
            ack_grace: Duration::from_millis(500),
            late_backoff: 0.5,
            max_snack: 64,
        }
    }
}

impl AtpConfig {
    /// Checks every option, naming the first one at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.packet_size == 0 || self.packet_size > 65_000 {
            return Err(ConfigError::new("packet_size", "must be in 1..=65000"));
        }
        if self.initial_rate_bps.is_nan() || self.initial_rate_bps <= 0.0 {
            return Err(ConfigError::new("initial_rate_bps", "must be above 0"));
        }
        if self.feedback_period == Duration::ZERO {
            return Err(ConfigError::new("feedback_period", "must be positive"));
        }
        if self.max_attempts == 0 {
            return Err(ConfigError::new("max_attempts", "must be at least 1"));
        }
        if self.increase_threshold.is_nan() || self.increase_threshold < 0.0 {
            return Err(ConfigError::new("increase_threshold", "must be at least 0"));
        }
        if !(self.increase_gain > 0.0 && self.increase_gain <= 1.0) {
            return Err(ConfigError::new("increase_gain", "must be in (0, 1]"));
        }
        if self.min_rate_pps.is_nan() || self.min_rate_pps <= 0.0 {
            return Err(ConfigError::new("min_rate_pps", "must be above 0"));
        }
        if !(self.late_backoff > 0.0 && self.late_backoff < 1.0) {
            return Err(ConfigError::new("late_backoff", "must be in (0, 1)"));
        }
        if self.max_snack == 0 {
            return Err(ConfigError::new("max_snack", "must be at least 1"));
        }
        Ok(())
    }

    /// Bytes of one full data packet on the wire.
    pub fn wire_packet_len(&self) -> usize {
        self.format.data_header_len() + self.packet_size
    }

    /// The rate floor in bits/s.
    pub fn min_rate_bps(&self) -> f64 {
        self.min_rate_pps * 8.0 * self.wire_packet_len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        let c = AtpConfig::default();
        c.validate().unwrap();
        assert_eq!((c.packet_size, c.max_attempts), (800, 5));
        assert_eq!(c.min_rate_bps(), 8.0 * 824.0);
    }

    #[test]
    fn each_bad_option_is_named() {
        let d = AtpConfig::default;
        let cases: Vec<(AtpConfig, &str)> = vec![
            (
                AtpConfig {
                    packet_size: 0,
                    ..d()
                },
                "packet_size",
            ),
            (
                AtpConfig {
                    initial_rate_bps: f64::NAN,
                    ..d()
                },
                "initial_rate_bps",
            ),
            (
                AtpConfig {
                    feedback_period: Duration::ZERO,
                    ..d()
                },
                "feedback_period",
            ),
            (
                AtpConfig {
                    max_attempts: 0,
                    ..d()
                },
                "max_attempts",
            ),
            (
                AtpConfig {
                    increase_threshold: -0.1,
                    ..d()
                },
                "increase_threshold",
            ),
            (
                AtpConfig {
                    increase_gain: 0.0,
                    ..d()
                },
                "increase_gain",
            ),
            (
                AtpConfig {
                    min_rate_pps: 0.0,
                    ..d()
                },
                "min_rate_pps",
            ),
            (
                AtpConfig {
                    late_backoff: 1.0,
                    ..d()
                },
                "late_backoff",
            ),
            (
                AtpConfig {
                    max_snack: 0,
                    ..d()
                },
                "max_snack",
            ),
        ];
        for (c, key) in cases {
            assert_eq!(c.validate().unwrap_err().key, key);
        }
    }
}
