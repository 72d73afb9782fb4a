//! WWP parameters (the paper's defaults: L = 3, W(i) = 12·i, 1 KB payload,
//! BT = 40 KB/s).

use joulenet_wire::wwp::SEQ_MAX;

use crate::config_error::ConfigError;
use crate::time::Duration;

/// How the receiver picks the next level and how quickly the sender times out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Levels by wave time, and after a probe cycle by RTT, jitter and lost
    /// probes.
    Conservative,
    /// Straight back to the top level whenever a clear period is detected;
    /// shorter timeouts.
    Aggressive,
}

impl std::str::FromStr for Behaviour {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "conservative" => Ok(Behaviour::Conservative),
            "aggressive" => Ok(Behaviour::Aggressive),
            _ => Err(format!(
                "expected \"conservative\" or \"aggressive\", got \"{s}\""
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct WwpConfig {
    /// W(i) for i = 0..=L; W(0) = 0 and W is increasing.
    pub wave_sizes: Vec<u8>,
    /// Fixed data payload per segment, bytes.
    pub payload: u16,
    /// Baseline throughput BT, bytes per second.
    pub baseline_bytes_per_sec: f64,
    pub behaviour: Behaviour,
    /// Level of the first wave.
    pub initial_level: u8,
    /// PROBE_T and SEND_T before any measurement.
    pub initial_timeout: Duration,
    /// Floor of PROBE_T.
    pub min_probe_t: Duration,
    /// Floor of SEND_T.
    pub min_send_t: Duration,
    /// Give up after this many consecutive unanswered timeouts.
    pub max_retries: u32,
    /// The smallest reference RTT the end-of-probe-cycle rule divides by, as
    /// RFC 6298's clock granularity G: on sub-millisecond paths the best
    /// probe RTT is a few microseconds, and ordinary host scheduling jitter
    /// of a millisecond would read as a many-fold delay increase.
    pub rtt_granularity: Duration,
    /// Conservative behaviour only: after a failed wave, resume at most one
    /// level above that wave's verdict (our earlier rule). Off, the probe
    /// cycle's verdict stands, as in the paper, where WWP "can adjust back
    /// immediately to a high wave level where appropriate" (§4.1.1).
    pub gradual_resume: bool,
    /// The first segment's number (24 bits; numbers wrap). The SYN carries
    /// it, so only the sender's value matters.
    pub initial_segment: u32,
}

impl Default for WwpConfig {
    fn default() -> Self {
        WwpConfig::with_levels(3, 12)
    }
}

impl WwpConfig {
    /// L levels with W(i) = `per_level`·i.
    pub fn with_levels(levels: u8, per_level: u8) -> WwpConfig {
        let wave_sizes = (0..=levels as u32)
            .map(|i| (i * per_level as u32).min(255) as u8)
            .collect();
        WwpConfig {
            wave_sizes,
            payload: 1024,
            baseline_bytes_per_sec: 40.0 * 1024.0,
            behaviour: Behaviour::Conservative,
            initial_level: levels,
            initial_timeout: Duration::from_secs(1),
            min_probe_t: Duration::from_millis(50),
            min_send_t: Duration::from_millis(100),
            max_retries: 1000,
            rtt_granularity: Duration::from_millis(1),
            gradual_resume: false,
            initial_segment: 0,
        }
    }

    /// The top level L.
    pub fn top(&self) -> u8 {
        (self.wave_sizes.len() - 1) as u8
    }

    pub fn wave(&self, level: u8) -> usize {
        self.wave_sizes
            .get(level as usize)
            .copied()
            .unwrap_or_default() as usize
    }

    /// Check the invariants; a message names what is wrong.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.wave_sizes.len() < 2 || self.wave_sizes.len() > 16 {
            return Err(ConfigError::new("levels", "between 1 and 15 wave levels"));
        }
        if self.wave_sizes[0] != 0 {
            return Err(ConfigError::new("levels", "W(0) must be 0"));
        }
        if self.wave_sizes.windows(2).any(|w| w[1] <= w[0]) {
            return Err(ConfigError::new(
                "segments_per_level",
                "wave sizes must increase with the level",
            ));
        }
        if self.payload == 0 {
            return Err(ConfigError::new("payload", "must be positive"));
        }
        if self.baseline_bytes_per_sec <= 0.0 || !self.baseline_bytes_per_sec.is_finite() {
            return Err(ConfigError::new(
                "baseline_kbytes",
                "must be a positive number",
            ));
        }
        if self.initial_level == 0 || self.initial_level > self.top() {
            return Err(ConfigError::new(
                "initial_level",
                format!("must be within 1..={} (the number of levels)", self.top()),
            ));
        }
        if self.initial_segment > SEQ_MAX {
            return Err(ConfigError::new(
                "initial_segment",
                format!("must be within 0..={SEQ_MAX} (24 bits)"),
            ));
        }
        Ok(())
    }

    /// Baseline time B for the rest of a wave of `size` segments after its
    /// first segment: (size − 1) payloads at BT.
    pub fn baseline(&self, size: usize) -> Duration {
        let bytes = size.saturating_sub(1) as f64 * self.payload as f64;
        Duration::from_secs_f64(bytes / self.baseline_bytes_per_sec)
    }
}
