//! Ack withholding (§3.5): a receiver answers one BSYN at a time and
//! withholds the BACK from every other sender until the answered block is
//! whole, so senders hidden from each other take turns instead of
//! colliding. Size-aware (§3.6): when the turn passes, the smallest waiting
//! block goes first, then the longest waiting.

use crate::net::NodeId;
use crate::time::{Duration, Time};

/// A block offered by one upstream sender: who, which flow, which block.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Offer {
    pub from: NodeId,
    pub flow_id: u32,
    pub block_num: u32,
}

/// What to do with a BSYN.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Answer it with a BACK: the sender has the turn.
    Answer,
    /// Withhold the BACK: another sender has the turn.
    Withhold,
}

#[derive(Clone, Debug)]
struct Waiting {
    offer: Offer,
    block_len: u32,
    since: u64,
}

/// The turn at one receiver.
#[derive(Clone, Debug)]
pub struct AckWithholding {
    enabled: bool,
    /// A turn lapses when its sender has not been heard from for this long.
    idle: Duration,
    current: Option<(Offer, Time)>,
    waiting: Vec<Waiting>,
    arrivals: u64,
}

impl AckWithholding {
    /// `enabled = false` answers every BSYN (the paper's "base Hop").
    pub fn new(enabled: bool, idle: Duration) -> AckWithholding {
        AckWithholding {
            enabled,
            idle,
            current: None,
            waiting: Vec::new(),
            arrivals: 0,
        }
    }

    /// Who has the turn.
    pub fn current(&self) -> Option<Offer> {
        self.current.map(|(o, _)| o)
    }

    /// BSYNs waiting for their turn.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// A BSYN for a block of `block_len` bytes, not yet whole here.
    pub fn on_bsyn(&mut self, offer: Offer, block_len: u32, now: Time) -> Turn {
        if !self.enabled {
            return Turn::Answer;
        }
        if self
            .current
            .is_some_and(|(_, heard)| now.saturating_since(heard) >= self.idle)
        {
            self.current = None;
        }
        match self.current {
            Some((o, _)) if o == offer => {
                self.current = Some((offer, now));
                Turn::Answer
            }
            None => {
                self.waiting.retain(|w| w.offer != offer);
                self.current = Some((offer, now));
                Turn::Answer
            }
            Some(_) => {
                if let Some(w) = self.waiting.iter_mut().find(|w| w.offer == offer) {
                    w.block_len = block_len;
                } else {
                    self.arrivals += 1;
                    self.waiting.push(Waiting {
                        offer,
                        block_len,
                        since: self.arrivals,
                    });
                }
                Turn::Withhold
            }
        }
    }

    /// A data frame from the sender with the turn keeps it.
    pub fn heard(&mut self, offer: Offer, now: Time) {
        if let Some((o, heard)) = self.current.as_mut() {
            if *o == offer {
                *heard = now;
            }
        }
    }

    /// The block of `offer` is whole here (or will not be finished: the flow
    /// is gone): the turn passes to the smallest waiting block that `may`
    /// accepts, which is returned to be answered now.
    pub fn done(&mut self, offer: Offer, now: Time, may: impl Fn(&Offer) -> bool) -> Option<Offer> {
        self.waiting.retain(|w| w.offer != offer);
        if self.current.is_some_and(|(o, _)| o != offer) {
            return None;
        }
        self.current = None;
        let next = self
            .waiting
            .iter()
            .enumerate()
            .filter(|(_, w)| may(&w.offer))
            .min_by_key(|(_, w)| (w.block_len, w.since))
            .map(|(i, _)| i)?;
        let w = self.waiting.remove(next);
        self.current = Some((w.offer, now));
        Some(w.offer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(from: NodeId) -> Offer {
        Offer {
            from,
            flow_id: from,
            block_num: 0,
        }
    }

    const IDLE: Duration = Duration::from_secs(1);

    #[test]
    fn one_sender_at_a_time_and_the_smallest_next() {
        let mut g = AckWithholding::new(true, IDLE);
        let t = Time::ZERO;
        assert_eq!(g.on_bsyn(offer(1), 1 << 20, t), Turn::Answer);
        assert_eq!(g.on_bsyn(offer(2), 1 << 20, t), Turn::Withhold);
        assert_eq!(g.on_bsyn(offer(3), 4000, t), Turn::Withhold);
        assert_eq!(g.on_bsyn(offer(2), 1 << 20, t), Turn::Withhold);
        assert_eq!(g.waiting(), 2);
        // The holder asks again: still its turn.
        assert_eq!(g.on_bsyn(offer(1), 1 << 20, t), Turn::Answer);
        // Its block is whole: the small block goes before the older big one.
        assert_eq!(g.done(offer(1), t, |_| true), Some(offer(3)));
        assert_eq!(g.current(), Some(offer(3)));
        assert_eq!(g.on_bsyn(offer(2), 1 << 20, t), Turn::Withhold);
        assert_eq!(g.done(offer(3), t, |_| true), Some(offer(2)));
        assert_eq!(g.done(offer(2), t, |_| true), None);
        assert_eq!(g.current(), None);
    }

    #[test]
    fn a_refused_waiter_is_skipped() {
        let mut g = AckWithholding::new(true, IDLE);
        let t = Time::ZERO;
        g.on_bsyn(offer(1), 10, t);
        g.on_bsyn(offer(2), 10, t);
        g.on_bsyn(offer(3), 20, t);
        assert_eq!(g.done(offer(1), t, |o| o.from != 2), Some(offer(3)));
        assert_eq!(g.waiting(), 1);
    }

    #[test]
    fn a_silent_holder_loses_the_turn() {
        let mut g = AckWithholding::new(true, IDLE);
        g.on_bsyn(offer(1), 10, Time::ZERO);
        g.heard(offer(1), Time::from_millis(900));
        assert_eq!(
            g.on_bsyn(offer(2), 10, Time::from_millis(1800)),
            Turn::Withhold
        );
        assert_eq!(
            g.on_bsyn(offer(2), 10, Time::from_millis(1900)),
            Turn::Answer
        );
        assert_eq!(g.waiting(), 0);
    }

    #[test]
    fn disabled_answers_everyone() {
        let mut g = AckWithholding::new(false, IDLE);
        assert_eq!(g.on_bsyn(offer(1), 10, Time::ZERO), Turn::Answer);
        assert_eq!(g.on_bsyn(offer(2), 10, Time::ZERO), Turn::Answer);
    }
}
