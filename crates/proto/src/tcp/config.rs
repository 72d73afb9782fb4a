//! TCP variants and the knobs of one connection.

use core::fmt;
use core::str::FromStr;

use super::profile::{TcpProfile, TcpRules};
use crate::time::Duration;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum TcpVariant {
    Tahoe,
    Reno,
    #[default]
    NewReno,
    Sack,
    Cubic,
}

impl TcpVariant {
    pub const ALL: [TcpVariant; 5] = [
        TcpVariant::Tahoe,
        TcpVariant::Reno,
        TcpVariant::NewReno,
        TcpVariant::Sack,
        TcpVariant::Cubic,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            TcpVariant::Tahoe => "tahoe",
            TcpVariant::Reno => "reno",
            TcpVariant::NewReno => "newreno",
            TcpVariant::Sack => "sack",
            TcpVariant::Cubic => "cubic",
        }
    }

    /// Whether loss recovery uses the SACK scoreboard (when negotiated).
    pub const fn uses_sack(self) -> bool {
        matches!(self, TcpVariant::Sack | TcpVariant::Cubic)
    }
}

impl fmt::Display for TcpVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseVariantError(pub String);

impl fmt::Display for ParseVariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown TCP variant {:?} (expected tahoe, reno, newreno, sack or cubic)",
            self.0
        )
    }
}

impl std::error::Error for ParseVariantError {}

impl FromStr for TcpVariant {
    type Err = ParseVariantError;
    fn from_str(s: &str) -> Result<TcpVariant, ParseVariantError> {
        TcpVariant::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseVariantError(s.to_string()))
    }
}

/// RFC 5681 §4.2 delayed acknowledgments.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DelayedAck {
    /// Acknowledge at least every this many full in-order segments.
    pub every: u8,
    /// Acknowledge at most this long after the first unacknowledged segment.
    pub timeout: Duration,
}

impl Default for DelayedAck {
    fn default() -> DelayedAck {
        DelayedAck {
            every: 2,
            timeout: Duration::from_millis(200),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    pub variant: TcpVariant,
    /// Largest payload per segment, bytes (the peer's MSS option may lower it).
    pub mss: u16,
    /// Initial congestion window, segments (RFC 6928's 10 by default).
    pub initial_window: u32,
    /// Initial slow-start threshold, bytes; `u64::MAX` means "infinite".
    pub initial_ssthresh: u64,
    pub min_rto: Duration,
    pub initial_rto: Duration,
    pub max_rto: Duration,
    /// Consecutive retransmission timeouts tolerated; one more aborts.
    pub max_consecutive_rtos: u32,
    /// `None` acknowledges every segment at once.
    pub delayed_ack: Option<DelayedAck>,
    /// Offer and use SACK (default: only for the variants that recover with it).
    pub sack: bool,
    /// RFC 7323 timestamps (default off): TSval is the sender's clock in ms,
    /// and RTT samples then come from TSecr.
    pub timestamps: bool,
    /// Send buffer, bytes: the most data outstanding plus queued.
    pub send_buffer: usize,
    /// Receive buffer, bytes: bounds out-of-order data and the advertised window.
    pub recv_buffer: usize,
    pub dupack_threshold: u32,
    /// Maximum segment lifetime; TIME_WAIT lasts 2·MSL. 1 s suits simulation
    /// (RFC 9293 suggests 2 min; nothing here depends on its length, as the
    /// agent reports itself closed on entering TIME_WAIT).
    pub msl: Duration,
    /// Port written in our segments; `None` takes the port of `Net::local`.
    pub local_port: Option<u16>,
    /// Explicit loss notification (`eln.rs`): as receiver, mark ACKs whose
    /// hole the link layer reported lost on the wireless hop; as sender
    /// (Reno and NewReno recovery only), resend such holes without a
    /// window cut. Both ends of a TCP-ELN connection set it.
    pub eln: bool,
    /// Which ACKs give an RTT sample when timestamps are off.
    pub rtt_sampling: RttSampling,
    /// How the sender spaces its segments (`tcp/pacing.rs`): not at all
    /// (window only), or at the PFTK equation's rate (`rate-sack`).
    pub pacing: Pacing,
    /// Whose behaviour the connection follows (`profile.rs`); set it with
    /// [`TcpProfile::apply`], which also sets `rules` and the timers.
    pub profile: TcpProfile,
    /// The rules in which stacks differ (`profile.rs`).
    pub rules: TcpRules,
    /// STP's polled status reports instead of per-segment ACKs (`stp.rs`);
    /// both ends of an STP connection set it.
    pub stp: Option<super::Stp>,
}

/// Sender pacing. Whatever the pacing, the congestion and receive windows
/// still bound the data outstanding.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Pacing {
    /// Segments leave as soon as the windows allow (every TCP but
    /// `rate-sack`).
    #[default]
    Off,
    /// The JTP paper's rate-based TCP-SACK (§6.1): segments leave at the
    /// rate of the PFTK throughput equation for the measured loss-event
    /// rate, SRTT and RTO; `b` is PFTK's packets acknowledged per ACK (2
    /// with delayed ACKs, one ACK per two segments).
    Pftk { b: u8 },
}

/// Which ACKs a sender without timestamps takes RTT samples from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum RttSampling {
    /// The newest newly acknowledged segment that was never retransmitted
    /// (Karn), even when the same ACK also covers retransmitted data. The
    /// reproductions before issue 16 were made with it. At heavy loss an
    /// ACK that a retransmission elicited also covers segments held behind
    /// the hole, whose "RTT" is the repair's delay (samples of minutes, the
    /// RTO at its cap); kept only to show that effect.
    NewestClean,
    /// Karn's rule as Linux applies it (`FLAG_RETRANS_DATA_ACKED` in
    /// tcp_clean_rtx_queue): an ACK that covers any retransmitted data
    /// gives no sample; the backed-off RTO stays until a clean one does.
    /// The default for every profile.
    #[default]
    Linux,
}

impl core::str::FromStr for RttSampling {
    type Err = String;
    fn from_str(s: &str) -> Result<RttSampling, String> {
        match s {
            "newest-clean" => Ok(RttSampling::NewestClean),
            "linux" => Ok(RttSampling::Linux),
            other => Err(format!(
                "expected \"newest-clean\" or \"linux\", got \"{other}\""
            )),
        }
    }
}

impl TcpConfig {
    /// Defaults for `variant`, with SACK on iff the variant recovers with it.
    pub fn new(variant: TcpVariant) -> TcpConfig {
        TcpConfig {
            variant,
            mss: 1460,
            initial_window: 10,
            initial_ssthresh: u64::MAX,
            min_rto: Duration::from_secs(1),
            initial_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            max_consecutive_rtos: 15,
            delayed_ack: Some(DelayedAck::default()),
            sack: variant.uses_sack(),
            timestamps: false,
            send_buffer: 256 * 1024,
            recv_buffer: 1024 * 1024,
            dupack_threshold: 3,
            msl: Duration::from_secs(1),
            local_port: None,
            eln: false,
            rtt_sampling: RttSampling::default(),
            pacing: Pacing::Off,
            profile: TcpProfile::Rfc,
            rules: TcpRules::default(),
            stp: None,
        }
    }

    /// STP (Henderson & Katz; `stp.rs`): SACK recovery in which any gap a
    /// status report names is lost, no duplicate-ACK counting, byte-counted
    /// window growth, and the receiver reporting only when polled or on a
    /// new gap.
    pub fn stp() -> TcpConfig {
        TcpConfig {
            delayed_ack: None,
            dupack_threshold: 1,
            stp: Some(super::Stp::default()),
            ..TcpConfig::new(TcpVariant::Sack)
        }
    }

    /// The JTP paper's rate-based TCP-SACK baseline (`rate-sack`, §6.1):
    /// SACK recovery, delayed ACKs (one per two segments, RFC 5681's 200 ms
    /// bound), and sending paced at the PFTK rate with b = 2. RTT samples
    /// follow Linux's rule (as everywhere): the equation takes the SRTT at
    /// face value, and `newest-clean` samples a repair's delay as an RTT —
    /// on a 4-hop chain losing 5% per link, SRTTs of 1–13 s where the
    /// path's RTT is 80 ms, and a rate cut to match.
    pub fn rate_sack() -> TcpConfig {
        TcpConfig {
            delayed_ack: Some(DelayedAck::default()),
            pacing: Pacing::Pftk { b: 2 },
            rtt_sampling: RttSampling::Linux,
            ..TcpConfig::new(TcpVariant::Sack)
        }
    }

    /// The protocol's name in scenarios and reports.
    pub fn protocol_name(&self) -> &'static str {
        if self.eln {
            "tcp-eln"
        } else if self.stp.is_some() {
            "stp"
        } else if matches!(self.pacing, Pacing::Pftk { .. }) {
            "rate-sack"
        } else {
            self.variant.name()
        }
    }

    /// Check the options against each other; the error names the option.
    pub fn validate(&self) -> Result<(), crate::ConfigError> {
        use crate::ConfigError;
        crate::config_error::check_segment_options(
            self.mss,
            self.initial_window,
            (self.min_rto, self.max_rto),
            (self.recv_buffer, self.send_buffer),
        )?;
        if self.initial_rto == Duration::ZERO {
            return Err(ConfigError::new("initial_rto", "must be positive"));
        }
        if self.sack != self.variant.uses_sack() && self.variant.uses_sack() {
            return Err(ConfigError::new(
                "sack",
                format!(
                    "{} recovers with SACK and cannot turn it off",
                    self.variant.name()
                ),
            ));
        }
        if self.eln && self.variant != TcpVariant::NewReno {
            return Err(ConfigError::new(
                "eln",
                format!(
                    "ELN is the paper's TCP-ELN, built on newreno (protocol \"tcp-eln\"), not {}",
                    self.variant.name()
                ),
            ));
        }
        if let Pacing::Pftk { b } = self.pacing {
            if b == 0 {
                return Err(ConfigError::new(
                    "pftk_b",
                    "PFTK's packets per ACK must be at least 1",
                ));
            }
            if self.variant != TcpVariant::Sack {
                return Err(ConfigError::new(
                    "pacing",
                    format!(
                        "PFTK pacing is the paper's rate-based TCP-SACK (protocol \"rate-sack\"), not {}",
                        self.variant.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The window-scale shift that lets a 16-bit window cover the receive
    /// buffer (RFC 7323 caps it at 14).
    pub fn window_scale(&self) -> u8 {
        let mut shift = 0u8;
        while shift < 14 && (self.recv_buffer >> shift) > u16::MAX as usize {
            shift += 1;
        }
        shift
    }
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig::new(TcpVariant::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_parse_from_their_names() {
        for v in TcpVariant::ALL {
            assert_eq!(v.name().parse::<TcpVariant>(), Ok(v));
        }
        assert_eq!("CUBIC".parse::<TcpVariant>(), Ok(TcpVariant::Cubic));
        assert!("vegas".parse::<TcpVariant>().is_err());
    }

    #[test]
    fn sack_defaults_follow_the_variant() {
        assert!(TcpConfig::new(TcpVariant::Sack).sack);
        assert!(TcpConfig::new(TcpVariant::Cubic).sack);
        assert!(!TcpConfig::new(TcpVariant::Reno).sack);
    }

    #[test]
    fn rate_sack_is_sack_with_delayed_acks_and_pftk_pacing() {
        let c = TcpConfig::rate_sack();
        c.validate().unwrap();
        assert_eq!(c.protocol_name(), "rate-sack");
        assert!(c.sack && c.delayed_ack.is_some_and(|d| d.every == 2));
        assert_eq!(c.pacing, Pacing::Pftk { b: 2 });
        assert_eq!(c.rtt_sampling, RttSampling::Linux);
        let bad_b = TcpConfig {
            pacing: Pacing::Pftk { b: 0 },
            ..TcpConfig::rate_sack()
        };
        assert_eq!(bad_b.validate().unwrap_err().key, "pftk_b");
        let on_reno = TcpConfig {
            pacing: Pacing::Pftk { b: 2 },
            ..TcpConfig::new(TcpVariant::Reno)
        };
        assert_eq!(on_reno.validate().unwrap_err().key, "pacing");
        assert_eq!(TcpConfig::default().protocol_name(), "newreno");
    }

    #[test]
    fn window_scale_covers_the_receive_buffer() {
        let mut c = TcpConfig::default();
        assert_eq!(c.window_scale(), 5); // 1 MiB >> 5 = 32 KiB
        c.recv_buffer = 65_535;
        assert_eq!(c.window_scale(), 0);
        c.recv_buffer = usize::MAX;
        assert_eq!(c.window_scale(), 14);
    }
}
