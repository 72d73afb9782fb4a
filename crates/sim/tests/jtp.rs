//! JTP named by scenarios: the proto crate's eJTP ends and iJTP relays,
//! unchanged, over point-to-point chains and the JAVeLEN-like TDMA medium
//! of `scenarios/multihop/jtp-tdma.toml`.

mod common;

use common::run_seed;
use joulenet_sim::RunResult;

/// A 4-hop chain of point-to-point links losing 10% of frames; `arq` is
/// the links' retry count (JTP's per-packet attempts are honoured up to it).
fn p2p_chain(protocol: &str, arq: &str, app: &str) -> String {
    format!(
        r#"
stop = "600s"
[topology]
kind = "chain"
hops = 4
[link]
rate = "1Mbps"
delay = "2ms"
queue = 100
{arq}
loss = {{ model = "bernoulli", rate = 0.1 }}
[flow]
protocol = "{protocol}"
{app}
"#
    )
}

const FILE: &str = "app = \"bulk\"\nbytes = \"100KB\"";

/// The paper's substrate (`jtp-tdma.toml`: TDMA, stale link-state routing,
/// good/bad path-loss states) cut to 4 hops, carrying a file over JTP.
fn tdma_chain(bytes: &str) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/multihop/jtp-tdma.toml"
    );
    let text = std::fs::read_to_string(path).expect("jtp-tdma.toml");
    let text = text
        .replace("hops = 6", "hops = 4")
        .replace("stop = \"120s\"", "stop = \"600s\"")
        .replace("protocol = \"newreno\"", "protocol = \"jtp\"")
        .replace(
            "app = \"backlogged\"",
            &format!("app = \"bulk\"\nbytes = \"{bytes}\""),
        );
    assert!(text.contains("hops = 4") && text.contains("\"jtp\"") && text.contains("bulk"));
    text
}

/// The file arrived whole, once, in order, and both ends closed (the run
/// ended before its limit because the ends were done).
fn assert_file_crossed(r: &RunResult, bytes: u64) {
    let f = &r.flows[0];
    assert_eq!(f.protocol, "jtp");
    assert!(f.completed, "not completed: {f:?}");
    assert_eq!(f.bytes_delivered, bytes, "delivered exactly once");
    assert_eq!(f.corrupt_deliveries, 0, "in order, nothing repeated");
    assert!(
        !r.summary.stopped_by_limit,
        "the ends closed before the limit ({} s)",
        r.summary.duration_s
    );
}

/// iJTP saw and passed on the flow at every node between the ends, and at
/// no end.
fn assert_relays_on_every_hop(r: &RunResult) {
    let last = r.nodes.len() - 1;
    for n in &r.nodes[1..last] {
        assert!(
            n.transit_forwarded > 0,
            "node {} relayed nothing: {n:?}",
            n.node
        );
    }
    assert_eq!(r.nodes[0].transit_forwarded, 0);
    assert_eq!(r.nodes[last].transit_forwarded, 0);
}

#[test]
fn a_file_crosses_a_lossy_four_hop_chain_with_link_arq() {
    for seed in 1..=3 {
        let r = run_seed(&p2p_chain("jtp", "arq = 4", FILE), seed);
        assert_file_crossed(&r, 100_000);
        assert_relays_on_every_hop(&r);
        // 125 packets forward plus the ACKs back: each relay saw both.
        for n in &r.nodes[1..4] {
            assert!(n.transit_forwarded >= 125, "{n:?}");
        }
    }
}

#[test]
fn without_link_arq_the_relays_caches_recover_what_the_links_lose() {
    // One attempt per frame: 10% loss on each of 4 links loses ~34% of the
    // packets end to end, and a relay that holds a SNACKed packet resends
    // it itself (its own transmissions are `relay_bytes_sent`).
    let mut local = 0;
    for seed in 1..=3 {
        let r = run_seed(&p2p_chain("jtp", "", FILE), seed);
        assert_file_crossed(&r, 100_000);
        assert_relays_on_every_hop(&r);
        local += r.nodes[1..4]
            .iter()
            .map(|n| n.relay_bytes_sent)
            .sum::<u64>();
    }
    assert!(local > 0, "no relay ever resent from its cache");
}

#[test]
fn a_file_crosses_the_tdma_medium_of_jtp_tdma() {
    let text = tdma_chain("200KB");
    for seed in 1..=3 {
        let r = run_seed(&text, seed);
        assert!(r.medium.is_some(), "on the shared TDMA medium");
        assert_file_crossed(&r, 200_000);
        assert_relays_on_every_hop(&r);
    }
}

#[test]
fn a_run_is_a_pure_function_of_scenario_and_seed() {
    // Everything a run reports (the medium's counters on the shared medium,
    // the links' on the chain) as one string.
    let all = |r: &RunResult| {
        format!(
            "{:?}{:?}{:?}{:?}{}",
            r.flows, r.nodes, r.links, r.medium, r.summary.events
        )
    };
    for text in [p2p_chain("jtp", "", FILE), tdma_chain("100KB")] {
        let a = run_seed(&text, 7);
        assert_eq!(all(&a), all(&run_seed(&text, 7)));
        assert_ne!(
            all(&a),
            all(&run_seed(&text, 8)),
            "another seed, other losses"
        );
    }
}

/// Data transmissions on the forward links (every link attempt of a data
/// packet, the source's first hop included).
fn forward_attempts(r: &RunResult) -> u64 {
    r.links
        .iter()
        .filter(|l| l.from < l.to)
        .map(|l| l.attempts)
        .sum()
}

#[test]
fn jtp10_sends_less_than_jtp0_and_delivers_at_least_90_percent_of_a_lossy_stream() {
    // A 32 kb/s stream of 800-byte messages for 100 s over 4 links losing
    // 30% of frames, link ARQ up to 5 attempts: jtp0 asks every hop for the
    // MAC's 5 attempts and recovers what is lost anyway; jtp10 asks for
    // fewer (eq. 2) and gives up on holes within its 10%.
    let stream = "app = \"cbr\"\nrate = \"32kbps\"\nmessage = 800\nstop = \"100s\"";
    let lossy = |p: &str| p2p_chain(p, "arq = 4", stream).replace("rate = 0.1", "rate = 0.3");
    for seed in 1..=3 {
        let full = run_seed(&lossy("jtp0"), seed);
        let tolerant = run_seed(&lossy("jtp10"), seed);
        let (f0, f10) = (&full.flows[0], &tolerant.flows[0]);
        assert_eq!(f10.protocol, "jtp10");
        // jtp0 delivers the whole stream; the stream's packets are those
        // the source sent for the first time.
        let sent =
            |f: &joulenet_sim::result::FlowResult| (f.data_packets - f.retransmitted_packets) * 800;
        assert!(f0.completed && f10.completed);
        assert_eq!(f0.corrupt_deliveries, 0);
        assert!(sent(f0) >= 500 * 800);
        assert!(f0.bytes_delivered + 800 >= sent(f0), "{f0:?}");
        let share = f10.bytes_delivered as f64 / sent(f10) as f64;
        assert!(
            (0.9..1.0).contains(&share),
            "seed {seed}: jtp10 delivered {share:.3} of its stream"
        );
        let (a0, a10) = (forward_attempts(&full), forward_attempts(&tolerant));
        assert!(
            a10 < a0,
            "seed {seed}: jtp10 made {a10} data transmissions, jtp0 {a0}"
        );
    }
}

#[test]
fn the_names_are_listed_and_flow_jtp_options_reach_the_configuration() {
    use joulenet_proto::jtp::JtpConfig;
    use joulenet_sim::protocols::{entries, ProtocolSpec};
    for (name, lt) in [("jtp", 0.0), ("jtp0", 0.0), ("jtp10", 0.1), ("jtp20", 0.2)] {
        assert!(
            entries().any(|e| e.name == name && e.about.starts_with("JTP")),
            "{name} is not in `joulenet list`"
        );
        let spec = ProtocolSpec::named(name).unwrap();
        let Some(c) = spec.config_as::<JtpConfig>() else {
            panic!("{name} does not name JTP");
        };
        assert_eq!(c.loss_tolerance, lt);
    }
    let s = common::scenario(
        r#"
[topology]
kind = "chain"
hops = 3
[flow]
protocol = "jtp"
[flow.jtp]
loss_tolerance = 0.05
format = "paper"
packet_size = 500
energy_budget_uj = 90000
cache_packets = 20
feedback_lower_bound = "2s"
initial_rate = "100kbps"
max_attempts = 3
monitor = { outliers_to_switch = 4 }
controller = { k_i = 0.25 }
priority_pattern = [1, 0, 0]
priority_tolerance = [0.2, 0]
"#,
    );
    let spec = s.spec(&s.points()[0]).unwrap();
    let Some(c) = spec.flows[0].protocol.config_as::<JtpConfig>() else {
        panic!("not JTP");
    };
    let want = JtpConfig {
        loss_tolerance: 0.05,
        format: joulenet_wire::jtp::Format::Paper,
        packet_size: 500,
        energy_budget_uj: 90_000,
        cache_packets: 20,
        feedback_lower_bound: joulenet_proto::Duration::from_secs(2),
        initial_rate_bps: 100_000.0,
        max_attempts: 3,
        monitor: joulenet_proto::jtp::monitor::FlipFlopConfig {
            outliers_to_switch: 4,
            ..Default::default()
        },
        controller: joulenet_proto::jtp::controller::Pi2MdConfig {
            k_i: 0.25,
            ..Default::default()
        },
        priorities: joulenet_proto::jtp::priority::Priorities {
            pattern: vec![1, 0, 0],
            tolerance: vec![0.2, 0.0],
        },
        ..JtpConfig::default()
    };
    assert_eq!(c, &want);
    // The relays run with the same options (one class for the flow).
    let relay = spec.flows[0].protocol.relay().expect("iJTP on every hop");
    assert_eq!(relay.nodes, joulenet_sim::relays::RelayNodes::Every);
    // A node's one cache serves JTP flows of any loss tolerance (§4), but
    // not flows whose relays would need other options.
    let key = |p: &ProtocolSpec| p.relay_key();
    let (j0, j10) = (
        ProtocolSpec::named("jtp0").unwrap(),
        ProtocolSpec::named("jtp10").unwrap(),
    );
    assert_eq!(key(&j0), key(&j10));
    assert_ne!(key(&j0), key(&spec.flows[0].protocol));
}

#[test]
fn under_tdma_the_available_rate_follows_recent_use_so_jtp_does_not_flood_the_mac() {
    // Two backlogged JTP flows over 4 TDMA hops (scenarios/jtp/linear.toml).
    // The MAC's available rate is the recent idle share of a link's slots:
    // once the path is saturated the rate stamped falls to ~0 and PI²/MD
    // stops increasing. (With the idle share since the start of the run,
    // the estimate stayed ~100 kb/s on saturated links, the granted rate
    // kept climbing, and a quarter of JTP's frames died in MAC queues.)
    // Measured on seeds 1-3: 1.6-4.3% of frames, and 1.9-5.3% since a
    // feedback may name more holes than one ACK holds (relays then resend
    // more of their caches at once). Since the medium stopped counting
    // frames sent without a link ACK (routing advertisements) as failed
    // attempts, links' loss estimates are no longer inflated, iJTP's
    // effective available rate (the available rate over the mean attempts)
    // is higher, and JTP fills the queues more: 5.8-16.3% on seeds 1-6
    // (9.9, 10.7, 5.8 on the three below), with less energy per delivered
    // bit (docs/reproduction/jtp.md § Fig. 6). Part of it was ours: the
    // MAC counted a slot as carrying 1500 bytes where it carries one
    // ~850-byte JTP frame, so it promised 1.8 times the rate it served;
    // counted by the frames it sends, 6.8-10.8% (seeds 1-6; mean 8.6%
    // against 10.1%). The rest is PI²/MD with δ = 0 as the paper sets it:
    // it raises the rate while any idle share is left, so it stops only
    // once the bottleneck's slots are all used and its queue grows. The
    // bound, 20%, still separates the bug above.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/jtp/linear.toml"
    );
    let text = std::fs::read_to_string(path).expect("linear.toml");
    let cut = text.find("[sweep]").expect("a sweep");
    let text = format!("{}\n", &text[..cut]).replace("stop = \"300s\"", "stop = \"150s\"");
    for seed in 1..=3 {
        let r = run_seed(&text, seed);
        let m = r.medium.as_ref().expect("TDMA medium");
        assert!(
            (m.queue_drops as f64) < 0.20 * m.data_tx as f64,
            "seed {seed}: {} of {} frames dropped from MAC queues",
            m.queue_drops,
            m.data_tx
        );
        assert!(
            r.flows.iter().all(|f| f.bytes_delivered > 100_000),
            "{:?}",
            r.flows
        );
    }
}

/// A bulk transfer of `packets` 800-byte JTP packets over a chain of
/// `hops` point-to-point links whose every attempt loses a data frame with
/// probability `p` (ACKs are never lost, as in the analysis), the MAC
/// making up to `attempts` attempts per frame; `cache_packets` 0 turns the
/// relays' caches off.
fn analytic_chain(hops: u32, p: f64, attempts: u32, cache_packets: usize, packets: u64) -> String {
    format!(
        r#"
stop = "3000s"
[topology]
kind = "chain"
hops = {hops}
[link]
rate = "1Mbps"
delay = "2ms"
queue = 1000
arq = {retries}
loss = {{ model = "bernoulli", rate = {p} }}
loss_reverse = "none"
[flow]
protocol = "jtp"
app = "bulk"
bytes = {bytes}
[flow.jtp]
cache_packets = {cache_packets}
max_attempts = {attempts}
feedback_lower_bound = "500ms"
feedback_packets = 8
initial_rate = "200kbps"
"#,
        retries = attempts - 1,
        bytes = packets * 800,
    )
}

/// Mean data transmissions (forward link attempts) over `seeds`; each
/// run delivers the whole file.
fn mean_transmissions(text: &str, seeds: u64) -> f64 {
    let mut total = 0;
    for seed in 1..=seeds {
        let r = run_seed(text, seed);
        assert_file_crossed(&r, r.flows[0].bytes_requested.unwrap());
        total += forward_attempts(&r);
    }
    total as f64 / seeds as f64
}

/// Prints the measured ratios (run by hand to refresh the comment above
/// `transmissions_follow_equations_5_and_6_with_and_without_caches`).
#[test]
#[ignore]
fn print_the_analytic_check() {
    use joulenet_proto::jtp::analytic::*;
    for (hops, p, n) in [
        (4u32, 0.3, 5u32),
        (6, 0.5, 5),
        (4, 0.3, 2),
        (6, 0.4, 2),
        (4, 0.1, 1),
    ] {
        let c = mean_transmissions(&analytic_chain(hops, p, n, 1000, 250), 8);
        let u = mean_transmissions(&analytic_chain(hops, p, n, 0, 250), 8);
        let pct = |a: f64, b: f64| 100.0 * (a / b - 1.0);
        println!(
            "H {hops}, p {p}, n {n}: {c} {:+.1}% | {u} {:+.1}% | {:+.1}%",
            pct(c, expected_with_cache(250.0, hops, p)),
            pct(u, expected_no_cache_exact(250.0, hops, p, n)),
            pct(u, expected_no_cache(250.0, hops, p, n)),
        );
    }
}

#[test]
fn transmissions_follow_equations_5_and_6_with_and_without_caches() {
    // §4's analysis on a chain of point-to-point links: 250 packets, each
    // link attempt losing a data frame with probability p, the MAC making
    // up to n attempts (JTP's max_attempts, honoured by the links' ARQ),
    // ACKs never lost; forward link attempts counted, mean of 8 seeds.
    //
    // With caches (1000 packets) every loss is repaired by the node before
    // the link, as equation 5 assumes. Without them (0 packets) a frame that
    // exhausts its n attempts is resent by the source. Measured (the run
    // against eq. 5 | against the exact no-cache expectation | against
    // eq. 6 as printed):
    //
    //   H 4, p 0.3, n 5:  1433 +0.3% | 1435 +0.1% |  −0.3%
    //   H 6, p 0.5, n 5:  2995 −0.2% | 3249 −0.1% |  −7.6%
    //   H 4, p 0.3, n 2:  1429 +0.0% | 1668 +0.8% | −12.0%
    //   H 6, p 0.4, n 2:  2522 +0.9% | 4088 +1.2% | −31.6%
    //   H 4, p 0.1, n 1:  1116 +0.4% | 1318 +0.5% | −13.6%
    //
    // Equation 5 holds within 1% everywhere. At n = 5 and p = 0.3 caching
    // saves almost nothing (the MAC's 5 attempts lose 0.24% of frames per
    // link); at n ≤ 2 it saves 14–38%. Equation 6 holds within 10%
    // only where pⁿ is small (the paper's n = 5): as printed it is an upper
    // bound, not the expectation — it charges every link the survival
    // factor (1 − pⁿ)^−(H−1) of the last one, where link j is reached by
    // only a (1 − pⁿ)^j share of the source's sends
    // (`joulenet_proto::jtp::analytic`). The run follows the exact sum
    // within 1% and stays below eq. 6. Nothing here is tuned.
    use joulenet_proto::jtp::analytic::{
        expected_no_cache, expected_no_cache_exact, expected_with_cache,
    };
    let k = 250u64;
    let cases = [
        (4u32, 0.3, 5u32, true),
        (6, 0.5, 5, true),
        (4, 0.3, 2, false),
        (6, 0.4, 2, false),
        (4, 0.1, 1, false),
    ];
    for (hops, p, n, eq6_close) in cases {
        let cached = mean_transmissions(&analytic_chain(hops, p, n, 1000, k), 8);
        let uncached = mean_transmissions(&analytic_chain(hops, p, n, 0, k), 8);
        let kf = k as f64;
        let eq5 = expected_with_cache(kf, hops, p);
        let eq6 = expected_no_cache(kf, hops, p, n);
        let exact = expected_no_cache_exact(kf, hops, p, n);
        let case = format!("H {hops} p {p} n {n}: cached {cached} (eq. 5 {eq5:.0}), uncached {uncached} (eq. 6 {eq6:.0}, exact {exact:.0})");
        assert!((cached / eq5 - 1.0).abs() < 0.10, "{case}");
        assert!((uncached / exact - 1.0).abs() < 0.10, "{case}");
        if eq6_close {
            assert!((uncached / eq6 - 1.0).abs() < 0.10, "{case}");
        }
        assert!(uncached <= eq6 * 1.01, "{case}: eq. 6 bounds it");
        if exact > 1.05 * eq5 {
            assert!(uncached > cached, "{case}: caches save transmissions");
        }
    }
}

/// On 802.11 (the default `csma` medium, DCF) the available rate JTP's
/// relays stamp comes from the service time of each station's frames
/// (`medium/service.rs`). Without it the stations reported none, the
/// destination never raised the rate, and a 500 KB file crawled at the
/// initial 64 kbit/s (0.061 Mbit/s goodput, 65 s); with it the rate rises
/// (0.100 Mbit/s over 40 s on seed 1; the paper's 10 s feedback lower bound
/// paces the increase).
#[test]
fn on_802_11_the_service_time_gives_an_available_rate_and_the_rate_rises() {
    let text = r#"
stop = "300s"
[topology]
kind = "chain"
hops = 4
spacing = 150
[medium]
standard = "802.11b"
range = 250
reception = "log_distance"
routing = "hops"
[flow]
protocol = "jtp"
app = "bulk"
bytes = "500KB"
"#;
    for seed in 1..=3 {
        let r = run_seed(text, seed);
        assert_file_crossed(&r, 500_000);
        let f = &r.flows[0];
        let goodput = f.goodput_bps;
        assert!(
            goodput > 1.3 * 64_000.0,
            "seed {seed}: {goodput:.0} bit/s, not above the initial 64 kbit/s"
        );
    }
}

/// Priorities act on the hops (§3): one key packet in four with tolerance
/// 0, the rest with 30%. Over 4 links losing 30% of frames, link ARQ up to
/// 5 attempts, the relays give key packets the MAC's 5 attempts and the
/// rest fewer (equation 2): the stream costs fewer data transmissions than
/// jtp0's and more than a flat 30% tolerance's, and delivers at least
/// every key packet and 70% of the rest.
#[test]
fn priorities_set_per_packet_attempts_between_jtp0_and_a_flat_tolerance() {
    let stream = "app = \"cbr\"\nrate = \"32kbps\"\nmessage = 800\nstop = \"100s\"";
    let lossy = |p: &str, extra: &str| {
        p2p_chain(p, "arq = 4", stream).replace("rate = 0.1", "rate = 0.3") + extra
    };
    let keyed = "[flow.jtp]\npriority_pattern = [1, 0, 0, 0]\npriority_tolerance = [0.3, 0.0]\n";
    let flat = "[flow.jtp]\nloss_tolerance = 0.3\n";
    for seed in 1..=2 {
        let a0 = forward_attempts(&run_seed(&lossy("jtp0", ""), seed));
        let r = run_seed(&lossy("jtp", keyed), seed);
        let ak = forward_attempts(&r);
        let af = forward_attempts(&run_seed(&lossy("jtp", flat), seed));
        assert!(
            af < ak && ak < a0,
            "seed {seed}: flat {af}, keyed {ak}, jtp0 {a0}"
        );
        let f = &r.flows[0];
        let sent = (f.data_packets - f.retransmitted_packets) * 800;
        let share = f.bytes_delivered as f64 / sent as f64;
        assert!(
            (0.25 + 0.75 * 0.7..1.0).contains(&share),
            "seed {seed}: delivered {share:.3} of the stream"
        );
    }
}
