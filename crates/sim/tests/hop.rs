//! Hop (`docs/hop.md`) in the simulator: the proto agent, unchanged, as a
//! flow's ends and as the relay on every node in between.

use joulenet_sim::{run, Scenario};

fn scenario(text: &str) -> Scenario {
    Scenario::parse_str(text, "t", std::env::temp_dir()).expect("valid scenario")
}

fn run_once(text: &str, seed: u64) -> joulenet_sim::RunResult {
    let s = scenario(text);
    run(&s, &s.points()[0], seed, &mut |_| {}).expect("runs")
}

/// Four point-to-point hops at 1 Mbit/s, 5 % loss per link both ways.
const LOSSY_CHAIN: &str = r#"
stop = "120s"
[topology]
kind = "chain"
hops = 4
[link]
rate = "1Mbps"
delay = "10ms"
queue = 100
loss = { model = "bernoulli", rate = 0.05 }
[flow]
protocol = "hop"
app = "bulk"
bytes = "2MB"
"#;

const FILE: u64 = 2_000_000;

#[test]
fn a_file_crosses_four_lossy_hops_exactly_once() {
    let r = run_once(LOSSY_CHAIN, 1);
    let f = &r.flows[0];
    assert!(f.completed, "{f:?}");
    assert_eq!(f.bytes_delivered, FILE, "every byte, once");
    assert_eq!(f.corrupt_deliveries, 0);
    for n in &r.nodes[1..=3] {
        assert!(
            n.transit_consumed > 0,
            "node {}'s relay took no part: {n:?}",
            n.node
        );
        assert!(
            n.relay_bytes_sent > FILE,
            "node {} sent the file on",
            n.node
        );
    }
    let rate = 1e6;
    let p = 0.05;
    let ratio = f.goodput_bps / rate;
    eprintln!(
        "hop, 4 lossy hops: goodput {:.0} bit/s = {ratio:.3} of the link rate (issue's bound {:.3})",
        f.goodput_bps,
        0.8 * (1.0 - p)
    );
    assert!(
        ratio >= 0.8 * (1.0 - p),
        "goodput {ratio:.3} of the link rate, below the issue's per-hop bound"
    );
}

/// The same chain at 10 Mbit/s and 2 ms (scenarios/multihop/hbh-chain.toml's
/// links), a 10 MB file (ten 1 MB blocks), against the issue's per-hop bound
/// 0.8 (1 - p) = 0.76 of the link rate on every seed. Seeds 1-5 measure
/// 0.892, 0.890, 0.888, 0.886, 0.866. They measured 0.812, 0.742, 0.693,
/// 0.745, 0.794 while a lost BSYN or BACK (these links have no ARQ for
/// control) stalled its hop, and with H = 1 the chain, for the fixed
/// 200 ms `bsyn_retry` instead of the hop's round trip of a few ms
/// (docs/hop.md).
#[test]
fn ten_megabytes_cross_four_lossy_ten_megabit_hops_exactly_once() {
    let text = LOSSY_CHAIN
        .replace("rate = \"1Mbps\"", "rate = \"10Mbps\"")
        .replace("delay = \"10ms\"", "delay = \"2ms\"")
        .replace("bytes = \"2MB\"", "bytes = \"10MB\"");
    let mut ratios = Vec::new();
    for seed in 1..=5 {
        let r = run_once(&text, seed);
        let f = &r.flows[0];
        assert!(f.completed, "seed {seed}: {f:?}");
        assert_eq!(f.bytes_delivered, 10_000_000, "seed {seed}");
        assert_eq!(f.corrupt_deliveries, 0);
        ratios.push(f.goodput_bps / 10e6);
    }
    eprintln!("hop, 4 lossy 10 Mbit/s hops: goodput / link rate per seed {ratios:.3?} (issue's bound 0.760)");
    for (seed, ratio) in (1..).zip(&ratios) {
        assert!(
            *ratio >= 0.8 * (1.0 - 0.05),
            "seed {seed}: {ratio:.3} of the link rate, below the issue's per-hop bound: {ratios:.3?}"
        );
    }
}

/// With virtual retransmission off, a timeout sends the whole block again
/// over every hop. This used to livelock here (seeds 1, 3 and 5 stalled
/// after some blocks while the source sent data without end): an end-to-end
/// BACK was lost, the timeout (the last block round trip, ~0.39 s) was
/// shorter than sending a 1 MB block again (0.84 s), and each timeout
/// restarted the retransmission before it had left; one that did leave
/// stopped at the first relay. `agent_tests::without_virtual_retransmission_
/// a_lost_end_to_end_back_resends_the_block_to_the_destination` holds the
/// mechanism.
#[test]
fn without_virtual_retransmission_ten_megabytes_still_complete() {
    let text = LOSSY_CHAIN
        .replace("stop = \"120s\"", "stop = \"60s\"")
        .replace("rate = \"1Mbps\"", "rate = \"10Mbps\"")
        .replace("delay = \"10ms\"", "delay = \"2ms\"")
        .replace(
            "bytes = \"2MB\"",
            "bytes = \"10MB\"\nhop = { virtual_retransmission = false }",
        );
    for seed in 1..=5 {
        let r = run_once(&text, seed);
        let f = &r.flows[0];
        assert!(
            f.completed,
            "seed {seed}: {} of 10000000 bytes, {} data packets, {} timeouts",
            f.bytes_delivered, f.data_packets, f.timeouts
        );
        assert_eq!(f.bytes_delivered, 10_000_000, "seed {seed}");
        eprintln!(
            "hop without virtual retransmission, seed {seed}: {:.3} of the link rate, {} timeouts",
            f.goodput_bps / 10e6,
            f.timeouts
        );
    }
}

/// A square whose routes differ by direction: by link order, node 0
/// reaches node 3 through node 1, and node 3 reaches node 0 through node 2.
const ASYMMETRIC_SQUARE: &str = r#"
stop = "60s"
[topology]
kind = "explicit"
nodes = 4
[[topology.links]]
a = 0
b = 1
[[topology.links]]
a = 2
b = 3
[[topology.links]]
a = 0
b = 2
[[topology.links]]
a = 1
b = 3
[link]
rate = "1Mbps"
delay = "5ms"
[flow]
protocol = "hop"
app = "bulk"
bytes = "200KB"
"#;

/// The sink's BACKs go to the relay that sent the frames (node 1), not
/// along its route toward the source (through node 2, which holds no state
/// of the hop and would drop them: issue 13's §5.6.2 file that never
/// completed). Routed per destination, the file never arrives.
#[test]
fn per_hop_backs_return_over_the_link_the_frames_came_by() {
    let r = run_once(ASYMMETRIC_SQUARE, 1);
    let f = &r.flows[0];
    assert!(f.completed, "{f:?}");
    assert_eq!(f.bytes_delivered, 200_000);
    let (forward, back) = (&r.nodes[1], &r.nodes[2]);
    assert!(
        forward.transit_consumed > 0,
        "node 1 relays the blocks: {forward:?}"
    );
    // The route back does pass node 2: the end-to-end BACKs and the
    // FIN-ACK travel it, and nothing of the hop's per-hop exchange.
    assert!(back.transit_forwarded > 0, "the reverse route: {back:?}");
    assert_eq!(
        back.transit_consumed, 0,
        "node 2 took part in a hop: {back:?}"
    );
}

#[test]
fn runs_are_deterministic_per_seed() {
    let a = run_once(LOSSY_CHAIN, 7);
    let b = run_once(LOSSY_CHAIN, 7);
    assert!(a.flows[0].completed);
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.nodes), format!("{:?}", b.nodes));
    let c = run_once(LOSSY_CHAIN, 8);
    assert_ne!(
        a.flows[0].completion_time_s, c.flows[0].completion_time_s,
        "another seed draws other losses"
    );
}

/// The 802.11b chain of `scenarios/multihop/chain-80211b.toml`: nodes 200 m
/// apart, 250 m range, 550 m carrier sense, one shared channel.
const WIFI_CHAIN: &str = r#"
stop = "120s"
[topology]
kind = "chain"
hops = 4
spacing = 200
[medium]
standard = "802.11b"
range = 250
carrier_sense_range = 550
[flow]
protocol = "hop"
app = "bulk"
bytes = "1MB"
"#;

#[test]
fn a_file_crosses_a_four_hop_80211b_chain_exactly_once() {
    let r = run_once(WIFI_CHAIN, 1);
    let f = &r.flows[0];
    assert!(f.completed, "{f:?}");
    assert_eq!(f.bytes_delivered, 1_000_000);
    assert_eq!(f.corrupt_deliveries, 0);
    eprintln!(
        "hop, 4-hop 802.11b chain: goodput {:.0} bit/s in {:?} s",
        f.goodput_bps, f.completion_time_s
    );
    for n in &r.nodes[1..=3] {
        assert!(
            n.transit_consumed + n.transit_forwarded > 0,
            "node {}'s relay took no part: {n:?}",
            n.node
        );
    }
    // Nodes hear their neighbours' frames to others, and the relays living
    // there are handed them (`Agent::on_overheard`, Hop's cache of §3.2).
    let overheard = r.medium.as_ref().expect("a medium").overheard;
    assert!(overheard > 0, "no frame was overheard");
}

#[test]
fn flow_hop_options_reach_the_agents_config() {
    use joulenet_proto::hop::HopConfig;
    use joulenet_proto::Duration;
    let s = scenario(
        r#"
[flow]
protocol = "hop"
[flow.hop]
block_size = "64KB"
frame_len = 1000
txop_frames = 4
h = 3
ack_withholding = false
micro_block_threshold = "8KB"
virtual_retransmission = false
ask_next_hop = true
initial_e2e_timeout = "5s"
measured_first_timeout = true
bsyn_first = true
ttl = 9
bsyn_retry = "100ms"
withhold_idle = "1s"
pace_queue = 8
pace_poll = "5ms"
"#,
    );
    let spec = s.spec(&s.points()[0]).unwrap();
    let Some(c) = spec.flows[0].protocol.config_as::<HopConfig>() else {
        panic!("not hop: {:?}", spec.flows[0].protocol);
    };
    let want = HopConfig {
        max_block: 64_000,
        frame_len: 1000,
        txop_bytes: 4000,
        backpressure: Some(3),
        ack_withholding: false,
        bsyn_first: true,
        micro_block: Some(8000),
        virtual_retransmission: false,
        ask_next_hop: true,
        initial_e2e_timeout: Duration::from_secs(5),
        measured_first_timeout: true,
        ttl: 9,
        bsyn_retry: Duration::from_millis(100),
        withhold_idle: Duration::from_secs(1),
        pace_queue: Some(8),
        pace_poll: Duration::from_millis(5),
    };
    assert_eq!(c, &want);
    let off = scenario(
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nbackpressure = false\nmicro_blocks = false\npace_queue = false",
    );
    let spec = off.spec(&off.points()[0]).unwrap();
    let Some(c) = spec.flows[0].protocol.config_as::<HopConfig>() else {
        panic!("not hop");
    };
    assert_eq!(
        (c.backpressure, c.micro_block, c.pace_queue),
        (None, None, None)
    );
    // A smaller frame alone keeps the TXOP's 8 KB, in more frames.
    let small = scenario("[flow]\nprotocol = \"hop\"\n[flow.hop]\nframe_len = 1000");
    let spec = small.spec(&small.points()[0]).unwrap();
    let Some(c) = spec.flows[0].protocol.config_as::<HopConfig>() else {
        panic!("not hop");
    };
    assert_eq!((c.txop_bytes, c.frames_per_txop()), (8 * 1024, 8));
}

/// The lifetime mesh's five constant-rate flows (docs/reproduction/
/// lifetime.md): 500-byte messages at 32 kbit/s, a micro-block each, over
/// 2–4 contended 802.11b hops, with a 200 KB file beside them.
const CBR_MESH: &str = r#"
stop = "30s"
[topology]
kind = "random"
nodes = 20
field = [500, 500]
seed = 3
[medium]
standard = "802.11b"
reception = "log_distance"
routing = "hops"
mac = "csma"
[flow]
protocol = "hop"
app = "cbr"
rate = "32kbps"
message = 500
stop = "20s"
[[flows]]
from = 4
to = 18
[[flows]]
from = 2
to = 8
[[flows]]
from = 0
to = 12
[[flows]]
from = 13
to = 19
[[flows]]
from = 10
to = 16
[[flows]]
from = 1
to = 17
app = "bulk"
bytes = "200KB"
"#;

/// Issue 13: timed from when a micro-block was whole at the first hop, its
/// round trip was only the rest of the path, and half the blocks of these
/// flows timed out end to end (410 of 800 here). Timed from the first
/// frame (the paper's round-trip block delay), with at least twice the
/// part beyond the first hop once the block has left, 123 of 800 did (seed
/// 1). The bound, a quarter, leaves room for the timeouts that remain
/// (round trips that vary by more than that margin) and fails the old rule.
#[test]
fn a_constant_rate_source_rarely_times_out_end_to_end() {
    let r = run_once(CBR_MESH, 1);
    let cbr = &r.flows[..5];
    let blocks: u64 = 20 * 32_000 / 8 / 500 * cbr.len() as u64;
    let timeouts: u64 = cbr.iter().map(|f| f.timeouts).sum();
    eprintln!("hop, cbr mesh: {timeouts} end-to-end timeouts of {blocks} blocks");
    for f in cbr {
        assert_eq!(f.bytes_delivered, 20 * 4_000, "every message, once: {f:?}");
        assert_eq!(f.corrupt_deliveries, 0);
    }
    assert!(
        timeouts * 4 <= blocks,
        "{timeouts} timeouts of {blocks} blocks"
    );
    let file = &r.flows[5];
    assert!(file.completed, "{file:?}");
    assert_eq!(file.bytes_delivered, 200_000);
    assert_eq!(file.corrupt_deliveries, 0);
}
