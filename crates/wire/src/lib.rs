//! Byte-exact wire formats for joulenet's protocols.
//!
//! Each format follows smoltcp's `wire` pattern: a zero-copy `Packet<T>` view
//! over a byte buffer with field offsets in a `field` module, and a plain
//! `Repr` struct with `parse`, `emit` and `buffer_len`. Parsers return an
//! [`Error`] on any input, never panic.
//!
//! This crate knows nothing but bytes: it must not depend on any other joulenet
//! crate, on time, or on I/O.

use core::fmt;

/// Why a buffer could not be parsed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The buffer is shorter than the format requires.
    Truncated,
    /// A field holds a value the format does not allow.
    Malformed,
    /// The checksum does not match the contents.
    Checksum,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => write!(f, "truncated packet"),
            Error::Malformed => write!(f, "malformed packet"),
            Error::Checksum => write!(f, "bad checksum"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = core::result::Result<T, Error>;

pub mod checksum;
pub mod ipv4;
pub mod jtp;
pub mod rcp;
pub mod tcp;
pub mod udp;

pub use ipv4::{Ipv4Packet, Ipv4Repr};
pub use tcp::{SackBlock, SackBlocks, TcpFlags, TcpOptions, TcpPacket, TcpRepr};
pub mod e2tcp;
pub mod hop;
pub mod nackrate;
pub mod wwp;
