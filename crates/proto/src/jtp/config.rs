//! Settings shared by JTP's sender, receiver and relay. Values the paper
//! gives (Table 1) are its defaults; the rest are ours, said so per field.

use joulenet_wire::jtp::Format;

use super::attempts::MAX_ATTEMPTS;
use super::cache::DEFAULT_CAPACITY;
use super::controller::Pi2MdConfig;
use super::feedback::DEFAULT_LOWER_BOUND;
use super::monitor::FlipFlopConfig;
use super::priority::Priorities;
use crate::config_error::ConfigError;
use crate::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct JtpConfig {
    /// Header layout: compact (ours) or the paper's 28/200-byte prototype.
    pub format: Format,
    /// Payload bytes per data packet (Table 1: 800-byte JTP packets).
    pub packet_size: usize,
    /// Connection id carried in every header.
    pub flow: u16,
    /// End-to-end loss tolerance the source stamps, in [0, 1] (jtp0 = 0).
    pub loss_tolerance: f64,
    /// Application priority stamped on data packets (without `priorities`).
    pub priority: u8,
    /// Per-packet priorities and their loss tolerances (§3; empty: every
    /// packet has `priority` and `loss_tolerance`).
    pub priorities: Priorities,
    /// Energy budget per packet until the receiver advises one, µJ
    /// (`u32::MAX`: unlimited). Ours.
    pub energy_budget_uj: u32,
    /// The receiver advises a budget of this many times the mean energy
    /// its packets used (0: advise none). Ours.
    pub budget_factor: f64,
    /// Energy one link-layer attempt of a packet costs, µJ; each hop adds
    /// its expected attempts times this to the packet's energy used. Ours.
    pub attempt_energy_uj: u32,
    /// Link attempts the MAC allows (Table 1: 5).
    pub max_attempts: u8,
    /// Loss a hop assumes for a link with no estimate. Ours: `None` gives
    /// such a link the MAC's full attempts.
    pub assumed_link_loss: Option<f64>,
    /// Sending rate before the first ACK, bits/s. Ours.
    pub initial_rate_bps: f64,
    /// Feedback period lower bound T_lb (Table 1: 10 s).
    pub feedback_lower_bound: Duration,
    /// Packets per regular feedback at the current rate (the paper's n ≥ 1).
    pub feedback_packets: u32,
    /// The source waits this much past the announced feedback period before
    /// it calls an ACK late, backs off and probes. Ours.
    pub ack_grace: Duration,
    /// Factor the source multiplies its rate by when feedback is late. Ours
    /// (the paper says only that it "backs off").
    pub late_backoff: f64,
    /// §4.1's source back-off for locally recovered packets (Fig. 3 turns
    /// it off to show the unfairness it prevents).
    pub local_backoff: bool,
    /// Constant-rate feedback (Fig. 4's comparison): the destination feeds
    /// back every this long and never early; `None` is JTP's variable
    /// feedback, T = max(T_lb, n / rate) plus the monitor's urgent ACKs.
    pub constant_feedback: Option<Duration>,
    /// Most SNACK entries the receiver puts in one ACK (the paper layout
    /// also bounds it by its 200 bytes). Ours.
    pub max_snack: usize,
    /// Packets a relay caches (Table 1: 1000).
    pub cache_packets: usize,
    pub monitor: FlipFlopConfig,
    pub controller: Pi2MdConfig,
}

impl Default for JtpConfig {
    fn default() -> Self {
        JtpConfig {
            format: Format::Compact,
            packet_size: 800,
            flow: 1,
            loss_tolerance: 0.0,
            priority: 0,
            priorities: Priorities::default(),
            energy_budget_uj: u32::MAX,
            budget_factor: 3.0,
            attempt_energy_uj: 100,
            max_attempts: MAX_ATTEMPTS,
            assumed_link_loss: None,
            initial_rate_bps: 64_000.0,
            feedback_lower_bound: DEFAULT_LOWER_BOUND,
            feedback_packets: 32,
            ack_grace: Duration::from_millis(500),
            late_backoff: 0.5,
            local_backoff: true,
            constant_feedback: None,
            max_snack: 64,
            cache_packets: DEFAULT_CAPACITY,
            monitor: FlipFlopConfig::default(),
            controller: Pi2MdConfig::default(),
        }
    }
}

impl JtpConfig {
    /// Checks every option, naming the first one at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.packet_size == 0 || self.packet_size > 65_000 {
            return Err(ConfigError::new("packet_size", "must be in 1..=65000"));
        }
        if !(0.0..=1.0).contains(&self.loss_tolerance) {
            return Err(ConfigError::new("loss_tolerance", "must be in [0, 1]"));
        }
        if self.max_attempts == 0 {
            return Err(ConfigError::new("max_attempts", "must be at least 1"));
        }
        if self
            .assumed_link_loss
            .is_some_and(|p| !(0.0..=1.0).contains(&p))
        {
            return Err(ConfigError::new("assumed_link_loss", "must be in [0, 1]"));
        }
        if self.initial_rate_bps.is_nan() || self.initial_rate_bps <= 0.0 {
            return Err(ConfigError::new("initial_rate_bps", "must be above 0"));
        }
        if self.feedback_packets == 0 {
            return Err(ConfigError::new("feedback_packets", "must be at least 1"));
        }
        if !(self.late_backoff > 0.0 && self.late_backoff < 1.0) {
            return Err(ConfigError::new("late_backoff", "must be in (0, 1)"));
        }
        if self.constant_feedback.is_some_and(|d| d == Duration::ZERO) {
            return Err(ConfigError::new("constant_feedback", "must be above 0"));
        }
        if self.budget_factor.is_nan() || self.budget_factor < 0.0 {
            return Err(ConfigError::new("budget_factor", "must be at least 0"));
        }
        if self.max_snack == 0 {
            return Err(ConfigError::new("max_snack", "must be at least 1"));
        }
        self.priorities.validate()?;
        self.monitor.validate()?;
        self.controller.validate()
    }

    /// Bytes of one full data packet on the wire.
    pub fn wire_packet_len(&self) -> usize {
        self.format.data_header_len() + self.packet_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_follow_table_1() {
        let c = JtpConfig::default();
        c.validate().unwrap();
        assert_eq!(
            (c.packet_size, c.max_attempts, c.cache_packets),
            (800, 5, 1000)
        );
        assert_eq!(c.feedback_lower_bound, Duration::from_secs(10));
        assert_eq!(c.wire_packet_len(), 824);
        let paper = JtpConfig {
            format: Format::Paper,
            ..JtpConfig::default()
        };
        assert_eq!(paper.wire_packet_len(), 828);
    }

    #[test]
    fn each_bad_option_is_named() {
        let d = JtpConfig::default;
        let cases: Vec<(JtpConfig, &str)> = vec![
            (
                JtpConfig {
                    packet_size: 0,
                    ..d()
                },
                "packet_size",
            ),
            (
                JtpConfig {
                    loss_tolerance: 1.5,
                    ..d()
                },
                "loss_tolerance",
            ),
            (
                JtpConfig {
                    max_attempts: 0,
                    ..d()
                },
                "max_attempts",
            ),
            (
                JtpConfig {
                    assumed_link_loss: Some(-0.1),
                    ..d()
                },
                "assumed_link_loss",
            ),
            (
                JtpConfig {
                    initial_rate_bps: 0.0,
                    ..d()
                },
                "initial_rate_bps",
            ),
            (
                JtpConfig {
                    feedback_packets: 0,
                    ..d()
                },
                "feedback_packets",
            ),
            (
                JtpConfig {
                    late_backoff: 1.0,
                    ..d()
                },
                "late_backoff",
            ),
            (
                JtpConfig {
                    constant_feedback: Some(Duration::ZERO),
                    ..d()
                },
                "constant_feedback",
            ),
            (
                JtpConfig {
                    budget_factor: f64::NAN,
                    ..d()
                },
                "budget_factor",
            ),
            (
                JtpConfig {
                    max_snack: 0,
                    ..d()
                },
                "max_snack",
            ),
        ];
        for (c, key) in cases {
            assert_eq!(c.validate().unwrap_err().key, key);
        }
        let mut c = d();
        c.monitor.beta = 2.0;
        assert_eq!(c.validate().unwrap_err().key, "beta");
        let mut c = d();
        c.controller.k_i = 0.0;
        assert_eq!(c.validate().unwrap_err().key, "k_i");
    }
}
