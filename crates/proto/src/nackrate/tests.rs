//! nackrate's mechanisms and end-to-end behaviour on the test driver.

use joulenet_wire::nackrate::{AckRepr, DataRepr, NackratePacket, Repr};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

use super::*;
use crate::net::{Addr, Agent};
use crate::testnet::{pattern, DropFn, Stall, World};
use crate::time::{Duration, Time};

fn parse(p: &[u8]) -> Repr {
    Repr::parse(&NackratePacket::new_checked(p).unwrap()).unwrap()
}

fn world(cfg: NackrateConfig, bytes: usize) -> World {
    let s = NackrateSender::new(cfg.clone(), Addr::new(1, 1));
    let r = NackrateReceiver::new(cfg);
    let mut w = World::new(vec![Box::new(s), Box::new(r)], pattern(bytes));
    // 10 Mbit/s, 1 ms: the namespace link's simulator twin.
    w.per_byte = Duration::from_nanos(800);
    w.delay = Duration::from_millis(1);
    w
}

fn sender(w: &World) -> &NackrateSender {
    // SAFETY: agent 0 of every world built by `world` is a NackrateSender.
    unsafe { &*(w.agents[0].as_ref() as *const dyn Agent as *const NackrateSender) }
}

fn receiver(w: &World) -> &NackrateReceiver {
    // SAFETY: agent 1 of every world built by `world` is a NackrateReceiver.
    unsafe { &*(w.agents[1].as_ref() as *const dyn Agent as *const NackrateReceiver) }
}

/// Bernoulli loss `p` both ways from a seeded stream.
fn random_loss(p: f64, seed: u64) -> DropFn {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    Box::new(move |_, _, _, _| rng.random_bool(p))
}

#[test]
fn clean_transfer_sends_each_byte_once() {
    let mut w = world(NackrateConfig::default(), 200_000);
    w.start();
    assert!(w.run(Time::from_secs(10)));
    assert_eq!(w.delivered, pattern(200_000));
    assert_eq!(w.finished, 1);
    let s = sender(&w).stats().clone();
    assert_eq!(s.retransmitted_packets, 0);
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.payload_bytes, 200_000);
    // 143 data packets of ≤ 1400 bytes, one empty FIN.
    assert_eq!(s.data_packets, 144);
    // ACKs every other packet.
    let acks = receiver(&w).stats().control_packets;
    assert!((72..=80).contains(&acks), "{acks} ACKs");
}

#[test]
fn nack_ranges_repair_exactly_the_lost_data() {
    let mut w = world(NackrateConfig::default(), 100_000);
    let lost = [5 * 1400u64, 6 * 1400, 30 * 1400, 50 * 1400];
    let mut seen = std::collections::HashSet::new();
    w.drop = Box::new(move |_, from, _, p| match parse(p) {
        Repr::Data(d) if from == 0 && lost.contains(&d.offset) => seen.insert(d.offset),
        _ => false,
    });
    w.start();
    assert!(w.run(Time::from_secs(10)));
    assert_eq!(w.delivered, pattern(100_000));
    let repairs: Vec<u64> = w
        .take_log()
        .iter()
        .filter_map(|x| match parse(&x.packet) {
            Repr::Data(d) if d.retransmission => Some(d.offset),
            _ => None,
        })
        .collect();
    let mut sorted = repairs.clone();
    sorted.sort();
    assert_eq!(sorted, lost, "exactly the lost segments, each once");
    assert_eq!(sender(&w).stats().timeouts, 0);
}

#[test]
fn the_receiver_reports_every_missing_range_and_cuts_the_span_to_fit() {
    let mut w = world(NackrateConfig::default(), 0);
    let mut r = NackrateReceiver::new(NackrateConfig::default());
    let mut log = Vec::new();
    for (pn, off) in [(0u32, 0u64), (1, 2800), (2, 5600), (3, 8400)] {
        let mut p = Vec::new();
        DataRepr {
            conn_id: 1,
            packet_number: pn,
            offset: off,
            ..DataRepr::default()
        }
        .emit(&[9; 1400], &mut p)
        .unwrap();
        log.push(p);
    }
    for p in &log {
        w.agents[1] = Box::new(std::mem::replace(
            &mut r,
            NackrateReceiver::new(NackrateConfig::default()),
        ));
        w.inject(0, 1, p);
        r = std::mem::replace(
            // SAFETY: agent 1 is the receiver just put there.
            unsafe { &mut *(w.agents[1].as_mut() as *mut dyn Agent as *mut NackrateReceiver) },
            NackrateReceiver::new(NackrateConfig::default()),
        );
    }
    assert_eq!(r.delivered(), 1400);
    let (all, top) = r.missing(64);
    assert_eq!(all, [(1400, 2800), (4200, 5600), (7000, 8400)]);
    assert_eq!(top, 9800);
    let (cut, top) = r.missing(2);
    assert_eq!(cut, [(1400, 2800), (4200, 5600)]);
    assert_eq!(
        top, 7000,
        "the span ends where the first unlisted hole starts"
    );
}

#[test]
fn duplicates_strangers_and_malformed_packets_are_counted_and_dropped() {
    let mut w = world(NackrateConfig::default(), 0);
    let mut p = Vec::new();
    DataRepr {
        conn_id: 5,
        packet_number: 0,
        offset: 0,
        ..DataRepr::default()
    }
    .emit(b"abc", &mut p)
    .unwrap();
    w.inject(0, 1, &p);
    w.inject(0, 1, &p); // duplicate
    let mut other = Vec::new();
    DataRepr {
        conn_id: 6,
        packet_number: 1,
        offset: 3,
        ..DataRepr::default()
    }
    .emit(b"def", &mut other)
    .unwrap();
    w.inject(0, 1, &other); // another connection
    let mut bad = p.clone();
    bad[21] ^= 0xff;
    w.inject(0, 1, &bad); // checksum
    w.inject(0, 1, &p[..5]); // truncated
    let s = receiver(&w).stats();
    assert_eq!(w.delivered, b"abc");
    assert_eq!(s.unexpected_dropped, 2);
    assert_eq!(s.malformed_dropped, 2);
    // The sender drops ACKs of other connections and garbage alike.
    let mut ack = Vec::new();
    AckRepr {
        conn_id: 77,
        ..AckRepr::default()
    }
    .emit(&mut ack)
    .unwrap();
    w.inject(1, 0, &ack);
    w.inject(1, 0, &[1, 2, 3]);
    let s = sender(&w).stats();
    assert_eq!((s.unexpected_dropped, s.malformed_dropped), (1, 1));
}

#[test]
fn lost_acks_cost_nothing_the_next_one_says_it_all() {
    // Every ACK but one in four is lost; the data direction is clean.
    let mut w = world(NackrateConfig::default(), 300_000);
    let mut n = 0u64;
    w.drop = Box::new(move |_, from, _, _| {
        n += 1;
        from == 1 && !n.is_multiple_of(4)
    });
    w.start();
    assert!(w.run(Time::from_secs(10)));
    assert_eq!(w.delivered, pattern(300_000));
    let s = sender(&w).stats();
    // A probe timeout may resend what arrived, when three ACKs in a row
    // are lost; nothing else does.
    assert!(s.retransmitted_packets <= 3 * s.timeouts, "{s:?}");
    // The transfer still runs near the 10 Mbit/s link's rate.
    assert!(w.now < Time::from_millis(600), "took {:?}", w.now);
}

#[test]
fn holds_the_rate_at_40_percent_loss_both_ways() {
    let mut w = world(NackrateConfig::default(), 2_000_000);
    w.drop = random_loss(0.4, 3);
    w.start();
    assert!(w.run(Time::from_secs(60)));
    assert_eq!(w.delivered, pattern(2_000_000));
    // Near 0.9 × 0.6 × 10 Mbit/s = 5.4 Mbit/s of payload (the simulator's
    // twin of the link, with its 100-frame queue, measures the target:
    // crates/sim/tests/nackrate.rs); E2TCP delivers 1.45 there.
    let goodput = 2_000_000.0 * 8.0 / w.now.as_secs_f64();
    assert!(goodput > 5.0e6, "{goodput:.0} bit/s");
}

/// Data packets that reached the receiver from 1 s to 3 s into a transfer
/// over the 10 Mbit/s link at 30% loss both ways (the link's useful time,
/// past start-up and the first stall, which the sender cannot foresee),
/// with the sender's host stalling it for 20 ms in every 100 ms (or
/// never), and the sender's late-wake allowance then.
fn stalled_transfer(max_late_wake: Duration, stall: bool) -> (u64, Duration) {
    let cfg = NackrateConfig {
        max_late_wake,
        ..NackrateConfig::default()
    };
    let mut w = world(cfg, 10_000_000);
    w.drop = random_loss(0.3, 5);
    w.stalls = Vec::from_iter(stall.then_some(Stall {
        agent: 0,
        every: Duration::from_millis(100),
        length: Duration::from_millis(20),
    }));
    w.start();
    assert!(!w.run(Time::from_secs(1)));
    let before = receiver(&w).stats().packets_received;
    assert!(!w.run(Time::from_secs(3)), "10 MB take longer than 3 s");
    assert_eq!(w.delivered, pattern(w.delivered.len()));
    let arrived = receiver(&w).stats().packets_received - before;
    (arrived, sender(&w).late_allowance())
}

/// A sender whose host runs it 20 ms late, often, loses (almost) no link
/// time: after a late wake its pacer sends what it missed, which leaves a
/// standing queue at the bottleneck that covers the next stall. With the
/// allowance off, the link idles through much of every stall.
#[test]
fn late_wakes_of_the_senders_host_cost_little_link_time() {
    let (quiet, none) = stalled_transfer(Duration::from_millis(50), false);
    assert_eq!(none, Duration::ZERO, "no late wake, no allowance");
    let (stalled, allowance) = stalled_transfer(Duration::from_millis(50), true);
    assert!(
        (Duration::from_millis(19)..=Duration::from_millis(20)).contains(&allowance),
        "{allowance:?}"
    );
    let (off, _) = stalled_transfer(Duration::ZERO, true);
    let share = |n: u64| n as f64 / quiet as f64;
    assert!(
        share(stalled) > 0.95,
        "{stalled} packets stalled, {quiet} not"
    );
    assert!(
        share(off) < 0.9,
        "{off} packets without the allowance, {quiet} quiet"
    );
}

/// The namespace link's `tbf` lets 16 kB through at once after an idle
/// spell, and a sender whose host stalled it sends what it missed in a
/// burst (the late-wake allowance): the burst crosses the bucket at line
/// rate, and a rate sample over it measured two to three times the link's
/// rate on hosts (24–27 Mbit/s on the 10 Mbit/s link, issue 18). Paced at
/// that, the sender overran the link, lost most of what it sent, and spent
/// seconds repairing it — past the end of its 10 s. The estimate must stay
/// near the link's rate. It does not yet: a rate sample spans 16
/// transmissions, of which the bucket passes 11 at once after an idle spell
/// (the start, a stall), so it reads up to 16 / (16 − 11) of the link's
/// rate; start-up reaches 2.5× within 70 ms here and the max filter keeps
/// it for over a second. Samples of 32, 48, 64, 96 transmissions read 1.41,
/// 1.25, 1.19, 1.11× (as N / (N − 11) predicts), but cost the simulator's
/// twin at 40% (crates/sim/tests/nackrate.rs, seed 2: 5.63 → 5.28–5.40
/// Mbit/s, below its 5.40 bound), so no span was changed; excluding samples
/// sent faster than paced (catch-up bursts) did not move the 2.5×.
/// docs/PERFORMANCE.md § Late wakes.
#[test]
#[ignore = "issue 18, not fixed: start-up takes a token bucket's burst for the link's rate"]
fn a_burst_through_a_token_bucket_is_not_taken_for_the_links_rate() {
    let mut w = world(NackrateConfig::default(), 20_000_000);
    w.drop = random_loss(0.3, 11);
    // 16 kB of the 10 Mbit/s link's time.
    w.burst = Duration::from_nanos(800 * 16_384);
    w.stalls = vec![Stall {
        agent: 0,
        every: Duration::from_millis(300),
        length: Duration::from_millis(40),
    }];
    let most = highest_rate_estimate_in_4_s(&mut w);
    assert!(most < 1.3, "rate estimate reached {most:.2} × the link's");
}

#[test]
fn a_run_is_a_function_of_its_seed() {
    let run = |seed| {
        let mut w = world(NackrateConfig::default(), 300_000);
        w.drop = random_loss(0.3, seed);
        w.start();
        assert!(w.run(Time::from_secs(30)));
        (w.now, sender(&w).stats().clone(), w.take_log().len())
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn a_silent_peer_ends_in_abort_after_the_probes() {
    let cfg = NackrateConfig {
        max_probes: 3,
        ..NackrateConfig::default()
    };
    let mut w = world(cfg, 10_000);
    w.drop = Box::new(|_, _, _, _| true);
    w.start();
    w.run(Time::from_secs(60));
    assert_eq!(sender(&w).state(), sender::NackrateState::Aborted);
    assert_eq!(sender(&w).stats().timeouts, 4);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn exactly_once_in_order_under_random_loss(seed: u64, loss in 0.0f64..0.5, bytes in 1usize..60_000) {
        let mut w = world(NackrateConfig::default(), bytes);
        w.drop = random_loss(loss, seed);
        w.start();
        prop_assert!(w.run(Time::from_secs(120)));
        prop_assert_eq!(&w.delivered, &pattern(bytes));
        prop_assert_eq!(w.finished, 1);
    }
}

/// Both hosts stalling (issue 18, the bench's runaway): a receiver that
/// reads late stamps a batch of arrivals at one instant, and a sender that
/// catches up after its own stall sends a burst, so both clocks of a rate
/// sample are short. On hosts such samples read 7.1 Gbit/s on the 10 Mbit/s
/// link, and the sender generated 940 MB in 4 s (its 10 s limit held, but
/// it had read far more than the link could carry). Here they read 7.5×
/// the link's rate; a sample sent faster than the pacer meant is now no
/// rate sample.
#[test]
fn a_catch_up_burst_read_late_is_no_rate_sample() {
    let mut w = world(NackrateConfig::default(), 20_000_000);
    w.drop = random_loss(0.3, 11);
    w.burst = Duration::from_nanos(800 * 16_384);
    w.stalls = vec![
        Stall {
            agent: 0,
            every: Duration::from_millis(500),
            length: Duration::from_millis(200),
        },
        Stall {
            agent: 1,
            every: Duration::from_millis(700),
            length: Duration::from_millis(100),
        },
    ];
    let most = highest_rate_estimate_in_4_s(&mut w);
    assert!(most < 2.0, "rate estimate reached {most:.2} × the link's");
}

/// Runs `w` (a 20 MB transfer over the 800 ns-per-byte, 10 Mbit/s link)
/// for 4 s, checking what arrived, and returns the sender's highest rate
/// estimate, read every 10 ms, as a multiple of the link's rate.
fn highest_rate_estimate_in_4_s(w: &mut World) -> f64 {
    w.start();
    let link = 1.0 / 800e-9; // bytes per second
    let mut most: f64 = 0.0;
    for ms in (10..4_000).step_by(10) {
        assert!(!w.run(Time::from_millis(ms)), "20 MB take longer than 4 s");
        most = most.max(sender(w).model().bw().unwrap_or(0.0));
    }
    assert_eq!(w.delivered, pattern(w.delivered.len()));
    most / link
}
