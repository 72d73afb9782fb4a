//! A DTN bundle relay with custody transfer over per-hop reliable transfer:
//! the Hop paper's DTN2.5 baseline (§5: "a reference implementation of
//! RFC 4838 and 5050 … that reliably transfers a bundle using TCP at each
//! hop"), as the bundle protocol's store-and-forward reduces to on a path.
//!
//! * **Bundles.** The flow's stream is cut into bundles of
//!   [`DtnConfig::bundle`] bytes (the last may be shorter). A node forwards
//!   a bundle only once it holds all of it: no pipelining within a bundle,
//!   the difference from Hop's TXOP-by-TXOP forwarding (§3.1).
//! * **Custody transfer.** Each hop is a TCP connection ([`DtnConfig::tcp`],
//!   CUBIC as the paper's Linux nodes ran). A custodian keeps a bundle (in
//!   its store, then its TCP send buffer) until the next node has
//!   acknowledged every byte of it, which is the next node taking custody;
//!   it never gives a bundle up (`max_consecutive_rtos` unbounded), so a
//!   bundle waits through a partition at the last node that reached it and
//!   moves on when the next hop returns (at the TCP's next retransmission).
//! * **Storage.** A node stores up to [`DtnConfig::storage`] bytes per flow
//!   (DTN2 keeps bundles on disk): far more than a socket buffer, so a full
//!   next hop does not push back until that much is waiting.
//!
//! The ends are TCP agents addressing each other and the relays are
//! transparent ([`crate::relay::split`]), as hop-by-hop TCP's are. What is
//! not modelled: bundle headers and custody signals as separate messages
//! (the TCP acknowledgement stands for the custody signal), and DTN2's
//! convergence layer reopening a connection when a contact returns rather
//! than at the TCP's next retransmission.

use crate::e2tcp::proxy::opens_tcp;
use crate::net::Transit;
use crate::relay::split::SplitConnection;
use crate::relay::PerFlow;
use crate::tcp::{TcpAgent, TcpConfig, TcpVariant};

/// Flows one bundle relay carries at once.
pub const MAX_DTN_FLOWS: usize = 1024;

/// A DTN flow's configuration, the same at every node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DtnConfig {
    /// Every hop's TCP connection.
    pub tcp: TcpConfig,
    /// Bundle size, bytes (1 MiB: Hop's largest block, so the two store the
    /// same unit per hop).
    pub bundle: usize,
    /// Bytes of the flow a node may store.
    pub storage: usize,
}

impl Default for DtnConfig {
    fn default() -> DtnConfig {
        let mut tcp = TcpConfig::new(TcpVariant::Cubic);
        // A custodian never gives a bundle up.
        tcp.max_consecutive_rtos = u32::MAX;
        DtnConfig {
            tcp,
            bundle: 1 << 20,
            storage: 64 << 20,
        }
    }
}

/// The bundle relay of one node: per flow, the TCP connection accepted from
/// the previous custodian and the one opened to the next, joined by the
/// node's bundle store.
pub fn bundle_relay(cfg: DtnConfig) -> PerFlow<SplitConnection> {
    PerFlow::new(
        "dtn",
        MAX_DTN_FLOWS,
        Box::new(move |t: &Transit<'_>| {
            if !opens_tcp(t.packet) {
                return None;
            }
            Some(
                SplitConnection::new(
                    Box::new(TcpAgent::server(cfg.tcp.clone())),
                    Box::new(TcpAgent::client(cfg.tcp.clone(), t.dst)),
                    (t.src, t.dst),
                    cfg.storage,
                )
                .with_bundles(cfg.bundle),
            )
        }),
    )
}
