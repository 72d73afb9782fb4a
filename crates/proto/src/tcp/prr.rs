//! Proportional Rate Reduction (RFC 6937), as Linux and ns-3
//! (`TcpPrrRecovery`) size the window during SACK recovery: instead of
//! dropping to ssthresh at once and sending nothing until the pipe drains
//! below it, the sender sends in proportion to what the receiver reports
//! delivered, so that the pipe reaches ssthresh as recovery ends. Once the
//! pipe is below ssthresh, slow-start reduction bound (PRR-SSRB) lets it
//! grow back by at most one MSS beyond what was delivered.

#[derive(Clone, Debug)]
pub(crate) struct Prr {
    /// RecoverFS: the flight when recovery began.
    recover_fs: u64,
    /// prr_delivered and prr_out, bytes.
    delivered: u64,
    out: u64,
}

impl Prr {
    pub(crate) fn start(flight: u64) -> Prr {
        Prr {
            recover_fs: flight.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// Data (new or resent) sent during recovery.
    pub(crate) fn sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// The window after an ACK that reported `delivered` bytes (cumulative
    /// advance plus newly SACKed, RFC 6937 DeliveredData): pipe + sndcnt.
    pub(crate) fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out.
            let due = (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            (due as u64).saturating_sub(self.out)
        } else {
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss;
            (ssthresh - pipe).min(limit)
        };
        pipe + sndcnt
    }

    /// Linux's PRR (`tcp_cwnd_reduction` as of Linux 6.0, 2022): RecoverFS
    /// is the window when
    /// recovery began (`prior_cwnd`, set by `Prr::start`'s caller); an ACK
    /// that delivered nothing leaves the window; below ssthresh the bound
    /// is max(prr_delivered − prr_out, DeliveredData), one segment more
    /// only when the ACK advanced snd_una and marked nothing newly lost
    /// (`slow_start_bonus`); and a recovery that has sent nothing may send
    /// one segment ("force a fast retransmit upon entering fast recovery").
    /// Linux counts packets, so the proportional part is whole segments:
    /// ceil(ssthresh · prr_delivered / prior_cwnd) in segments (found by
    /// `validation/linux/tracediff-linux.py`: with 10 segments before the
    /// loss and ssthresh 5, the fifth delivered segment lets the kernel
    /// send its third, where 2.5 segments' worth of bytes let ours send
    /// nothing).
    pub(crate) fn on_ack_linux(
        &mut self,
        delivered: u64,
        slow_start_bonus: bool,
        pipe: u64,
        ssthresh: u64,
        mss: u64,
    ) -> Option<u64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let mut sndcnt = if pipe > ssthresh {
            let segments = |bytes: u64| bytes.div_ceil(mss.max(1));
            let due = (segments(self.delivered) * (ssthresh / mss.max(1)))
                .div_ceil(segments(self.recover_fs))
                * mss;
            due.saturating_sub(self.out)
        } else {
            let bonus = if slow_start_bonus { mss } else { 0 };
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + bonus;
            (ssthresh - pipe).min(limit)
        };
        if self.out == 0 {
            sndcnt = sndcnt.max(mss);
        }
        Some(pipe + sndcnt)
    }

    /// ns-3.44's `TcpPrrRecovery::DoRecovery` for a connection without
    /// SACK (each dupack is a "Reno SACK"; RecoverFS is the pipe when
    /// recovery began, `tcb->m_bytesInFlight`): a dupack counts one segment
    /// delivered while prr_delivered < RecoverFS, a partial ACK every byte
    /// it acknowledges; below ssthresh the conservative bound (PRR-CRB)
    /// adds a segment only when the ACK covers retransmitted data
    /// (`m_isRetransDataAcked`, `safe_ack`); a recovery that has sent
    /// nothing yet may send one segment. `None`: nothing was delivered and
    /// the window stays. The window is pipe + sndcnt, and sndcnt is never
    /// negative (`std::max(sendCount, 0)`). 3.44's unsigned arithmetic is kept: prr_delivered ·
    /// ssthresh wraps at 2³², and once prr_out exceeds prr_delivered the
    /// wrapped difference wins `std::max`, so the bound is that negative
    /// difference, not DeliveredData (both fixed after 3.44, ns-3 issue
    /// #1282).
    pub(crate) fn on_ack_ns3(
        &mut self,
        delivered: u64,
        dupack: bool,
        safe_ack: bool,
        pipe: u64,
        ssthresh: u64,
        mss: u64,
    ) -> Option<u64> {
        let mut delivered = delivered;
        if dupack && self.delivered < self.recover_fs {
            delivered += mss;
        }
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let (pipe_i, ssthresh_i) = (pipe as i128, ssthresh as i128);
        let mut sndcnt = if pipe > ssthresh {
            let product = (self.delivered as u32).wrapping_mul(ssthresh as u32) as f64;
            (product / self.recover_fs as f64).ceil() as i128 - self.out as i128
        } else {
            let credit = self.delivered as i128 - self.out as i128;
            let mut limit = if credit >= 0 {
                credit.max(delivered as i128)
            } else {
                credit
            };
            if safe_ack {
                limit += mss as i128;
            }
            limit.min(ssthresh_i - pipe_i)
        };
        // "Force a fast retransmit upon entering fast recovery": at least
        // one segment before anything was sent, and never below zero.
        sndcnt = sndcnt.max(if self.out == 0 { mss as i128 } else { 0 });
        Some((pipe_i + sndcnt) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn sends_half_as_much_as_is_delivered_when_ssthresh_halves() {
        // RFC 6937's example: 20 segments out, one lost, ssthresh 10.
        // Each ACK reports one segment delivered; PRR sends what it allows.
        let mut prr = Prr::start(20 * MSS);
        prr.sent(MSS); // the fast retransmit
        let mut pipe = 19 * MSS; // the lost one left, its resend entered
        let mut sent = MSS;
        for _ in 0..18 {
            pipe -= MSS;
            let cwnd = prr.on_ack(MSS, pipe, 10 * MSS, MSS);
            let n = cwnd.saturating_sub(pipe);
            prr.sent(n);
            pipe += n;
            sent += n;
        }
        // 19 delivered · 10/20 ≈ 10 segments sent in all, evenly spread.
        assert!((9 * MSS..=10 * MSS).contains(&sent), "{sent}");
        assert!(
            (9 * MSS..=11 * MSS).contains(&pipe),
            "the pipe ends near ssthresh"
        );
    }

    #[test]
    fn below_ssthresh_grows_back_by_at_most_one_mss_beyond_delivery() {
        let mut prr = Prr::start(20 * MSS);
        // A burst of losses left 2 segments in the pipe, ssthresh 10.
        let cwnd = prr.on_ack(MSS, 2 * MSS, 10 * MSS, MSS);
        assert_eq!(cwnd, 2 * MSS + 2 * MSS, "delivered + 1 MSS (SSRB)");
    }

    #[test]
    fn ns3_counts_a_dupack_as_a_segment_only_up_to_recover_fs() {
        let mut prr = Prr::start(4 * MSS);
        prr.sent(MSS); // the fast retransmit
                       // Pipe above ssthresh: ceil(delivered · ssthresh / RecoverFS) − out.
        let cwnd = prr.on_ack_ns3(0, true, false, 3 * MSS, 2 * MSS, MSS);
        // ceil(1 · 2/4 segments) − 1 sent < 0: nothing more, never less.
        assert_eq!(cwnd, Some(3 * MSS));
        for _ in 0..3 {
            prr.on_ack_ns3(0, true, false, 3 * MSS, 2 * MSS, MSS);
        }
        // prr_delivered has reached RecoverFS: a dupack delivers nothing.
        assert_eq!(prr.on_ack_ns3(0, true, false, 3 * MSS, 2 * MSS, MSS), None);
        // Below ssthresh, a partial ACK of retransmitted data may send one
        // segment more than it delivered (PRR-SSRB); without, as many.
        prr.sent(3 * MSS);
        let mut a = prr.clone();
        let safe = a.on_ack_ns3(MSS, false, true, 0, 10 * MSS, MSS);
        let plain = prr.on_ack_ns3(MSS, false, false, 0, 10 * MSS, MSS);
        assert_eq!(safe, plain.map(|c| c + MSS));
    }

    #[test]
    fn linux_adds_a_segment_below_ssthresh_only_when_una_advances_without_new_loss() {
        // Below ssthresh (pipe 2, ssthresh 10), one segment delivered and
        // prr_out already ahead of prr_delivered: packet conservation, one
        // for one, plus one only on a clean cumulative advance.
        let run = |bonus| {
            let mut prr = Prr::start(20 * MSS);
            prr.sent(3 * MSS);
            prr.on_ack_linux(MSS, bonus, 2 * MSS, 10 * MSS, MSS)
        };
        assert_eq!(run(false), Some(3 * MSS));
        assert_eq!(run(true), Some(4 * MSS));
        // RFC 6937's SSRB always adds it.
        let mut rfc = Prr::start(20 * MSS);
        rfc.sent(3 * MSS);
        assert_eq!(rfc.on_ack(MSS, 2 * MSS, 10 * MSS, MSS), 4 * MSS);
        // An ACK that delivered nothing leaves the window; before anything
        // was sent, one segment may go.
        let mut prr = Prr::start(20 * MSS);
        assert_eq!(prr.on_ack_linux(0, false, 15 * MSS, 10 * MSS, MSS), None);
        assert_eq!(
            prr.on_ack_linux(MSS, false, 15 * MSS, 10 * MSS, MSS),
            Some(16 * MSS)
        );
    }

    #[test]
    fn linux_counts_the_proportional_part_in_whole_segments() {
        // RecoverFS 10 segments, ssthresh 5, two sent: the fifth delivered
        // segment makes ceil(5 · 5 / 10) = 3 due, so one more may go (in
        // bytes, 2.5 segments would let none).
        let mut prr = Prr::start(10 * MSS);
        prr.sent(2 * MSS);
        prr.on_ack_linux(4 * MSS, false, 6 * MSS, 5 * MSS, MSS);
        assert_eq!(
            prr.on_ack_linux(MSS, false, 6 * MSS, 5 * MSS, MSS),
            Some(7 * MSS)
        );
        let mut rfc = Prr::start(10 * MSS);
        rfc.sent(2 * MSS);
        rfc.on_ack(4 * MSS, 6 * MSS, 5 * MSS, MSS);
        assert!(rfc.on_ack(MSS, 6 * MSS, 5 * MSS, MSS) < 7 * MSS);
    }
}
