//! Virtual retransmission (§3.2, Figure 3). On an end-to-end timeout the
//! source does not resend the block: it sends a virtual BSYN, which crosses
//! the route with the same per-hop exchange as a block. At each hop the
//! next node answers with the BACK bitmap of what its cache holds (received
//! or overheard), and only the frames it lacks move. A node forwards the
//! virtual BSYN once it holds the whole block, one TTL hop less; a node that
//! receives it with TTL 1 drops it. At the destination, a whole block is acknowledged end to
//! end again (the first end-to-end BACK may have been lost).
//!
//! The per-hop part is [`BlockSender`](super::sender::BlockSender) with
//! [`SendKind::Virtual`] and [`Inbound::on_bsyn`](super::inbound::Inbound::on_bsyn)
//! answering from the cache; this file holds the decisions around them.

use super::sender::SendKind;

/// What a node does with a virtual BSYN it has answered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VirtualStep {
    /// Once the block is whole here, send it on with this TTL.
    Forward { ttl: u8 },
    /// The TTL is spent: the node drops the virtual BSYN without taking
    /// the block, and answers with a full BACK so the previous hop stops
    /// asking (ours: the paper says only that the block is dropped; the
    /// source's end-to-end timeout still covers it).
    Expired,
    /// This is the destination: once the block is whole here, acknowledge
    /// it end to end.
    Acknowledge,
}

/// The step for a virtual BSYN that arrived with `ttl` at a node that is
/// (or is not) the flow's destination.
pub fn step(ttl: u8, at_destination: bool) -> VirtualStep {
    if at_destination {
        VirtualStep::Acknowledge
    } else if ttl <= 1 {
        VirtualStep::Expired
    } else {
        VirtualStep::Forward { ttl: ttl - 1 }
    }
}

/// How a retransmission after an end-to-end timeout moves over each hop
/// of the route: virtually, or (with the mechanism switched off, for the
/// component breakdown) by sending the whole block again. Either way it
/// travels to the destination under virtual BSYNs, which is what makes the
/// destination acknowledge it again end to end.
pub fn retransmission(virtual_retransmission: bool) -> SendKind {
    if virtual_retransmission {
        SendKind::Virtual
    } else {
        SendKind::Resend
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_counts_hops_down_to_zero() {
        assert_eq!(step(50, false), VirtualStep::Forward { ttl: 49 });
        assert_eq!(step(2, false), VirtualStep::Forward { ttl: 1 });
        assert_eq!(step(1, false), VirtualStep::Expired);
        assert_eq!(step(0, false), VirtualStep::Expired);
        assert_eq!(step(1, true), VirtualStep::Acknowledge);
    }

    #[test]
    fn switched_off_it_resends_the_block() {
        assert_eq!(retransmission(true), SendKind::Virtual);
        assert_eq!(retransmission(false), SendKind::Resend);
    }
}
