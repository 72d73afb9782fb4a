//! The mechanisms together on a line of nodes, without agents: senders,
//! receiving sides and caches exchange messages through a lossy FIFO, and
//! the properties the paper's design rests on are checked — a block
//! completes exactly once at every hop under any loss pattern, backpressure
//! bounds every node's buffer, a relay forwards before its block is whole,
//! and a virtual retransmission moves only the frames a next hop lacks.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use proptest::prelude::*;
use rand::{Rng, SeedableRng};

use super::bitmap::FrameBitmap;
use super::block::{BlockBuf, Shape};
use super::cache::{BlockKey, FrameCache};
use super::inbound::{Answer, Inbound};
use super::sender::{BlockSender, SendAction, SendKind};
use super::virtual_rtx::{step, VirtualStep};
use super::HopConfig;
use crate::time::{Duration, Time};

const FLOW: u32 = 1;

fn key(block_num: u32) -> BlockKey {
    BlockKey {
        flow_id: FLOW,
        block_num,
    }
}

#[derive(Clone, Debug)]
enum Msg {
    Data {
        block: u32,
        i: u16,
        payload: Vec<u8>,
    },
    Bsyn {
        block: u32,
        shape: Shape,
        micro: Vec<u8>,
        virtual_ttl: Option<u8>,
    },
    Back {
        block: u32,
        back: FrameBitmap,
    },
}

struct Node {
    cache: FrameCache,
    inbound: Inbound,
    senders: BTreeMap<u32, BlockSender>,
    /// Blocks this node has moved on (its sender finished).
    done: BTreeSet<u32>,
    /// Times each block became whole here.
    completed: BTreeMap<u32, u32>,
    /// Blocks to forward by virtual retransmission, with their TTL.
    virtual_ttl: BTreeMap<u32, u8>,
    /// Times a sender here saw its block finish at the next hop.
    finished: BTreeMap<u32, u32>,
}

struct Line {
    cfg: HopConfig,
    nodes: Vec<Node>,
    now: Time,
    queue: VecDeque<(usize, usize, Msg)>,
    /// Data loss rate per hop (hop i: between nodes i and i + 1).
    data_loss: Vec<f64>,
    control_loss: f64,
    rng: rand_pcg::Pcg64Mcg,
    blocks: u32,
    /// Data frames sent on each hop (hop i: node i → i + 1).
    frames_moved: Vec<u64>,
    /// The sink's next block to hand to the application.
    next_delivery: u32,
    delivered: Vec<u8>,
    /// Most blocks any relay or the sink held for the flow, per node.
    peak: Vec<usize>,
}

impl Line {
    /// `hops` hops; the source holds `data` cut into blocks of
    /// `cfg.max_block` bytes.
    fn new(cfg: HopConfig, hops: usize, data: &[u8], seed: u64) -> Line {
        let nodes = (0..=hops)
            .map(|_| Node {
                cache: FrameCache::new(usize::MAX),
                inbound: Inbound::new(cfg.backpressure, cfg.ack_withholding, cfg.withhold_idle),
                senders: BTreeMap::new(),
                done: BTreeSet::new(),
                completed: BTreeMap::new(),
                virtual_ttl: BTreeMap::new(),
                finished: BTreeMap::new(),
            })
            .collect();
        let mut line = Line {
            nodes,
            now: Time::ZERO,
            queue: VecDeque::new(),
            data_loss: vec![0.0; hops],
            control_loss: 0.0,
            rng: rand_pcg::Pcg64Mcg::seed_from_u64(seed),
            blocks: 0,
            frames_moved: vec![0; hops],
            next_delivery: 0,
            delivered: Vec::new(),
            peak: vec![0; hops + 1],
            cfg,
        };
        for (b, chunk) in data.chunks(line.cfg.max_block).enumerate() {
            let frame_len = if line.cfg.is_micro(chunk.len()) {
                chunk.len()
            } else {
                line.cfg.frame_len
            };
            line.nodes[0]
                .cache
                .put(key(b as u32), BlockBuf::from_data(chunk, frame_len));
            line.blocks += 1;
        }
        line
    }

    fn sink(&self) -> usize {
        self.nodes.len() - 1
    }

    fn send(&mut self, from: usize, to: usize, msg: Msg) {
        let p = match msg {
            Msg::Data { .. } => self.data_loss[from.min(to)],
            _ => self.control_loss,
        };
        if self.rng.random::<f64>() >= p {
            self.queue.push_back((from, to, msg));
        }
    }

    /// The block node `i` forwards next, making its sender if needed.
    fn active(&mut self, i: usize) -> Option<u32> {
        let node = &self.nodes[i];
        let block = (0..self.blocks).find(|b| {
            !node.done.contains(b)
                && node.cache.contains(key(*b))
                && (i == 0 || node.inbound.holds(key(*b)))
        })?;
        if !self.nodes[i].senders.contains_key(&block) {
            let len = self.nodes[i]
                .cache
                .block(key(block))
                .and_then(BlockBuf::shape)
                .map(|s| s.block_len as usize);
            let kind = if self.nodes[i].virtual_ttl.contains_key(&block) {
                SendKind::Virtual
            } else if len.is_some_and(|l| self.cfg.is_micro(l)) {
                SendKind::Micro
            } else if len.is_none() && i > 0 && self.cfg.micro_block.is_some() {
                // The block is arriving as data frames: it is no micro-block
                // unless a BSYN says so; it goes on as data.
                SendKind::Plain
            } else {
                SendKind::Plain
            };
            let s = BlockSender::new(kind, self.cfg.frames_per_txop(), self.cfg.bsyn_retry);
            self.nodes[i].senders.insert(block, s);
        }
        Some(block)
    }

    /// Let node `i`'s active sender send all it wants now; true if it sent.
    fn poll(&mut self, i: usize) -> bool {
        let Some(block) = self.active(i) else {
            return false;
        };
        let mut sent = false;
        loop {
            let node = &mut self.nodes[i];
            let local = node.cache.block(key(block)).cloned().unwrap_or_default();
            let Some(action) = node
                .senders
                .get_mut(&block)
                .and_then(|s| s.poll_transmit(self.now, &local))
            else {
                return sent;
            };
            sent = true;
            let shape = local.shape();
            let ttl = self.nodes[i].virtual_ttl.get(&block).copied();
            match action {
                SendAction::Frames(frames) => {
                    self.frames_moved[i] += frames.len() as u64;
                    for f in frames {
                        let payload = local.frame(f as usize).unwrap().to_vec();
                        self.send(
                            i,
                            i + 1,
                            Msg::Data {
                                block,
                                i: f,
                                payload,
                            },
                        );
                    }
                }
                SendAction::Bsyn { micro } => {
                    let micro = if micro {
                        local.assemble().unwrap()
                    } else {
                        Vec::new()
                    };
                    self.send(
                        i,
                        i + 1,
                        Msg::Bsyn {
                            block,
                            shape: shape.expect("a BSYN goes only for a whole block"),
                            micro,
                            virtual_ttl: None,
                        },
                    );
                }
                SendAction::VirtualBsyn => self.send(
                    i,
                    i + 1,
                    Msg::Bsyn {
                        block,
                        shape: shape.expect("a BSYN goes only for a whole block"),
                        micro: Vec::new(),
                        virtual_ttl: Some(ttl.unwrap_or(self.cfg.ttl)),
                    },
                ),
            }
        }
    }

    fn answer(&mut self, at: usize, answers: Vec<Answer>) {
        for a in answers {
            self.send(
                at,
                a.to as usize,
                Msg::Back {
                    block: a.key.block_num,
                    back: a.back,
                },
            );
        }
    }

    fn completed(&mut self, at: usize, block: u32) {
        *self.nodes[at].completed.entry(block).or_default() += 1;
        if at == self.sink() {
            while self.nodes[at]
                .cache
                .block(key(self.next_delivery))
                .is_some_and(BlockBuf::is_complete)
            {
                let k = key(self.next_delivery);
                let bytes = self.nodes[at].cache.block(k).unwrap().assemble().unwrap();
                self.delivered.extend_from_slice(&bytes);
                let node = &mut self.nodes[at];
                let answers = node.inbound.moved_on(&node.cache, k);
                self.answer(at, answers);
                self.next_delivery += 1;
            }
        }
    }

    fn handle(&mut self, from: usize, to: usize, msg: Msg) {
        let now = self.now;
        match msg {
            Msg::Data { block, i, payload } => {
                let node = &mut self.nodes[to];
                let out = node.inbound.on_data(
                    &mut node.cache,
                    from as u32,
                    key(block),
                    i,
                    &payload,
                    now,
                );
                self.answer(to, out.answers);
                if out.completed {
                    self.completed(to, block);
                }
            }
            Msg::Bsyn {
                block,
                shape,
                micro,
                virtual_ttl,
            } => {
                let at_sink = to == self.nodes.len() - 1;
                if let Some(VirtualStep::Expired) = virtual_ttl.map(|t| step(t, at_sink)) {
                    // The TTL is spent: drop it, and stop the previous hop.
                    let back = FrameBitmap::full(shape.frames as usize);
                    self.send(to, from, Msg::Back { block, back });
                    return;
                }
                let node = &mut self.nodes[to];
                let out = node.inbound.on_bsyn(
                    &mut node.cache,
                    from as u32,
                    key(block),
                    shape,
                    &micro,
                    virtual_ttl.is_some(),
                    now,
                );
                if let Some(ttl) = virtual_ttl {
                    if let VirtualStep::Forward { ttl } = step(ttl, at_sink) {
                        let node = &mut self.nodes[to];
                        if node.senders.get(&block).is_none_or(BlockSender::is_done) {
                            node.senders.remove(&block);
                            node.done.remove(&block);
                            node.virtual_ttl.insert(block, ttl);
                        }
                    }
                }
                self.answer(to, out.answers);
                if out.completed {
                    self.completed(to, block);
                }
            }
            Msg::Back { block, back } => {
                let node = &mut self.nodes[to];
                let Some(s) = node.senders.get_mut(&block) else {
                    return;
                };
                if s.on_back(back) {
                    *node.finished.entry(block).or_default() += 1;
                    node.done.insert(block);
                    if to > 0 {
                        let answers = node.inbound.moved_on(&node.cache, key(block));
                        self.answer(to, answers);
                    }
                }
            }
        }
    }

    /// Run until nothing is left to do; false if it did not settle.
    fn run(&mut self) -> bool {
        for _ in 0..2_000_000 {
            let mut sent = false;
            for i in 0..self.sink() {
                sent |= self.poll(i);
            }
            for (i, node) in self.nodes.iter().enumerate().skip(1) {
                self.peak[i] = self.peak[i].max(node.inbound.buffered(FLOW));
            }
            if let Some((from, to, msg)) = self.queue.pop_front() {
                self.handle(from, to, msg);
                continue;
            }
            if sent {
                continue;
            }
            let next = self
                .nodes
                .iter()
                .flat_map(|n| n.senders.values())
                .filter_map(BlockSender::poll_timeout)
                .min();
            match next {
                Some(t) => self.now = t.max(self.now),
                None => return true,
            }
        }
        false
    }
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn small_cfg() -> HopConfig {
    HopConfig {
        max_block: 20_000,
        frame_len: 500,
        txop_bytes: 2_000,
        micro_block: Some(2_000),
        bsyn_retry: Duration::from_millis(50),
        ..HopConfig::default()
    }
}

#[test]
fn a_block_crosses_four_lossless_hops_with_one_round_each() {
    let data = pattern(20_000);
    let mut line = Line::new(small_cfg(), 4, &data, 1);
    assert!(line.run());
    assert_eq!(line.delivered, data);
    // 40 frames per hop, none resent.
    assert_eq!(line.frames_moved, vec![40; 4]);
    for n in &line.nodes[..4] {
        assert_eq!(n.senders[&0].stats.bsyns_sent, 1);
    }
}

#[test]
fn a_relay_forwards_a_txop_before_its_block_is_whole() {
    let data = pattern(20_000);
    let mut line = Line::new(small_cfg(), 2, &data, 1);
    // Deliver the source's first TXOP only, then let the relay act.
    line.poll(0);
    let first_txop: Vec<_> = line.queue.drain(..).collect();
    assert_eq!(
        first_txop.len(),
        41,
        "the source sends its round and a BSYN"
    );
    for (from, to, msg) in first_txop.into_iter().take(4) {
        line.handle(from, to, msg);
    }
    assert!(!line.nodes[1].cache.block(key(0)).unwrap().is_complete());
    assert!(line.poll(1), "the relay forwards a TXOP of new frames");
    assert_eq!(line.frames_moved[1], 4);
}

#[test]
fn micro_blocks_ride_on_the_bsyn_over_every_hop() {
    let data = pattern(1_500);
    let mut line = Line::new(small_cfg(), 3, &data, 1);
    assert!(line.run());
    assert_eq!(line.delivered, data);
    assert_eq!(line.frames_moved, vec![0; 3], "no data frames at all");
    let mut off = small_cfg();
    off.micro_block = None;
    let mut line = Line::new(off, 3, &data, 1);
    assert!(line.run());
    assert_eq!(line.frames_moved, vec![3; 3]);
}

#[test]
fn backpressure_bounds_every_buffer_and_off_it_does_not() {
    // The last hop loses most data: blocks pile up in front of it unless
    // backpressure holds them back.
    let data = pattern(200_000);
    for (limit, bounded) in [(Some(1), true), (Some(3), true), (None, false)] {
        let mut cfg = small_cfg();
        cfg.backpressure = limit;
        let mut line = Line::new(cfg, 3, &data, 3);
        line.data_loss = vec![0.0, 0.0, 0.6];
        assert!(line.run());
        assert_eq!(line.delivered, data);
        let worst = *line.peak.iter().max().unwrap();
        if bounded {
            let h = limit.unwrap();
            assert!(worst <= h + 1, "H = {h}: a node held {worst} blocks");
        } else {
            assert!(worst > 4, "without backpressure blocks pile up ({worst})");
        }
    }
}

#[test]
fn virtual_retransmission_moves_only_missing_frames() {
    let data = pattern(20_000);
    let mut cfg = small_cfg();
    cfg.ack_withholding = false;
    let mut line = Line::new(cfg, 4, &data, 1);
    let whole = line.nodes[0].cache.block(key(0)).unwrap().clone();
    // Node 1 holds the block, node 2 the first 25 frames, node 3 nothing,
    // node 4 (the destination) the last 5 (say, overheard).
    line.nodes[1].cache.put(key(0), whole.clone());
    for i in 0..25u16 {
        line.nodes[2]
            .cache
            .insert_frame(key(0), i, whole.frame(i as usize).unwrap(), true);
    }
    for i in 35..40u16 {
        line.nodes[4]
            .cache
            .insert_frame(key(0), i, whole.frame(i as usize).unwrap(), true);
    }
    line.nodes[0].virtual_ttl.insert(0, line.cfg.ttl);
    assert!(line.run());
    assert_eq!(line.delivered, data);
    assert_eq!(line.frames_moved, vec![0, 15, 40, 35]);
}

#[test]
fn a_virtual_retransmission_stops_when_its_ttl_is_spent() {
    let data = pattern(2_500);
    let mut cfg = small_cfg();
    cfg.micro_block = None;
    let mut line = Line::new(cfg, 4, &data, 1);
    line.nodes[0].virtual_ttl.insert(0, 2);
    assert!(line.run());
    // TTL 2: node 1 takes the block and forwards the virtual BSYN with TTL
    // 1; node 2 drops it (and says so, so node 1 stops asking).
    assert_eq!(line.frames_moved, vec![5, 0, 0, 0]);
    assert!(line.delivered.is_empty());
}

#[test]
fn ack_withholding_does_not_stall_one_flow() {
    let data = pattern(60_000);
    let mut line = Line::new(small_cfg(), 3, &data, 5);
    line.data_loss = vec![0.2; 3];
    line.control_loss = 0.1;
    assert!(line.run());
    assert_eq!(line.delivered, data);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever is lost, every block becomes whole exactly once at every
    /// node, every sender sees its block finish exactly once, and the
    /// destination gets the data exactly.
    #[test]
    fn a_block_completes_exactly_once_under_any_loss(
        hops in 1usize..5,
        data_loss in 0.0f64..0.6,
        control_loss in 0.0f64..0.4,
        len in 1usize..50_000,
        seed in any::<u64>(),
        withholding in any::<bool>(),
        limit in prop_oneof![Just(None), (1usize..3).prop_map(Some)],
    ) {
        let data = pattern(len);
        let mut cfg = small_cfg();
        cfg.ack_withholding = withholding;
        cfg.backpressure = limit;
        let mut line = Line::new(cfg, hops, &data, seed);
        line.data_loss = vec![data_loss; hops];
        line.control_loss = control_loss;
        prop_assert!(line.run(), "the exchange did not settle");
        prop_assert_eq!(&line.delivered, &data);
        for (i, n) in line.nodes.iter().enumerate() {
            for b in 0..line.blocks {
                if i > 0 {
                    prop_assert_eq!(n.completed.get(&b).copied(), Some(1), "node {} block {}", i, b);
                }
                if i < hops {
                    prop_assert_eq!(n.finished.get(&b).copied(), Some(1), "node {} block {}", i, b);
                }
            }
        }
        if let Some(h) = limit {
            prop_assert!(line.peak.iter().all(|p| *p <= h + 1));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Whatever each node already holds of a block (received or
    /// overheard), a virtual retransmission moves over each hop exactly
    /// the frames the next node lacks, and nothing else.
    #[test]
    fn virtual_retransmission_moves_only_missing_frames_whatever_is_cached(
        hops in 1usize..5,
        held in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 40), 4),
    ) {
        let data = pattern(20_000);
        let mut cfg = small_cfg();
        cfg.ack_withholding = false;
        let mut line = Line::new(cfg, hops, &data, 1);
        let whole = line.nodes[0].cache.block(key(0)).unwrap().clone();
        prop_assert!(whole.frame(39).is_some() && whole.frame(40).is_none(), "40 frames of 500");
        let mut expected = Vec::new();
        for node in 1..=hops {
            let mine = &held[node - 1];
            for (i, _) in mine.iter().enumerate().filter(|(_, h)| **h) {
                line.nodes[node]
                    .cache
                    .insert_frame(key(0), i as u16, whole.frame(i).unwrap(), true);
            }
            expected.push(mine.iter().filter(|h| !**h).count() as u64);
        }
        line.nodes[0].virtual_ttl.insert(0, line.cfg.ttl);
        prop_assert!(line.run(), "the exchange did not settle");
        prop_assert_eq!(&line.delivered, &data);
        prop_assert_eq!(&line.frames_moved, &expected);
    }
}

/// Two senders hidden from each other send one block each to the same
/// receiver: a step in which both send data loses every frame of it (a
/// collision); control frames (BSYN, BACK) go with link ARQ and arrive.
/// Returns (steps until both blocks are whole, data frames lost to
/// collisions), or `None` if they are not whole within `limit` steps.
fn hidden_senders(withholding: bool, limit: u32) -> Option<(u32, u64)> {
    let data = pattern(30 * 500);
    let block = BlockBuf::from_data(&data, 500);
    let shape = block.shape().unwrap();
    let mut cache = FrameCache::new(usize::MAX);
    let mut rx = Inbound::new(None, withholding, Duration::from_secs(10));
    let retry = Duration::from_millis(20);
    let mut senders = [
        BlockSender::new(SendKind::Plain, 5, retry),
        BlockSender::new(SendKind::Plain, 5, retry),
    ];
    let keys = [
        BlockKey {
            flow_id: 1,
            block_num: 0,
        },
        BlockKey {
            flow_id: 2,
            block_num: 0,
        },
    ];
    let mut lost = 0;
    for step in 0..limit {
        let now = Time::from_millis(u64::from(step));
        let actions: Vec<Option<SendAction>> = senders
            .iter_mut()
            .map(|s| s.poll_transmit(now, &block))
            .collect();
        let both_data = actions
            .iter()
            .all(|a| matches!(a, Some(SendAction::Frames(_))));
        let mut answers = Vec::new();
        for (who, action) in actions.into_iter().enumerate() {
            match action {
                Some(SendAction::Frames(frames)) if both_data => lost += frames.len() as u64,
                Some(SendAction::Frames(frames)) => {
                    for f in frames {
                        let out = rx.on_data(
                            &mut cache,
                            who as u32,
                            keys[who],
                            f,
                            block.frame(f as usize).unwrap(),
                            now,
                        );
                        answers.extend(out.answers);
                    }
                }
                Some(_) => {
                    let out = rx.on_bsyn(&mut cache, who as u32, keys[who], shape, &[], false, now);
                    answers.extend(out.answers);
                }
                None => {}
            }
        }
        for a in answers {
            senders[a.to as usize].on_back(a.back);
        }
        if senders.iter().all(BlockSender::is_done) {
            return Some((step, lost));
        }
    }
    None
}

#[test]
fn ack_withholding_serialises_hidden_senders() {
    let (steps, lost) = hidden_senders(true, 10_000).expect("both blocks whole");
    // Only the first, blind round collides: after it, one sender at a time.
    assert_eq!(lost, 2 * 30, "{lost} frames lost in {steps} steps");
    // Without withholding the two senders, in lockstep here (the worst
    // case: a real MAC's random backoff would let some frames through),
    // resend their holes together and collide for ever.
    assert_eq!(hidden_senders(false, 10_000), None);
}
