//! The rate-based TCP-SACK baseline (`rate-sack`) on a line of nodes with
//! plain forwarders between the ends: its pacing rate is the PFTK equation
//! of its measured loss-event rate, SRTT and RTO; segments leave no closer
//! than that rate allows; ACKs are delayed; a file crosses lossy hops
//! completely and in order; runs are deterministic per seed.

use joulenet_wire::tcp::{TcpPacket, TcpRepr};

use super::{TcpAgent, TcpConfig};
use crate::cc::pftk_rate;
use crate::net::{Addr, Agent};
use crate::testnet::{pattern, DropFn, Forwarder, World};
use crate::time::{Duration, Time};

const MSS: u16 = 800;

pub(crate) fn rate_sack() -> TcpConfig {
    TcpConfig {
        mss: MSS,
        ..TcpConfig::rate_sack()
    }
}

/// Client at node 0, forwarders at 1..hops, server at node `hops`, on
/// 10 Mbit/s links (a segment takes 0.66 ms to send, so the pacing, not
/// the link, spaces them).
pub(crate) fn chain(hops: usize, bytes: usize, cfg: TcpConfig) -> World {
    let server = Addr::new(hops as u32, 1);
    let relays: Vec<Box<dyn Agent>> = (1..hops)
        .map(|_| Box::<Forwarder>::default() as Box<dyn Agent>)
        .collect();
    let mut w = World::chain(
        Box::new(TcpAgent::client(cfg.clone(), server)),
        relays,
        Box::new(TcpAgent::server(cfg)),
        pattern(bytes),
    );
    w.per_byte = Duration::from_nanos(800);
    w
}

fn lossy(rate: f64, seed: u64) -> DropFn {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    Box::new(move |_, _, _, _| rng.random::<f64>() < rate)
}

fn payload_len(bytes: &[u8]) -> usize {
    let p = TcpPacket::new_checked(bytes).unwrap();
    TcpRepr::parse(&p).unwrap().payload.len()
}

fn gauge(w: &World, i: usize, name: &str) -> f64 {
    w.agents[i].gauge(name).unwrap()
}

#[test]
fn the_paced_rate_is_the_pftk_equation_of_the_measured_state() {
    // One segment lost once: one fast recovery, no timeout. At the end
    // p = 1 / segments sent, and the rate is PFTK's for p, SRTT, RTO, b = 2.
    let bytes = 300 * MSS as usize;
    let mut w = chain(4, bytes, rate_sack());
    // The 100th data segment the source sends.
    let mut count = 0;
    w.drop = Box::new(move |_, from, _, p| {
        if from == 0 && payload_len(p) > 0 {
            count += 1;
            return count == 100;
        }
        false
    });
    w.start();
    assert!(w.run(Time::from_secs(60)));
    assert!(w.delivered == pattern(bytes));
    let stats = w.agents[0].stats();
    assert_eq!((stats.fast_recoveries, stats.timeouts), (1, 0));
    let sent = stats.data_packets + stats.retransmitted_packets;
    assert_eq!(sent, 301, "300 segments and one retransmission");
    let p = gauge(&w, 0, "loss_event_rate");
    assert_eq!(p, 1.0 / 301.0);
    let srtt = gauge(&w, 0, "srtt_ms") / 1e3;
    let rto = gauge(&w, 0, "rto_ms") / 1e3;
    let want = pftk_rate(srtt, p, 2.0, rto).unwrap();
    assert!((gauge(&w, 0, "pacing_rate_pps") - want).abs() < 1e-9 * want);
}

#[test]
fn before_any_loss_it_paces_at_the_window_over_srtt() {
    let bytes = 200 * MSS as usize;
    let mut w = chain(4, bytes, rate_sack());
    w.start();
    // Mid-transfer, nothing lost: p = 0, and the rate is cwnd / SRTT.
    while w.step(Time::from_millis(150)) {}
    assert_eq!(gauge(&w, 0, "loss_event_rate"), 0.0);
    let window = gauge(&w, 0, "cwnd") / MSS as f64;
    let srtt = gauge(&w, 0, "srtt_ms") / 1e3;
    assert!((gauge(&w, 0, "pacing_rate_pps") - window / srtt).abs() < 1e-6);
    assert!(w.run(Time::from_secs(60)));
    assert!(w.delivered == pattern(bytes));
}

#[test]
fn segments_leave_no_faster_than_the_paced_rate() {
    // At every data segment the source sends, note the rate in force; the
    // next one leaves at least 1 / rate later, except a fast retransmit,
    // which TCP sends at once.
    let bytes = 400 * MSS as usize;
    let mut w = chain(4, bytes, rate_sack());
    w.drop = lossy(0.02, 4);
    w.start();
    let mut departures: Vec<(Time, f64)> = Vec::new();
    let mut seen = 0;
    while w.step(Time::from_secs(120)) {
        for s in &w.log[seen..] {
            if s.from == 0 && payload_len(&s.packet) > 0 {
                departures.push((s.at, gauge(&w, 0, "pacing_rate_pps")));
            }
        }
        seen = w.log.len();
        if w.agents.iter().all(|a| a.is_closed()) {
            break;
        }
    }
    assert!(w.delivered == pattern(bytes));
    let early = departures
        .windows(2)
        .filter(|d| {
            let gap = d[1].0.saturating_since(d[0].0).as_secs_f64();
            gap + 1e-6 < 1.0 / d[0].1
        })
        .count() as u64;
    let recoveries = w.agents[0].stats().fast_recoveries;
    assert!(recoveries > 0);
    assert!(early <= recoveries, "{early} early of {}", departures.len());
}

#[test]
fn the_receiver_acks_every_second_segment() {
    let bytes = 200 * MSS as usize;
    let mut w = chain(4, bytes, rate_sack());
    w.start();
    assert!(w.run(Time::from_secs(60)));
    let data = w.agents[0].stats().data_packets;
    let acks = w.agents[4].stats().control_packets;
    // 200 segments: about 100 ACKs, plus the handshake and the close.
    assert!(acks <= data / 2 + 5, "{acks} ACKs for {data} segments");
}

#[test]
fn a_file_crosses_four_lossy_hops_completely_and_in_order() {
    for seed in 1..=4 {
        let bytes = 100_000;
        let mut w = chain(4, bytes, rate_sack());
        w.drop = lossy(0.05, seed);
        w.start();
        assert!(w.run(Time::from_secs(1200)), "seed {seed}");
        assert!(w.delivered == pattern(bytes), "seed {seed}");
        assert_eq!(w.finished, 1, "seed {seed}");
        assert!(w.agents[0].stats().retransmitted_packets > 0);
    }
}

#[test]
fn runs_are_deterministic_per_seed() {
    let run = |seed| {
        let mut w = chain(4, 30_000, rate_sack());
        w.drop = lossy(0.05, seed);
        w.start();
        w.run(Time::from_secs(600));
        w.log
            .iter()
            .map(|s| (s.at, s.from, s.to, s.dropped, s.packet.clone()))
            .collect::<Vec<_>>()
    };
    assert!(run(9) == run(9));
    assert!(run(9) != run(10));
}
