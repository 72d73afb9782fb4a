//! F-RTO (RFC 5682 §3, the SACK-enhanced algorithm) as Linux runs it, for
//! profiles that set `TcpRules::frto`: after a retransmission timeout the
//! first ACKs decide whether the timeout was spurious (the data had
//! arrived; its ACKs were lost or late). If they acknowledge data sent
//! before the timeout and never resent, the window cut is undone and
//! nothing more is resent (`tcp_process_loss`, `tcp_try_undo_loss`).
//!
//! Step 1 (`tcp_enter_loss`): F-RTO starts at a timeout outside any
//! recovery, or at a repeated timeout on the same segment; the timeout
//! resends only the head, as without F-RTO.
//! Step 2.b: the first ACK that advances snd_una without acknowledging
//! such original data lets new data out instead of retransmissions
//! (`REXMIT_NEW`); if there is none to send, the recovery is conventional.
//! Step 3: once new data is out, an ACK acknowledging or SACKing original
//! data undoes the cut (3.b); a duplicate ACK or new SACK without it
//! means the loss was real (3.a), and the go-back-N repair proceeds.

use super::agent::TcpAgent;
use crate::net::Net;

/// What an ACK did, as F-RTO reads it (Linux's ACK flags).
#[derive(Copy, Clone, Debug)]
pub(crate) struct FrtoAck {
    /// `FLAG_SND_UNA_ADVANCED`.
    pub una_advanced: bool,
    /// `FLAG_DATA_SACKED` or a duplicate ACK.
    pub sacked_or_dupack: bool,
    /// End of the lowest never-retransmitted segment the ACK newly
    /// acknowledged or SACKed.
    pub original_delivered: Option<u64>,
}

impl TcpAgent {
    /// Remembers the window and ssthresh before a reduction, for an undo
    /// (`tcp_init_undo`; `prior_ssthresh` is `tcp_current_ssthresh`: ssthresh,
    /// or ¾ of the window when larger, outside a reduction).
    pub(crate) fn save_undo_state(&mut self) {
        if !self.cfg.rules.frto {
            return;
        }
        let cwnd = self.cc.window();
        let current = if self.recovery.is_some() {
            self.cc.ssthresh()
        } else {
            self.cc.ssthresh().max(cwnd / 2 + cwnd / 4)
        };
        self.undo_prior = Some((cwnd, current));
    }

    /// Step 1, at a timeout: F-RTO runs unless the timeout interrupted a
    /// recovery (a repeated timeout on the same segment may run it again).
    pub(crate) fn frto_on_timeout(&mut self, was_recovering: bool) {
        self.frto = self.cfg.rules.frto && (!was_recovering || self.consecutive_rtos > 1);
        self.frto_new_data_only = false;
    }

    /// Steps 2 and 3 on an ACK in the loss state after a timeout.
    pub(crate) fn frto_on_ack(&mut self, net: &mut dyn Net, ack: FrtoAck) {
        if !self.frto {
            return;
        }
        let Some(high_seq) = self.recover else {
            self.frto = false;
            return;
        };
        if ack.original_delivered.is_some_and(|end| end <= high_seq) {
            // Step 3.b: not everything was lost (the first ACK may already
            // show it, as Linux checks before step 2.b).
            return self.undo_spurious_timeout();
        }
        if self.snd_max > high_seq {
            if ack.sacked_or_dupack {
                self.frto = false; // Step 3.a: the loss was real.
            }
        } else if ack.una_advanced && self.snd_una < high_seq {
            // Step 2.b: send new data, not retransmissions, on this ACK.
            self.recover = Some(self.snd_max);
            self.fill_from_app(net);
            if self.new_data_len().is_some() {
                self.frto_new_data_only = true;
                return;
            }
            self.frto = false;
        }
        if self.snd_una >= high_seq {
            // The repair is over without a verdict.
            self.frto = false;
        }
    }

    /// `tcp_try_undo_loss(sk, true)`: the window and ssthresh come back,
    /// nothing is lost any more, and the sender is in the open state, where
    /// a new loss may start a fast recovery at once.
    fn undo_spurious_timeout(&mut self) {
        if let Some((cwnd, ssthresh)) = self.undo_prior.take() {
            self.cc.undo_reduction(cwnd, ssthresh);
        }
        self.board.unmark_lost();
        self.recover = None;
        self.frto = false;
        self.frto_new_data_only = false;
        self.consecutive_rtos = 0;
        self.spurious_rtos += 1;
    }

    /// After step 2.b's transmission: if no new data could go out, F-RTO
    /// ends and the lost segments are resent as usual (`tcp_xmit_recovery`).
    /// True if the caller should send again.
    pub(crate) fn frto_after_new_data(&mut self) -> bool {
        if !core::mem::take(&mut self.frto_new_data_only) {
            return false;
        }
        let sent_new = self.recover.is_some_and(|high_seq| self.snd_max > high_seq);
        if !sent_new {
            self.frto = false;
        }
        !sent_new
    }
}
