//! The one error a scenario or protocol option can raise: which key, and why.

use std::fmt;

/// A key (dotted, as the user wrote it: `flows.0.tcp.mss`) and what is wrong
/// with it. An empty key means the whole input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError {
    pub key: String,
    pub message: String,
}

impl OptionError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> OptionError {
        OptionError {
            key: key.into(),
            message: message.into(),
        }
    }

    /// Prefixes the message with the line of `text` that `span` starts on
    /// (a TOML parser's error position), so a syntax error is findable.
    pub fn at_line_of(mut self, text: &str, span: Option<std::ops::Range<usize>>) -> OptionError {
        if let Some(span) = span {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            self.message = format!("line {line}: {}", self.message);
        }
        self
    }
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for OptionError {}
