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
}
