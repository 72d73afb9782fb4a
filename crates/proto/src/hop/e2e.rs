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
//!
//! Ours, on links without link-layer ARQ (real hosts over UDP): the paper
//! sends every control message, the end-to-end BACK too, with the MAC's
//! ARQ, so losing one is rare and waiting 60 s for the first block costs
//! little. Sent once per hop over n lossy hops, an end-to-end BACK is lost
//! with probability 1 − (1 − p)ⁿ (19 % at 5 % over 4 hops), and the first
//! block then waits the whole initial timeout. With a *measured* first
//! timeout, a block's timeout before the first clean round trip is twice
//! the time it took to cross the first hop (a block crosses every hop, and
//! spatial pipelining overlaps the later ones with the first), doubling at
//! each timeout of the same block, at most the initial timeout: a
//! premature virtual retransmission costs a few control frames (§3.2).

use std::collections::BTreeMap;

use crate::time::{Duration, Time};

/// The source's outstanding blocks and their timeout.
#[derive(Clone, Debug)]
pub struct EndToEnd {
    timeout: Duration,
    /// Before the first clean round trip, derive the timeout from how long
    /// blocks take to cross the first hop (see the module's text).
    measured_first: bool,
    /// The time the most recent block took from its first frame to whole
    /// at the first hop (measured mode).
    first_hop: Option<Duration>,
    /// When each block began to leave the source (measured mode).
    began: BTreeMap<u32, Time>,
    /// Block → outstanding state.
    outstanding: BTreeMap<u32, Outstanding>,
    /// The most recent block round trip.
    pub last_rtt: Option<Duration>,
    pub timeouts: u64,
}

/// A block sent and not yet acknowledged end to end.
#[derive(Copy, Clone, Debug)]
struct Outstanding {
    /// When it first left the source.
    sent: Time,
    /// When it times out (`Time::NEVER` while a retransmission is leaving).
    deadline: Time,
    /// Timed out at least this many times.
    timeouts: u32,
}

impl EndToEnd {
    /// The paper's timeout: `initial` until the first block round trip.
    pub fn new(initial: Duration) -> EndToEnd {
        EndToEnd {
            timeout: initial,
            measured_first: false,
            first_hop: None,
            began: BTreeMap::new(),
            outstanding: BTreeMap::new(),
            last_rtt: None,
            timeouts: 0,
        }
    }

    /// Until the first clean block round trip, twice the first hop's time
    /// of the latest block, doubling per timeout of a block, at most
    /// `initial` (the module's text says why).
    pub fn measured(initial: Duration) -> EndToEnd {
        EndToEnd {
            measured_first: true,
            ..EndToEnd::new(initial)
        }
    }

    /// The current timeout (before any backoff of a block).
    pub fn timeout(&self) -> Duration {
        match (self.last_rtt, self.first_hop) {
            (None, Some(first_hop)) if self.measured_first => first_hop
                .saturating_mul(2)
                .max(Duration::from_millis(1))
                .min(self.timeout),
            _ => self.timeout,
        }
    }

    /// The timeout of a block that has timed out `n` times: doubled per
    /// timeout in measured mode, at most the initial timeout before the
    /// first round trip.
    fn backed_off(&self, n: u32) -> Duration {
        let base = self.timeout();
        if !self.measured_first || n == 0 {
            return base;
        }
        let cap = if self.last_rtt.is_none() {
            self.timeout
        } else {
            Duration::MAX
        };
        base.saturating_mul(1 << n.min(16)).min(cap.max(base))
    }

    /// The source sends `block`'s first frame now (measured mode times its
    /// first hop from here).
    pub fn began(&mut self, block: u32, now: Time) {
        if self.measured_first && !self.outstanding.contains_key(&block) {
            self.began.entry(block).or_insert(now);
        }
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
        if let Some(began) = self.began.remove(&block) {
            self.first_hop = Some(now.saturating_since(began));
        }
        let (timeouts, deadline) = match self.outstanding.get(&block) {
            Some(o) => (o.timeouts, o.deadline),
            None => (0, Time::NEVER),
        };
        if deadline != Time::NEVER {
            return;
        }
        let deadline = now + self.backed_off(timeouts);
        self.outstanding
            .entry(block)
            .or_insert(Outstanding {
                sent: now,
                deadline,
                timeouts: 0,
            })
            .deadline = deadline;
    }

    /// The destination holds `block`; true the first time. Its round trip
    /// becomes the timeout, unless the block was retransmitted.
    pub fn acked(&mut self, block: u32, now: Time) -> bool {
        self.began.remove(&block);
        let Some(o) = self.outstanding.remove(&block) else {
            return false;
        };
        if o.timeouts == 0 {
            let rtt = now.saturating_since(o.sent).max(Duration::from_micros(1));
            self.last_rtt = Some(rtt);
            self.timeout = rtt;
        }
        true
    }

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.outstanding
            .values()
            .map(|o| o.deadline)
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
        for (block, o) in self.outstanding.iter_mut() {
            if o.deadline <= now {
                o.deadline = Time::NEVER;
                o.timeouts += 1;
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

    #[test]
    fn a_measured_first_timeout_is_twice_the_first_hop_and_backs_off() {
        let mut e = EndToEnd::measured(Duration::from_secs(60));
        assert_eq!(e.timeout(), Duration::from_secs(60), "nothing measured yet");
        e.began(0, Time::from_millis(100));
        // Block 0 took 400 ms to be whole at the first hop.
        e.sent(0, Time::from_millis(500));
        assert_eq!(e.timeout(), Duration::from_millis(800));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(1300)));
        // Its end-to-end BACK is lost: timeouts double, block by block.
        assert_eq!(e.expired(Time::from_millis(1300)), vec![0]);
        e.sent(0, Time::from_millis(1310));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(1310 + 1600)));
        assert_eq!(e.expired(Time::from_millis(2910)), vec![0]);
        e.sent(0, Time::from_millis(2920));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(2920 + 3200)));
        // A retransmitted block gives no sample; a clean one sets the
        // paper's rule (the last round trip) from then on.
        assert!(e.acked(0, Time::from_secs(4)));
        assert_eq!(e.timeout(), Duration::from_millis(800));
        e.began(1, Time::from_secs(4));
        e.sent(1, Time::from_millis(4300));
        assert_eq!(e.timeout(), Duration::from_millis(600));
        assert!(e.acked(1, Time::from_millis(4700)));
        assert_eq!(e.timeout(), Duration::from_millis(400));
        assert_eq!(e.timeouts, 2);
    }

    #[test]
    fn a_measured_first_timeout_never_exceeds_the_initial_one() {
        let mut e = EndToEnd::measured(Duration::from_secs(2));
        e.began(0, Time::ZERO);
        e.sent(0, Time::from_secs(3));
        assert_eq!(e.poll_timeout(), Some(Time::from_secs(5)));
        assert_eq!(e.expired(Time::from_secs(5)), vec![0]);
        e.sent(0, Time::from_secs(5));
        assert_eq!(e.poll_timeout(), Some(Time::from_secs(7)));
    }
}
