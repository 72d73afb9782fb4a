//! Hop: reliable per-hop block transfer (Li, Agrawal, Ganesan,
//! Venkataramani, *Block-switched networks: a new paradigm for wireless
//! transport*, NSDI 2009). See `docs/hop.md` for what is built, where, and
//! what is our choice rather than the paper's.
//!
//! The mechanisms, one per file, pure and tested alone:
//!
//! * [`bitmap`]: which frames of a block a node holds; the BACK bitmap.
//! * [`block`]: blocks made of frames, sent a TXOP at a time; cutting a
//!   block from the application without waiting for more data.
//! * [`sender`]: the per-hop sender of one block (§3.1): TXOP bursts, BSYN,
//!   resend only what the BACK says is missing, until the block is whole at
//!   the next hop; spatial pipelining; micro-blocks on the BSYN (§3.6);
//!   the first round of a virtual retransmission (§3.2).
//! * [`withhold`]: ack withholding (§3.5): one BSYN answered at a time,
//!   micro-blocks and small blocks first.
//! * [`backpressure`]: at most H complete blocks per flow beyond what has
//!   moved on (§3.3).
//! * [`cache`]: the frames a node received or overheard (§3.2).
//! * [`inbound`]: the receiving side of a node: frames into the cache,
//!   BSYNs answered (or withheld by the two rules above) with BACKs.
//! * [`e2e`]: the source's end-to-end timeout, the most recent block round
//!   trip (initial 60 s).
//! * [`agent`]: the agent — source, relay and sink of the flows that touch a
//!   node, with a round-robin scheduler over flows.
//! * [`virtual_rtx`]: virtual retransmission (§3.2): a BSYN that travels the
//!   route and moves data only where the next hop lacks it; TTL.

pub mod agent;
pub mod backpressure;
pub mod bitmap;
pub mod block;
pub mod cache;
pub mod e2e;
pub mod inbound;
pub mod sender;
pub mod virtual_rtx;
pub mod withhold;

#[cfg(test)]
mod agent_tests;
#[cfg(test)]
mod exchange_tests;
#[cfg(test)]
mod receiver_tests;

use crate::config_error::ConfigError;
use crate::time::Duration;

/// Hop's parameters, with every mechanism switchable so the paper's
/// component breakdown (§5.4) can be measured.
#[derive(Clone, Debug, PartialEq)]
pub struct HopConfig {
    /// Largest block, bytes (§4.2: 1 MB).
    pub max_block: usize,
    /// Payload bytes per data frame (§5: 1.5 KB packets; 1400 leaves room
    /// for the IPv4, UDP and Hop headers in a 1500-byte MTU).
    pub frame_len: usize,
    /// Bytes one TXOP carries (§4.1: 8160 µs, roughly 8 KB, at 11 Mbit/s).
    pub txop_bytes: usize,
    /// Backpressure limit H: complete blocks per flow a node buffers beyond
    /// what it has moved on (§3.3: 1); `None` turns backpressure off.
    pub backpressure: Option<usize>,
    /// Ack withholding (§3.5): answer one BSYN at a time.
    pub ack_withholding: bool,
    /// A hop's transfer of a block opens with a BSYN, and data go only once
    /// it is answered (§3.1's "in round i, the sender sends a BSYN"; §3.6
    /// names "the initial BSYN/BACK exchange" as the delay micro-blocks
    /// avoid), so that ack withholding holds back first rounds too (§3.5:
    /// "other senders wait their turn"). On by default since issue 13's
    /// third pass (docs/hop.md § What is ours has the measurements); off,
    /// the first round goes blind before the first BSYN.
    pub bsyn_first: bool,
    /// Blocks smaller than this ride on the BSYN (§3.6, §4.2: 16 KB);
    /// `None` turns micro-blocks off.
    pub micro_block: Option<usize>,
    /// Virtual retransmission on an end-to-end timeout (§3.2); when off, a
    /// timeout sends the whole block again over every hop to the
    /// destination, whatever the nodes on the way hold.
    pub virtual_retransmission: bool,
    /// A relay that moved a block on and no longer holds it whole (its
    /// cache evicted it) asks its next hop before answering a virtual BSYN
    /// for it, and answers for what the two hold together, so only frames
    /// the next hop lacks move (ours: the paper does not say how such a
    /// relay takes part). Off by default: on §5.7's partitioned path with
    /// H = 100 it cuts the source's resent frames by two thirds but lowers
    /// goodput on two seeds of three: one hop's BACKs lost to a hidden
    /// terminal stall a relay for minutes (docs/hop.md § What is left); off,
    /// the relay takes the whole block again.
    pub ask_next_hop: bool,
    /// The end-to-end timeout before the first block's round trip is known
    /// (§4.2: 60 s); afterwards, the most recent block round trip.
    pub initial_e2e_timeout: Duration,
    /// Before the first block round trip, derive the end-to-end timeout from
    /// the time blocks take to cross the first hop (twice that, doubling per
    /// timeout, at most `initial_e2e_timeout`) instead of waiting the whole
    /// initial timeout (ours, for hops without link ARQ under control
    /// messages: real hosts over UDP; `e2e.rs`).
    pub measured_first_timeout: bool,
    /// TTL of a virtual retransmission (§4.2: 50 hops).
    pub ttl: u8,
    /// How long a sender waits for a BACK before sending the BSYN again (a
    /// lost BSYN or BACK, or one withheld) until the hop's round trip is
    /// measured, and at most afterwards; where the driver does not report
    /// the link, always. Ours: the paper sends control with link ARQ and
    /// does not say.
    pub bsyn_retry: Duration,
    /// How long ack withholding waits for the sender it answered before
    /// answering another (ours: a sender that vanished must not block the
    /// receiver for ever).
    pub withhold_idle: Duration,
    /// Pacing (ours): a flow sends only while the driver's queue toward
    /// its next hop holds fewer packets than this, so the round robin of
    /// §3.6 decides whose TXOP goes next; `None` hands every round to the
    /// driver at once.
    pub pace_queue: Option<usize>,
    /// How often a node held back by a full queue looks again.
    pub pace_poll: Duration,
}

impl Default for HopConfig {
    fn default() -> HopConfig {
        HopConfig {
            max_block: 1 << 20,
            frame_len: 1400,
            txop_bytes: 8 * 1024,
            backpressure: Some(1),
            ack_withholding: true,
            bsyn_first: true,
            micro_block: Some(16 * 1024),
            virtual_retransmission: true,
            ask_next_hop: false,
            initial_e2e_timeout: Duration::from_secs(60),
            measured_first_timeout: false,
            ttl: joulenet_wire::hop::DEFAULT_TTL,
            bsyn_retry: Duration::from_millis(200),
            withhold_idle: Duration::from_secs(2),
            pace_queue: Some(16),
            pace_poll: Duration::from_millis(2),
        }
    }
}

impl HopConfig {
    /// Frames one TXOP carries.
    pub fn frames_per_txop(&self) -> usize {
        block::frames_per_txop(self.txop_bytes, self.frame_len)
    }

    /// True if a block of `len` bytes is sent as a micro-block.
    pub fn is_micro(&self, len: usize) -> bool {
        self.micro_block.is_some_and(|limit| len < limit)
    }

    /// Checks that the options fit the header and each other.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.frame_len == 0 || self.frame_len > 65_000 {
            return Err(ConfigError::new("frame_len", "must be 1..=65000 bytes"));
        }
        if self.max_block == 0 || self.max_block.div_ceil(self.frame_len) > u16::MAX as usize {
            return Err(ConfigError::new(
                "max_block",
                format!(
                    "must be 1..={} bytes with frame_len {} (65535 frames per block)",
                    self.frame_len * u16::MAX as usize,
                    self.frame_len
                ),
            ));
        }
        if self.txop_bytes == 0 {
            return Err(ConfigError::new("txop_bytes", "must be at least 1 byte"));
        }
        if self.backpressure == Some(0) {
            return Err(ConfigError::new(
                "backpressure",
                "H must be at least 1 block (or off)",
            ));
        }
        if self.pace_queue == Some(0) {
            return Err(ConfigError::new(
                "pace_queue",
                "must be at least 1 packet (or off)",
            ));
        }
        if self.ttl == 0 {
            return Err(ConfigError::new("ttl", "must be at least 1 hop"));
        }
        for (key, d) in [
            ("bsyn_retry", self.bsyn_retry),
            ("initial_e2e_timeout", self.initial_e2e_timeout),
            ("pace_poll", self.pace_poll),
        ] {
            if d == Duration::ZERO {
                return Err(ConfigError::new(key, "must be positive"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers_and_valid() {
        let c = HopConfig::default();
        c.validate().unwrap();
        assert_eq!(c.max_block, 1 << 20);
        assert_eq!(c.backpressure, Some(1));
        assert!(c.bsyn_first);
        assert_eq!(c.ttl, 50);
        assert_eq!(c.initial_e2e_timeout, Duration::from_secs(60));
        assert_eq!(c.frames_per_txop(), 5);
        assert!(c.is_micro(16 * 1024 - 1) && !c.is_micro(16 * 1024));
    }

    #[test]
    fn invalid_options_are_named() {
        let bad = |f: fn(&mut HopConfig)| {
            let mut c = HopConfig::default();
            f(&mut c);
            c.validate().unwrap_err().key
        };
        assert_eq!(bad(|c| c.frame_len = 0), "frame_len");
        assert_eq!(bad(|c| c.max_block = 100 << 20), "max_block");
        assert_eq!(bad(|c| c.backpressure = Some(0)), "backpressure");
        assert_eq!(bad(|c| c.ttl = 0), "ttl");
        assert_eq!(bad(|c| c.bsyn_retry = Duration::ZERO), "bsyn_retry");
        assert_eq!(bad(|c| c.pace_queue = Some(0)), "pace_queue");
        assert_eq!(bad(|c| c.pace_poll = Duration::ZERO), "pace_poll");
    }
}
