//! A packet in the simulated network, with the addressing a network header
//! carries.

use joulenet_proto::{Addr, NetworkHeader, NodeId, Time, TxOpts};

use crate::endpoint::Side;

/// One transport packet on its way through the network. `packet` holds the
/// real transport bytes the agent built; the network header is represented
/// by `src`, `dst` and `header` (it is synthesised as real bytes only when a
/// pcap is written) and its length is charged on every link.
#[derive(Debug)]
pub struct Frame {
    pub packet: Vec<u8>,
    pub src: Addr,
    pub dst: Addr,
    pub opts: TxOpts,
    /// When the agent handed it to the network.
    pub sent_at: Time,
    /// Hops travelled over the shared medium (a hop limit ends routing
    /// loops while nodes' link-state views disagree).
    pub hops: u8,
    /// The node that last sent it on (set as it leaves each node): the
    /// previous hop an agent is told about.
    pub prev: NodeId,
    /// The relay class of the flow it belongs to, if its protocol runs
    /// relays on intermediate nodes (see `crate::relays`).
    pub relay: Option<u16>,
    /// The flow whose agent (endpoint or relay) made it; `None` for the
    /// medium's own frames (link-state advertisements). Captures read the
    /// packet's format from the flow's protocol.
    pub flow: Option<u32>,
    /// The side of the agent that made it (a flow's source, its
    /// destination, or a relay); `None` for the network's own frames. Kept
    /// as it is forwarded, for the transmit energy by kind.
    pub origin: Option<Side>,
}

impl Frame {
    /// Bytes of network header plus transport bytes.
    pub fn network_len(&self) -> usize {
        self.opts.network_header.len() + self.packet.len()
    }

    pub fn ip_protocol(&self) -> Option<u8> {
        match self.opts.network_header {
            NetworkHeader::Ipv4 { protocol } => Some(protocol),
            NetworkHeader::None => None,
        }
    }
}
