//! JTP beside the paper's two baselines (§6.1) on the same test chain: 4
//! links of 1 Mbit/s and 10 ms losing 5% of packets both ways, a 100 KB
//! file (125 packets of 800 bytes), seeds 1–4. The testnet's links report
//! no available rate, so JTP and ATP keep their initial 200 kb/s (halved
//! when feedback is late) while rate-sack finds its rate from the PFTK
//! equation: a check that all three run on one chain and a record of what
//! each costs there, not the paper's experiment (that needs the
//! simulator's TDMA medium). Run with `--nocapture` to see the table.

use crate::atp::{AtpConfig, AtpReceiver, AtpRelay, AtpSender};
use crate::net::{Addr, Agent};
use crate::tcp::{TcpAgent, TcpConfig};
use crate::testnet::{pattern, DropFn, Forwarder, World};
use crate::time::{Duration, Time};

use super::{JtpConfig, JtpReceiver, JtpRelay, JtpSender};

const HOPS: usize = 4;
const BYTES: usize = 100_000;
const PACKETS: f64 = (BYTES / 800) as f64;

fn lossy(seed: u64) -> DropFn {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    Box::new(move |_, _, _, _| rng.random::<f64>() < 0.05)
}

fn relays(make: impl Fn() -> Box<dyn Agent>) -> Vec<Box<dyn Agent>> {
    (1..HOPS).map(|_| make()).collect()
}

fn world(protocol: &str) -> World {
    let server = Addr::new(HOPS as u32, 1);
    let (client, relays, sink): (Box<dyn Agent>, _, Box<dyn Agent>) = match protocol {
        "jtp" => {
            let c = JtpConfig {
                feedback_lower_bound: Duration::from_millis(200),
                feedback_packets: 8,
                initial_rate_bps: 200_000.0,
                ..JtpConfig::default()
            };
            (
                Box::new(JtpSender::new(c.clone(), server).unwrap()),
                relays(|| Box::new(JtpRelay::new(c.clone()).unwrap())),
                Box::new(JtpReceiver::new(c.clone()).unwrap()),
            )
        }
        "atp" => {
            let c = AtpConfig {
                feedback_period: Duration::from_millis(300),
                initial_rate_bps: 200_000.0,
                ..AtpConfig::default()
            };
            (
                Box::new(AtpSender::new(c.clone(), server).unwrap()),
                relays(|| Box::new(AtpRelay::new(c.clone()).unwrap())),
                Box::new(AtpReceiver::new(c.clone()).unwrap()),
            )
        }
        _ => {
            let c = TcpConfig {
                mss: 800,
                ..TcpConfig::rate_sack()
            };
            (
                Box::new(TcpAgent::client(c.clone(), server)),
                relays(|| Box::<Forwarder>::default()),
                Box::new(TcpAgent::server(c)),
            )
        }
    };
    World::chain(client, relays, sink, pattern(BYTES))
}

/// (completion time s, link transmissions toward the receiver and back).
fn run(protocol: &str, seed: u64) -> (f64, usize, usize) {
    let mut w = world(protocol);
    w.drop = lossy(seed);
    w.start();
    assert!(w.run(Time::from_secs(3000)), "{protocol} seed {seed}");
    assert!(w.delivered == pattern(BYTES), "{protocol} seed {seed}");
    let forward = w.log.iter().filter(|s| s.to > s.from).count();
    let back = w.log.len() - forward;
    let done = w.events.iter().any(|(i, _)| *i == 0);
    assert!(done, "{protocol} seed {seed}: the source closed");
    (w.now.as_secs_f64(), forward, back)
}

#[test]
fn jtp_rate_sack_and_atp_each_deliver_the_file_on_one_chain() {
    println!("protocol: goodput kb/s, link transmissions per delivered packet forward + back");
    for protocol in ["jtp", "rate-sack", "atp"] {
        let seeds = 1..=4u64;
        let runs: Vec<_> = seeds.map(|s| run(protocol, s)).collect();
        let n = runs.len() as f64;
        let goodput = runs.iter().map(|r| BYTES as f64 * 8.0 / r.0).sum::<f64>() / n;
        let fwd = runs.iter().map(|r| r.1 as f64).sum::<f64>() / n / PACKETS;
        let back = runs.iter().map(|r| r.2 as f64).sum::<f64>() / n / PACKETS;
        println!(
            "{protocol}: {:.1} kb/s, {fwd:.2} + {back:.2}",
            goodput / 1e3
        );
        // Every packet crosses 4 links at least once.
        assert!(fwd >= HOPS as f64, "{protocol}: {fwd}");
    }
}
