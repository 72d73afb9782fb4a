//! R²CP on real hosts (issue 20): a multi-homed receiver with one UDP
//! socket per path, and the senders it pulls from.
//!
//! The receiver ([`receiver::run_receiver`], `joulenet recv --proto r2cp
//! --bind A --bind B --server S ...`) runs the simulator's
//! `R2cpReceiver` unchanged; this module only moves its packets and its
//! clock. Path *i* is a local address (one per interface) and a sender's
//! address; the engine names that sender node [`FIRST_SENDER`] + *i*, and
//! [`net::MultiNet`] sends what the engine addresses to it through path
//! *i*'s socket. The engine polls `Net::link(..).up` every 50 ms to open a
//! pipe on a path that came up and kill the pipe of one that went down
//! (handoff, server migration); [`liveness::Liveness`] answers it from
//! what the sockets see: a path is down while the kernel has no route from
//! its local address to its sender (its interface is down: `connect(2)`
//! and `sendto(2)` fail), or once the sender has been silent for
//! `--silence` after the receiver sent to it.
//!
//! The senders ([`offer::run_offer`], `joulenet offer FILE --bind ADDR`)
//! are unchanged passive RCP senders (`RcpSender::listen`), one per pipe
//! that reaches them, each reading the whole file: every path's sender
//! holds the same content, as the paper's servers do, and the receiver
//! pulls each range from whichever pipe it bound it to.
//!
//! Framing ([`frame`]): the runtime's 16-byte header, kind `Data`, R²CP's
//! code and the receiver's connection id, then the RCP packet. There is no
//! `Hello`/`Retry` exchange: a sender answers a SYN only with a SYN+ACK of
//! the same size, and sends data only after the receiver's ACK echoes its
//! random initial sequence number, which a spoofer cannot see.

pub mod frame;
pub mod liveness;
pub mod net;
pub mod offer;
pub mod receiver;

use joulenet_proto::NodeId;

/// The engine's node id for path 0's sender; path *i*'s is this + *i*.
pub const FIRST_SENDER: NodeId = 10;
/// The port the engine addresses every sender at (RCP header ports).
pub const SENDER_PORT: u16 = 5201;
/// The receiver's own port in RCP headers.
pub const RECEIVER_PORT: u16 = 40000;
