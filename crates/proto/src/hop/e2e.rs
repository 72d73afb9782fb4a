//! End-to-end reliability at the source (§3.2, §4.2): every block stays
//! outstanding until the destination's end-to-end BACK; a block
//! outstanding longer than the timeout is retransmitted (virtually, see
//! [`super::virtual_rtx`]). The timeout starts at 60 s and is then simply
//! the most recent block round trip: a premature virtual retransmission
//! costs a few control frames, so no careful estimator is needed. Ours:
//! a block that was retransmitted gives no sample (Karn's rule), or each
//! lost end-to-end BACK would add a whole timeout to the next one.

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

    /// The source started sending `block` now.
    pub fn sent(&mut self, block: u32, now: Time) {
        self.outstanding
            .entry(block)
            .or_insert((now, now + self.timeout, false));
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
        self.outstanding.values().map(|(_, d, _)| *d).min()
    }

    /// Blocks whose deadline has passed, each re-armed one timeout from
    /// now: the caller retransmits them.
    pub fn expired(&mut self, now: Time) -> Vec<u32> {
        let timeout = self.timeout;
        let mut out = Vec::new();
        for (block, (_, deadline, retransmitted)) in self.outstanding.iter_mut() {
            if *deadline <= now {
                *deadline = now + timeout;
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
}
