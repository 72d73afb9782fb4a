//! The JTP paper's ATP-like baseline (§6.1, protocol `atp`): "a protocol
//! which adjusts the sending rate based on explicit feedback collected by
//! intermediate nodes, supports only end-to-end recovery, and has
//! constant-rate feedback from the receiver", the feedback period "larger
//! than RTT as suggested for ATP" (Sundaresan, Anantharaman, Hsieh,
//! Sivakumar, MobiCom 2003). Full reliability only.
//!
//! It speaks JTP's headers (`joulenet_wire::jtp`, IP protocol 253): data
//! packets carry the path's available rate, ACKs the rate, the cumulative
//! ACK, the highest packet received and a SNACK list. What it leaves out of
//! JTP, and how it differs from ATP itself, is in docs/jtp.md (*The
//! baselines*).
//!
//! * [`stamp`] — every node, the source included, stamps the minimum
//!   effective available rate of the path so far;
//! * [`rate`] — the source's rule for following the reported rate;
//! * [`AtpSender`], [`AtpReceiver`], [`AtpRelay`] — the agents;
//!   [`AtpConfig`] their settings.

pub mod config;
pub mod rate;
pub mod receiver;
pub mod relay;
pub mod sender;
pub mod stamp;
#[cfg(test)]
mod tests;

pub use config::AtpConfig;
pub use receiver::AtpReceiver;
pub use relay::AtpRelay;
pub use sender::AtpSender;
