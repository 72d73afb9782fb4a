//! End-to-end reliability at the source (§3.2, §4.2): every block stays
//! outstanding until the destination's end-to-end BACK; a block
//! outstanding longer than the timeout is retransmitted (virtually, see
//! [`super::virtual_rtx`]). The timeout starts at 60 s and is then simply
//! the most recent block round trip: a premature virtual retransmission
//! costs a few control frames, so no careful estimator is needed. Ours:
//! a block that was retransmitted gives no sample (Karn's rule), or each
//! lost end-to-end BACK would add a whole timeout to the next one; and, as
//! Karn's algorithm has it (Karn and Partridge, SIGCOMM 1987; RFC 6298
//! §5.5), a timeout doubles the timeout, which stays doubled for the
//! blocks after it until one of them gives a clean round trip (then the
//! paper's rule again: that round trip). Without the backoff, one clean
//! round trip shorter than the blocks after it (an empty path, before a
//! partition or before the pipeline filled) made every later block time
//! out, each again and again at that short period, and none ever gave a
//! clean sample to correct it: 166 virtual retransmissions per 240 s on
//! the partitioned path of §5.7 with H = 100, one per message of a
//! constant-rate source (docs/hop.md § What is ours). Ours
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
    /// The initial timeout, also the most Karn's backoff reaches.
    initial: Duration,
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
    /// Karn's backoff: doublings of the timeout since the last clean round
    /// trip, applied to every block sent until the next one.
    backoff: u32,
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
            initial,
            measured_first: false,
            first_hop: None,
            began: BTreeMap::new(),
            outstanding: BTreeMap::new(),
            last_rtt: None,
            backoff: 0,
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

    /// Doublings of the timeout past which Karn's backoff stops (64×).
    const MAX_BACKOFF: u32 = 6;

    /// The timeout of a block that has timed out `n` times: doubled per
    /// timeout of the block, or per timeout since the last clean round
    /// trip if more (Karn's backoff), at most 64× and at most the initial
    /// timeout (unless the measured timeout is longer already).
    fn backed_off(&self, n: u32) -> Duration {
        let base = self.timeout();
        let doublings = n.max(self.backoff).min(Self::MAX_BACKOFF);
        if doublings == 0 {
            return base;
        }
        base.saturating_mul(1 << doublings)
            .min(self.initial.max(base))
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
            self.backoff = 0;
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
        if !out.is_empty() {
            // One doubling per expiry, however many blocks it caught: with
            // H > 1 many blocks wait out the same partition together.
            self.backoff = (self.backoff + 1).min(Self::MAX_BACKOFF);
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
        assert_eq!(
            e.poll_timeout(),
            Some(Time::from_secs(19)),
            "Karn's backoff: doubled"
        );
        assert!(e.acked(1, Time::from_secs(14)));
        assert_eq!(
            e.timeout(),
            Duration::from_secs(3),
            "a retransmitted block gives no sample"
        );
        e.sent(2, Time::from_secs(20));
        assert_eq!(
            e.poll_timeout(),
            Some(Time::from_secs(26)),
            "the backoff stays until a clean round trip"
        );
        assert!(e.acked(2, Time::from_secs(22)));
        assert_eq!(e.timeout(), Duration::from_secs(2));
        assert_eq!(e.outstanding(), 0);
        assert_eq!(e.timeouts, 1);
    }

    /// The storm Karn's backoff stops: one short clean round trip, then a
    /// path that takes far longer (a partition). Without the backoff every
    /// block timed out every 100 ms, for ever, and none gave a sample.
    #[test]
    fn a_short_round_trip_then_a_partition_backs_off_until_a_clean_sample() {
        let mut e = EndToEnd::new(Duration::from_secs(60));
        e.sent(0, Time::ZERO);
        assert!(e.acked(0, Time::from_millis(100)));
        // Ten blocks leave into a partition that lasts a minute.
        for b in 1..=10 {
            e.sent(b, Time::from_millis(100));
        }
        let mut now = Time::ZERO;
        let mut expiries = 0;
        while let Some(t) = e.poll_timeout().filter(|t| *t < Time::from_secs(60)) {
            now = t;
            for b in e.expired(now) {
                e.sent(b, now);
            }
            expiries += 1;
        }
        // 0.2, 0.4, 0.8 … 6.4 s apart, then every 6.4 s: 14, not 600.
        assert_eq!(expiries, 14);
        assert_eq!(e.timeouts, 140);
        // A block sent now waits the backed-off timeout (64 × 100 ms) …
        e.sent(11, now);
        assert_eq!(e.poll_timeout(), Some(now + Duration::from_millis(6400)));
        // … and a clean round trip of 5 s ends the backoff: the paper's rule.
        assert!(e.acked(11, now + Duration::from_secs(5)));
        assert_eq!(e.timeout(), Duration::from_secs(5));
        for b in 1..=10 {
            assert!(e.acked(b, now + Duration::from_secs(5)));
        }
        e.sent(12, now + Duration::from_secs(5));
        assert_eq!(e.poll_timeout(), Some(now + Duration::from_secs(10)));
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
