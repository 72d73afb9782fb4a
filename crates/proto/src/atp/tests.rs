//! The ATP-like agents on a line of nodes (`testnet::World::chain`): a file
//! crosses lossy hops completely and in order; every node stamps the
//! minimum effective available rate; the receiver reports arrivals plus
//! that rate, the source follows the report; relays never originate a
//! packet; feedback is periodic; runs are deterministic per seed.

use joulenet_wire::jtp::{JtpPacket, JtpRepr};

use super::{AtpConfig, AtpReceiver, AtpRelay, AtpSender};
use crate::net::{Addr, Agent, LinkInfo};
use crate::testnet::{pattern, DropFn, World};
use crate::time::{Duration, Time};

fn cfg() -> AtpConfig {
    AtpConfig {
        // Testnet RTTs over 4 hops are ~0.1 s: 300 ms is "larger than RTT".
        feedback_period: Duration::from_millis(300),
        initial_rate_bps: 200_000.0,
        ..AtpConfig::default()
    }
}

/// Sender at node 0, relays at 1..hops, receiver at node `hops`.
pub(crate) fn chain(hops: usize, bytes: usize, cfg: AtpConfig) -> World {
    let server = Addr::new(hops as u32, 1);
    let relays: Vec<Box<dyn Agent>> = (1..hops)
        .map(|_| Box::new(AtpRelay::new(cfg.clone()).unwrap()) as Box<dyn Agent>)
        .collect();
    World::chain(
        Box::new(AtpSender::new(cfg.clone(), server).unwrap()),
        relays,
        Box::new(AtpReceiver::new(cfg).unwrap()),
        pattern(bytes),
    )
}

/// Seeded random loss on every link, both ways.
pub(crate) fn lossy(rate: f64, seed: u64) -> DropFn {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    Box::new(move |_, _, _, _| rng.random::<f64>() < rate)
}

fn parse(bytes: &[u8]) -> JtpRepr<'_> {
    JtpRepr::parse(&JtpPacket::new_checked(bytes).unwrap()).unwrap()
}

fn gauge(w: &World, i: usize, name: &str) -> f64 {
    w.agents[i].gauge(name).unwrap()
}

#[test]
fn a_file_crosses_four_lossy_hops_completely_and_in_order() {
    for seed in 1..=4 {
        let bytes = 100_000;
        let mut w = chain(4, bytes, cfg());
        w.drop = lossy(0.1, seed);
        w.start();
        w.run(Time::from_secs(300));
        assert!(
            w.delivered == pattern(bytes),
            "seed {seed}: {} bytes",
            w.delivered.len()
        );
        assert_eq!(w.finished, 1, "seed {seed}");
        assert!(
            w.agents[0].is_closed(),
            "seed {seed}: the source saw the FIN"
        );
        assert!(w.agents[0].stats().retransmitted_packets > 0);
    }
}

#[test]
fn relays_never_originate_a_packet() {
    // Whatever a relay sends it received from a neighbour: per node and
    // direction, packets out equal packets that arrived. Recovery is the
    // source's alone.
    let mut w = chain(4, 60_000, cfg());
    w.drop = lossy(0.1, 3);
    w.start();
    assert!(w.run(Time::from_secs(300)));
    assert!(w.delivered == pattern(60_000));
    for node in 1..4u32 {
        let arrived = |from: u32| {
            w.log
                .iter()
                .filter(|s| s.from == from && s.to == node && !s.dropped)
                .count()
        };
        let sent = |to: u32| {
            w.log
                .iter()
                .filter(|s| s.from == node && s.to == to)
                .count()
        };
        assert_eq!(sent(node + 1), arrived(node - 1), "node {node} downstream");
        assert_eq!(sent(node - 1), arrived(node + 1), "node {node} upstream");
        assert_eq!(w.agents[node as usize].stats().retransmitted_packets, 0);
    }
    // Every retransmission in the log left the source first.
    let retx_first_hops = w
        .log
        .iter()
        .filter(|s| matches!(parse(&s.packet), JtpRepr::Data(d) if d.flags.retx))
        .filter(|s| s.from == 0)
        .count() as u64;
    assert_eq!(retx_first_hops, w.agents[0].stats().retransmitted_packets);
}

#[test]
fn every_node_stamps_the_minimum_effective_rate() {
    // Available rate toward nodes 1..=4: 300k, 120k, 200k, 150k; every link
    // loses 20% of its attempts, so a packet takes (1 − 0.2⁵)/0.8 = 1.2496
    // attempts on average and the effective rates are 240 076.8, 96 030.7,
    // 160 051.2, 120 038.4 b/s, stamped in whole b/s; the minimum from
    // node 1 on is 96 030.
    const AVAILABLE: [f64; 4] = [300_000.0, 120_000.0, 200_000.0, 150_000.0];
    let mut w = chain(4, 100 * 800, cfg());
    w.links = Some(Box::new(|_, to| {
        Some(LinkInfo {
            loss_estimate: Some(0.2),
            available_rate_bps: Some(AVAILABLE[to as usize - 1]),
            ..LinkInfo::default()
        })
    }));
    w.start();
    assert!(w.run(Time::from_secs(120)));
    assert!(w.delivered == pattern(100 * 800));
    for node in 0..4u32 {
        let stamps: Vec<u32> = w
            .log
            .iter()
            .filter(|s| s.from == node && s.to == node + 1)
            .map(|s| match parse(&s.packet) {
                JtpRepr::Data(d) => d.available_rate,
                _ => panic!("feedback toward the receiver"),
            })
            .collect();
        let want = if node == 0 { 240_076 } else { 96_030 };
        assert!(stamps.len() >= 100);
        assert!(stamps.iter().all(|&r| r == want), "node {node}: {stamps:?}");
    }
    // The first feedback, with nothing measured yet, reports the stamp.
    let first = w.log.iter().find(|s| s.from == 4).unwrap();
    assert!(matches!(parse(&first.packet), JtpRepr::Ack(a) if a.rate == 96_030));
}

/// A data packet of `seq` carrying `stamp` (800-byte payload, 824 bytes
/// with the compact header).
fn data(seq: u32, stamp: u32) -> Vec<u8> {
    use joulenet_wire::jtp::{DataFlags, Format, JtpData, LossTolerance};
    let payload = [0u8; 800];
    let mut buf = Vec::new();
    JtpRepr::Data(JtpData {
        format: Format::Compact,
        flags: DataFlags::default(),
        flow: 1,
        seq,
        available_rate: stamp,
        energy_budget: u32::MAX,
        energy_used: 0,
        loss_tolerance: LossTolerance::ZERO,
        hops: 4,
        priority: 0,
        payload: &payload,
    })
    .emit_to_vec(&mut buf);
    buf
}

#[test]
fn the_receiver_reports_what_arrived_plus_what_the_path_leaves_unused() {
    // Feedback every second. Packet 0 at 0 s stamped 50 kb/s: feedback at
    // once, the stamp alone (nothing measured yet). Packets 1–10 at 0.09 s
    // intervals stamped 40 and 60 kb/s in turn: at 1 s, 10 × 824 bytes
    // arrived in 1 s (65 920 b/s) plus a mean stamp of 50 000: 115 920.
    // Then nothing arrives: the next feedback reports no rate.
    let c = AtpConfig {
        feedback_period: Duration::from_secs(1),
        ..cfg()
    };
    let mut w = World::new(
        vec![
            Box::<crate::testnet::Forwarder>::default(),
            Box::new(AtpReceiver::new(c).unwrap()),
        ],
        Vec::new(),
    );
    w.inject(0, 1, &data(0, 50_000));
    for i in 1..=10u32 {
        let at = Time::from_millis(90 * i as u64);
        while w.step(at) {}
        w.now = at;
        w.inject(0, 1, &data(i, if i % 2 == 1 { 40_000 } else { 60_000 }));
    }
    while w.step(Time::from_millis(2500)) {}
    let reports: Vec<(Time, u32)> = w
        .log
        .iter()
        .filter_map(|s| match parse(&s.packet) {
            JtpRepr::Ack(a) => Some((s.at, a.rate)),
            _ => None,
        })
        .collect();
    assert_eq!(
        reports,
        [
            (Time::ZERO, 50_000),
            (Time::from_secs(1), 115_920),
            (Time::from_secs(2), joulenet_wire::jtp::RATE_UNKNOWN)
        ]
    );
}

#[test]
fn the_source_follows_the_reported_rate_down_at_once_and_up_in_steps() {
    // From 40 kb/s, reports of 100 kb/s: each closes a quarter of the gap
    // while it is above 20%: 55, 66.25, 74.69, 81.02, 85.76 kb/s, then stays
    // (100 < 85.76 × 1.2). A report of 30 kb/s: 30 at once.
    use joulenet_wire::jtp::{Format, JtpAck};
    let c = AtpConfig {
        initial_rate_bps: 40_000.0,
        ..cfg()
    };
    let mut w = World::new(
        vec![
            Box::new(AtpSender::new(c, Addr::new(1, 1)).unwrap()),
            Box::<crate::testnet::Forwarder>::default(),
        ],
        pattern(800 * 1000),
    );
    w.start();
    let feedback = |rate| {
        let mut buf = Vec::new();
        JtpRepr::Ack(JtpAck {
            format: Format::Compact,
            fin: false,
            urgent: false,
            flow: 1,
            cum_ack: 0,
            rate,
            energy_budget: 0,
            feedback_period_us: 300_000,
            highest: 0,
            snack: Vec::new(),
            local: Vec::new(),
        })
        .emit_to_vec(&mut buf);
        buf
    };
    let mut seen = vec![gauge(&w, 0, "rate_bps")];
    for rate in [100_000; 6].into_iter().chain([30_000]) {
        w.inject(1, 0, &feedback(rate));
        seen.push(gauge(&w, 0, "rate_bps"));
    }
    let want = [
        40_000.0,
        55_000.0,
        66_250.0,
        74_687.5,
        81_015.625,
        85_761.718_75,
        85_761.718_75,
        30_000.0,
    ];
    assert_eq!(seen, want);
}

#[test]
fn feedback_comes_at_the_constant_period() {
    let mut w = chain(4, 200 * 800, cfg());
    w.start();
    assert!(w.run(Time::from_secs(60)));
    let times: Vec<Time> = w
        .log
        .iter()
        .filter(|s| s.from == 4)
        .filter(|s| matches!(parse(&s.packet), JtpRepr::Ack(a) if !a.fin))
        .map(|s| s.at)
        .collect();
    assert!(times.len() >= 4, "{times:?}");
    for pair in times.windows(2) {
        assert_eq!(
            pair[1].saturating_since(pair[0]),
            Duration::from_millis(300)
        );
    }
}

#[test]
fn runs_are_deterministic_per_seed() {
    let run = |seed| {
        let mut w = chain(4, 30_000, cfg());
        w.drop = lossy(0.1, seed);
        w.start();
        w.run(Time::from_secs(300));
        w.log
            .iter()
            .map(|s| (s.at, s.from, s.to, s.dropped, s.packet.clone()))
            .collect::<Vec<_>>()
    };
    assert!(run(9) == run(9));
    assert!(run(9) != run(10));
}

#[test]
fn the_source_settles_at_the_capacity_the_path_leaves_it() {
    // The second link (node 1 → 2) has 300 kb/s of capacity for this flow:
    // its available rate is 300 kb/s less what crossed it in the last
    // second (data packets, 824 bytes). The other links report nothing.
    // From 64 kb/s the source climbs to, and then holds near, 300 kb/s
    // (measured: 184 kb/s at 1 s, 285.5 kb/s from 3 s on — within the 20%
    // dead band below the report, where it stops climbing).
    use std::cell::Cell;
    use std::rc::Rc;
    const CAPACITY: f64 = 300_000.0;
    let c = AtpConfig {
        feedback_period: Duration::from_millis(500),
        initial_rate_bps: 64_000.0,
        ..AtpConfig::default()
    };
    let mut w = chain(4, 4000 * 800, c);
    let available = Rc::new(Cell::new(CAPACITY));
    let seen = available.clone();
    w.links = Some(Box::new(move |from, _| {
        (from == 1).then(|| LinkInfo {
            available_rate_bps: Some(seen.get()),
            ..LinkInfo::default()
        })
    }));
    w.start();
    let mut rates = Vec::new();
    for tenth in 1..=400u64 {
        let now = Time::from_millis(100 * tenth);
        while w.step(now) {}
        let since = now - Duration::from_secs(1);
        let used: usize = w
            .log
            .iter()
            .filter(|s| s.from == 1 && s.to == 2 && s.at > since)
            .map(|s| s.packet.len() * 8)
            .sum();
        available.set((CAPACITY - used as f64).max(0.0));
        rates.push(gauge(&w, 0, "rate_bps"));
    }
    // Within 10 s it is near the capacity, and from then on stays within
    // −20% / +10% of it (the increase dead band is 20%).
    for (i, r) in rates.iter().enumerate().skip(100) {
        assert!(
            (0.8 * CAPACITY..=1.1 * CAPACITY).contains(r),
            "at {:.1} s: {r}",
            (i + 1) as f64 / 10.0
        );
    }
}
