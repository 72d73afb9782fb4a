//! The JTP agents on a line of nodes (`testnet::World::chain`): a file
//! crosses lossy hops exactly once with relays recovering from their caches;
//! a packet a relay recovered is never resent by the source; the source's
//! pause is Σ sⱼ / r; a packet over its energy budget dies in the network.

use joulenet_wire::jtp::{JtpAck, JtpPacket, JtpRepr, Kind};

use super::{JtpConfig, JtpReceiver, JtpRelay, JtpSender};
use crate::net::{Addr, Agent};
use crate::testnet::{pattern, DropFn, World};
use crate::time::{Duration, Time};

fn cfg() -> JtpConfig {
    JtpConfig {
        // Short periods keep the runs short; 824-byte packets at 200 kb/s.
        feedback_lower_bound: Duration::from_millis(200),
        feedback_packets: 8,
        initial_rate_bps: 200_000.0,
        ..JtpConfig::default()
    }
}

/// A chain of `hops` links: sender at node 0, relays at 1..hops, receiver at
/// node `hops`.
fn chain(hops: usize, bytes: usize, cfg: JtpConfig) -> World {
    let server = Addr::new(hops as u32, 1);
    let relays: Vec<Box<dyn Agent>> = (1..hops)
        .map(|_| Box::new(JtpRelay::new(cfg.clone()).unwrap()) as Box<dyn Agent>)
        .collect();
    World::chain(
        Box::new(JtpSender::new(cfg.clone(), server).unwrap()),
        relays,
        Box::new(JtpReceiver::new(cfg).unwrap()),
        pattern(bytes),
    )
}

/// Seeded random loss on every link, both ways.
fn lossy(rate: f64, seed: u64) -> DropFn {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    Box::new(move |_, _, _, _| rng.random::<f64>() < rate)
}

fn parse(bytes: &[u8]) -> JtpRepr<'_> {
    JtpRepr::parse(&JtpPacket::new_checked(bytes).unwrap()).unwrap()
}

/// Sequence numbers of the data packets `node` sent itself (not relayed).
fn data_sent_by(w: &World, node: u32) -> Vec<u32> {
    w.log
        .iter()
        .filter(|s| s.from == node)
        .filter_map(|s| match parse(&s.packet) {
            JtpRepr::Data(d) if !d.flags.local => Some(d.seq),
            _ => None,
        })
        .collect()
}

fn gauge(w: &World, i: usize, name: &str) -> f64 {
    w.agents[i].gauge(name).unwrap()
}

#[test]
fn a_file_crosses_four_lossy_hops_exactly_once() {
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
            "seed {seed}: the source saw the FIN ACK"
        );
        let local: f64 = (1..4).map(|i| gauge(&w, i, "jtp_local_retx")).sum();
        assert!(local > 0.0, "seed {seed}: relays recovered nothing");
        // ACKs are lost too, so the source hears of at most as many.
        let heard = gauge(&w, 0, "jtp_locally_recovered");
        assert!(
            heard > 0.0 && heard <= local,
            "seed {seed}: {heard} of {local}"
        );
    }
}

#[test]
fn a_locally_recovered_packet_is_never_retransmitted_by_the_source() {
    let bytes = 40 * 800;
    let mut w = chain(4, bytes, cfg());
    // Lose data packet 5 once, on the last link (node 3 → node 4).
    let mut lost = false;
    w.drop = Box::new(move |_, from, to, p| {
        let hit =
            !lost && (from, to) == (3, 4) && matches!(parse(p), JtpRepr::Data(d) if d.seq == 5);
        lost |= hit;
        hit
    });
    w.start();
    assert!(w.run(Time::from_secs(60)));
    assert!(w.delivered == pattern(bytes));
    // Relay 3 resent it from its cache, on the source's behalf...
    let from_cache: Vec<_> = w
        .log
        .iter()
        .filter(|s| s.from == 3)
        .filter_map(|s| match parse(&s.packet) {
            JtpRepr::Data(d) if d.flags.local => Some(d.seq),
            _ => None,
        })
        .collect();
    assert_eq!(from_cache, [5]);
    assert_eq!(gauge(&w, 3, "jtp_local_retx"), 1.0);
    assert_eq!(
        gauge(&w, 1, "jtp_local_retx") + gauge(&w, 2, "jtp_local_retx"),
        0.0
    );
    // ...the ACK told the source so, and it sent packet 5 exactly once.
    assert_eq!(gauge(&w, 0, "jtp_locally_recovered"), 1.0);
    let sent = data_sent_by(&w, 0);
    assert_eq!(sent.iter().filter(|&&s| s == 5).count(), 1);
    assert_eq!(w.agents[0].stats().retransmitted_packets, 0);
    // The ACK reached the source with 5 in the locally-recovered list and not
    // in the SNACK.
    let acks: Vec<JtpAck> = w
        .log
        .iter()
        .filter(|s| s.from == 1 && s.to == 0)
        .filter_map(|s| match parse(&s.packet) {
            JtpRepr::Ack(a) => Some(a),
            _ => None,
        })
        .collect();
    assert!(acks.iter().any(|a| a.local == [5] && !a.snack.contains(&5)));
}

#[test]
fn the_back_off_is_the_recovered_bytes_over_the_granted_rate() {
    // 824-byte packets (24 + 800) at 65 920 b/s leave every 100 ms.
    let c = JtpConfig {
        initial_rate_bps: 65_920.0,
        feedback_lower_bound: Duration::from_secs(5),
        ..JtpConfig::default()
    };
    let mut w = World::chain(
        Box::new(JtpSender::new(c.clone(), Addr::new(1, 1)).unwrap()),
        Vec::new(),
        Box::new(JtpReceiver::new(c.clone()).unwrap()),
        pattern(100 * 800),
    );
    w.start();
    while w.step(Time::from_millis(250)) {}
    assert_eq!(data_sent_by(&w, 0), [0, 1, 2], "sent at 0, 100 and 200 ms");
    // At 250 ms an ACK says relays recovered packets 0 and 1 and grants the
    // same rate: t_b = 2 · 824 · 8 / 65 920 = 0.2 s.
    w.now = Time::from_millis(250);
    let ack = JtpAck {
        cum_ack: 0,
        rate: 65_920,
        feedback_period_us: 5_000_000,
        flow: c.flow,
        local: vec![0, 1],
        ..JtpAck::default()
    };
    let mut buf = Vec::new();
    JtpRepr::Ack(ack).emit_to_vec(&mut buf);
    w.inject(1, 0, &buf);
    assert_eq!(gauge(&w, 0, "jtp_backoff_s"), 0.2);
    w.take_log();
    while w.step(Time::from_millis(800)) {}
    let times: Vec<Time> = w
        .log
        .iter()
        .filter(|s| s.from == 0 && matches!(parse(&s.packet), JtpRepr::Data(_)))
        .map(|s| s.at)
        .collect();
    // Packet 3 was due at 300 ms; it leaves 200 ms later, then every 100 ms.
    assert_eq!(
        times,
        [500, 600, 700, 800].map(Time::from_millis),
        "the pause is exactly Σ s / r"
    );
}

#[test]
fn a_packet_over_its_energy_budget_dies_in_the_network() {
    // Each hop adds 100 µJ (a link with no loss estimate gets the MAC's
    // full attempts but is expected to need one): the source stamps 100,
    // relay 1 200, and relay 2 would reach 300 > 250, so it drops it.
    let c = JtpConfig {
        energy_budget_uj: 250,
        ..cfg()
    };
    let mut w = chain(4, 8_000, c);
    w.start();
    w.run(Time::from_secs(2));
    assert!(w.delivered.is_empty());
    assert_eq!(gauge(&w, 1, "jtp_over_budget"), 0.0);
    assert!(gauge(&w, 2, "jtp_over_budget") > 0.0);
    assert!(w
        .log
        .iter()
        .all(|s| s.from != 2 || parse(&s.packet).kind() != Kind::Data));
}

#[test]
fn the_receiver_feeds_back_at_its_period_and_the_cache_empties() {
    let mut w = chain(3, 60 * 800, cfg());
    w.start();
    let done = w.run(Time::from_secs(60));
    let closed: Vec<bool> = w.agents.iter().map(|a| a.is_closed()).collect();
    let cached: Vec<Option<f64>> = w.agents.iter().map(|a| a.gauge("jtp_cached")).collect();
    assert!(
        done,
        "closed {closed:?} cached {cached:?} delivered {}",
        w.delivered.len()
    );
    // One ACK on the first packet, then one per period until the end.
    let acks = w.agents[3].stats().control_packets;
    assert!((2..=40).contains(&acks), "{acks} ACKs");
    // The FIN ACK crossed every relay and emptied its cache.
    for i in 1..3 {
        assert_eq!(gauge(&w, i, "jtp_cached"), 0.0, "relay {i}");
        assert!(w.agents[i].is_closed());
    }
}
