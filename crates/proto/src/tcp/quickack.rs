//! Linux's quick-ACK mode at the receiver (the `linux` profile's rule
//! `quickack`): for a while the receiver acknowledges every in-order
//! segment at once instead of every second one.
//!
//! Linux grants the credit (`tcp_incr_quickack`: the receive window over
//! two segments, at most `TCP_MAX_QUICKACKS` = 16, at least 2) when the
//! connection's first data arrives and when in-order data arrives after a
//! gap longer than the receiver's own RTO (`tcp_event_data_recv`: "the
//! sender failed to restart the window" — after a sender's timeout, say),
//! and when a segment arrives that was all received already
//! (`tcp_data_queue`'s "a retransmit … force an immediate ack",
//! `tcp_enter_quickack_mode`). Each ACK sent while one was owed spends
//! one (`tcp_dec_quickack_mode`). Found by diffing the kernel's ACKs
//! against ours on one loss pattern (`validation/linux/tracediff-linux.py`):
//! the kernel ACKs the first 16 segments one by one, ours paired them.

use super::agent::TcpAgent;
use crate::time::Time;

/// `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;

impl TcpAgent {
    /// In-order data arrived at `now` (`tcp_event_data_recv`).
    pub(crate) fn quickack_on_in_order(&mut self, now: Time) {
        if !self.cfg.rules.quickack {
            return;
        }
        let idle_too_long = match self.last_in_order_at {
            None => true,
            Some(at) => now.saturating_since(at) > self.rtt.rto(),
        };
        if idle_too_long {
            self.grant_quickacks();
        }
        self.last_in_order_at = Some(now);
    }

    /// A segment we had all of already arrived (`tcp_enter_quickack_mode`).
    pub(crate) fn quickack_on_duplicate(&mut self) {
        if self.cfg.rules.quickack {
            self.grant_quickacks();
        }
    }

    /// Whether in-order data is acknowledged at once.
    pub(crate) fn in_quickack_mode(&self) -> bool {
        self.quickacks > 0
    }

    /// An ACK went out while one was owed: it spends one credit.
    pub(crate) fn quickack_spent(&mut self) {
        self.quickacks = self.quickacks.saturating_sub(1);
    }

    /// `tcp_incr_quickack`: as many quick ACKs as half the receive window
    /// holds segments, within [2, 16], never fewer than are left.
    fn grant_quickacks(&mut self) {
        let per_window = self.cfg.recv_buffer as u64 / (2 * self.mss.max(1));
        let n = match per_window {
            0 => 2,
            n => n.min(MAX_QUICKACKS as u64) as u32,
        };
        self.quickacks = self.quickacks.max(n);
    }
}
