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
