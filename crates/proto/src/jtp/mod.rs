//! JTP, the JAVeLEN Transport Protocol (Riga, Matta, Medina, Partridge,
//! Redi): its mechanisms as pure functions and small state machines, one
//! concept per file, each tested against hand-computed values. The headers
//! are in `joulenet_wire::jtp`; docs/jtp.md maps each file to the paper.
//!
//! * [`attempts`] — per-hop link attempts and the loss-tolerance rewrite (§3);
//! * [`rate`] — the effective available rate and its path minimum (§2.1.1);
//! * [`monitor`] — the destination's flip-flop path monitor (§5.1);
//! * [`feedback`] — the feedback period T = max(T_lb, n / rate) (§5.1);
//! * [`controller`] — the PI²/MD sending-rate controller (§5.2.1);
//! * [`backoff`] — the source's back-off for locally recovered packets (§4.1);
//! * [`cache`] — the relays' LRU packet cache (§4);
//! * [`priority`] — per-packet priorities as loss tolerances (§3);
//! * [`analytic`] — expected transmissions with and without caching (§4).

pub mod analytic;
pub mod attempts;
pub mod backoff;
pub mod cache;
pub mod controller;
pub mod feedback;
pub mod monitor;
pub mod priority;
pub mod rate;

// The agents, built on the mechanisms above.
#[cfg(test)]
mod baselines_tests;
pub mod chunks;
pub mod config;
pub mod hop;
pub mod receiver;
pub mod relay;
pub mod reorder;
pub mod sender;
#[cfg(test)]
mod tests;

pub use config::JtpConfig;
pub use receiver::JtpReceiver;
pub use relay::JtpRelay;
pub use sender::JtpSender;
