//! Transmit energy on the shared medium by what was sent.
//!
//! A radio's transmit energy (`NodeResult::tx_j`) covers everything it put
//! on the air. The JTP paper's energy per delivered bit counts only "the
//! energy actually spent to transfer packets of the transport layer" (§6.1:
//! a link-layer monitor charges each transport packet's transmission from
//! the transmit power, the data rate and its length), leaving out what the
//! lower layers spend. So each transmission is charged, as the radio's
//! ledger charges it, to one kind: transport packets by the agent that made
//! them (a flow's source, its destination, a relay), link-layer control
//! (link ACKs, RTS, CTS), or the network's own frames (link-state
//! advertisements). Under the `state` energy model the kinds of a node add
//! up to its `tx_j`.

use serde::Serialize;

use crate::endpoint::Side;

/// What a transmission carried.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TxKind {
    /// A transport packet a flow's source made (data, retransmissions).
    Source,
    /// A transport packet a flow's destination made (ACKs, feedback).
    Destination,
    /// A transport packet a relay agent made (JTP's local recoveries).
    Relay,
    /// Link ACK, RTS or CTS.
    LinkControl,
    /// A frame the network made itself (routing).
    Network,
}

impl TxKind {
    /// The kind of a data frame made by an agent on `origin`'s side (`None`:
    /// the network), or of a link-state advertisement (`lsa`).
    pub fn of_frame(origin: Option<Side>, lsa: bool) -> TxKind {
        match (lsa, origin) {
            (true, _) | (false, None) => TxKind::Network,
            (false, Some(Side::Client)) => TxKind::Source,
            (false, Some(Side::Server)) => TxKind::Destination,
            (false, Some(Side::Relay)) => TxKind::Relay,
        }
    }
}

/// One node's transmit energy by kind, J.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize)]
pub struct TxByKind {
    pub source_j: f64,
    pub destination_j: f64,
    pub relay_j: f64,
    pub link_control_j: f64,
    pub network_j: f64,
}

impl TxByKind {
    pub fn add(&mut self, kind: TxKind, joules: f64) {
        let slot = match kind {
            TxKind::Source => &mut self.source_j,
            TxKind::Destination => &mut self.destination_j,
            TxKind::Relay => &mut self.relay_j,
            TxKind::LinkControl => &mut self.link_control_j,
            TxKind::Network => &mut self.network_j,
        };
        *slot += joules;
    }

    /// Transport packets only: the JTP paper's measure.
    pub fn transport_j(&self) -> f64 {
        self.source_j + self.destination_j + self.relay_j
    }

    pub fn total_j(&self) -> f64 {
        self.transport_j() + self.link_control_j + self.network_j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_origin_and_their_sums() {
        assert_eq!(TxKind::of_frame(Some(Side::Client), false), TxKind::Source);
        assert_eq!(
            TxKind::of_frame(Some(Side::Server), false),
            TxKind::Destination
        );
        assert_eq!(TxKind::of_frame(Some(Side::Relay), false), TxKind::Relay);
        assert_eq!(TxKind::of_frame(None, false), TxKind::Network);
        assert_eq!(TxKind::of_frame(Some(Side::Client), true), TxKind::Network);
        let mut t = TxByKind::default();
        for (k, j) in [
            (TxKind::Source, 1.0),
            (TxKind::Destination, 2.0),
            (TxKind::Relay, 4.0),
            (TxKind::LinkControl, 8.0),
            (TxKind::Network, 16.0),
            (TxKind::Source, 32.0),
        ] {
            t.add(k, j);
        }
        assert_eq!(
            (t.source_j, t.transport_j(), t.total_j()),
            (33.0, 39.0, 63.0)
        );
    }
}
