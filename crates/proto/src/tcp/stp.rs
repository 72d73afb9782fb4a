//! STP, the Satellite Transport Protocol of Henderson and Katz ("Transport
//! protocols for Internet-compatible satellite networks", IEEE JSAC 17(2),
//! 1999), as the RCP paper's sender-side baseline of Figure 5c: a sender
//! that polls and a receiver that answers, in place of TCP's ACK clock.
//!
//! * The receiver sends no acknowledgment per segment. It answers each
//!   POLL with a status report (STAT: the cumulative ACK and SACK blocks
//!   naming what is missing), and sends an unsolicited one (USTAT) at once
//!   when an arrival reveals a new gap. So the reverse path carries about
//!   `polls_per_rtt` reports per round trip whatever the data rate: the
//!   point of STP on asymmetric satellite links.
//! * The sender marks a data segment as a POLL every `srtt / polls_per_rtt`
//!   and, when it has data outstanding but nothing to send, polls with a
//!   bare segment on a timer (timer 5).
//! * Losses are what a report says is missing: the sender takes a gap
//!   below SACKed data as lost at once (one segment above it suffices;
//!   `dupack_threshold` = 1), and counts no duplicate ACKs (a report that
//!   repeats the cumulative ACK is an answer to a poll, not a sign that a
//!   segment left). Window growth counts bytes acknowledged, so sparse
//!   reports grow the window as fast as per-segment ACKs would; a loss
//!   halves it once per round trip (SACK recovery).
//!
//! Where we differ from the paper's STP (documented in
//! docs/reproduction/rcp.md): it is built on our TCP sender, so SACK option
//! space limits a report to 3–4 gaps where STP's STAT lists them all, and
//! the retransmission timer stays as a backstop, restarted by every report
//! that brings new SACK information.
//! A retransmission that a
//! report still lists as missing when data sent after it has been SACKed
//! is resent (STP's repair of lost retransmissions; the path is FIFO),
//! within the same window cut.

use joulenet_wire::tcp::TcpOptions;

use super::agent::{timer, TcpAgent};
use crate::net::Net;
use crate::time::{Duration, Time};

/// STP's settings (`TcpConfig::stp`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stp {
    /// Polls per smoothed round trip (ours: the paper sets its poll timer
    /// in its own units; 2 keeps a report in flight at any time).
    pub polls_per_rtt: u32,
}

impl Default for Stp {
    fn default() -> Stp {
        Stp { polls_per_rtt: 2 }
    }
}

/// The poll period before any RTT sample (a satellite round trip's order).
const FIRST_POLL_PERIOD: Duration = Duration::from_millis(100);
/// No faster than this, whatever the RTT.
const MIN_POLL_PERIOD: Duration = Duration::from_millis(1);

impl TcpAgent {
    pub(crate) fn is_stp(&self) -> bool {
        self.cfg.stp.is_some()
    }

    fn poll_period(&self) -> Duration {
        let per_rtt = self.cfg.stp.map_or(1, |s| s.polls_per_rtt.max(1));
        self.rtt
            .srtt()
            .map_or(FIRST_POLL_PERIOD, |srtt| {
                Duration::from_nanos(srtt.as_nanos() / per_rtt as u64)
            })
            .max(MIN_POLL_PERIOD)
    }

    /// Sender: marks `options` as a POLL when one is due (or forced by the
    /// poll timer), and arms the timer for the next one.
    pub(crate) fn stp_mark_poll(&mut self, net: &dyn Net, options: &mut TcpOptions, data: bool) {
        if !self.is_stp() || !(data || self.stp_force_poll) {
            return;
        }
        let now = net.now();
        if self.stp_force_poll || now >= self.stp_next_poll {
            options.poll = true;
            self.stp_force_poll = false;
            self.stp_polls += 1;
            self.stp_next_poll = now + self.poll_period();
            self.timers.set(timer::POLL, self.stp_next_poll);
        }
    }

    /// Sender: the poll timer fired. With data outstanding, poll now even
    /// if nothing new can be sent (the window is full or the data all sent).
    pub(crate) fn on_poll_timer(&mut self, net: &mut dyn Net) {
        if self.state.synchronized() && self.snd_max > self.snd_una {
            self.stp_force_poll = true;
            self.emit_control(net, self.snd_max, Default::default());
        }
    }

    /// Receiver: whether a segment's arrival calls for a report now — it
    /// polled (STAT), or its data begins beyond everything received so far,
    /// which opens a new gap (USTAT).
    pub(crate) fn stp_report_due(&mut self, seq: u64, end: u64, poll: bool) -> bool {
        let new_gap = end > seq && seq > self.stp_highest.max(self.rcv_nxt);
        self.stp_highest = self.stp_highest.max(end);
        poll || new_gap
    }

    /// Sender: a status report arrived (its cumulative ACK and SACK blocks
    /// are already applied).
    ///
    /// * In a recovery, a gap it still lists although data sent after the
    ///   gap's retransmission has arrived means the retransmission was lost
    ///   too: resend it (STP's STAT-driven repair) rather than wait for the
    ///   timer.
    /// * A report with new SACK information shows the repair progressing:
    ///   the retransmission timer restarts (a new cumulative ACK restarts
    ///   it anyway). STP has no data timer — losses are repaired from
    ///   reports — and a report covers data up to a poll period older than
    ///   a per-segment ACK would, so a timer measured from the oldest
    ///   segment fires while the reports are still repairing it. Ours stays
    ///   as a backstop for when reports stop coming or stop telling
    ///   anything new (a repair the reports cannot see, e.g. a lost
    ///   retransmission with nothing sent after it).
    pub(crate) fn stp_on_report(&mut self, net: &mut dyn Net, sack_changed: bool) {
        if self.recovery.is_some() {
            self.stp_resent_again += self.board.mark_lost_retransmissions() as u64;
        }
        if sack_changed && self.snd_max > self.snd_una && self.rto_deadline.is_some() {
            self.restart_rto(net);
        }
    }

    /// The time of the next poll (for tests).
    pub fn next_poll(&self) -> Option<Time> {
        self.is_stp().then_some(self.stp_next_poll)
    }
}
