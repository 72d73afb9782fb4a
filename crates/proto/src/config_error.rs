//! Why a protocol configuration is invalid, naming the option at fault, so
//! that a scenario reader or a command line can point at the key the user
//! wrote instead of guessing.

use core::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The option's name as scenarios spell it (`max_window`, `min_rto`).
    pub key: &'static str,
    pub reason: String,
}

impl ConfigError {
    pub fn new(key: &'static str, reason: impl Into<String>) -> ConfigError {
        ConfigError {
            key,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.reason)
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigError> for String {
    fn from(e: ConfigError) -> String {
        e.to_string()
    }
}

/// The checks TCP and RCP share: a segment size, an initial window, an RTO
/// range and buffers that hold at least one segment.
pub(crate) fn check_segment_options(
    mss: u16,
    initial_window: u32,
    (min_rto, max_rto): (crate::Duration, crate::Duration),
    (recv_buffer, send_buffer): (usize, usize),
) -> Result<(), ConfigError> {
    if mss == 0 {
        return Err(ConfigError::new("mss", "must be positive"));
    }
    if initial_window == 0 {
        return Err(ConfigError::new(
            "initial_window",
            "must be at least one segment",
        ));
    }
    if max_rto < min_rto {
        return Err(ConfigError::new(
            "max_rto",
            format!("must be at least min_rto ({min_rto})"),
        ));
    }
    for (key, bytes) in [("recv_buffer", recv_buffer), ("send_buffer", send_buffer)] {
        if bytes < mss as usize {
            return Err(ConfigError::new(key, "must hold at least one segment"));
        }
    }
    Ok(())
}
