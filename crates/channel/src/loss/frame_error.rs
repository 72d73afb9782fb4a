//! The error rate of a frame in one channel state.

use crate::error::{check_probability, ParamError};

/// How frames fail in one channel state: a fixed per-frame error rate, or a
/// bit error rate whose effect grows with the frame's length.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum FrameError {
    /// Probability that a frame is lost, whatever its length.
    Packet(f64),
    /// Probability that each bit is corrupted, independently.
    Bit(f64),
}

impl FrameError {
    /// Probability that a frame of `bits` bits is lost.
    pub fn probability(self, bits: u64) -> f64 {
        match self {
            FrameError::Packet(p) => p,
            FrameError::Bit(ber) => bit_error_probability(ber, bits),
        }
    }

    pub(crate) fn validate(self, param: &str) -> Result<(), ParamError> {
        match self {
            FrameError::Packet(p) => check_probability(param, p),
            FrameError::Bit(ber) => check_probability(param, ber),
        }
    }

    /// The per-frame rate, where it does not depend on the frame's length.
    pub(crate) fn packet_rate(self) -> Option<f64> {
        match self {
            FrameError::Packet(p) => Some(p),
            FrameError::Bit(_) => None,
        }
    }
}

/// 1 − (1 − ber)^bits, computed as −expm1(bits · ln_1p(−ber)) so that tiny
/// bit error rates on long frames keep their precision (the naive form
/// rounds 1 − 1e-12 and loses every digit).
pub fn bit_error_probability(ber: f64, bits: u64) -> f64 {
    if bits == 0 || ber <= 0.0 || ber.is_nan() {
        return 0.0;
    }
    if ber >= 1.0 {
        return 1.0;
    }
    -(bits as f64 * (-ber).ln_1p()).exp_m1()
}
