//! Hop's agent: one type for the three roles a node plays in a flow — the
//! source cuts blocks from the application and keeps them until the
//! destination acknowledges them end to end; a relay (on every node in
//! between, through [`Agent::on_transit`]) takes each block hop by hop and
//! passes it on; the sink delivers blocks in order. A node keeps one cache,
//! one receiving side (backpressure, ack withholding) and a round-robin
//! scheduler over every flow it carries (§3.6), so a relay is one agent for
//! the node, not one per flow.
//!
//! Every Hop message travels between the flow's two ends: DATA, BSYN and
//! virtual BSYN from source to destination, BACK, end-to-end BACK and
//! FIN-ACK back. Each relay consumes the per-hop ones (DATA, BSYN, virtual
//! BSYN, BACK) and sends its own on with [`Net::send_as`], so the next node
//! sees them as the flow's; end-to-end messages (end-to-end BACK, FIN,
//! FIN-ACK) pass through. There is no handshake (§4.2): the first block
//! sets up the state, FIN tears it down.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};

use joulenet_wire::hop::{HopMessage, HopPacket, HopRepr, PROTOCOL};

use super::bitmap::FrameBitmap;
use super::block::{take_block, BlockBuf, Shape};
use super::cache::{BlockKey, FrameCache};
use super::e2e::EndToEnd;
use super::inbound::{Answer, Inbound};
use super::sender::{BlockSender, SendAction, SendKind};
use super::virtual_rtx::{retransmission, step, VirtualStep};
use super::HopConfig;
use crate::net::{
    AccessClass, Addr, Agent, Net, NetworkHeader, NodeId, Transit, TransitVerdict, TransportEvent,
    TxOpts,
};
use crate::stats::TransportStats;
use crate::tcp::rtt::RttEstimator;
use crate::time::{Duration, Time};
use crate::timer::{TimerId, TimerTable};

/// The earliest BSYN retry of any sender.
const T_SEND: TimerId = TimerId(0);
/// The source's end-to-end timeout.
const T_E2E: TimerId = TimerId(1);
/// The source's FIN retry.
const T_FIN: TimerId = TimerId(2);
/// Pacing: look again at an interface queue that was full.
const T_PACE: TimerId = TimerId(3);

/// Virtual BSYNs a relay sends on, unanswered, for a block it no longer
/// holds before it stops asking and takes the block again (ours: the next
/// hop may be down or gone; each repeat waits twice as long).
const ASK_TRIES: u32 = 3;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Role {
    Source,
    Relay,
    Sink,
}

/// One flow at this node.
#[derive(Clone, Debug)]
struct Flow {
    role: Role,
    src: Addr,
    dst: Addr,
    senders: BTreeMap<u32, BlockSender>,
    /// Blocks this node has moved on to its next hop.
    done: BTreeSet<u32>,
    /// Blocks to send on by virtual retransmission, with their TTL.
    virtual_ttl: BTreeMap<u32, u8>,
    /// Relay: blocks moved on and no longer held whole here whose virtual
    /// BSYN went on to the next hop before this node answered it, with the
    /// neighbour to answer and the block's shape (`ask_next_hop`).
    asking: BTreeMap<u32, (NodeId, Shape)>,
    /// Source: blocks cut so far; sink: blocks delivered so far.
    next: u32,
    /// Source: the application has no more data.
    app_finished: bool,
    e2e: EndToEnd,
    /// Sink: the flow's block count, from FIN.
    total: Option<u32>,
    /// Relay: blocks the destination has acknowledged end to end.
    delivered: BTreeSet<u32>,
    /// The BSYN → BACK round trip to the next hop, from unambiguous
    /// samples: how long a sender waits before repeating a BSYN.
    hop_rtt: RttEstimator,
    closed: bool,
}

/// Counters beyond [`TransportStats`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HopCounters {
    pub blocks_completed: u64,
    pub blocks_moved_on: u64,
    pub e2e_backs: u64,
    pub virtual_bsyns: u64,
    pub ttl_expired: u64,
    pub flows_forgotten: u64,
    /// Virtual BSYNs for a block no longer held here that this relay sent
    /// on before answering (`ask_next_hop`).
    pub asks: u64,
    /// Of those, asks the next hop never answered (`give_up_asking`).
    pub asks_given_up: u64,
}

/// A node's receiving side (§3.1–§3.5): the frames it holds and how it
/// answers BSYNs (backpressure, ack withholding), with the ends of every
/// flow it has answered for, so that a BACK whose turn came while another
/// flow's agent ran goes out with its own flow's addresses. One per agent,
/// or one per node shared by the node's relay and sinks where the driver
/// keeps node state ([`Net::node_shared`]): a receiver acknowledges one
/// BSYN at a time across all its flows (§3.5), not per flow.
#[derive(Debug)]
pub struct Receiver {
    cache: FrameCache,
    inbound: Inbound,
    ends: BTreeMap<u32, (Addr, Addr)>,
}

impl Receiver {
    fn new(cfg: &HopConfig) -> Receiver {
        Receiver {
            cache: FrameCache::new(CACHE_BYTES),
            inbound: Inbound::new(cfg.backpressure, cfg.ack_withholding, cfg.withhold_idle)
                .with_micro_blocks(cfg.micro_block),
            ends: BTreeMap::new(),
        }
    }
}

/// A Hop node: source, relay and sink of any flows that touch it.
pub struct HopAgent {
    cfg: HopConfig,
    rx: Receiver,
    /// While a callback runs on the node's shared receiver: the box it came
    /// in, holding this agent's own (idle) one until it goes back.
    parked: Option<Box<dyn Any>>,
    /// Bytes the receiver cached when the last callback ended (a shared
    /// receiver is not here between callbacks).
    cached: usize,
    flows: BTreeMap<u32, Flow>,
    /// The flow served last by the round-robin scheduler.
    rr: u32,
    timers: TimerTable,
    stats: TransportStats,
    pub counters: HopCounters,
    kind: Role,
    /// Source only: the destination, until the flow is made at start.
    peer: Option<Addr>,
    /// Most blocks any flow held here at once (backpressure's bound).
    pub peak_blocks: usize,
}

/// Cache bound at every node (ours; the paper keeps every block in memory).
pub const CACHE_BYTES: usize = 64 << 20;

impl HopAgent {
    fn new(cfg: HopConfig, kind: Role, peer: Option<Addr>) -> HopAgent {
        HopAgent {
            kind,
            rx: Receiver::new(&cfg),
            parked: None,
            cached: 0,
            flows: BTreeMap::new(),
            rr: 0,
            timers: TimerTable::new(),
            stats: TransportStats::default(),
            counters: HopCounters::default(),
            peer,
            peak_blocks: 0,
            cfg,
        }
    }

    /// The source of a flow to `dst`, sending what the application gives.
    pub fn source(cfg: HopConfig, dst: Addr) -> HopAgent {
        HopAgent::new(cfg, Role::Source, Some(dst))
    }

    /// A destination: makes a flow's state when its first block arrives.
    pub fn sink(cfg: HopConfig) -> HopAgent {
        HopAgent::new(cfg, Role::Sink, None)
    }

    /// A relay, for the nodes between the ends.
    pub fn relay(cfg: HopConfig) -> HopAgent {
        HopAgent::new(cfg, Role::Relay, None)
    }

    /// A cache of `bytes` instead of [`CACHE_BYTES`] (tests: a relay that
    /// evicts every block it no longer needs).
    #[cfg(test)]
    pub(crate) fn with_cache_bytes(mut self, bytes: usize) -> HopAgent {
        self.rx.cache = FrameCache::new(bytes);
        self
    }

    /// Bytes of frames cached here.
    pub fn cached_bytes(&self) -> usize {
        self.cached
    }

    /// Blocks of `flow_id` held here and not yet moved on.
    pub fn buffered_blocks(&self, flow_id: u32) -> usize {
        self.rx.inbound.buffered(flow_id)
    }

    /// Flows this node holds state for.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// At the start of a callback: a relay or sink takes the node's shared
    /// receiver, if the driver keeps one (the source receives nothing).
    fn attach(&mut self, net: &mut dyn Net) {
        if self.kind == Role::Source {
            return;
        }
        let Some(slot) = net.node_shared() else {
            return;
        };
        let Some(mut shared) = slot.take() else {
            return;
        };
        match shared.downcast_mut::<Receiver>() {
            Some(node) => {
                std::mem::swap(&mut self.rx, node);
                self.parked = Some(shared);
            }
            None => *slot = Some(shared),
        }
    }

    /// At the end of a callback: the node's receiver goes back to the
    /// driver (the first agent to end a callback gives its own).
    fn detach(&mut self, net: &mut dyn Net) {
        self.cached = self.rx.cache.bytes();
        if self.kind == Role::Source {
            return;
        }
        let Some(slot) = net.node_shared() else {
            return;
        };
        match self.parked.take() {
            Some(mut shared) => {
                if let Some(own) = shared.downcast_mut::<Receiver>() {
                    std::mem::swap(&mut self.rx, own);
                }
                *slot = Some(shared);
            }
            None if slot.is_none() => {
                let node = std::mem::replace(&mut self.rx, Receiver::new(&self.cfg));
                *slot = Some(Box::new(node));
            }
            None => {}
        }
    }

    /// The ends of `flow_id`: this agent's flow, or another agent's flow
    /// on the node's shared receiver.
    fn ends_of(&self, flow_id: u32) -> Option<(Addr, Addr)> {
        self.flows
            .get(&flow_id)
            .map(|f| (f.src, f.dst))
            .or_else(|| self.rx.ends.get(&flow_id).copied())
    }

    fn new_flow(role: Role, src: Addr, dst: Addr, cfg: &HopConfig) -> Flow {
        Flow {
            role,
            src,
            dst,
            senders: BTreeMap::new(),
            done: BTreeSet::new(),
            virtual_ttl: BTreeMap::new(),
            asking: BTreeMap::new(),
            next: 0,
            app_finished: false,
            e2e: if cfg.measured_first_timeout {
                EndToEnd::measured(cfg.initial_e2e_timeout)
            } else {
                EndToEnd::new(cfg.initial_e2e_timeout)
            },
            total: None,
            delivered: BTreeSet::new(),
            // Before the first sample, and at most, `bsyn_retry`; the
            // measured round trip shortens it down to a millisecond.
            hop_rtt: RttEstimator::new(cfg.bsyn_retry, Duration::from_millis(1), cfg.bsyn_retry),
            closed: false,
        }
    }

    fn opts(access_class: AccessClass, link_attempts: Option<u8>, burst: bool) -> TxOpts {
        TxOpts {
            network_header: NetworkHeader::Ipv4 { protocol: PROTOCOL },
            link_attempts,
            access_class,
            burst,
        }
    }

    /// Sends a control message along the flow, forward (toward `dst`) or
    /// back (toward `src`), with link ARQ.
    fn control(&mut self, net: &mut dyn Net, flow: (Addr, Addr), forward: bool, repr: HopRepr<'_>) {
        self.control_via(net, flow, forward, None, repr);
    }

    /// [`Self::control`], to the neighbour `via` only if given (a per-hop
    /// reply), else routed.
    fn control_via(
        &mut self,
        net: &mut dyn Net,
        flow: (Addr, Addr),
        forward: bool,
        via: Option<NodeId>,
        repr: HopRepr<'_>,
    ) {
        let class = match repr.message {
            HopMessage::Bsyn { block_len, .. } if self.cfg.is_micro(block_len as usize) => {
                AccessClass::Voice
            }
            _ => AccessClass::Background,
        };
        let mut buf = net.packet_buffer();
        repr.emit_to_vec(&mut buf);
        self.stats.control_packets += 1;
        self.stats.control_bytes += buf.len() as u64;
        let (from, to) = if forward { flow } else { (flow.1, flow.0) };
        let opts = Self::opts(class, None, false);
        match via {
            Some(n) => net.send_link_local(n, from, to, buf, opts),
            None => net.send_as(from, to, buf, opts),
        }
    }

    /// BACKs go back over the link the frames came by, to the neighbour
    /// that sent them (§3.1's exchange is between a link's two ends): the
    /// route toward the source may leave by another neighbour, which holds
    /// no state of the hop.
    fn send_answers(&mut self, net: &mut dyn Net, answers: Vec<Answer>) {
        for a in answers {
            let Some(ends) = self.ends_of(a.key.flow_id) else {
                continue;
            };
            let bitmap = a.back.to_back();
            let repr = HopRepr {
                flow_id: a.key.flow_id,
                block_num: a.key.block_num,
                ttl: self.cfg.ttl,
                message: HopMessage::Back {
                    frames: a.back.len() as u16,
                    bitmap: &bitmap,
                },
            };
            self.control_via(net, ends, false, Some(a.to), repr);
        }
    }

    fn simple(
        &mut self,
        net: &mut dyn Net,
        flow_id: u32,
        block_num: u32,
        msg: HopMessage<'_>,
        forward: bool,
    ) {
        let Some(f) = self.flows.get(&flow_id) else {
            return;
        };
        let ends = (f.src, f.dst);
        let repr = HopRepr {
            flow_id,
            block_num,
            ttl: self.cfg.ttl,
            message: msg,
        };
        self.control(net, ends, forward, repr);
    }

    /// The block flow `flow_id` sends on next, making its sender (and, at
    /// the source, cutting a block from the application) if needed.
    fn active(&mut self, net: &mut dyn Net, flow_id: u32) -> Option<u32> {
        let f = self.flows.get(&flow_id)?;
        if f.closed || f.role == Role::Sink {
            return None;
        }
        let inbound = &self.rx.inbound;
        let candidates: Vec<u32> = match f.role {
            Role::Source => (0..f.next).collect(),
            // A relay's blocks are whatever its cache holds of the flow.
            _ => self.rx.cache.blocks_of(flow_id),
        };
        let mut block = candidates
            .into_iter()
            .chain(f.virtual_ttl.keys().copied())
            .filter(|b| {
                let k = BlockKey {
                    flow_id,
                    block_num: *b,
                };
                !f.done.contains(b)
                    && self.rx.cache.contains(k)
                    && (f.role == Role::Source
                        || inbound.holds(k)
                        || (f.virtual_ttl.contains_key(b) && !self.awaits_room(f, k)))
            })
            .min();
        if block.is_none() && f.role == Role::Source && !f.app_finished {
            block = self.cut(net, flow_id);
        }
        let block = block?;
        let now = net.now();
        let f = self.flows.get_mut(&flow_id)?;
        if !f.senders.contains_key(&block) {
            let key = BlockKey {
                flow_id,
                block_num: block,
            };
            let shape = self.rx.cache.block(key).and_then(BlockBuf::shape);
            let kind = if f.virtual_ttl.contains_key(&block) {
                retransmission(self.cfg.virtual_retransmission)
            } else if let Some(s) = shape.filter(|s| self.cfg.is_micro(s.block_len as usize)) {
                if s.frames == 1 {
                    SendKind::Micro
                } else {
                    SendKind::MicroFrames
                }
            } else {
                SendKind::Plain
            };
            if f.role == Role::Source && !f.virtual_ttl.contains_key(&block) {
                f.e2e.began(block, now);
            }
            let sender = BlockSender::new(kind, self.cfg.frames_per_txop(), self.cfg.bsyn_retry);
            let sender = if f.asking.contains_key(&block) || self.rx.inbound.is_vouched(key) {
                sender.asking()
            } else {
                sender
            };
            let sender = if self.cfg.bsyn_first {
                sender.open_with_bsyn()
            } else {
                sender
            };
            f.senders.insert(block, sender);
        }
        Some(block)
    }

    /// A relay took `key` again for a virtual BSYN (it had moved the block
    /// on and evicted it) but has no room for it (§3.3: its BACK is
    /// withheld): none of it can arrive until a block it holds moves on, so
    /// it must not be the block the relay sends next, or the relay, full of
    /// blocks it could move on, waits for ever (§5.7 with H = 100).
    fn awaits_room(&self, f: &Flow, key: BlockKey) -> bool {
        f.role == Role::Relay
            && !self.rx.inbound.holds(key)
            && !self.rx.inbound.has_moved(key)
            && !self.rx.inbound.is_vouched(key)
            && !f.asking.contains_key(&key.block_num)
            && !self.rx.cache.block(key).is_some_and(BlockBuf::is_complete)
    }

    /// The source cuts its next block from what the application has now.
    fn cut(&mut self, net: &mut dyn Net, flow_id: u32) -> Option<u32> {
        let max = self.cfg.max_block;
        let cut = take_block(|buf| net.app_read(buf), max)?;
        let f = self.flows.get_mut(&flow_id)?;
        if cut.finished {
            f.app_finished = true;
        }
        if cut.data.is_empty() {
            return None;
        }
        // A micro-block of one frame rides whole on its BSYN; a bigger one
        // goes as frames (`SendKind::MicroFrames`).
        let frame_len = self.cfg.frame_len;
        let block = f.next;
        f.next += 1;
        self.rx.cache.put(
            BlockKey {
                flow_id,
                block_num: block,
            },
            BlockBuf::from_data(&cut.data, frame_len),
        );
        Some(block)
    }

    /// Round-robin over flows, one action (a TXOP or a BSYN) per flow per
    /// turn, flows sending micro-blocks first (§3.6), until nothing is left.
    fn pump(&mut self, net: &mut dyn Net) {
        let mut held_back = false;
        loop {
            let ids: Vec<u32> = self.flows.keys().copied().collect();
            if ids.is_empty() {
                break;
            }
            let start = ids.iter().position(|&id| id > self.rr).unwrap_or(0);
            let mut order: Vec<u32> = ids[start..].iter().chain(&ids[..start]).copied().collect();
            let micro = |s: &Self, id: u32| {
                s.flows[&id]
                    .senders
                    .values()
                    .any(|x| x.is_micro() && !x.is_done())
            };
            order.sort_by_key(|id| !micro(self, *id));
            let mut any = false;
            for id in order {
                if self.flows[&id].closed || self.flows[&id].role == Role::Sink {
                    continue;
                }
                if !self.has_room(net, id) {
                    held_back = true;
                    continue;
                }
                if self.step_flow(net, id) {
                    self.rr = id;
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        let now = net.now();
        if held_back {
            self.timers.set(T_PACE, now + self.cfg.pace_poll);
        }
        self.maybe_fin(net);
        self.rearm(now);
    }

    /// Pacing: a flow sends only while the driver's queue toward its next
    /// hop holds fewer than `pace_queue` packets (where the driver says;
    /// otherwise always), so that the round robin, not the interface
    /// queue, decides whose TXOP goes next.
    fn has_room(&self, net: &dyn Net, flow_id: u32) -> bool {
        let Some(f) = self.flows.get(&flow_id) else {
            return false;
        };
        let Some(limit) = self.cfg.pace_queue else {
            return true;
        };
        net.route(f.dst.node)
            .and_then(|r| net.link(r.next_hop))
            .is_none_or(|info| info.queue_len < limit)
    }

    /// One action of flow `flow_id`'s active sender; true if it sent.
    fn step_flow(&mut self, net: &mut dyn Net, flow_id: u32) -> bool {
        let Some(block) = self.active(net, flow_id) else {
            return false;
        };
        let key = BlockKey {
            flow_id,
            block_num: block,
        };
        if self.give_up_asking(net, key) {
            return true;
        }
        let now = net.now();
        let timed = self.next_link_timed(net, flow_id);
        let queue_ahead = self.queue_ahead(net, flow_id);
        let empty = BlockBuf::new();
        let local = self.rx.cache.block(key).unwrap_or(&empty);
        let f = self.flows.get_mut(&flow_id).expect("active flow");
        let ends = (f.src, f.dst);
        let ttl = f.virtual_ttl.get(&block).copied().unwrap_or(self.cfg.ttl);
        // The measured round trip counts from when a BSYN left the
        // interface queue, which only a driver that reports the link's
        // queue and rate lets the sender know (`wait_for_queue`);
        // elsewhere a BSYN may sit behind a whole unpaced round, and the
        // fixed `bsyn_retry` with its doubling stays.
        let retry = if timed {
            f.hop_rtt.rto()
        } else {
            self.cfg.bsyn_retry
        };
        let Some(sender) = f.senders.get_mut(&block) else {
            return false;
        };
        sender.set_retry(retry);
        let micro_sender = sender.is_micro();
        if sender.retry_due(now) && !micro_sender {
            if let Some(wait) = queue_ahead {
                // The BSYN out may still be queued: no duplicate behind it
                // (each draws a BACK); look again once the queue has had
                // time to drain. Not for a micro-block's BSYN: it goes in
                // the voice category, ahead of the data this queue holds.
                sender.hold_retry(now + wait);
                return false;
            }
        }
        let later_round = sender.is_repairing();
        let micro = sender.is_micro();
        let Some(action) = sender.poll_transmit(now, local) else {
            return false;
        };
        let shape = local.shape();
        match action {
            SendAction::Frames(frames) => {
                let n = frames.len();
                let mut bufs = Vec::with_capacity(n);
                for (j, i) in frames.iter().enumerate() {
                    let payload = local.frame(*i as usize).unwrap_or_default();
                    let repr = HopRepr {
                        flow_id,
                        block_num: block,
                        ttl: self.cfg.ttl,
                        message: HopMessage::Data {
                            packet_num: *i,
                            payload,
                        },
                    };
                    let mut buf = Vec::with_capacity(repr.buffer_len());
                    repr.emit_to_vec(&mut buf);
                    if later_round {
                        self.stats.retransmitted_packets += 1;
                        self.stats.retransmitted_bytes += buf.len() as u64;
                    } else {
                        self.stats.data_packets += 1;
                        self.stats.data_bytes += buf.len() as u64;
                        self.stats.payload_bytes += payload.len() as u64;
                    }
                    bufs.push((buf, j + 1 < n));
                }
                for (buf, burst) in bufs {
                    // Data: one link attempt in the background category
                    // (§3.1, §3.6); a micro-block's frames: link ARQ in the
                    // voice category, as its BSYN (§3.6).
                    let opts = if micro {
                        Self::opts(AccessClass::Voice, None, burst)
                    } else {
                        Self::opts(AccessClass::Background, Some(1), burst)
                    };
                    net.send_as(ends.0, ends.1, buf, opts);
                }
            }
            SendAction::Bsyn { micro } => {
                let Some(shape) = shape else { return false };
                let data = if micro { local.assemble() } else { None }.unwrap_or_default();
                let repr = HopRepr {
                    flow_id,
                    block_num: block,
                    ttl: self.cfg.ttl,
                    message: HopMessage::Bsyn {
                        frames: shape.frames,
                        block_len: shape.block_len,
                        micro: &data,
                    },
                };
                self.control(net, ends, true, repr);
                self.wait_for_queue(net, flow_id, block);
            }
            SendAction::VirtualBsyn => {
                let Some(shape) = shape else { return false };
                self.counters.virtual_bsyns += 1;
                let repr = HopRepr {
                    flow_id,
                    block_num: block,
                    ttl,
                    message: HopMessage::VirtualBsyn {
                        frames: shape.frames,
                        block_len: shape.block_len,
                    },
                };
                self.control(net, ends, true, repr);
                self.wait_for_queue(net, flow_id, block);
            }
        }
        true
    }

    /// The driver reports the queue and rate of the link toward the flow's
    /// next hop, so a BSYN's departure (and with it the hop's round trip)
    /// can be timed.
    fn next_link_timed(&self, net: &dyn Net, flow_id: u32) -> bool {
        self.flows.get(&flow_id).is_some_and(|f| {
            net.route(f.dst.node)
                .and_then(|r| net.link(r.next_hop))
                .is_some_and(|info| info.rate_bps > 0)
        })
    }

    /// How long the packets queued toward the flow's next hop take to
    /// leave, if the driver reports a non-empty queue (at least
    /// `pace_poll`: a queue held up by a busy medium drains slower than its
    /// rate says).
    fn queue_ahead(&self, net: &dyn Net, flow_id: u32) -> Option<Duration> {
        let f = self.flows.get(&flow_id)?;
        let info = net.route(f.dst.node).and_then(|r| net.link(r.next_hop))?;
        if info.queue_len == 0 || info.rate_bps == 0 {
            return None;
        }
        let bits = (info.queue_len * (self.cfg.frame_len + 40) * 8) as u64;
        Some(Duration::transmission(bits, info.rate_bps).max(self.cfg.pace_poll))
    }

    /// A BSYN leaves after the frames queued ahead of it: where the driver
    /// knows the interface queue and the link rate, the BSYN's retry waits
    /// that much longer.
    fn wait_for_queue(&mut self, net: &mut dyn Net, flow_id: u32, block: u32) {
        let Some(f) = self.flows.get_mut(&flow_id) else {
            return;
        };
        let Some(info) = net.route(f.dst.node).and_then(|r| net.link(r.next_hop)) else {
            return;
        };
        if info.rate_bps == 0 {
            return;
        }
        let bits = (info.queue_len * (self.cfg.frame_len + 40) * 8) as u64;
        if let Some(s) = f.senders.get_mut(&block) {
            s.extend_retry(crate::time::Duration::transmission(bits, info.rate_bps));
        }
    }

    /// The source sends FIN once the application has finished and every
    /// block is acknowledged end to end (the source keeps a block until
    /// then).
    fn maybe_fin(&mut self, net: &mut dyn Net) {
        let now = net.now();
        let cache = &self.rx.cache;
        let due: Vec<(u32, u32)> = self
            .flows
            .iter()
            .filter(|(id, f)| {
                f.role == Role::Source
                    && f.app_finished
                    && !f.closed
                    && cache.blocks_of(**id).is_empty()
            })
            .map(|(id, f)| (*id, f.next))
            .collect();
        for (id, total) in due {
            if self.timers.get(T_FIN).is_some_and(|t| t > now) {
                continue;
            }
            self.simple(net, id, total, HopMessage::Fin, true);
            // A FIN crosses the path as control: it waits the path's part of
            // a block round trip, not the time a whole block takes to leave.
            let wait = self.flows[&id]
                .e2e
                .beyond_first_hop()
                .max(self.cfg.bsyn_retry);
            self.timers.set(T_FIN, now + wait);
        }
    }

    /// Arms the timers after a pump. A sender's retry already due belongs
    /// to a block that is not its flow's active one (the pump would have
    /// sent it): it waits for its turn, not for a timer.
    fn rearm(&mut self, now: Time) {
        let send = self
            .flows
            .values()
            .flat_map(|f| f.senders.values())
            .filter_map(BlockSender::poll_timeout)
            .filter(|t| *t > now)
            .min();
        self.timers.set(T_SEND, send.unwrap_or(Time::NEVER));
        let e2e = self
            .flows
            .values()
            .filter(|f| f.role == Role::Source && !f.closed)
            .filter_map(|f| f.e2e.poll_timeout())
            .min();
        self.timers.set(T_E2E, e2e.unwrap_or(Time::NEVER));
        let open_source = self
            .flows
            .values()
            .any(|f| f.role == Role::Source && !f.closed && f.app_finished);
        if !open_source {
            self.timers.cancel(T_FIN);
        }
        for id in self.flows.keys() {
            self.peak_blocks = self.peak_blocks.max(self.rx.inbound.buffered(*id));
        }
    }

    /// A block became whole here.
    fn completed(&mut self, net: &mut dyn Net, key: BlockKey) {
        self.counters.blocks_completed += 1;
        let Some(f) = self.flows.get(&key.flow_id) else {
            return;
        };
        if f.role != Role::Sink {
            return;
        }
        self.deliver(net, key.flow_id);
    }

    /// The sink hands whole blocks to the application in order, frees
    /// their room, and acknowledges each end to end.
    fn deliver(&mut self, net: &mut dyn Net, flow_id: u32) {
        loop {
            let Some(f) = self.flows.get(&flow_id) else {
                return;
            };
            let key = BlockKey {
                flow_id,
                block_num: f.next,
            };
            let Some(bytes) = self.rx.cache.block(key).and_then(BlockBuf::assemble) else {
                break;
            };
            net.deliver(&bytes);
            let answers = self.rx.inbound.moved_on(&self.rx.cache, key);
            self.rx.cache.remove(key);
            self.counters.blocks_moved_on += 1;
            self.flows.get_mut(&flow_id).expect("flow").next += 1;
            self.send_answers(net, answers);
            self.counters.e2e_backs += 1;
            self.simple(net, flow_id, key.block_num, HopMessage::EndToEndBack, false);
        }
        self.finish_sink(net, flow_id);
    }

    fn finish_sink(&mut self, net: &mut dyn Net, flow_id: u32) {
        let Some(f) = self.flows.get_mut(&flow_id) else {
            return;
        };
        if f.total.is_some_and(|t| f.next >= t) {
            if !f.closed {
                f.closed = true;
                net.deliver_finished();
                net.event(TransportEvent::Closed);
            }
            let total = f.next;
            self.simple(net, flow_id, total, HopMessage::FinAck, false);
        }
    }

    /// A message of the flow from `src` to `dst` reached this node from
    /// neighbour `prev`. Returns whether it was end to end and passes on.
    fn handle(
        &mut self,
        net: &mut dyn Net,
        src: Addr,
        dst: Addr,
        prev: NodeId,
        repr: HopRepr<'_>,
    ) -> bool {
        let me = net.local().node;
        let now = net.now();
        let flow_id = repr.flow_id;
        let key = BlockKey {
            flow_id,
            block_num: repr.block_num,
        };
        self.stats.packets_received += 1;
        let forward_msg = matches!(
            repr.message,
            HopMessage::Data { .. } | HopMessage::Bsyn { .. } | HopMessage::VirtualBsyn { .. }
        );
        if forward_msg && !self.flows.contains_key(&flow_id) {
            // No handshake (§4.2): the first block sets the flow up.
            let role = if dst.node == me {
                Role::Sink
            } else {
                Role::Relay
            };
            self.flows
                .insert(flow_id, Self::new_flow(role, src, dst, &self.cfg));
            self.rx.ends.insert(flow_id, (src, dst));
        }
        let role = self.flows.get(&flow_id).map(|f| f.role);
        match repr.message {
            HopMessage::Data {
                packet_num,
                payload,
            } => {
                if role == Some(Role::Sink) && repr.block_num < self.flows[&flow_id].next {
                    self.stats.unexpected_dropped += 1;
                    return false;
                }
                let out = self.rx.inbound.on_data(
                    &mut self.rx.cache,
                    prev,
                    key,
                    packet_num,
                    payload,
                    now,
                );
                self.stats.bytes_received += payload.len() as u64;
                self.send_answers(net, out.answers);
                if out.completed {
                    self.completed(net, key);
                }
                false
            }
            HopMessage::Bsyn {
                frames,
                block_len,
                micro,
            } => {
                self.on_bsyn(net, prev, key, Shape { frames, block_len }, micro, None);
                false
            }
            HopMessage::VirtualBsyn { frames, block_len } => {
                let shape = Shape { frames, block_len };
                self.on_bsyn(net, prev, key, shape, &[], Some(repr.ttl));
                false
            }
            HopMessage::Back { frames, bitmap } => {
                let back = FrameBitmap::from_back(frames, bitmap);
                let Some(f) = self.flows.get_mut(&flow_id) else {
                    self.stats.unexpected_dropped += 1;
                    return false;
                };
                let role = f.role;
                let Some(s) = f.senders.get_mut(&key.block_num) else {
                    return false;
                };
                if let Some(rtt) = s.round_trip(now) {
                    // Used only where the BSYN's departure is known
                    // (`next_link_timed`); harmless elsewhere.
                    f.hop_rtt.sample(rtt);
                }
                let asked = f.asking.remove(&key.block_num);
                let next_hop_holds = asked.map(|a| (a, back.clone()));
                if s.on_back(back) {
                    f.senders.remove(&key.block_num);
                    f.done.insert(key.block_num);
                    f.virtual_ttl.remove(&key.block_num);
                    if role == Role::Source {
                        // The end-to-end clock runs from when the block has
                        // left the source: before that, per-hop transfer
                        // is in charge of it.
                        f.e2e.sent(key.block_num, now);
                    }
                    if role == Role::Relay {
                        self.counters.blocks_moved_on += 1;
                        let answers = self.rx.inbound.moved_on(&self.rx.cache, key);
                        self.send_answers(net, answers);
                    }
                }
                if let Some(((to, shape), holds)) = next_hop_holds {
                    self.answer_asked(net, to, key, shape, holds);
                }
                false
            }
            HopMessage::EndToEndBack => {
                if let Some(f) = self.flows.get_mut(&flow_id) {
                    if f.role == Role::Source {
                        if f.e2e.acked(key.block_num, now) {
                            self.stats.rtt.record(f.e2e.last_rtt.unwrap_or_default());
                        }
                        f.senders.remove(&key.block_num);
                        f.virtual_ttl.remove(&key.block_num);
                        f.done.insert(key.block_num);
                        self.rx.cache.remove(key);
                    } else if f.role == Role::Relay {
                        // Delivered: the relay is done with the block, even
                        // a virtual retransmission of it still under way.
                        f.delivered.insert(key.block_num);
                        f.done.insert(key.block_num);
                        f.senders.remove(&key.block_num);
                        f.virtual_ttl.remove(&key.block_num);
                        f.asking.remove(&key.block_num);
                        self.rx.cache.remove(key);
                        if self.rx.inbound.holds(key) {
                            let answers = self.rx.inbound.moved_on(&self.rx.cache, key);
                            self.send_answers(net, answers);
                        }
                    }
                }
                true
            }
            HopMessage::Fin => {
                if dst.node == me {
                    if !self.flows.contains_key(&flow_id) {
                        self.flows
                            .insert(flow_id, Self::new_flow(Role::Sink, src, dst, &self.cfg));
                        self.rx.ends.insert(flow_id, (src, dst));
                    }
                    if let Some(f) = self.flows.get_mut(&flow_id) {
                        f.total = Some(repr.block_num);
                    }
                    self.finish_sink(net, flow_id);
                }
                true
            }
            HopMessage::FinAck => {
                match self.flows.get(&flow_id).map(|f| f.role) {
                    Some(Role::Source) => {
                        let f = self.flows.get_mut(&flow_id).expect("flow");
                        if !f.closed {
                            f.closed = true;
                            net.event(TransportEvent::Closed);
                        }
                        self.timers.cancel(T_FIN);
                    }
                    Some(Role::Relay) => self.forget(flow_id),
                    _ => {}
                }
                true
            }
        }
    }

    fn on_bsyn(
        &mut self,
        net: &mut dyn Net,
        prev: NodeId,
        key: BlockKey,
        shape: Shape,
        micro: &[u8],
        virtual_ttl: Option<u8>,
    ) {
        let now = net.now();
        let Some(f) = self.flows.get(&key.flow_id) else {
            return;
        };
        let at_sink = f.role == Role::Sink;
        let full = || FrameBitmap::full(shape.frames as usize);
        // The destination has it (a relay saw the end-to-end BACK pass) or,
        // at the sink, delivered it already: nothing to move, and the BACK
        // or end-to-end BACK was lost upstream. Answer for the destination.
        if f.delivered.contains(&key.block_num) || (at_sink && key.block_num < f.next) {
            self.send_answers(
                net,
                vec![Answer {
                    to: prev,
                    key,
                    back: full(),
                }],
            );
            if virtual_ttl.is_some() {
                self.counters.e2e_backs += 1;
                self.simple(
                    net,
                    key.flow_id,
                    key.block_num,
                    HopMessage::EndToEndBack,
                    false,
                );
            }
            return;
        }
        let step = virtual_ttl.map(|ttl| step(ttl, at_sink));
        if step == Some(VirtualStep::Expired) {
            self.counters.ttl_expired += 1;
            self.send_answers(
                net,
                vec![Answer {
                    to: prev,
                    key,
                    back: full(),
                }],
            );
            return;
        }
        if let Some(VirtualStep::Forward { ttl }) = step {
            if self.ask_next_hop(net, prev, key, shape, ttl) {
                return;
            }
        }
        let out = self.rx.inbound.on_bsyn(
            &mut self.rx.cache,
            prev,
            key,
            shape,
            micro,
            virtual_ttl.is_some(),
            now,
        );
        if let Some(VirtualStep::Forward { ttl }) = step {
            let f = self.flows.get_mut(&key.flow_id).expect("flow");
            if !f.virtual_ttl.contains_key(&key.block_num) {
                f.senders.remove(&key.block_num);
                f.done.remove(&key.block_num);
                f.virtual_ttl.insert(key.block_num, ttl);
            }
        }
        self.send_answers(net, out.answers);
        if out.completed {
            self.completed(net, key);
        }
    }

    /// A virtual BSYN from `prev` reached a relay that moved the block on
    /// and no longer holds it whole (its cache evicted it, §5.7's H = 100):
    /// instead of taking the whole block again, the relay sends the virtual
    /// BSYN on at once and answers `prev` when its next hop has, for what
    /// the two hold together (`answer_asked`), so only frames the next hop
    /// lacks move (§3.2). True if the virtual BSYN is handled so, or is a
    /// repeat of one being asked about.
    fn ask_next_hop(
        &mut self,
        net: &dyn Net,
        prev: NodeId,
        key: BlockKey,
        shape: Shape,
        ttl: u8,
    ) -> bool {
        let next_hop_up = self.next_hop_up(net, key.flow_id);
        let Some(f) = self.flows.get_mut(&key.flow_id) else {
            return false;
        };
        if f.role != Role::Relay || !self.cfg.ask_next_hop {
            return false;
        }
        if let Some(asked) = f.asking.get_mut(&key.block_num) {
            asked.0 = prev;
            return true;
        }
        let whole = self.rx.cache.block(key).is_some_and(BlockBuf::is_complete);
        if whole
            || !next_hop_up
            || !self.rx.inbound.has_moved(key)
            || self.rx.inbound.is_vouched(key)
        {
            return false;
        }
        if self.rx.cache.set_shape(key, shape).is_err() {
            return false;
        }
        f.asking.insert(key.block_num, (prev, shape));
        self.counters.asks += 1;
        f.senders.remove(&key.block_num);
        f.done.remove(&key.block_num);
        f.virtual_ttl.insert(key.block_num, ttl);
        true
    }

    /// The flow has a next hop here that the driver does not report down
    /// (a relay asks only a next hop that may answer: one it knows is down
    /// would leave every node upstream waiting on it).
    fn next_hop_up(&self, net: &dyn Net, flow_id: u32) -> bool {
        let Some(f) = self.flows.get(&flow_id) else {
            return false;
        };
        net.route(f.dst.node)
            .is_some_and(|r| net.link(r.next_hop).is_none_or(|l| l.up))
    }

    /// The next hop answered a virtual BSYN this relay sent on before
    /// answering `to` ([`Self::ask_next_hop`]): `to` is told what the next
    /// hop and this node hold together, and sends only the rest, which
    /// this node passes on without holding the block again. A next hop
    /// that holds none of it leaves nothing to answer for: the block is
    /// taken again as any other, under backpressure.
    fn answer_asked(
        &mut self,
        net: &mut dyn Net,
        to: NodeId,
        key: BlockKey,
        shape: Shape,
        next_hop_holds: FrameBitmap,
    ) {
        if next_hop_holds.count() == 0 {
            self.take_block_again(net, to, key, shape);
            return;
        }
        let back = if next_hop_holds.is_full() {
            FrameBitmap::full(shape.frames as usize)
        } else {
            self.rx.inbound.vouch(key, next_hop_holds);
            self.rx
                .inbound
                .answer_for(&self.rx.cache, key, shape.frames)
        };
        self.send_answers(net, vec![Answer { to, key, back }]);
    }

    /// The fallback for a next hop that is down or gone: once the driver
    /// reports it down, or after `ASK_TRIES` unanswered virtual BSYNs for a
    /// block it asked about, the relay takes
    /// the block again as any other, answering the neighbour that asked
    /// it with what its cache holds, so the block moves up to this node and
    /// waits here for a next hop (§3.4's progress hop by hop). True if it
    /// gave up now.
    fn give_up_asking(&mut self, net: &mut dyn Net, key: BlockKey) -> bool {
        let now = net.now();
        let next_hop_up = self.next_hop_up(net, key.flow_id);
        let Some(f) = self.flows.get_mut(&key.flow_id) else {
            return false;
        };
        let silent = f.senders.get(&key.block_num).is_some_and(|s| {
            !s.is_answered() && (!next_hop_up || (s.retry_due(now) && s.unanswered() >= ASK_TRIES))
        });
        if !silent {
            return false;
        }
        let Some((prev, shape)) = f.asking.remove(&key.block_num) else {
            return false;
        };
        self.counters.asks_given_up += 1;
        self.take_block_again(net, prev, key, shape);
        true
    }

    /// The relay stops asking about `key` and takes the block again as any
    /// other: `prev`'s virtual BSYN is answered (or withheld) as the
    /// receiving side would answer a block it never had.
    fn take_block_again(&mut self, net: &mut dyn Net, prev: NodeId, key: BlockKey, shape: Shape) {
        if let Some(f) = self.flows.get_mut(&key.flow_id) {
            // The next sender made for the block waits for it whole here.
            f.senders.remove(&key.block_num);
        }
        self.rx.inbound.take_again(key);
        let out =
            self.rx
                .inbound
                .on_bsyn(&mut self.rx.cache, prev, key, shape, &[], true, net.now());
        self.send_answers(net, out.answers);
        if out.completed {
            self.completed(net, key);
        }
    }

    fn forget(&mut self, flow_id: u32) {
        if self.flows.remove(&flow_id).is_some() {
            self.counters.flows_forgotten += 1;
        }
        self.rx.cache.remove_flow(flow_id);
        self.rx.inbound.forget_flow(flow_id);
        self.rx.ends.remove(&flow_id);
    }

    fn after(&mut self, net: &mut dyn Net) {
        let flows = &self.flows;
        let inbound = &self.rx.inbound;
        self.rx.cache.evict(|k| {
            inbound.holds(k)
                || flows.get(&k.flow_id).is_some_and(|f| {
                    f.role == Role::Source || f.virtual_ttl.contains_key(&k.block_num)
                })
        });
        self.pump(net);
    }
}

impl HopAgent {
    fn packet_in(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        let Ok(repr) = HopPacket::new_checked(packet).and_then(|p| HopRepr::parse(&p)) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        let local = net.local();
        let prev = net.previous_hop().unwrap_or(from.node);
        // Toward this node: the message's ends are (from, local) if it
        // travels forward, (local, from) if back.
        let forward = matches!(
            repr.message,
            HopMessage::Data { .. }
                | HopMessage::Bsyn { .. }
                | HopMessage::VirtualBsyn { .. }
                | HopMessage::Fin
        );
        let (src, dst) = if forward {
            (from, local)
        } else {
            (local, from)
        };
        self.handle(net, src, dst, prev, repr);
        self.after(net);
    }

    fn transit_in(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
        let packet = t.packet.clone();
        let Ok(repr) = HopPacket::new_checked(&packet[..]).and_then(|p| HopRepr::parse(&p)) else {
            self.stats.malformed_dropped += 1;
            return TransitVerdict::Drop;
        };
        let forward = matches!(
            repr.message,
            HopMessage::Data { .. }
                | HopMessage::Bsyn { .. }
                | HopMessage::VirtualBsyn { .. }
                | HopMessage::Fin
        );
        let (src, dst) = if forward {
            (t.src, t.dst)
        } else {
            (t.dst, t.src)
        };
        let end_to_end = self.handle(net, src, dst, t.previous_hop, repr);
        self.after(net);
        if end_to_end {
            TransitVerdict::Forward
        } else {
            TransitVerdict::Consumed
        }
    }

    fn overheard_in(&mut self, packet: &[u8]) {
        let Ok(repr) = HopPacket::new_checked(packet).and_then(|p| HopRepr::parse(&p)) else {
            return;
        };
        let key = BlockKey {
            flow_id: repr.flow_id,
            block_num: repr.block_num,
        };
        match repr.message {
            HopMessage::Data {
                packet_num,
                payload,
            } => {
                self.rx.cache.insert_frame(key, packet_num, payload, true);
            }
            HopMessage::Bsyn {
                frames, block_len, ..
            } => {
                let _ = self.rx.cache.set_shape(key, Shape { frames, block_len });
            }
            _ => {}
        }
    }

    fn timeout_in(&mut self, net: &mut dyn Net) {
        let now = net.now();
        while let Some(id) = self.timers.pop_expired(now) {
            match id {
                T_E2E => {
                    let ttl = self.cfg.ttl;
                    for f in self.flows.values_mut().filter(|f| f.role == Role::Source) {
                        for block in f.e2e.expired(now) {
                            self.stats.timeouts += 1;
                            f.senders.remove(&block);
                            f.done.remove(&block);
                            // Virtual or not, the retransmission travels
                            // under virtual BSYNs (`retransmission`): a plain
                            // BSYN would stop at the first relay that has
                            // moved the block on, and a lost end-to-end
                            // BACK would never be sent again.
                            f.virtual_ttl.insert(block, ttl);
                        }
                    }
                }
                T_FIN => {}
                _ => {}
            }
        }
        self.after(net);
    }
}

impl Agent for HopAgent {
    fn protocol(&self) -> &'static str {
        "hop"
    }

    fn start(&mut self, net: &mut dyn Net) {
        if let Some(dst) = self.peer.take() {
            let flow_id = rand_core::RngCore::next_u32(net.rng());
            let flow = Self::new_flow(Role::Source, net.local(), dst, &self.cfg);
            self.flows.insert(flow_id, flow);
            self.after(net);
        }
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        self.attach(net);
        self.packet_in(net, from, packet);
        self.detach(net);
    }

    fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
        self.attach(net);
        let verdict = self.transit_in(net, t);
        self.detach(net);
        verdict
    }

    fn hears_overheard(&self) -> bool {
        true
    }

    fn on_overheard(&mut self, net: &mut dyn Net, _src: Addr, _dst: Addr, packet: &[u8]) {
        self.attach(net);
        self.overheard_in(packet);
        self.detach(net);
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        self.attach(net);
        self.timeout_in(net);
        self.detach(net);
    }

    fn on_app_ready(&mut self, net: &mut dyn Net) {
        self.attach(net);
        self.after(net);
        self.detach(net);
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "relay_buffer" | "cached_bytes" => Some(self.cached as f64),
            "hop_flows" => Some(self.flows.len() as f64),
            "hop_peak_blocks" => Some(self.peak_blocks as f64),
            "hop_virtual_bsyns" => Some(self.counters.virtual_bsyns as f64),
            "hop_e2e_backs" => Some(self.counters.e2e_backs as f64),
            "hop_blocks_moved_on" => Some(self.counters.blocks_moved_on as f64),
            "hop_blocks_evicted" => Some(self.rx.cache.counters.blocks_evicted as f64),
            "hop_asks" => Some(self.counters.asks as f64),
            "hop_asks_given_up" => Some(self.counters.asks_given_up as f64),
            _ => None,
        }
    }

    /// A source once its flow is closed; a sink once it has had a flow and
    /// every flow is closed; a relay once it holds no flow.
    fn is_closed(&self) -> bool {
        let idle = self.timers.next().is_none();
        match self.kind {
            Role::Source => self.peer.is_none() && self.flows.values().all(|f| f.closed) && idle,
            Role::Sink => !self.flows.is_empty() && self.flows.values().all(|f| f.closed),
            Role::Relay => self.flows.is_empty() && idle,
        }
    }
}
