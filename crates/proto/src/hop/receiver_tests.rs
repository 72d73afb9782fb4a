//! Ack withholding across flows at a shared destination (§3.5): the sinks
//! of two flows on one node, each its own agent, share the node's receiving
//! side through [`Net::node_shared`], so the node answers one BSYN at a
//! time across both flows, as one receiver does.

use std::any::Any;

use joulenet_wire::hop::{HopMessage, HopPacket, HopRepr};

use super::agent::HopAgent;
use super::HopConfig;
use crate::net::{
    Addr, Agent, AppRead, LinkInfo, Net, NodeId, RadioControl, RadioMode, Route, TransportEvent,
    TxOpts,
};
use crate::time::Time;

struct Radio;
impl RadioControl for Radio {
    fn set_mode(&mut self, _: RadioMode) {}
    fn mode(&self) -> RadioMode {
        RadioMode::Awake
    }
}

/// The receiving node (node 9): what its agents sent, and its shared slot
/// if `shared`.
struct Node {
    local: Addr,
    prev: Option<NodeId>,
    sent: Vec<(Addr, Addr, Vec<u8>)>,
    delivered: usize,
    slot: Option<Option<Box<dyn Any>>>,
    rng: rand_pcg::Pcg64Mcg,
    radio: Radio,
}

impl Net for Node {
    fn now(&self) -> Time {
        Time::ZERO
    }
    fn local(&self) -> Addr {
        self.local
    }
    fn send(&mut self, to: Addr, packet: Vec<u8>, _: TxOpts) {
        self.sent.push((self.local, to, packet));
    }
    fn send_as(&mut self, from: Addr, to: Addr, packet: Vec<u8>, _: TxOpts) {
        self.sent.push((from, to, packet));
    }
    fn previous_hop(&self) -> Option<NodeId> {
        self.prev
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        &mut self.rng
    }
    fn app_read(&mut self, _: &mut [u8]) -> AppRead {
        AppRead::Finished
    }
    fn deliver(&mut self, data: &[u8]) {
        self.delivered += data.len();
    }
    fn deliver_finished(&mut self) {}
    fn event(&mut self, _: TransportEvent) {}
    fn route(&self, dst: NodeId) -> Option<Route> {
        Some(Route {
            next_hop: dst,
            hops: 1,
        })
    }
    fn link(&self, _: NodeId) -> Option<LinkInfo> {
        None
    }
    fn radio(&mut self) -> &mut dyn RadioControl {
        &mut self.radio
    }
    fn node_shared(&mut self) -> Option<&mut Option<Box<dyn Any>>> {
        self.slot.as_mut()
    }
}

const FRAME: usize = 1400;
/// Flow `i` comes from node `i`, hidden from the other sender.
const SENDERS: [(u32, u32); 3] = [(1, 0xA), (2, 0xB), (3, 0xC)];

fn node(shared: bool) -> Node {
    Node {
        local: Addr::new(9, 0),
        prev: None,
        sent: Vec::new(),
        delivered: 0,
        slot: shared.then_some(None),
        rng: rand::SeedableRng::seed_from_u64(1),
        radio: Radio,
    }
}

fn emit(flow_id: u32, message: HopMessage<'_>) -> Vec<u8> {
    let repr = HopRepr {
        flow_id,
        block_num: 0,
        ttl: 50,
        message,
    };
    let mut buf = Vec::new();
    repr.emit_to_vec(&mut buf);
    buf
}

fn bsyn(flow_id: u32, frames: u16) -> Vec<u8> {
    emit(
        flow_id,
        HopMessage::Bsyn {
            frames,
            block_len: u32::from(frames) * FRAME as u32,
            micro: &[],
        },
    )
}

/// From sender `s` (its node and flow) to the sink agent `sink`.
fn from(n: &mut Node, sink: &mut HopAgent, s: usize, packet: &[u8]) {
    let (node_id, _) = SENDERS[s];
    n.prev = Some(node_id);
    sink.on_packet(n, Addr::new(node_id, 5), packet);
}

/// The flows whose BACKs the node sent, in order.
fn backs(n: &mut Node) -> Vec<u32> {
    n.sent
        .drain(..)
        .filter_map(|(_, _, p)| {
            let p = HopPacket::new_checked(&p[..]).ok()?;
            let r = HopRepr::parse(&p).ok()?;
            matches!(r.message, HopMessage::Back { .. }).then_some(r.flow_id)
        })
        .collect()
}

fn cfg() -> HopConfig {
    HopConfig {
        frame_len: FRAME,
        ..HopConfig::default()
    }
}

/// Sends block 0 of flow `s` whole (frames 0..frames) to `sink`.
fn data(n: &mut Node, sink: &mut HopAgent, s: usize, frames: u16) {
    let flow = SENDERS[s].1;
    let payload = [7u8; FRAME];
    for i in 0..frames {
        let p = emit(
            flow,
            HopMessage::Data {
                packet_num: i,
                payload: &payload,
            },
        );
        from(n, sink, s, &p);
    }
}

#[test]
fn two_hidden_senders_to_one_node_are_answered_in_turn() {
    let mut n = node(true);
    let mut a = HopAgent::sink(cfg());
    let mut b = HopAgent::sink(cfg());
    // Both senders ask at once (they cannot hear each other).
    from(&mut n, &mut a, 0, &bsyn(0xA, 20));
    from(&mut n, &mut b, 1, &bsyn(0xB, 20));
    assert_eq!(
        backs(&mut n),
        vec![0xA],
        "one BSYN answered, the other withheld"
    );
    // The second sender repeats its BSYN: still not its turn.
    from(&mut n, &mut b, 1, &bsyn(0xB, 20));
    assert_eq!(backs(&mut n), Vec::<u32>::new());
    // Flow A's block is whole: its agent passes the turn, and the BACK
    // that goes out with it is flow B's, sent as B's destination.
    data(&mut n, &mut a, 0, 20);
    assert_eq!(n.delivered, 20 * FRAME);
    let sent: Vec<(Addr, Addr)> = n.sent.iter().map(|(f, t, _)| (*f, *t)).collect();
    assert_eq!(backs(&mut n), vec![0xB]);
    assert!(
        sent.contains(&(Addr::new(9, 0), Addr::new(2, 5))),
        "B's BACK goes from B's destination to B's source: {sent:?}"
    );
    // Now flow A's next BSYN waits for B.
    let next = HopRepr {
        flow_id: 0xA,
        block_num: 1,
        ttl: 50,
        message: HopMessage::Bsyn {
            frames: 20,
            block_len: 20 * FRAME as u32,
            micro: &[],
        },
    };
    let mut buf = Vec::new();
    next.emit_to_vec(&mut buf);
    from(&mut n, &mut a, 0, &buf);
    assert_eq!(backs(&mut n), Vec::<u32>::new(), "A waits for B's block");
}

#[test]
fn the_smallest_waiting_block_gets_the_turn_first() {
    let mut n = node(true);
    let mut sinks: Vec<HopAgent> = (0..3).map(|_| HopAgent::sink(cfg())).collect();
    from(&mut n, &mut sinks[0], 0, &bsyn(0xA, 40));
    // A 700-frame block asks before a 15-frame one (above the micro-block
    // threshold, so it waits for its turn too).
    from(&mut n, &mut sinks[1], 1, &bsyn(0xB, 700));
    from(&mut n, &mut sinks[2], 2, &bsyn(0xC, 15));
    assert_eq!(backs(&mut n), vec![0xA]);
    data(&mut n, &mut sinks[0], 0, 40);
    assert_eq!(
        backs(&mut n),
        vec![0xC],
        "size-aware: the small block first"
    );
    data(&mut n, &mut sinks[2], 2, 15);
    assert_eq!(backs(&mut n), vec![0xB]);
}

#[test]
fn without_a_shared_slot_each_sink_answers_its_own_flow() {
    // A driver without node state (the runtime's ends): each sink is its
    // own receiver, and both senders are answered at once.
    let mut n = node(false);
    let mut a = HopAgent::sink(cfg());
    let mut b = HopAgent::sink(cfg());
    from(&mut n, &mut a, 0, &bsyn(0xA, 20));
    from(&mut n, &mut b, 1, &bsyn(0xB, 20));
    assert_eq!(backs(&mut n), vec![0xA, 0xB]);
}
