//! RACK (RFC 8985 §6): loss detection by time. A segment is lost when a
//! segment sent after it has been delivered (cumulatively ACKed or SACKed)
//! and more than one round trip plus a reordering window has passed since
//! it was sent. Unlike the dupack and RFC 6675 rules it also finds lost
//! retransmissions, which otherwise wait for the RTO.
//!
//! Linux runs it by default (`net.ipv4.tcp_recovery = 1`,
//! `net/ipv4/tcp_recovery.c`); it is part of the `linux` profile. What this
//! module keeps is RACK's state; the scan over the scoreboard is
//! `Scoreboard::rack_mark_lost`, the glue in `sender.rs`.

use crate::time::{Duration, Time};

/// A delivered segment, as RACK remembers it: RACK.xmit_ts and
/// RACK.end_seq.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Delivery {
    pub sent_at: Time,
    pub end: u64,
}

impl Delivery {
    /// RFC 8985 `RACK_sent_after`: sent later, or at the same instant
    /// with a higher sequence.
    pub(crate) fn sent_after(&self, other: &Delivery) -> bool {
        (self.sent_at, self.end) > (other.sent_at, other.end)
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Rack {
    /// The most recently sent segment delivered so far.
    newest: Option<Delivery>,
    /// RACK.rtt: how long that segment took.
    rtt: Duration,
    /// RACK.min_RTT: the least RTT seen by RACK (Linux's `tcp_min_rtt`,
    /// a windowed minimum; over our transfers the window never expires).
    min_rtt: Option<Duration>,
}

impl Rack {
    /// The newest segment delivered by an ACK (`Scoreboard` keeps it,
    /// leaving out retransmissions delivered sooner than
    /// [`Rack::resent_cutoff`], whose ACK may be for the original).
    /// True if RACK advanced: loss detection is worth running.
    pub(crate) fn on_delivered(&mut self, d: Option<Delivery>, now: Time) -> bool {
        let Some(d) = d else { return false };
        if self.newest.is_some_and(|n| !d.sent_after(&n)) {
            return false;
        }
        let rtt = now.saturating_since(d.sent_at);
        self.rtt = rtt;
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.newest = Some(d);
        true
    }

    /// RFC 8985 §6.2 step 2: a retransmission delivered less than min_RTT
    /// after it was sent was probably the original's ACK; only
    /// retransmissions sent at or before this time may advance RACK.
    pub(crate) fn resent_cutoff(&self, now: Time) -> Time {
        match self.min_rtt {
            Some(m) => Time::from_nanos(now.as_nanos().saturating_sub(m.as_nanos())),
            None => now,
        }
    }

    /// RACK.reo_wnd (RFC 8985 §6.2 step 4, Linux `tcp_rack_reo_wnd`): a
    /// quarter of min_RTT, at most SRTT; zero while no reordering has been
    /// seen and either a recovery is under way or dupthresh segments are
    /// SACKed, so that RACK is never slower than the dupack rule.
    pub(crate) fn reo_wnd(
        &self,
        reordering_seen: bool,
        recovering: bool,
        dupthresh_sacked: bool,
        srtt: Option<Duration>,
    ) -> Duration {
        if !reordering_seen && (recovering || dupthresh_sacked) {
            return Duration::ZERO;
        }
        let quarter = Duration(self.min_rtt.unwrap_or(Duration::ZERO).0 / 4);
        srtt.map_or(quarter, |s| quarter.min(s))
    }

    /// What a segment sent before [`Rack::newest`] may wait, from its own
    /// send time, before it is lost: RACK.rtt + RACK.reo_wnd.
    pub(crate) fn wait(&self, reo_wnd: Duration) -> Duration {
        self.rtt.saturating_add(reo_wnd)
    }

    pub(crate) fn newest(&self) -> Option<Delivery> {
        self.newest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64, end: u64) -> Option<Delivery> {
        Some(Delivery {
            sent_at: Time::from_millis(ms),
            end,
        })
    }

    #[test]
    fn only_a_later_sent_segment_advances_rack() {
        let mut r = Rack::default();
        assert!(r.on_delivered(at(10, 100), Time::from_millis(50)));
        assert_eq!(r.wait(Duration::ZERO), Duration::from_millis(40));
        // Sent earlier: RACK keeps the newer one and its RTT.
        assert!(!r.on_delivered(at(5, 200), Time::from_millis(60)));
        assert_eq!(r.newest(), at(10, 100));
        // Same instant, higher sequence: advances.
        assert!(r.on_delivered(at(10, 200), Time::from_millis(70)));
        assert_eq!(r.wait(Duration::ZERO), Duration::from_millis(60));
        assert!(!r.on_delivered(None, Time::from_millis(80)));
    }

    #[test]
    fn the_reordering_window_is_a_quarter_of_min_rtt_unless_dupthresh_decides() {
        let mut r = Rack::default();
        r.on_delivered(at(0, 1), Time::from_millis(40));
        r.on_delivered(at(100, 2), Time::from_millis(180));
        let srtt = Some(Duration::from_millis(60));
        assert_eq!(
            r.reo_wnd(false, false, false, srtt),
            Duration::from_millis(10)
        );
        // SRTT caps it.
        let tiny = Some(Duration::from_millis(3));
        assert_eq!(
            r.reo_wnd(false, false, false, tiny),
            Duration::from_millis(3)
        );
        // No reordering seen, and a recovery or dupthresh SACKs: zero.
        assert_eq!(r.reo_wnd(false, true, false, srtt), Duration::ZERO);
        assert_eq!(r.reo_wnd(false, false, true, srtt), Duration::ZERO);
        // Reordering seen: the window stays.
        assert_eq!(r.reo_wnd(true, true, true, srtt), Duration::from_millis(10));
    }

    #[test]
    fn a_retransmission_acked_sooner_than_min_rtt_is_ambiguous() {
        let mut r = Rack::default();
        let now = Time::from_millis(100);
        assert_eq!(r.resent_cutoff(now), now);
        r.on_delivered(at(0, 1), Time::from_millis(30));
        assert_eq!(r.resent_cutoff(now), Time::from_millis(70));
    }
}
