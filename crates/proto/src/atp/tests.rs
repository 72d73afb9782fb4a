//! The ATP-like agents on a line of nodes (`testnet::World::chain`): a file
//! crosses lossy hops completely and in order; every node stamps the
//! minimum effective available rate and the source follows the report;
//! relays never originate a packet; feedback is periodic; runs are
//! deterministic per seed.

use joulenet_wire::jtp::{JtpAck, JtpPacket, JtpRepr};

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
fn the_path_reports_its_minimum_effective_rate_and_the_source_follows() {
    // Available rate toward nodes 1..=4: 300k, 120k, 200k, 150k; every link
    // loses 20% of its attempts, so a packet takes (1 − 0.2⁵)/0.8 = 1.2496
    // attempts on average and the effective rates are 240 076.8, 96 030.7,
    // 160 051.2, 120 038.4 b/s, stamped in whole b/s; the minimum from
    // node 1 on is 96 030.
    const AVAILABLE: [f64; 4] = [300_000.0, 120_000.0, 200_000.0, 150_000.0];
    let mut w = chain(4, 400 * 800, cfg());
    w.links = Some(Box::new(|_, to| {
        Some(LinkInfo {
            loss_estimate: Some(0.2),
            available_rate_bps: Some(AVAILABLE[to as usize - 1]),
            ..LinkInfo::default()
        })
    }));
    w.start();
    assert!(w.run(Time::from_secs(120)));
    assert!(w.delivered == pattern(400 * 800));
    let stamped: Vec<u32> = (0..4)
        .map(|node| {
            let s = w.log.iter().find(|s| s.from == node).unwrap();
            match parse(&s.packet) {
                JtpRepr::Data(d) => d.available_rate,
                _ => panic!("node {node} sent feedback first"),
            }
        })
        .collect();
    assert_eq!(stamped, [240_076, 96_030, 96_030, 96_030]);
    // Every feedback reports that minimum (each packet carried it)...
    let feedback: Vec<JtpAck> = w
        .log
        .iter()
        .filter(|s| s.from == 4)
        .filter_map(|s| match parse(&s.packet) {
            JtpRepr::Ack(a) => Some(a),
            _ => None,
        })
        .collect();
    assert!(feedback.len() > 3);
    assert!(feedback.iter().all(|a| a.rate == 96_030));
    // ...and the source, which started at 200 kb/s, came down to it at once.
    assert_eq!(gauge(&w, 0, "rate_bps"), 96_030.0);
}

#[test]
fn the_source_climbs_toward_a_higher_report_in_steps() {
    // 40 kb/s initially, the path offers 100 kb/s: each feedback closes a
    // quarter of the gap while it is above 20%: 55, 66.25, 74.69, 81.02,
    // 85.76 kb/s, then stays (100 < 85.76 × 1.2).
    let c = AtpConfig {
        initial_rate_bps: 40_000.0,
        ..cfg()
    };
    let mut w = chain(2, 600 * 800, c);
    w.links = Some(Box::new(|_, _| {
        Some(LinkInfo {
            available_rate_bps: Some(100_000.0),
            ..LinkInfo::default()
        })
    }));
    w.start();
    let mut seen = vec![40_000.0];
    for tenth in 1..=300u64 {
        while w.step(Time::from_millis(100 * tenth)) {}
        let r = gauge(&w, 0, "rate_bps");
        if seen.last() != Some(&r) {
            seen.push(r);
        }
    }
    let want = [
        40_000.0,
        55_000.0,
        66_250.0,
        74_687.5,
        81_015.625,
        85_761.718_75,
    ];
    assert_eq!(seen.len(), want.len(), "{seen:?}");
    for (got, want) in seen.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{seen:?}");
    }
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
