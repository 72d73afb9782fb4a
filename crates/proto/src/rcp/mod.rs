//! RCP, the Reception Control Protocol: a receiver-centric TCP clone
//! (Hsieh, Kim, Zhu, Sivakumar). The receiver requests, the sender answers.
//!
//! * [`RcpSender`] (the data source, usually a server in the backbone)
//!   keeps a send buffer and answers REQs; it runs no congestion control.
//! * [`RcpReceiver`] (the mobile host) runs congestion control with a
//!   shared [`crate::cc`] controller, flow control, loss detection and
//!   recovery, ELN and power management.
//!
//! Either end may open; in joulenet the sender opens (SYN carrying its
//! request limit), the receiver answers SYN+ACK, the sender's ACK
//! establishes, and the receiver sends the first REQ. The receiver closes
//! when it has the whole stream (FIN+ACK, answered by ACK).
//!
//! Timers: 0 handshake/FIN, 1 RTO, 2 persist, 3 power tick, 4 beacon end,
//! 5 sender linger.
//! Packets go with `TxOpts::ipv4(254)`. Wire format: `docs/wire.md`.

pub(crate) mod config;
mod cyclic;
mod receiver;
pub(crate) mod requests;
mod sender;
mod sent;

pub use config::{PowerSave, RcpConfig, RcpController};
pub use receiver::{RcpReceiver, ReceiverState};
pub use sender::{RcpSender, SenderState};

/// IPv4 protocol number of RCP packets (experimental, RFC 3692).
pub const IP_PROTOCOL: u8 = 254;

pub(crate) mod timer {
    use crate::net::TimerId;
    pub const HANDSHAKE: TimerId = TimerId(0);
    pub const RTO: TimerId = TimerId(1);
    pub const PERSIST: TimerId = TimerId(2);
    pub const POWER: TimerId = TimerId(3);
    pub const BEACON: TimerId = TimerId(4);
    /// Sender: close after a long silence once the stream has ended.
    pub const LINGER: TimerId = TimerId(5);
}
