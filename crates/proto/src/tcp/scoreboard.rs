//! The sender's record of every segment sent and not yet cumulatively
//! acknowledged, with the RFC 6675 scoreboard state of each: SACKed, lost
//! (waiting for retransmission), retransmitted.
//!
//! `pipe` (RFC 6675 §4) is kept as a running count instead of being
//! recomputed per ACK: a segment counts while it is believed to be in the
//! network, i.e. sent (or resent) and neither SACKed nor declared lost.
//! Non-SACK variants use the same records: without SACK information `pipe`
//! is simply the flight, minus segments declared lost by a timeout (which
//! is exactly BSD's `snd_nxt = snd_una` go-back-N).

use std::collections::VecDeque;

use super::rack::Delivery;
use crate::time::{Duration, Time};

#[derive(Copy, Clone, Debug)]
pub(crate) struct Segment {
    /// Sequence offsets `[start, end)`; `end` includes the FIN if `fin`.
    pub start: u64,
    pub end: u64,
    pub fin: bool,
    /// Time of the latest (re)transmission.
    pub sent_at: Time,
    pub retransmitted: bool,
    pub sacked: bool,
    pub lost: bool,
    in_pipe: bool,
}

impl Segment {
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }
    /// Payload bytes (sequence length without the FIN).
    pub(crate) fn payload_len(&self) -> u64 {
        self.len() - self.fin as u64
    }
}

/// What a cumulative ACK removed.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Acked {
    /// Send time of the newest fully acknowledged segment never
    /// retransmitted (Karn's algorithm), for an RTT sample.
    pub rtt_sent_at: Option<Time>,
    /// The ACK also covered retransmitted data: under Linux's rule
    /// (`RttSampling::Linux`) it gives no sample at all.
    pub retransmitted_acked: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Scoreboard {
    segs: VecDeque<Segment>,
    pipe: u64,
    /// Bytes SACKed above snd_una (for PRR's DeliveredData).
    sacked: u64,
    lost: usize,
    /// End of the highest SACKed segment (RFC 6675 HighACK's counterpart for
    /// SACKed data), 0 if none.
    high_sacked: u64,
    /// The latest (re)transmission time among segments ever SACKed: on a
    /// FIFO path, anything sent before it and still missing was lost.
    newest_sacked_sent: Time,
    /// Where the search for the next lost segment resumes (HighRxt).
    cursor: u64,
    /// Segments SACKed above snd_una (RACK's dupthresh test).
    sacked_segments: usize,
    /// For RACK: the most recently sent segment delivered since the last
    /// [`Scoreboard::take_newest_delivered`], leaving out retransmissions
    /// sent after `resent_cutoff` (an ACK that quick was for the original).
    newest_delivered: Option<Delivery>,
    resent_cutoff: Time,
    /// A never-retransmitted segment was delivered below one SACKed
    /// before it: the path reorders (RACK.reordering_seen).
    reordering_seen: bool,
    /// End of the lowest never-retransmitted segment first ACKed or SACKed
    /// since the last [`Scoreboard::take_lowest_original_delivered`]
    /// (F-RTO's test, Linux `FLAG_ORIG_SACK_ACKED`).
    lowest_original_delivered: Option<u64>,
}

impl Scoreboard {
    pub(crate) fn pipe(&self) -> u64 {
        self.pipe
    }
    pub(crate) fn sacked_bytes(&self) -> u64 {
        self.sacked
    }
    pub(crate) fn sacked_segments(&self) -> usize {
        self.sacked_segments
    }
    pub(crate) fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub(crate) fn get(&self, idx: usize) -> &Segment {
        &self.segs[idx]
    }

    /// Records a first transmission.
    pub(crate) fn push(&mut self, start: u64, end: u64, fin: bool, now: Time) {
        self.segs.push_back(Segment {
            start,
            end,
            fin,
            sent_at: now,
            retransmitted: false,
            sacked: false,
            lost: false,
            in_pipe: true,
        });
        self.pipe += end - start;
    }

    /// Removes everything below `ack`, trimming a segment it cuts.
    pub(crate) fn ack_to(&mut self, ack: u64) -> Acked {
        let mut acked = Acked::default();
        while let Some(front) = self.segs.front_mut() {
            if front.end <= ack {
                if front.retransmitted {
                    acked.retransmitted_acked = true;
                } else {
                    acked.rtt_sent_at = Some(front.sent_at);
                }
                let seg = *front;
                self.segs.pop_front();
                self.forget(&seg, seg.len());
                if !seg.sacked {
                    self.delivered(&seg);
                }
            } else {
                if front.start < ack {
                    let cut = ack - front.start;
                    front.start = ack;
                    let seg = *front;
                    if seg.in_pipe {
                        self.pipe -= cut;
                    }
                    if seg.sacked {
                        self.sacked -= cut;
                    }
                }
                break;
            }
        }
        if self.segs.is_empty() {
            self.high_sacked = 0;
        }
        acked
    }

    // Once per segment acknowledged or SACKed: a few counters.
    #[inline]
    fn forget(&mut self, seg: &Segment, len: u64) {
        if seg.in_pipe {
            self.pipe -= len;
        }
        if seg.sacked {
            self.sacked -= len;
            if len == seg.len() {
                self.sacked_segments -= 1;
            }
        }
        if seg.lost {
            self.lost -= 1;
        }
    }

    /// Segment `seg` reached the receiver (first ACKed or SACKed now).
    fn delivered(&mut self, seg: &Segment) {
        if !seg.retransmitted && seg.end < self.high_sacked {
            self.reordering_seen = true;
        }
        if !seg.retransmitted {
            let low = self.lowest_original_delivered.get_or_insert(seg.end);
            *low = (*low).min(seg.end);
        }
        if seg.retransmitted && seg.sent_at > self.resent_cutoff {
            return;
        }
        let d = Delivery {
            sent_at: seg.sent_at,
            end: seg.end,
        };
        if self.newest_delivered.is_none_or(|n| d.sent_after(&n)) {
            self.newest_delivered = Some(d);
        }
    }

    /// RACK: before processing an ACK, retransmissions sent after
    /// `cutoff` are not to count as delivered (`Rack::resent_cutoff`).
    pub(crate) fn set_resent_cutoff(&mut self, cutoff: Time) {
        self.resent_cutoff = cutoff;
    }

    /// The newest segment delivered since the last call.
    pub(crate) fn take_newest_delivered(&mut self) -> Option<Delivery> {
        self.newest_delivered.take()
    }

    /// The end of the lowest never-retransmitted segment delivered since
    /// the last call.
    pub(crate) fn take_lowest_original_delivered(&mut self) -> Option<u64> {
        self.lowest_original_delivered.take()
    }

    /// Marks segments wholly inside `[left, right)` SACKed. True if any
    /// segment changed.
    pub(crate) fn sack(&mut self, left: u64, right: u64) -> bool {
        let first = self.segs.partition_point(|s| s.end <= left);
        let mut changed = false;
        for i in first..self.segs.len() {
            let s = self.segs[i];
            if s.start >= right {
                break;
            }
            // Our receivers' blocks end before a FIN (it is not held
            // out of order), so a FIN segment counts once its data is in
            // (a lone FIN never does).
            let data_end = s.start + s.payload_len();
            if s.sacked || s.start < left || data_end > right || data_end == s.start {
                continue;
            }
            self.forget(&s, s.len());
            self.delivered(&s);
            self.sacked += s.len();
            self.sacked_segments += 1;
            let seg = &mut self.segs[i];
            seg.sacked = true;
            seg.lost = false;
            seg.in_pipe = false;
            self.high_sacked = self.high_sacked.max(seg.end);
            self.newest_sacked_sent = self.newest_sacked_sent.max(seg.sent_at);
            changed = true;
        }
        changed
    }

    /// RFC 6675 IsLost: a segment is lost when `dupthresh` SACKed segments,
    /// or more than `(dupthresh - 1) · mss` SACKed bytes, lie above it.
    /// Marks every such segment not yet retransmitted. Walks the window, so
    /// it is called only when SACK information changed.
    pub(crate) fn mark_lost_by_sacks(&mut self, dupthresh: u32, mss: u64) {
        let (mut count, mut bytes) = (0u32, 0u64);
        let byte_limit = (dupthresh.saturating_sub(1) as u64) * mss;
        for i in (0..self.segs.len()).rev() {
            let s = self.segs[i];
            if s.sacked {
                count += 1;
                bytes += s.len();
            } else if (count >= dupthresh || bytes > byte_limit) && !s.lost && !s.retransmitted {
                self.mark_lost(i);
            }
        }
    }

    /// RACK's loss detection (RFC 8985 §6.2 step 5, Linux
    /// `tcp_rack_detect_loss`): every segment neither SACKed nor awaiting
    /// resending that was sent before `newest` and `wait` ago or longer is
    /// lost — retransmissions too. Returns when the latest of the others
    /// sent before `newest` will have waited long enough (the reordering
    /// timer), and how many segments it marked.
    pub(crate) fn rack_mark_lost(
        &mut self,
        newest: Delivery,
        wait: Duration,
        now: Time,
    ) -> (usize, Option<Time>) {
        let (mut marked, mut latest) = (0, None::<Time>);
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            let d = Delivery {
                sent_at: s.sent_at,
                end: s.end,
            };
            if s.sacked || s.lost || !newest.sent_after(&d) {
                continue;
            }
            let deadline = s.sent_at + wait;
            if deadline <= now {
                self.mark_lost(i);
                marked += 1;
            } else {
                latest = Some(latest.map_or(deadline, |l| l.max(deadline)));
            }
        }
        (marked, latest)
    }

    /// The highest segment not SACKed: what a tail loss probe resends.
    pub(crate) fn last_unsacked(&self) -> Option<usize> {
        self.segs.iter().rposition(|s| !s.sacked)
    }

    /// STP (`stp.rs`): a retransmission that a status report still lists
    /// as a gap although data sent after it has been SACKed was lost too
    /// (the path is FIFO); declare it lost again so it is resent. Returns
    /// how many were marked.
    pub(crate) fn mark_lost_retransmissions(&mut self) -> usize {
        let sent_before = self.newest_sacked_sent;
        let mut marked = 0;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.end > self.high_sacked {
                break;
            }
            if s.retransmitted && !s.sacked && !s.lost && s.sent_at < sent_before {
                self.mark_lost(i);
                marked += 1;
            }
        }
        marked
    }

    /// Declares segment `idx` lost: it leaves the pipe and awaits resending.
    pub(crate) fn mark_lost(&mut self, idx: usize) {
        let s = &mut self.segs[idx];
        if s.sacked || s.lost {
            return;
        }
        s.lost = true;
        if s.in_pipe {
            s.in_pipe = false;
            self.pipe -= s.len();
        }
        self.lost += 1;
        self.cursor = self.cursor.min(s.start);
    }

    /// Whether the first unacknowledged segment is considered lost.
    pub(crate) fn head_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.lost)
    }

    /// Every segment not SACKed is lost (retransmission timeout).
    pub(crate) fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            self.mark_lost(i);
        }
    }

    /// Nothing is lost after all (a spurious timeout, undone): every
    /// segment not SACKed is back in the pipe (Linux
    /// `tcp_undo_cwnd_reduction` clearing `TCPCB_LOST`).
    pub(crate) fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut().filter(|s| s.lost) {
            s.lost = false;
            s.in_pipe = true;
            self.pipe += s.len();
        }
        self.lost = 0;
    }

    /// The first lost segment, in sequence order (NextSeg rule 1).
    // Asked before every segment sent; inlined, the usual answer
    // (nothing lost) costs no call.
    #[inline]
    pub(crate) fn next_lost(&mut self) -> Option<usize> {
        if self.lost == 0 {
            return None;
        }
        let from = self.segs.partition_point(|s| s.end <= self.cursor);
        let found = (from..self.segs.len())
            .find(|&i| self.segs[i].lost)
            .or_else(|| (0..from).find(|&i| self.segs[i].lost))?;
        self.cursor = self.segs[found].start;
        Some(found)
    }

    /// NextSeg rule 3: the first segment below the highest SACKed one that
    /// is neither SACKed, lost, nor already retransmitted.
    pub(crate) fn rescue_candidate(&self) -> Option<usize> {
        self.segs
            .iter()
            .take_while(|s| s.end <= self.high_sacked)
            .position(|s| !s.sacked && !s.lost && !s.retransmitted)
    }

    /// Records the retransmission of segment `idx`.
    pub(crate) fn retransmitted(&mut self, idx: usize, now: Time) {
        let s = &mut self.segs[idx];
        if s.lost {
            s.lost = false;
            self.lost -= 1;
        }
        s.retransmitted = true;
        s.sent_at = now;
        if !s.in_pipe {
            s.in_pipe = true;
            self.pipe += s.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 100;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.push(1 + i * MSS, 1 + (i + 1) * MSS, false, Time::from_millis(i));
        }
        b
    }

    #[test]
    fn pipe_counts_segments_in_the_network() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 10 * MSS);
        b.sack(1 + 3 * MSS, 1 + 5 * MSS);
        assert_eq!(b.pipe(), 8 * MSS);
        b.mark_lost(0);
        assert_eq!(b.pipe(), 7 * MSS);
        b.retransmitted(0, Time::ZERO);
        assert_eq!(b.pipe(), 8 * MSS);
        b.ack_to(1 + 5 * MSS);
        assert_eq!(b.pipe(), 5 * MSS);
    }

    #[test]
    fn sacked_bytes_count_what_lies_sacked_above_the_ack() {
        let mut b = board(10);
        b.sack(1 + 3 * MSS, 1 + 5 * MSS);
        b.sack(1 + 7 * MSS, 1 + 8 * MSS);
        assert_eq!(b.sacked_bytes(), 3 * MSS);
        b.ack_to(1 + 5 * MSS);
        assert_eq!(b.sacked_bytes(), MSS);
    }

    #[test]
    fn three_sacked_segments_above_mark_a_hole_lost() {
        let mut b = board(6);
        b.sack(1 + MSS, 1 + 3 * MSS);
        b.mark_lost_by_sacks(3, MSS);
        // Two SACKed segments and 200 bytes: not yet lost.
        assert!(!b.head_lost());
        b.sack(1 + 3 * MSS, 1 + 4 * MSS);
        b.mark_lost_by_sacks(3, MSS);
        assert!(b.head_lost());
        assert_eq!(b.next_lost(), Some(0));
        assert_eq!(b.pipe(), 2 * MSS);
    }

    #[test]
    fn karn_samples_only_clean_segments() {
        let mut b = board(3);
        b.mark_lost(2);
        b.retransmitted(2, Time::from_secs(9));
        let acked = b.ack_to(1 + 3 * MSS);
        assert_eq!(acked.rtt_sent_at, Some(Time::from_millis(1)));
        assert!(acked.retransmitted_acked);
        let mut b = board(1);
        b.mark_lost(0);
        b.retransmitted(0, Time::from_secs(1));
        assert_eq!(b.ack_to(1 + MSS).rtt_sent_at, None);
    }

    #[test]
    fn an_ack_for_a_repaired_hole_says_it_covered_retransmitted_data() {
        // Segment 0 lost and resent long after 1 and 2 arrived: the ACK the
        // repair elicits covers all three. Segments 1 and 2 were never
        // retransmitted, but their "RTT" would be the repair's delay.
        let mut b = board(3);
        b.mark_lost(0);
        b.retransmitted(0, Time::from_secs(200));
        let acked = b.ack_to(1 + 3 * MSS);
        assert!(acked.retransmitted_acked);
        // A retransmission acknowledged alone does not mark the next ACK.
        let mut b = board(3);
        b.mark_lost(0);
        b.retransmitted(0, Time::from_secs(5));
        assert!(b.ack_to(1 + MSS).retransmitted_acked);
        assert!(!b.ack_to(1 + 3 * MSS).retransmitted_acked);
    }

    #[test]
    fn timeout_marks_everything_but_sacked_data_lost_in_order() {
        let mut b = board(5);
        b.sack(1 + 2 * MSS, 1 + 3 * MSS);
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        let mut order = Vec::new();
        while let Some(i) = b.next_lost() {
            order.push(i);
            b.retransmitted(i, Time::ZERO);
        }
        assert_eq!(order, vec![0, 1, 3, 4]);
    }

    #[test]
    fn partial_ack_trims_a_segment() {
        let mut b = board(2);
        b.ack_to(1 + MSS / 2);
        assert_eq!(b.pipe(), 2 * MSS - MSS / 2);
        assert_eq!(b.get(0).start, 1 + MSS / 2);
    }

    #[test]
    fn rack_marks_what_was_sent_before_the_newest_delivery_once_it_waited() {
        // Segments sent at 0..5 ms; segment 3 (sent at 3 ms) is SACKed.
        let mut b = board(5);
        b.sack(1 + 3 * MSS, 1 + 4 * MSS);
        let newest = b.take_newest_delivered().unwrap();
        assert_eq!(newest.sent_at, Time::from_millis(3));
        // Waiting 2 ms from its send time, at 3.5 ms: segments 0 and 1 are
        // lost, segment 2 waits until 4 ms, segment 4 was sent after.
        let wait = Duration::from_millis(2);
        let (marked, pending) = b.rack_mark_lost(newest, wait, Time::from_micros(3500));
        assert_eq!((marked, pending), (2, Some(Time::from_millis(4))));
        assert!(b.get(0).lost && b.get(1).lost && !b.get(2).lost && !b.get(4).lost);
        // A retransmission is lost again once a later one is delivered.
        b.retransmitted(0, Time::from_millis(10));
        b.retransmitted(1, Time::from_millis(11));
        b.set_resent_cutoff(Time::from_millis(12));
        b.sack(1 + MSS, 1 + 2 * MSS);
        let newest = b.take_newest_delivered().unwrap();
        assert_eq!(newest.sent_at, Time::from_millis(11));
        let (marked, _) = b.rack_mark_lost(newest, wait, Time::from_millis(13));
        assert_eq!(marked, 3, "the resent segment 0, and 2 and 4");
        assert!(b.get(0).lost && b.get(2).lost && b.get(4).lost);
    }

    #[test]
    fn a_late_original_is_reordering_and_a_quick_resend_is_no_delivery() {
        let mut b = board(4);
        b.sack(1 + 2 * MSS, 1 + 3 * MSS);
        assert!(!b.reordering_seen());
        // Segment 1 arrives after 2 though never resent: the path reorders.
        b.sack(1 + MSS, 1 + 2 * MSS);
        assert!(b.reordering_seen());
        // A retransmission sent after the cutoff does not advance RACK.
        b.take_newest_delivered();
        b.mark_lost(0);
        b.retransmitted(0, Time::from_millis(20));
        b.set_resent_cutoff(Time::from_millis(15));
        b.ack_to(1 + MSS);
        assert_eq!(b.take_newest_delivered(), None);
    }

    #[test]
    fn rescue_finds_unsacked_unretransmitted_below_high_sack() {
        let mut b = board(5);
        b.sack(1 + 3 * MSS, 1 + 4 * MSS);
        b.mark_lost(0);
        b.retransmitted(0, Time::ZERO);
        assert_eq!(b.rescue_candidate(), Some(1));
    }
}
