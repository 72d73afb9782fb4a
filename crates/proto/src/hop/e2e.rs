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
//! constant-rate source (docs/hop.md § What is ours).
//!
//! The sample is the paper's round-trip block delay: from the block's first
//! frame at the source to its end-to-end BACK, and a block's timer counts
//! from its first frame too. Timed instead from when the block was whole at
//! the first hop, a micro-block's sample was only the rest of the path — a
//! millisecond or two that 802.11 contention on the first hop's next round
//! often exceeds — and about half of a constant-rate source's micro-blocks
//! timed out (789 of 1,600 in the lifetime mesh's first 40 s).
//!
//! Ours: a block's timer is armed only once it has left the source (whole
//! at the first hop; after a timeout, once the retransmission has), so no
//! timeout cuts short a block still leaving — backpressure at the first
//! hop may hold it there longer than any round trip. It then fires at the
//! later of its first frame plus the timeout and now plus twice the latest
//! clean sample's part beyond the first hop ([`EndToEnd::beyond_first_hop`]);
//! a retransmission, which has only the path to cross, waits the latter.
//! Why twice: with the timeout exactly the last round trip, a round trip
//! that varies block by block exceeds the one before it about half the
//! time. Timed from the first frame with no margin, 489 of the lifetime
//! mesh's 1,600 micro-blocks still timed out; twice the part beyond the
//! first hop (the factor of measured mode's first timeout and of Karn's
//! backoff) left 235. Armed from leaving with the whole round trip instead
//! (an earlier trial: 105 timeouts) a 1 MB block whose end-to-end BACK is
//! lost waited a whole block's sending time before its virtual
//! retransmission. Control that crosses the path alone (the FIN's retry)
//! waits the part beyond the first hop, not a round trip that includes
//! sending a whole block: waiting the round trip, a lost FIN cost 10.7 s
//! per loss on the 4-hop unit chain at 1 Mbit/s (30–42 s runs, 20 s before).
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
    /// When each block not yet whole at the first hop sent its first frame.
    began: BTreeMap<u32, Time>,
    /// The most recent clean round trip's part after the block left the
    /// source (whole at the first hop → end-to-end BACK).
    beyond: Option<Duration>,
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
    /// When its first frame was sent (the round-trip block delay's start).
    first_frame: Time,
    /// When it first left the source (whole at the first hop).
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
            beyond: None,
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
        self.backed_off_by(self.timeout(), n)
    }

    /// `base` under the backoff of a block that has timed out `n` times.
    fn backed_off_by(&self, base: Duration, n: u32) -> Duration {
        let doublings = n.max(self.backoff).min(Self::MAX_BACKOFF);
        if doublings == 0 {
            return base;
        }
        base.saturating_mul(1 << doublings)
            .min(self.initial.max(base))
    }

    /// The source sends `block`'s first frame now: its round-trip block
    /// delay starts (and, in measured mode, its first hop's time).
    pub fn began(&mut self, block: u32, now: Time) {
        if !self.outstanding.contains_key(&block) {
            self.began.entry(block).or_insert(now);
        }
    }

    /// What a block waits at least once it has left the source: twice the
    /// latest clean round trip's part beyond the first hop, else the
    /// timeout (the module's text says why).
    fn after_leaving(&self) -> Duration {
        self.beyond
            .map_or_else(|| self.timeout(), |b| b.saturating_mul(2))
    }

    /// The latest clean round trip's part after the block left the source,
    /// else the timeout: what control crossing the path (a FIN) waits.
    pub fn beyond_first_hop(&self) -> Duration {
        self.beyond.unwrap_or_else(|| self.timeout())
    }

    /// Blocks sent and not yet acknowledged end to end.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    pub fn is_outstanding(&self, block: u32) -> bool {
        self.outstanding.contains_key(&block)
    }

    /// `block` has left the source now (whole at the first hop): its timer
    /// is armed, or, for a retransmission, armed again from now. A block
    /// keeps the times of its first transmission, which only a clean round
    /// trip uses.
    pub fn sent(&mut self, block: u32, now: Time) {
        let first_frame = self.began.remove(&block);
        if let Some(began) = first_frame.filter(|_| self.measured_first) {
            self.first_hop = Some(now.saturating_since(began));
        }
        let (timeouts, deadline) = match self.outstanding.get(&block) {
            Some(o) => (o.timeouts, o.deadline),
            None => (0, Time::NEVER),
        };
        if deadline != Time::NEVER {
            return;
        }
        let first_frame = first_frame.unwrap_or(now);
        let after_leaving = now + self.backed_off_by(self.after_leaving(), timeouts);
        let deadline = if timeouts == 0 && self.beyond.is_some() {
            (first_frame + self.backed_off(0)).max(after_leaving)
        } else {
            after_leaving
        };
        self.outstanding
            .entry(block)
            .or_insert(Outstanding {
                first_frame,
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
            let least = Duration::from_micros(1);
            let rtt = now.saturating_since(o.first_frame).max(least);
            self.last_rtt = Some(rtt);
            self.timeout = rtt;
            self.beyond = Some(now.saturating_since(o.sent).max(least));
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
        // Sent at once (no first hop to speak of), the block also gets at
        // least twice the round trip's part beyond the first hop (3 s).
        e.sent(1, Time::from_secs(10));
        assert_eq!(e.poll_timeout(), Some(Time::from_secs(16)));
        assert_eq!(e.expired(Time::from_secs(15)), Vec::<u32>::new());
        assert_eq!(e.expired(Time::from_secs(16)), vec![1]);
        assert_eq!(e.poll_timeout(), None, "until the retransmission leaves");
        e.sent(1, Time::from_secs(16));
        assert_eq!(
            e.poll_timeout(),
            Some(Time::from_secs(28)),
            "Karn's backoff: doubled"
        );
        assert!(e.acked(1, Time::from_secs(17)));
        assert_eq!(
            e.timeout(),
            Duration::from_secs(3),
            "a retransmitted block gives no sample"
        );
        e.sent(2, Time::from_secs(20));
        assert_eq!(
            e.poll_timeout(),
            Some(Time::from_secs(32)),
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
        // 0.4, 0.8 … 12.8 s apart (twice the 100 ms beyond the first hop,
        // doubled), then every 12.8 s: 9, not 600.
        assert_eq!(expiries, 9);
        assert_eq!(e.timeouts, 90);
        // A block sent now waits the backed-off wait (64 × 200 ms) …
        e.sent(11, now);
        assert_eq!(e.poll_timeout(), Some(now + Duration::from_millis(12_800)));
        // … and a clean round trip of 5 s ends the backoff: the paper's rule.
        assert!(e.acked(11, now + Duration::from_secs(5)));
        assert_eq!(e.timeout(), Duration::from_secs(5));
        for b in 1..=10 {
            assert!(e.acked(b, now + Duration::from_secs(5)));
        }
        // Sent at once, block 12 waits twice the 5 s beyond the first hop.
        e.sent(12, now + Duration::from_secs(5));
        assert_eq!(e.poll_timeout(), Some(now + Duration::from_secs(15)));
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
        assert_eq!(
            e.timeout(),
            Duration::from_millis(700),
            "from its first frame"
        );
        assert_eq!(e.beyond_first_hop(), Duration::from_millis(400));
        assert_eq!(e.timeouts, 2);
    }

    /// A micro-block is whole at the first hop a few milliseconds after its
    /// first frame; contention then lands on the first hop or on the rest
    /// of the path, block by block. Timed from the first frame (the paper's
    /// round-trip block delay), the timeout covers both; timed from the
    /// first hop it covered only the rest of the path, and a block whose
    /// first hop was quick and whose rest was slow timed out.
    #[test]
    fn a_micro_block_is_timed_from_its_first_frame() {
        let mut e = EndToEnd::new(Duration::from_secs(60));
        e.began(0, Time::ZERO);
        e.sent(0, Time::from_millis(5));
        assert!(e.acked(0, Time::from_millis(7)));
        assert_eq!(e.timeout(), Duration::from_millis(7));
        assert_eq!(e.beyond_first_hop(), Duration::from_millis(2));
        // A quick first hop, a slow rest: 6 ms in all, within the 7 ms.
        e.began(1, Time::from_millis(100));
        e.sent(1, Time::from_millis(101));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(107)));
        assert_eq!(e.expired(Time::from_millis(106)), Vec::<u32>::new());
        assert!(e.acked(1, Time::from_millis(106)));
        assert_eq!(e.timeouts, 0);
        assert_eq!(e.timeout(), Duration::from_millis(6));
        assert_eq!(e.beyond_first_hop(), Duration::from_millis(5));
        // A block held at the source (backpressure at the first hop) past
        // its round trip still gets twice the rest of the path's: no
        // timeout cuts short a block that has only just left.
        e.began(2, Time::from_millis(200));
        e.sent(2, Time::from_millis(300));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(310)));
    }

    /// A 1 MB block takes long to leave the source: its round-trip block
    /// delay includes that, but the part a FIN waits does not.
    #[test]
    fn control_waits_the_round_trip_beyond_the_first_hop() {
        let mut e = EndToEnd::new(Duration::from_secs(60));
        e.began(0, Time::ZERO);
        e.sent(0, Time::from_secs(1));
        assert!(e.acked(0, Time::from_millis(1050)));
        assert_eq!(e.timeout(), Duration::from_millis(1050));
        assert_eq!(e.beyond_first_hop(), Duration::from_millis(50));
        // The next block's timer fires a round trip after its first frame
        // or twice the rest of the path's after it left, not a whole round
        // trip after it left (3.1, not 4.05 s) …
        e.began(1, Time::from_secs(2));
        e.sent(1, Time::from_secs(3));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(3100)));
        // … and its virtual retransmission, which has only the path to
        // cross, waits that part, doubled by Karn's backoff.
        assert_eq!(e.expired(Time::from_millis(3100)), vec![1]);
        e.sent(1, Time::from_millis(3100));
        assert_eq!(e.poll_timeout(), Some(Time::from_millis(3300)));
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
