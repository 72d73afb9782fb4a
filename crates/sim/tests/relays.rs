//! Protocol code on every hop: relay agents see, rewrite, take and forward
//! packets in transit, on point-to-point chains and on the shared medium.

use std::cell::RefCell;
use std::rc::Rc;

use joulenet_proto::{Addr, Agent, Net, Time, Transit, TransitVerdict, TransportStats};
use joulenet_sim::relays::RelayNodes;
use joulenet_sim::{run, Scenario, Simulation};

fn scenario(text: &str) -> Scenario {
    Scenario::parse_str(text, "t", std::env::temp_dir()).expect("valid scenario")
}

/// What every marking relay saw, by node.
#[derive(Default, Debug)]
struct Seen {
    /// (node, packets seen, marks of the previous relay found and undone).
    per_node: std::collections::BTreeMap<u32, (u64, u64)>,
    /// Per-hop options set upstream that arrived intact.
    opts_intact: u64,
}

/// A transit relay that rewrites every packet in place and hands the next
/// relay a per-hop option: the last byte is XORed with a mark naming this
/// node, after undoing the previous relay's mark (which it checks is
/// there); the relay next to the destination leaves it unmarked, so the
/// ends see their own bytes. The stream's end-to-end check then proves
/// every rewrite was made and undone, hop by hop.
struct MarkingRelay {
    seen: Rc<RefCell<Seen>>,
    stats: TransportStats,
}

fn mark(node: u32) -> u8 {
    0x5A ^ (node as u8).wrapping_mul(37)
}

impl Agent for MarkingRelay {
    fn protocol(&self) -> &'static str {
        "marking"
    }
    fn start(&mut self, _net: &mut dyn Net) {}
    fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {
        panic!("a relay is never addressed");
    }
    fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
        let here = net.local().node;
        assert_eq!(net.previous_hop(), Some(t.previous_hop));
        let mut seen = self.seen.borrow_mut();
        let entry = seen.per_node.entry(here).or_default();
        entry.0 += 1;
        let last = t.packet.len() - 1;
        if t.previous_hop != t.src.node {
            // The previous node was a relay: its mark must be there.
            t.packet[last] ^= mark(t.previous_hop);
            entry.1 += 1;
            if t.opts.link_attempts == Some(t.previous_hop as u8 + 1) {
                seen.opts_intact += 1;
            }
        }
        let next = net.route(t.dst.node).expect("a route").next_hop;
        if next != t.dst.node {
            t.packet[last] ^= mark(here);
            t.opts.link_attempts = Some(here as u8 + 1);
        } else {
            t.opts.link_attempts = None;
        }
        TransitVerdict::Forward
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _net: &mut dyn Net) {}
    fn stats(&self) -> &TransportStats {
        &self.stats
    }
    /// Stateless: the driver may drop it after every packet and make a new
    /// one for the next (which is what relay laziness means).
    fn is_closed(&self) -> bool {
        true
    }
}

const CHAIN: &str = r#"
[topology]
kind = "chain"
hops = 5
[link]
rate = "4Mbps"
delay = "2ms"
[flow]
protocol = "newreno"
app = "bulk"
bytes = "300KB"
"#;

#[test]
fn a_transit_agent_on_every_node_of_a_five_hop_chain_sees_rewrites_and_forwards_each_packet() {
    let s = scenario(CHAIN);
    let spec = s.spec(&s.points()[0]).unwrap();
    let mut sim = Simulation::new(&spec, 1);
    let seen = Rc::new(RefCell::new(Seen::default()));
    let shared = seen.clone();
    sim.register_relay(
        0,
        "marking",
        RelayNodes::Every,
        Box::new(move || {
            Box::new(MarkingRelay {
                seen: shared.clone(),
                stats: TransportStats::default(),
            })
        }),
    );
    let r = sim.run(&mut |_| {});
    let f = &r.flows[0];
    assert!(f.completed, "the flow completed");
    assert_eq!(f.bytes_delivered, 300_000);
    assert_eq!(f.corrupt_deliveries, 0, "every rewrite was undone");
    let seen = seen.borrow();
    // Nodes 1..=4 are the relays; each saw every packet of both directions
    // (the flow's data and ACKs cross every one of them).
    let counts: Vec<u64> = (1..=4).map(|n| seen.per_node[&n].0).collect();
    assert!(counts.iter().all(|&c| c == counts[0]), "{counts:?}");
    let sent = f.data_packets + f.retransmitted_packets + f.control_packets;
    assert!(counts[0] >= sent * 9 / 10, "{counts:?} of {sent}");
    assert!(!seen.per_node.contains_key(&0) && !seen.per_node.contains_key(&5));
    // Each relay undid the previous relay's mark on every packet that came
    // from one: nodes 2 and 3 on all; node 1 on the server's packets and
    // node 4 on the client's, which together are all.
    let undone = |n: u32| seen.per_node[&n].1;
    assert_eq!(undone(2), counts[1]);
    assert_eq!(undone(3), counts[2]);
    assert_eq!(undone(1) + undone(4), counts[0]);
    assert!(
        undone(1) > 0 && undone(4) > undone(1),
        "ACKs one way, data the other"
    );
    // The per-hop option set by one relay reached the next on every packet
    // that crossed two relays in a row (all but the first relay's share).
    assert_eq!(
        seen.opts_intact,
        undone(1) + undone(2) + undone(3) + undone(4)
    );
    for n in &r.nodes[1..=4] {
        assert_eq!(n.transit_forwarded, counts[0]);
    }
}

const HBH: &str = r#"
[topology]
kind = "chain"
hops = 4
[link]
rate = "2Mbps"
delay = "5ms"
loss = { model = "bernoulli", rate = 0.05 }
[flow]
protocol = "hbh-tcp"
app = "bulk"
bytes = "500KB"
tcp = { timestamps = true }
"#;

#[test]
fn hop_by_hop_tcp_terminates_at_every_node_and_delivers_exactly() {
    let s = scenario(HBH);
    let p = &s.points()[0];
    let r = run(&s, p, 3, &mut |_| {}).unwrap();
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.bytes_delivered, 500_000);
    assert_eq!(f.corrupt_deliveries, 0);
    for n in &r.nodes[1..=3] {
        assert!(
            n.transit_consumed > 300,
            "node {} took {}",
            n.node,
            n.transit_consumed
        );
        assert_eq!(
            n.transit_forwarded, 0,
            "nothing crosses a terminating relay"
        );
        assert!(
            n.relay_bytes_sent > 500_000,
            "node {} sent the stream on",
            n.node
        );
    }
    // End-to-end NewReno on the same links and seed is limited by
    // (1 - p)^4 over four hops; hop-by-hop repairs each loss on its hop.
    let e2e = scenario(&HBH.replace("hbh-tcp", "newreno"));
    let e = run(&e2e, &e2e.points()[0], 3, &mut |_| {}).unwrap();
    assert!(e.flows[0].completed);
    assert!(
        f.goodput_bps > e.flows[0].goodput_bps,
        "hop-by-hop {:.0} vs end-to-end {:.0} bit/s",
        f.goodput_bps,
        e.flows[0].goodput_bps
    );
    // A run is a pure function of (scenario, seed), relays included.
    let again = run(&s, p, 3, &mut |_| {}).unwrap();
    assert_eq!(format!("{:?}", again.flows), format!("{:?}", r.flows));
    assert_eq!(format!("{:?}", again.nodes), format!("{:?}", r.nodes));
}

/// The flow's byte counts include its relays' connections (issue 21): on
/// four hops every byte is sent once per hop, so the flow's first sendings
/// of data carry the file four times, and each hop's losses show as its
/// retransmissions. Before, the counts were the first hop's sender's alone
/// (one copy of the file).
#[test]
fn hop_by_hop_tcp_flow_counts_include_the_relays() {
    let s = scenario(HBH);
    let r = run(&s, &s.points()[0], 3, &mut |_| {}).unwrap();
    let f = &r.flows[0];
    assert!(f.completed);
    let file = 500_000;
    assert!(
        f.data_bytes >= 4 * file,
        "{} data bytes for a {file}-byte file over 4 hops",
        f.data_bytes
    );
    let relays: u64 = r.nodes[1..=3].iter().map(|n| n.relay_bytes_sent).sum();
    assert!(
        f.transport_bytes >= relays,
        "{} transport bytes, relays sent {relays}",
        f.transport_bytes
    );
    assert!(f.retransmitted_packets > 0, "5 % loss on every hop");
}

#[test]
fn hop_by_hop_tcp_over_an_80211_chain() {
    let text = r#"
[topology]
kind = "chain"
hops = 3
spacing = 200
[medium]
standard = "802.11b"
range = 250
carrier_sense_range = 550
[flow]
protocol = "hbh-tcp"
app = "bulk"
bytes = "300KB"
tcp = { mss = 1000, timestamps = true }
"#;
    let s = scenario(text);
    let r = run(&s, &s.points()[0], 1, &mut |_| {}).unwrap();
    assert!(r.flows[0].completed);
    assert_eq!(r.flows[0].bytes_delivered, 300_000);
    assert!(r.nodes[1].transit_consumed > 0 && r.nodes[2].transit_consumed > 0);
}
