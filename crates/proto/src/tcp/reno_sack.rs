//! ns-3's recovery without SACK: every duplicate ACK is a "Reno SACK"
//! (`TcpTxBuffer::AddRenoSack`) that marks the next segment after the head
//! as delivered, so the pipe (`BytesInFlight`) falls by one segment per
//! dupack, and the window in recovery is set by PRR (`TcpPrrRecovery`,
//! ns-3's default `RecoveryType`) instead of RFC 6582's inflation. Used by
//! the `ns3` profile's NewReno (`TcpRules::reno_sack_prr`).
//!
//! The Reno SACKs are always the segments right after the head, so a
//! count stands for them: a cumulative ACK of `j` segments removes the
//! head and `j − 1` of them, and a partial ACK in recovery un-SACKs the new
//! head when it marks it lost (`MarkHeadAsLost`).

use super::agent::TcpAgent;
use super::prr::Prr;
use super::sender::Recovery;
use crate::net::Net;

impl TcpAgent {
    pub(crate) fn reno_sack_on(&self) -> bool {
        self.cfg.rules.reno_sack_prr && self.recovery_kind() == Recovery::NewReno
    }

    /// RFC 6675's pipe as the sender sends by it: the scoreboard's, less
    /// the Reno-SACKed segments.
    pub(crate) fn send_pipe(&self) -> u64 {
        let renosacked = if self.reno_sack_on() {
            self.reno_sacked * self.mss
        } else {
            0
        };
        self.board.pipe().saturating_sub(renosacked)
    }

    /// One more Reno SACK, never the head nor beyond the last segment.
    fn add_reno_sack(&mut self) {
        let behind_head = self.flight().div_ceil(self.mss).saturating_sub(1);
        self.reno_sacked = (self.reno_sacked + 1).min(behind_head);
    }

    /// A cumulative ACK of `acked` bytes removes the head and the Reno
    /// SACKs among the segments it covers.
    pub(crate) fn reno_sacks_acked(&mut self, acked: u64) {
        if self.reno_sacked > 0 {
            let segments = acked.div_ceil(self.mss);
            self.reno_sacked = (self.reno_sacked + 1).saturating_sub(segments);
        }
    }

    /// A dupack (`TcpSocketBase::DupAck`). True when it is fully handled:
    /// ignored after a timeout (CA_LOSS), or counted by PRR in recovery.
    /// Before recovery the Reno SACK frees one segment of the pipe, which
    /// is ns-3's Limited Transmit, and the caller goes on to count it
    /// towards a fast retransmit.
    pub(crate) fn reno_sack_dupack(&mut self) -> bool {
        if self.recovery.is_none() && !self.may_fast_retransmit() {
            return true;
        }
        if self.recovery.is_none() {
            self.add_reno_sack();
            return false;
        }
        // ns-3 computes the pipe before this ACK's Reno SACK.
        let pipe = self.send_pipe();
        self.add_reno_sack();
        let (ssthresh, mss) = (self.cc.ssthresh(), self.mss);
        if let Some(prr) = self.prr.as_mut() {
            if let Some(cwnd) = prr.on_ack_ns3(0, true, false, pipe, ssthresh, mss) {
                self.cc.set_window(cwnd);
            }
        }
        true
    }

    /// `EnterRecovery` without SACK: the head is lost, PRR starts from the
    /// pipe (ns-3.44's RecoverFS, `tcb->m_bytesInFlight`; later ns-3 takes
    /// the flight, as RFC 9937 says) and sizes the window for the third
    /// dupack, then the head is resent. ssthresh is already set
    /// (`loss_base`).
    pub(crate) fn reno_sack_enter_recovery(&mut self, net: &mut dyn Net) {
        self.recovery = Some(self.snd_max);
        self.board.mark_lost(0);
        let mut prr = Prr::start(self.send_pipe());
        let (pipe, ssthresh) = (self.send_pipe(), self.cc.ssthresh());
        if let Some(cwnd) = prr.on_ack_ns3(0, true, false, pipe, ssthresh, self.mss) {
            self.cc.set_window(cwnd);
        }
        self.prr = Some(prr);
        self.retransmit_head(net);
    }

    /// A partial ACK (`ProcessAck` in CA_RECOVERY): PRR counts every byte
    /// it acknowledges (`TcpRateLinux::SkbDelivered`), with the pipe taken
    /// before the new head is marked lost; then the head is resent.
    /// `safe`: the ACK covers retransmitted data (`m_isRetransDataAcked`).
    pub(crate) fn reno_sack_partial_ack(&mut self, net: &mut dyn Net, acked: u64, safe: bool) {
        let pipe = self.send_pipe();
        // MarkHeadAsLost un-SACKs a Reno-SACKed head.
        self.reno_sacked = self.reno_sacked.saturating_sub(1);
        self.board.mark_lost(0);
        let (ssthresh, mss) = (self.cc.ssthresh(), self.mss);
        if acked >= mss {
            if let Some(prr) = self.prr.as_mut() {
                if let Some(cwnd) = prr.on_ack_ns3(acked, false, safe, pipe, ssthresh, mss) {
                    self.cc.set_window(cwnd);
                }
            }
        }
        self.retransmit_head(net);
    }
}
