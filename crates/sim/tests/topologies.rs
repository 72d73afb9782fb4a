//! Every topology kind moves every flow's bytes end to end, and the per-node
//! and per-link accounting tells one consistent story.

mod common;

use common::{assert_all_delivered, run};
use joulenet_sim::RunResult;

/// Frames a node sent are the attempts on its outgoing link directions and
/// frames it received are the deliveries on its incoming ones; no link
/// delivered more than it attempted.
fn assert_accounting_consistent(r: &RunResult) {
    for n in &r.nodes {
        let sent: u64 = r
            .links
            .iter()
            .filter(|l| l.from == n.node)
            .map(|l| l.attempts)
            .sum();
        let received: u64 = r
            .links
            .iter()
            .filter(|l| l.to == n.node)
            .map(|l| l.frames_delivered)
            .sum();
        assert_eq!(n.frames_sent, sent, "node {} frames_sent", n.name);
        assert_eq!(
            n.frames_received, received,
            "node {} frames_received",
            n.name
        );
    }
    for l in &r.links {
        assert!(
            l.frames_delivered <= l.attempts,
            "link {} {}->{} delivered more than attempted: {l:?}",
            l.link,
            l.from,
            l.to
        );
    }
}

/// A node with no agent forwarded what it received: everything it took in
/// went out again, apart from queue drops and a few frames still queued when
/// the run ended.
fn assert_forwarded(r: &RunResult, node: u32) {
    let n = &r.nodes[node as usize];
    let drops: u64 = r
        .links
        .iter()
        .filter(|l| l.from == node)
        .map(|l| l.queue_drops)
        .sum();
    assert!(
        n.frames_received > 0,
        "forwarder {} received nothing",
        n.name
    );
    assert!(n.frames_sent > 0, "forwarder {} forwarded nothing", n.name);
    let kept = n.frames_received as i64 - n.frames_sent as i64 - drops as i64;
    assert!(
        (0..=8).contains(&kept),
        "forwarder {}: received {}, sent {}, dropped {drops}",
        n.name,
        n.frames_received,
        n.frames_sent
    );
}

fn assert_fairness_in_range(r: &RunResult) {
    let j = r
        .summary
        .jain_fairness
        .expect("measured flows have a Jain index");
    assert!(j > 0.0 && j <= 1.0 + 1e-12, "Jain index {j}");
}

/// Nodes on wired links only have no radio and spend no energy; nodes with a
/// wireless link that carried traffic do.
fn assert_energy_only_on_radios(r: &RunResult) {
    for n in &r.nodes {
        let wireless_links = n.radios;
        if wireless_links == 0 {
            assert_eq!(n.energy_j, 0.0, "wired-only node {} has energy", n.name);
            assert_eq!(n.tx_s + n.rx_s + n.idle_s, 0.0, "{}", n.name);
        } else {
            assert!(n.energy_j > 0.0, "radio node {} spent nothing", n.name);
        }
    }
    let total: f64 = r.nodes.iter().map(|n| n.energy_j).sum();
    assert!((r.summary.energy_j - total).abs() <= 1e-9 * total.max(1.0));
}

#[test]
fn chains_of_one_to_four_hops() {
    for hops in 1..=4u32 {
        let r = run(&format!(
            r#"
[topology]
kind = "chain"
hops = {hops}
[link]
rate = "5Mbps"
delay = "2ms"
[flow]
protocol = "newreno"
bytes = "150kB"
"#
        ));
        assert_eq!(r.nodes.len(), hops as usize + 1);
        assert_eq!(r.links.len(), 2 * hops as usize, "one result per direction");
        assert_all_delivered(&r);
        assert_eq!(r.flows[0].from, 0);
        assert_eq!(r.flows[0].to, hops);
        assert_accounting_consistent(&r);
        for n in 1..hops {
            assert_forwarded(&r, n);
            // Every node of the chain has a radio per wireless link.
            assert_eq!(r.nodes[n as usize].radios, 2);
        }
        assert_fairness_in_range(&r);
        assert_eq!(
            r.summary.jain_fairness,
            Some(1.0),
            "one flow is fair to itself"
        );
        assert_energy_only_on_radios(&r);
        // Data crosses each of the `hops` links at least once.
        let data_frames = r.flows[0].data_packets;
        for l in r.links.iter().filter(|l| l.to == l.from + 1) {
            assert!(l.frames_delivered >= data_frames, "{l:?}");
        }
    }
}

#[test]
fn dumbbell_with_three_pairs_and_a_wireless_last_hop() {
    let r = run(r#"
[topology]
kind = "dumbbell"
pairs = 3
[topology.access]
rate = "10Mbps"
delay = "1ms"
[topology.bottleneck]
rate = "3Mbps"
delay = "10ms"
queue = 30
[topology.last_hop]
medium = "wireless"
radio = "wavelan"
rate = "5Mbps"
delay = "1ms"
[flow]
protocol = "cubic"
bytes = "120kB"
"#);
    // s0 s1 s2 left right r0 r1 r2
    assert_eq!(r.nodes.len(), 8);
    assert_eq!(r.flows.len(), 3, "one flow per pair by default");
    assert_all_delivered(&r);
    assert_accounting_consistent(&r);
    let (left, right) = (3, 4);
    assert_forwarded(&r, left);
    assert_forwarded(&r, right);
    assert_fairness_in_range(&r);
    assert_energy_only_on_radios(&r);
    for n in 0..=left {
        assert_eq!(
            r.nodes[n as usize].radios, 0,
            "{} is wired only",
            r.nodes[n as usize].name
        );
    }
    assert_eq!(r.nodes[right as usize].radios, 3, "one radio per last hop");
    for n in 5..8 {
        assert_eq!(r.nodes[n].radios, 1);
    }
    // Each sender reaches its own receiver.
    for (i, f) in r.flows.iter().enumerate() {
        assert_eq!((f.from, f.to), (i as u32, 5 + i as u32));
    }
    // Only the bottleneck's own traffic crosses it: its forward direction
    // carried all three flows' data.
    let bottleneck = r
        .links
        .iter()
        .find(|l| l.from == left && l.to == right)
        .unwrap();
    let data: u64 = r.flows.iter().map(|f| f.data_packets).sum();
    assert!(bottleneck.frames_delivered >= data);
}

#[test]
fn explicit_topology_routes_by_fewest_hops() {
    // a - b - c - d by radio, b = d by wire (a shortcut), d = e by wire.
    let r = run(r#"
[topology]
kind = "explicit"
nodes = ["a", "b", "c", "d", "e"]
[[topology.links]]
a = "a"
b = "b"
[[topology.links]]
a = "b"
b = "c"
[[topology.links]]
a = "c"
b = "d"
[[topology.links]]
a = "b"
b = "d"
medium = "wired"
rate = "20Mbps"
[[topology.links]]
a = "d"
b = "e"
medium = "wired"
[link]
rate = "4Mbps"
delay = "3ms"
[[flows]]
protocol = "sack"
from = "a"
to = "e"
bytes = "100kB"
[[flows]]
protocol = "reno"
from = "c"
to = "a"
bytes = "80kB"
"#);
    assert_all_delivered(&r);
    assert_accounting_consistent(&r);
    assert_fairness_in_range(&r);
    assert_energy_only_on_radios(&r);
    let (a, b, c, d, e) = (0, 1, 2, 3, 4);
    assert_forwarded(&r, b);
    assert_forwarded(&r, d);
    assert_eq!(r.nodes[e as usize].radios, 0);
    assert_eq!(r.nodes[e as usize].energy_j, 0.0);
    // a -> e goes a-b-d-e (3 hops), not a-b-c-d-e; c -> a goes c-b-a. So
    // the c-d radio link carries nothing at all, and c's radio toward d
    // only idles.
    for l in r
        .links
        .iter()
        .filter(|l| (l.from, l.to) == (c, d) || (l.from, l.to) == (d, c))
    {
        assert_eq!(l.attempts, 0, "c-d should be off every route: {l:?}");
    }
    for (x, y) in [(a, b), (b, d), (d, e), (c, b), (b, a)] {
        let l = r.links.iter().find(|l| (l.from, l.to) == (x, y)).unwrap();
        assert!(l.attempts > 0, "{x}->{y} should carry traffic");
    }
    assert_eq!(r.flows[0].label, "sack-0");
}
