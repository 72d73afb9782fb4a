//! Explicit loss notification (TCP-ELN, after Balakrishnan & Katz), as the
//! RCP paper's baseline uses it (docs/rcp.md, docs/wire.md).
//!
//! * **Receiver** (the mobile host). Its link layer hands it the bytes of a
//!   data segment lost on the last (wireless) hop through
//!   `Agent::on_overheard`. It remembers the segment's range until the hole
//!   fills, and every ACK it sends while the hole at RCV.NXT is such a
//!   segment carries the ELN option. One flag per ACK: it names only the
//!   first hole, never the ones above it.
//! * **Sender** (Reno and NewReno recovery). The first duplicate ACK with
//!   ELN starts a recovery that resends the head at once and keeps cwnd and
//!   ssthresh: the window is inflated by duplicate ACKs as in fast recovery
//!   and restored, not halved, when the recovery ends. A partial ACK
//!   without ELN means the next hole was not a wireless loss, so the usual
//!   congestion response is taken then. A retransmission itself lost on the
//!   wireless hop is resent without a timeout once more ELN duplicate ACKs
//!   have come since it left than segments were outstanding then: on a
//!   FIFO path, one of them was sent after the retransmission and arrived
//!   without it.

use joulenet_wire::tcp::{TcpPacket, TcpRepr};

use super::agent::TcpAgent;
use crate::net::Net;

impl TcpAgent {
    /// Receiver: the link layer reports a segment from our peer lost on the
    /// wireless hop.
    pub(crate) fn on_eln_report(&mut self, packet: &[u8]) {
        if !self.cfg.eln || !self.state.synchronized() {
            return;
        }
        let Ok(seg) = TcpPacket::new_checked(packet).and_then(|p| TcpRepr::parse(&p)) else {
            return;
        };
        if seg.dst_port != self.local_port || seg.src_port != self.peer_port {
            return;
        }
        if seg.payload.is_empty() || self.fin_received {
            return;
        }
        let start = self.irs.unwrap(seg.seq, self.rcv_nxt);
        let end = start + seg.payload.len() as u64;
        if end > self.rcv_nxt {
            self.eln_reports += 1;
            self.eln_lost.insert(start, end);
        }
    }

    /// Receiver: whether the ACK about to go out names a wireless loss,
    /// i.e. the segment at RCV.NXT was reported lost. Forgets filled holes.
    pub(crate) fn eln_flag(&mut self) -> bool {
        if !self.cfg.eln {
            return false;
        }
        while let Some((_, &end)) = self.eln_lost.first_key_value() {
            if end > self.rcv_nxt {
                break;
            }
            self.eln_lost.pop_first();
        }
        self.eln_lost
            .range(..=self.rcv_nxt)
            .next_back()
            .is_some_and(|(_, &end)| end > self.rcv_nxt)
    }

    /// Sender: a duplicate ACK with ELN outside recovery. Resends the head
    /// without touching ssthresh; true if it did. RFC 6582's guard against
    /// fast retransmits after a timeout (`recover`) does not apply: it
    /// exists because duplicate ACKs may then come from go-back-N
    /// duplicates, but an ELN ACK says the head was lost on the link.
    pub(crate) fn enter_eln_recovery(&mut self, net: &mut dyn Net) -> bool {
        if !self.cfg.eln {
            return false;
        }
        self.eln_recoveries += 1;
        let cwnd = self.cc.window();
        self.eln_cwnd = Some(cwnd);
        self.recover = Some(self.snd_max);
        self.recovery = Some(self.snd_max);
        // Fast recovery's inflation, one segment per duplicate ACK so far,
        // on top of the uncut window.
        self.cc.set_window(cwnd + self.dupacks as u64 * self.mss);
        self.retransmit_head(net);
        true
    }

    /// Sender, in recovery: an ELN duplicate ACK after more duplicate ACKs
    /// than there were segments outstanding when the head was resent means
    /// the resent copy was lost on the wireless hop too: resend it.
    pub(crate) fn eln_resend_lost_retransmission(&mut self, net: &mut dyn Net) {
        let Some((seq, outstanding)) = self.head_retransmitted else {
            return;
        };
        if !self.cfg.eln || seq != self.snd_una || self.dupacks_since_retransmit <= outstanding {
            return;
        }
        self.retransmit_head(net);
    }

    /// Sender: a partial ACK in an ELN recovery whose next hole carries no
    /// ELN was a congestion loss after all: cut now (once; the recovery
    /// goes on as an ordinary one). True if it cut.
    pub(crate) fn eln_cut_on_partial_ack(&mut self, net: &mut dyn Net, eln: bool) -> bool {
        if self.eln_cwnd.is_none() || eln {
            return false;
        }
        self.eln_cwnd = None;
        self.stats.fast_recoveries += 1;
        let flight = self.flight();
        let ssthresh = self.cc.on_congestion_event(net.now(), flight);
        self.cc.set_window(ssthresh);
        true
    }
}
