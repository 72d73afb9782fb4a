//! End-to-end reliability at the source (§3.2, §4.2): every block stays
//! outstanding until the destination's end-to-end BACK; a block
//! outstanding longer than the timeout is retransmitted (virtually, see
//! [`super::virtual_rtx`]). The timeout starts at 60 s and is then simply
//! the most recent block round trip: a premature virtual retransmission
//! costs a few control frames, so no careful estimator is needed. Ours:
//! a block that was retransmitted gives no sample (Karn's rule), or each
//! lost end-to-end BACK would add a whole timeout to the next one. Ours
//! too: a block's clock runs only while it has left the source — from
//! when it is whole at the first hop, and after a timeout again only once
//! the retransmission is — so no timeout can cut short a retransmission
//! still leaving the source.

use std::collections::BTreeMap;

use crate::time::{Duration, Time};

/// The source's outstanding blocks and their timeout.
#[derive(Clone, Debug)]
pub struct EndToEnd {
    timeout: Duration,
    /// Block → (when it was sent, when it times out, retransmitted).
    outstanding: BTreeMap<u32, (Time, Time, bool)>,
    /// The most recent block round trip.
    pub last_rtt: Option<Duration>,
    pub timeouts: u64,
}

impl EndToEnd {
    pub fn new(initial: Duration) -> EndToEnd {
        EndToEnd {
            timeout: initial,
            outstanding: BTreeMap::new(),
            last_rtt: None,
            timeouts: 0,
        }
    }

    /// The current timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Blocks sent and not yet acknowledged end to end.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    pub fn is_outstanding(&self, block: u32) -> bool {
        self.outstanding.contains_key(&block)
    }

    /// `block` has left the source now (whole at the first hop): its clock
    /// starts, or, for a retransmission, starts again. A block keeps the
    /// time it first left, which only a clean round trip uses.
    pub fn sent(&mut self, block: u32, now: Time) {
        let timeout = self.timeout;
        let entry = self
            .outstanding
            .entry(block)
            .or_insert((now, Time::NEVER, false));
        if entry.1 == Time::NEVER {
            entry.1 = now + timeout;
        }
    }

    /// The destination holds `block`; true the first time. Its round trip
    /// becomes the timeout, unless the block was retransmitted.
    pub fn acked(&mut self, block: u32, now: Time) -> bool {
        let Some((sent, _, retransmitted)) = self.outstanding.remove(&block) else {
            return false;
        };
        if !retransmitted {
            let rtt = now.saturating_since(sent).max(Duration::from_micros(1));
            self.last_rtt = Some(rtt);
            self.timeout = rtt;
        }
        true
    }

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.outstanding
            .values()
            .map(|(_, d, _)| *d)
            .filter(|d| *d != Time::NEVER)
            .min()
    }

    /// Blocks whose deadline has passed: the caller retransmits them. Each
    /// one's clock stops until the retransmission has left the source
    /// ([`EndToEnd::sent`]) — re-armed from now instead, a timeout shorter
    /// than the time the source takes to send the retransmission would
    /// restart it before it ever left, for ever (the livelock of
    /// `virtual_retransmission = false`, where a retransmission is the
    /// whole block).
    pub fn expired(&mut self, now: Time) -> Vec<u32> {
        let mut out = Vec::new();
        for (block, (_, deadline, retransmitted)) in self.outstanding.iter_mut() {
            if *deadline <= now {
                *deadline = Time::NEVER;
                *retransmitted = true;
                out.push(*block);
            }
        }
        self.timeouts += out.len() as u64;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_starts_at_sixty_seconds_then_follows_the_last_clean_round_trip() {
        let mut e = EndToEnd::new(Duration::from_secs(60));
        e.sent(0, Time::ZERO);
        assert_eq!(e.poll_timeout(), Some(Time::from_secs(60)));
        assert!(e.acked(0, Time::from_secs(3)));
        assert!(!e.acked(0, Time::from_secs(4)), "once");
        assert_eq!(e.timeout(), Duration::from_secs(3));
        e.sent(1, Time::from_secs(10));
        assert_eq!(e.poll_timeout(), Some(Time::from_secs(13)));
        assert_eq!(e.expired(Time::from_secs(12)), Vec::<u32>::new());
        assert_eq!(e.expired(Time::from_secs(13)), vec![1]);
        assert_eq!(e.poll_timeout(), None, "until the retransmission leaves");
        e.sent(1, Time::from_secs(13));
        assert_eq!(e.poll_timeout(), Some(Time::from_secs(16)));
        assert!(e.acked(1, Time::from_secs(14)));
        assert_eq!(
            e.timeout(),
            Duration::from_secs(3),
            "a retransmitted block gives no sample"
        );
        e.sent(2, Time::from_secs(20));
        assert!(e.acked(2, Time::from_secs(22)));
        assert_eq!(e.timeout(), Duration::from_secs(2));
        assert_eq!(e.outstanding(), 0);
        assert_eq!(e.timeouts, 1);
    }

    #[test]
    fn a_retransmission_slower_than_the_timeout_is_not_timed_out_again_before_it_leaves() {
        let mut e = EndToEnd::new(Duration::from_millis(400));
        e.sent(0, Time::ZERO);
        assert_eq!(e.expired(Time::from_millis(400)), vec![0]);
        // Sending the whole block again takes 800 ms: no timeout meanwhile.
        assert_eq!(e.expired(Time::from_millis(1000)), Vec::<u32>::new());
        assert_eq!(e.poll_timeout(), None);
        e.sent(0, Time::from_millis(1200));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(1600)));
        // A duplicate report of the same departure does not move the clock.
        e.sent(0, Time::from_millis(1300));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(1600)));
        assert_eq!(e.expired(Time::from_millis(1600)), vec![0]);
        assert_eq!(e.timeouts, 2);
    }
}
