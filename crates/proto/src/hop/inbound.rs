//! The receiving side of a node (§3.1, §3.3, §3.5): data frames go into
//! the cache if backpressure admits their block; a BSYN is answered with
//! the BACK bitmap of what the cache holds, unless backpressure (H whole
//! blocks not yet moved on) or ack withholding (another sender's turn)
//! holds it back. Withheld BSYNs are remembered and answered when released;
//! their senders also repeat them.

use std::collections::{BTreeMap, BTreeSet};

use super::backpressure::Backpressure;
use super::bitmap::FrameBitmap;
use super::block::{BlockBuf, Shape};
use super::cache::{BlockKey, FrameCache};
use super::withhold::{AckWithholding, Offer, Turn};
use crate::net::NodeId;
use crate::time::{Duration, Time};

/// A BACK to send: to the upstream neighbour `to`, for `key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub to: NodeId,
    pub key: BlockKey,
    pub back: FrameBitmap,
}

/// Counters of the receiving side.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct InboundCounters {
    pub backs: u64,
    /// BSYNs left unanswered because the flow had H whole blocks here.
    pub withheld_backpressure: u64,
    /// BSYNs left unanswered because another sender had the turn.
    pub withheld_turn: u64,
    /// Data frames dropped because their block was not admitted.
    pub frames_refused: u64,
    /// BSYNs whose shape contradicted what was known.
    pub bad_bsyns: u64,
}

/// What a frame or BSYN did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The block became whole here with this message.
    pub completed: bool,
    /// BACKs to send now (the answer to a BSYN, or BACKs a completion
    /// released to other senders).
    pub answers: Vec<Answer>,
}

#[derive(Clone, Debug)]
struct Withheld {
    from: NodeId,
    shape: Shape,
}

/// The receiving side of one node, for every flow crossing it.
#[derive(Clone, Debug)]
pub struct Inbound {
    limit: Option<usize>,
    turn: AckWithholding,
    flows: BTreeMap<u32, Backpressure>,
    /// Blocks this node has moved on (or delivered).
    moved: BTreeSet<BlockKey>,
    withheld: BTreeMap<BlockKey, Withheld>,
    /// Blocks moved on and no longer held whole here, with the frames the
    /// next hop said it holds when a virtual BSYN asked it: this node
    /// answers for those and takes only the rest ([`Inbound::vouch`]).
    vouched: BTreeMap<BlockKey, FrameBitmap>,
    /// Blocks smaller than this are micro-blocks: answered without waiting
    /// for the turn (§3.6).
    micro: Option<usize>,
    pub counters: InboundCounters,
}

impl Inbound {
    /// Backpressure limit H (`None`: off); ack withholding on or off, with
    /// the idle time after which a silent sender loses its turn.
    pub fn new(limit: Option<usize>, withholding: bool, idle: Duration) -> Inbound {
        Inbound {
            limit,
            turn: AckWithholding::new(withholding, idle),
            flows: BTreeMap::new(),
            moved: BTreeSet::new(),
            withheld: BTreeMap::new(),
            vouched: BTreeMap::new(),
            micro: None,
            counters: InboundCounters::default(),
        }
    }

    /// Micro-blocks (below `threshold` bytes) skip the turn, whether they
    /// ride on their BSYN or come as frames (§3.6: the size-aware policy
    /// puts them first).
    pub fn with_micro_blocks(mut self, threshold: Option<usize>) -> Inbound {
        self.micro = threshold;
        self
    }

    fn flow(&mut self, flow_id: u32) -> &mut Backpressure {
        let limit = self.limit;
        self.flows
            .entry(flow_id)
            .or_insert_with(|| Backpressure::new(limit))
    }

    /// Blocks of `flow_id` held here and not moved on.
    pub fn buffered(&self, flow_id: u32) -> usize {
        self.flows.get(&flow_id).map_or(0, Backpressure::buffered)
    }

    /// Most blocks of `flow_id` ever held here at once.
    pub fn peak(&self, flow_id: u32) -> usize {
        self.flows.get(&flow_id).map_or(0, |b| b.peak)
    }

    /// Blocks admitted here (arriving or whole) and not moved on.
    pub fn holds(&self, key: BlockKey) -> bool {
        self.flows
            .get(&key.flow_id)
            .is_some_and(|b| b.holds(key.block_num))
    }

    pub fn has_moved(&self, key: BlockKey) -> bool {
        self.moved.contains(&key)
    }

    /// The sender that has the turn, if any.
    pub fn turn(&self) -> Option<Offer> {
        self.turn.current()
    }

    fn offer(from: NodeId, key: BlockKey) -> Offer {
        Offer {
            from,
            flow_id: key.flow_id,
            block_num: key.block_num,
        }
    }

    fn back(cache: &FrameCache, key: BlockKey, frames: u16) -> FrameBitmap {
        cache
            .block(key)
            .map_or_else(|| FrameBitmap::new(frames as usize), |b| b.back(frames))
    }

    /// A data frame from neighbour `from`.
    pub fn on_data(
        &mut self,
        cache: &mut FrameCache,
        from: NodeId,
        key: BlockKey,
        packet_num: u16,
        payload: &[u8],
        now: Time,
    ) -> Outcome {
        if self.moved.contains(&key) {
            if self.vouched.contains_key(&key) {
                // A frame the next hop lacks, for this node to pass on.
                cache.insert_frame(key, packet_num, payload, false);
            }
            return Outcome::default();
        }
        if !self.flow(key.flow_id).admit(key.block_num) {
            self.counters.frames_refused += 1;
            return Outcome::default();
        }
        self.turn.heard(Self::offer(from, key), now);
        cache.insert_frame(key, packet_num, payload, false);
        let mut out = Outcome::default();
        if self.newly_whole(cache, key) {
            out.completed = true;
            out.answers = self.whole(cache, from, key, now);
        }
        out
    }

    /// The cache holds the admitted block whole and it is not yet counted
    /// whole here: frames overheard (which count nothing) may have
    /// filled it before the frame or BSYN at hand, and a block whole
    /// before it arrived must still complete once — a sink that missed it
    /// would never deliver the block.
    fn newly_whole(&self, cache: &FrameCache, key: BlockKey) -> bool {
        cache.block(key).is_some_and(BlockBuf::is_complete)
            && self
                .flows
                .get(&key.flow_id)
                .is_some_and(|b| b.holds(key.block_num) && !b.is_complete(key.block_num))
    }

    /// The block is whole here: count it, and pass the turn on.
    fn whole(&mut self, cache: &FrameCache, from: NodeId, key: BlockKey, now: Time) -> Vec<Answer> {
        self.flow(key.flow_id).complete(key.block_num);
        let flows = &self.flows;
        let next = self.turn.done(Self::offer(from, key), now, |o| {
            flows
                .get(&o.flow_id)
                .is_none_or(|b| b.would_answer(o.block_num))
        });
        let mut answers = Vec::new();
        if let Some(o) = next {
            let k = BlockKey {
                flow_id: o.flow_id,
                block_num: o.block_num,
            };
            if let Some(w) = self.withheld.remove(&k) {
                self.flow(k.flow_id).admit(k.block_num);
                self.counters.backs += 1;
                answers.push(Answer {
                    to: w.from,
                    key: k,
                    back: Self::back(cache, k, w.shape.frames),
                });
            }
        }
        answers
    }

    /// A BSYN (or, if `virtual_`, a virtual BSYN) from neighbour `from`,
    /// with the whole block in `micro` if it is a micro-block.
    #[allow(clippy::too_many_arguments)]
    pub fn on_bsyn(
        &mut self,
        cache: &mut FrameCache,
        from: NodeId,
        key: BlockKey,
        shape: Shape,
        micro: &[u8],
        virtual_: bool,
        now: Time,
    ) -> Outcome {
        let mut out = Outcome::default();
        if self.moved.contains(&key) {
            let whole = cache.block(key).is_some_and(BlockBuf::is_complete);
            if !virtual_ || whole {
                // Already passed on: the upstream BACK was lost.
                self.counters.backs += 1;
                out.answers.push(Answer {
                    to: from,
                    key,
                    back: FrameBitmap::full(shape.frames as usize),
                });
                return out;
            }
            if self.vouched.contains_key(&key) {
                self.counters.backs += 1;
                out.answers.push(Answer {
                    to: from,
                    key,
                    back: self.answer_for(cache, key, shape.frames),
                });
                return out;
            }
            // A virtual retransmission of a block this node passed on and
            // no longer holds whole: take it again.
            self.moved.remove(&key);
        }
        let was = cache.block(key).is_some_and(BlockBuf::is_complete);
        if cache.set_shape(key, shape).is_err() {
            self.counters.bad_bsyns += 1;
            return out;
        }
        if !micro.is_empty() && !was && self.flow(key.flow_id).admit(key.block_num) {
            // A micro-block (§3.6) is one frame, and skips the turn.
            let block = BlockBuf::from_data(micro, micro.len());
            if block.shape() == Some(shape) {
                cache.put(key, block);
            } else {
                self.counters.bad_bsyns += 1;
                return out;
            }
        }
        let whole = cache.block(key).is_some_and(BlockBuf::is_complete);
        if whole {
            if !self.holds(key) {
                // Whole from overheard frames: it is now this node's to carry.
                self.flow(key.flow_id).admit(key.block_num);
            }
            if self.newly_whole(cache, key) {
                out.completed = true;
                out.answers = self.whole(cache, from, key, now);
            }
            if self.flow(key.flow_id).may_answer(key.block_num) {
                self.withheld.remove(&key);
                self.counters.backs += 1;
                out.answers.push(Answer {
                    to: from,
                    key,
                    back: FrameBitmap::full(shape.frames as usize),
                });
            } else {
                self.counters.withheld_backpressure += 1;
                self.withheld.insert(key, Withheld { from, shape });
            }
            return out;
        }
        if !self.flow(key.flow_id).may_answer(key.block_num) {
            self.counters.withheld_backpressure += 1;
            self.withheld.insert(key, Withheld { from, shape });
            return out;
        }
        let micro = self.micro.is_some_and(|m| (shape.block_len as usize) < m);
        let turn = if micro {
            Turn::Answer
        } else {
            self.turn
                .on_bsyn(Self::offer(from, key), shape.block_len, now)
        };
        match turn {
            Turn::Answer => {
                self.withheld.remove(&key);
                self.counters.backs += 1;
                out.answers.push(Answer {
                    to: from,
                    key,
                    back: Self::back(cache, key, shape.frames),
                });
            }
            Turn::Withhold => {
                self.counters.withheld_turn += 1;
                self.withheld.insert(key, Withheld { from, shape });
            }
        }
        out
    }

    /// A virtual BSYN asked the next hop about `key`, which this node moved
    /// on and no longer holds whole, and its BACK said it holds `next_hop`:
    /// from now on this node answers for those frames as well as its own,
    /// and takes only the frames neither holds, without holding the block
    /// again (no room, no turn: the next hop already has most of it).
    pub fn vouch(&mut self, key: BlockKey, next_hop: FrameBitmap) {
        if self.moved.contains(&key) {
            self.vouched.insert(key, next_hop);
        }
    }

    /// True while this node answers for `key` from its next hop's BACK.
    pub fn is_vouched(&self, key: BlockKey) -> bool {
        self.vouched.contains_key(&key)
    }

    /// The BACK this node gives for `key`: the frames its cache holds, and
    /// those its next hop holds if it vouches for them.
    pub fn answer_for(&self, cache: &FrameCache, key: BlockKey, frames: u16) -> FrameBitmap {
        let mut back = Self::back(cache, key, frames);
        if let Some(v) = self.vouched.get(&key) {
            for i in v.held().filter(|&i| i < frames as usize) {
                back.set(i);
            }
        }
        back
    }

    /// The next hop did not answer for `key`: this node takes the block
    /// again as any other (the virtual BSYN's next answer says what its
    /// cache holds).
    pub fn take_again(&mut self, key: BlockKey) {
        self.moved.remove(&key);
        self.vouched.remove(&key);
    }

    /// The block has moved on: whole at the next hop, or handed to the
    /// application. Returns the BACKs its room releases.
    pub fn moved_on(&mut self, cache: &FrameCache, key: BlockKey) -> Vec<Answer> {
        self.vouched.remove(&key);
        self.moved.insert(key);
        let released = self.flow(key.flow_id).moved_on(key.block_num);
        let mut answers = Vec::new();
        for block_num in released {
            let k = BlockKey {
                flow_id: key.flow_id,
                block_num,
            };
            if let Some(w) = self.withheld.remove(&k) {
                self.counters.backs += 1;
                answers.push(Answer {
                    to: w.from,
                    key: k,
                    back: Self::back(cache, k, w.shape.frames),
                });
            }
        }
        answers
    }

    /// Forgets a flow (FIN).
    pub fn forget_flow(&mut self, flow_id: u32) {
        self.flows.remove(&flow_id);
        self.moved.retain(|k| k.flow_id != flow_id);
        self.withheld.retain(|k, _| k.flow_id != flow_id);
        self.vouched.retain(|k, _| k.flow_id != flow_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Duration = Duration::from_secs(5);

    fn key(flow_id: u32, block_num: u32) -> BlockKey {
        BlockKey { flow_id, block_num }
    }

    fn shape(frames: u16) -> Shape {
        Shape {
            frames,
            block_len: u32::from(frames),
        }
    }

    #[test]
    fn a_bsyn_is_answered_with_what_arrived() {
        let mut c = FrameCache::new(1 << 20);
        let mut r = Inbound::new(Some(1), true, IDLE);
        let t = Time::ZERO;
        r.on_data(&mut c, 1, key(1, 0), 0, b"a", t);
        r.on_data(&mut c, 1, key(1, 0), 2, b"c", t);
        let out = r.on_bsyn(&mut c, 1, key(1, 0), shape(3), &[], false, t);
        assert_eq!(out.answers.len(), 1);
        assert_eq!(out.answers[0].back.to_back(), vec![0b1010_0000]);
        let out = r.on_data(&mut c, 1, key(1, 0), 1, b"b", t);
        assert!(out.completed);
        let out = r.on_bsyn(&mut c, 1, key(1, 0), shape(3), &[], false, t);
        assert!(out.answers[0].back.is_full());
    }

    #[test]
    fn ack_withholding_serialises_two_senders() {
        let mut c = FrameCache::new(1 << 20);
        let mut r = Inbound::new(None, true, IDLE);
        let t = Time::ZERO;
        let a = r.on_bsyn(&mut c, 1, key(1, 0), shape(2), &[], false, t);
        assert_eq!(a.answers.len(), 1, "first sender answered");
        let b = r.on_bsyn(&mut c, 2, key(2, 0), shape(2), &[], false, t);
        assert!(b.answers.is_empty(), "second sender withheld");
        assert_eq!(r.counters.withheld_turn, 1);
        r.on_data(&mut c, 1, key(1, 0), 0, b"a", t);
        let done = r.on_data(&mut c, 1, key(1, 0), 1, b"b", t);
        assert!(done.completed);
        assert_eq!(done.answers.len(), 1, "the turn passes");
        assert_eq!(done.answers[0].to, 2);
        assert_eq!(r.turn().map(|o| o.from), Some(2));
    }

    #[test]
    fn a_micro_block_skips_the_turn() {
        let mut c = FrameCache::new(1 << 20);
        let mut r = Inbound::new(Some(1), true, IDLE);
        let t = Time::ZERO;
        r.on_bsyn(&mut c, 1, key(1, 0), shape(2), &[], false, t);
        let s = Shape {
            frames: 1,
            block_len: 3,
        };
        let out = r.on_bsyn(&mut c, 2, key(2, 0), s, b"xyz", false, t);
        assert!(out.completed);
        assert!(out.answers.iter().any(|a| a.to == 2 && a.back.is_full()));
        assert_eq!(c.block(key(2, 0)).unwrap().assemble().unwrap(), b"xyz");
    }

    #[test]
    fn a_micro_block_of_frames_is_answered_without_the_turn() {
        let mut c = FrameCache::new(1 << 20);
        let mut r = Inbound::new(None, true, IDLE).with_micro_blocks(Some(16));
        let t = Time::ZERO;
        r.on_bsyn(&mut c, 1, key(1, 0), shape(40), &[], false, t);
        // Block (2, 0) is 3 bytes in 3 frames, one of them lost: answered
        // with its holes at once, while flow 1 holds the turn.
        r.on_data(&mut c, 2, key(2, 0), 0, b"a", t);
        r.on_data(&mut c, 2, key(2, 0), 2, b"c", t);
        let out = r.on_bsyn(&mut c, 2, key(2, 0), shape(3), &[], false, t);
        assert_eq!(out.answers.len(), 1);
        assert_eq!(out.answers[0].back.to_back(), vec![0b1010_0000]);
        assert_eq!(r.turn().map(|o| o.from), Some(1), "the turn stays");
        // A block at the threshold is no micro-block: it waits its turn.
        let out = r.on_bsyn(&mut c, 3, key(3, 0), shape(16), &[], false, t);
        assert!(out.answers.is_empty());
    }

    #[test]
    fn backpressure_withholds_the_back_until_a_block_moves_on() {
        let mut c = FrameCache::new(1 << 20);
        let mut r = Inbound::new(Some(1), false, IDLE);
        let t = Time::ZERO;
        for b in 0..2 {
            r.on_data(&mut c, 1, key(1, b), 0, b"a", t);
            r.on_bsyn(&mut c, 1, key(1, b), shape(1), &[], false, t);
        }
        assert_eq!(r.buffered(1), 2);
        // Block 1 is whole but block 0 has not moved on: no BACK for 1.
        let out = r.on_bsyn(&mut c, 1, key(1, 1), shape(1), &[], false, t);
        assert!(out.answers.is_empty());
        // A third block is refused outright.
        r.on_data(&mut c, 1, key(1, 2), 0, b"a", t);
        assert_eq!(r.counters.frames_refused, 1);
        let released = r.moved_on(&c, key(1, 0));
        assert_eq!(released.len(), 1);
        assert_eq!(released[0].key, key(1, 1));
        assert!(released[0].back.is_full());
        // A repeated BSYN for the block that moved on gets a full BACK.
        let out = r.on_bsyn(&mut c, 1, key(1, 0), shape(1), &[], false, t);
        assert!(out.answers[0].back.is_full());
        assert_eq!(r.peak(1), 2);
    }

    #[test]
    fn a_block_whole_from_overheard_frames_is_answered_at_once() {
        let mut c = FrameCache::new(1 << 20);
        let mut r = Inbound::new(Some(1), true, IDLE);
        c.insert_frame(key(1, 0), 0, b"a", true);
        c.insert_frame(key(1, 0), 1, b"b", true);
        let out = r.on_bsyn(&mut c, 1, key(1, 0), shape(2), &[], true, Time::ZERO);
        assert!(out.completed);
        assert!(out.answers[0].back.is_full());
        assert!(r.holds(key(1, 0)));
    }

    /// Issue 13's §5.6.2 file that never arrived: the sink had the block's
    /// first frames from its sender and overheard the last one (sent to
    /// another node), so no frame it was sent completed the block and the
    /// next BSYN found it whole already; it was answered but never
    /// delivered. It completes once, at the BSYN, and only once.
    #[test]
    fn a_block_finished_by_an_overheard_frame_completes_exactly_once() {
        let mut c = FrameCache::new(1 << 20);
        let mut r = Inbound::new(Some(1), true, IDLE);
        let t = Time::ZERO;
        r.on_bsyn(&mut c, 1, key(1, 0), shape(2), &[], false, t);
        assert!(!r.on_data(&mut c, 1, key(1, 0), 0, b"a", t).completed);
        c.insert_frame(key(1, 0), 1, b"b", true);
        let out = r.on_bsyn(&mut c, 1, key(1, 0), shape(2), &[], false, t);
        assert!(out.completed, "{out:?}");
        assert!(out.answers.iter().any(|a| a.back.is_full()));
        let again = r.on_bsyn(&mut c, 1, key(1, 0), shape(2), &[], false, t);
        assert!(!again.completed);
        assert!(!r.on_data(&mut c, 1, key(1, 0), 1, b"b", t).completed);
        // Or at a frame it is sent, overheard before: the same, once.
        r.on_bsyn(&mut c, 1, key(1, 1), shape(2), &[], false, t);
        r.on_data(&mut c, 1, key(1, 1), 0, b"a", t);
        c.insert_frame(key(1, 1), 1, b"b", true);
        r.moved_on(&c, key(1, 0));
        assert!(r.on_data(&mut c, 1, key(1, 1), 1, b"b", t).completed);
        assert!(!r.on_data(&mut c, 1, key(1, 1), 0, b"a", t).completed);
    }
}
