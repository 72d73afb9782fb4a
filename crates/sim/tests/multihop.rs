//! The shared wireless medium and its 802.11 MAC against independent
//! references: Bianchi's DCF saturation model, hidden terminals and RTS/CTS,
//! TCP over a multi-hop chain, energy as power integrated over time, and
//! determinism.

mod common;

use common::{run_seed, scenario};
use joulenet_sim::{ParamPoint, RunResult};

fn run(text: &str) -> RunResult {
    run_seed(text, 1)
}

/// Bianchi (2000), "Performance analysis of the IEEE 802.11 distributed
/// coordination function", eqs. (7), (9), (13): saturation throughput in
/// bit/s of `n` stations, window W, m backoff stages, slot σ, durations of a
/// success Ts and a collision Tc, payload P bits.
fn bianchi(n: usize, w: f64, m: i32, sigma: f64, ts: f64, tc: f64, payload: f64) -> f64 {
    let mut tau: f64 = 0.1;
    for _ in 0..10_000 {
        let p = 1.0 - (1.0 - tau).powi(n as i32 - 1);
        let t = 2.0 * (1.0 - 2.0 * p)
            / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m)));
        tau = 0.5 * tau + 0.5 * t;
    }
    let ptr = 1.0 - (1.0 - tau).powi(n as i32);
    let ps = n as f64 * tau * (1.0 - tau).powi(n as i32 - 1) / ptr;
    ps * ptr * payload / ((1.0 - ptr) * sigma + ptr * ps * ts + ptr * (1.0 - ps) * tc)
}

/// n saturated 802.11b stations around one receiver: aggregate goodput
/// within 10% of Bianchi's model. Timings written out here from the
/// standard (not taken from the simulator): 1000-byte UDP payloads in a
/// 1064-byte PSDU (IP 20 + UDP 8 + MAC header/FCS 28 + LLC 8) at 11 Mbit/s
/// after a 192 µs long PLCP; ACK 14 bytes at 2 Mbit/s; SIFS 10, DIFS 50,
/// slot 20 µs; CW 31..1023 (W = 32, m = 5). A collision costs the frame plus
/// EIFS = SIFS + ACK + DIFS, as a success does.
#[test]
fn dcf_saturation_throughput_matches_bianchi() {
    let t_data = 192e-6 + 1064.0 * 8.0 / 11e6;
    let t_ack = 192e-6 + 14.0 * 8.0 / 2e6;
    let ts = t_data + 10e-6 + t_ack + 50e-6;
    let tc = ts;
    for n in [1usize, 5, 10] {
        let r = run(&format!(
            r#"
stop = "10s"
[topology]
kind = "cells"
stations = {n}
radius = 30
[medium]
standard = "802.11b"
[flow]
protocol = "udp"
app = "cbr"
rate = "8Mbps"
message = 1000
"#
        ));
        let measured: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
        let model = bianchi(n, 32.0, 5, 20e-6, ts, tc, 8000.0);
        let ratio = measured / model;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "n = {n}: {measured:.0} bit/s vs Bianchi {model:.0} bit/s"
        );
        let m = r.medium.as_ref().unwrap();
        if n == 1 {
            assert_eq!(m.data_collisions, 0);
        } else {
            assert!(m.data_collisions > 0, "n = {n}: no collisions");
        }
    }
}

#[test]
fn mac_acks_go_at_the_configured_basic_rate() {
    // One saturated station: each frame costs DIFS, the mean backoff
    // (15.5 slots), the data frame, SIFS and the ACK, which goes at the
    // highest basic rate not above the data rate.
    let goodput = |basic: &str| {
        let r = run(&format!(
            r#"
stop = "10s"
[topology]
kind = "cells"
stations = 1
radius = 30
[medium]
standard = "802.11b"
{basic}
[flow]
protocol = "udp"
app = "cbr"
rate = "8Mbps"
message = 1000
"#
        ));
        r.flows[0].goodput_bps
    };
    let service = |ack_rate: f64| {
        50e-6 + 15.5 * 20e-6 + 192e-6 + 1064.0 * 8.0 / 11e6 + 10e-6 + 192e-6 + 112.0 / ack_rate
    };
    let default = goodput("");
    let one = goodput("basic_rates = [\"1Mbps\", \"2Mbps\", \"12Mbps\"]\nrate = \"5.5Mbps\"");
    let one_only = goodput("basic_rates = [\"1Mbps\"]");
    // 12 Mbit/s is above the 5.5 Mbit/s data rate: 2 Mbit/s is chosen.
    let at_5_5 =
        |ack| 50e-6 + 15.5 * 20e-6 + 192e-6 + 1064.0 * 8.0 / 5.5e6 + 10e-6 + 192e-6 + 112.0 / ack;
    assert!(one < default);
    let ratio = (default / one_only) / (service(1e6) / service(2e6));
    assert!((0.98..=1.02).contains(&ratio), "1 Mbit/s ACKs: {ratio}");
    let ratio = (default / one) / (at_5_5(2e6) / service(2e6));
    assert!((0.98..=1.02).contains(&ratio), "5.5 Mbit/s data: {ratio}");
}

fn hidden_pair(rts: &str) -> RunResult {
    run(&format!(
        r#"
stop = "10s"
[topology]
kind = "explicit"
positions = [[0, 0], [200, 0], [400, 0]]
names = ["a", "b", "c"]
[medium]
range = 250
carrier_sense_range = 250
interference_range = 250
rts_threshold = {rts}
[flow]
protocol = "udp"
app = "cbr"
rate = "6Mbps"
to = "b"
[[flows]]
from = "a"
[[flows]]
from = "c"
"#
    ))
}

/// a and c cannot sense each other but both reach b: their data frames
/// collide at b. RTS/CTS (every frame) removes almost all data collisions.
#[test]
fn hidden_terminals_collide_and_rts_cts_removes_it() {
    let basic = hidden_pair("false");
    let rts = hidden_pair("0");
    let (mb, mr) = (basic.medium.unwrap(), rts.medium.unwrap());
    assert!(
        mb.data_collisions * 10 > mb.data_tx,
        "basic access: only {} of {} data frames collided",
        mb.data_collisions,
        mb.data_tx
    );
    assert_eq!(mb.rts_tx, 0);
    assert!(mr.rts_tx > 0 && mr.cts_tx > 0);
    assert!(
        mr.data_collisions * 20 < mb.data_collisions,
        "RTS/CTS: {} data collisions vs {} without",
        mr.data_collisions,
        mb.data_collisions
    );
    for f in basic.flows.iter().chain(&rts.flows) {
        assert!(f.goodput_bps > 1e6, "{}: starved", f.label);
    }
}

/// With carrier sense covering every pair, no data collision is left to
/// hidden terminals: one receiver, stations all in range, only same-slot
/// collisions remain, and a single sender sees none.
#[test]
fn a_single_sender_never_collides() {
    let r = run(r#"
stop = "5s"
[topology]
kind = "chain"
hops = 1
[medium]
[flow]
protocol = "udp"
app = "cbr"
rate = "8Mbps"
"#);
    let m = r.medium.unwrap();
    assert_eq!(m.collisions, 0);
    assert_eq!(m.retransmissions, 0);
    assert!(m.data_delivered > 1000);
}

fn chain(hops: u32) -> RunResult {
    chain_with(
        hops,
        "protocol = \"newreno\"\napp = \"backlogged\"\ntcp = { mss = 1000 }",
    )
}

/// TCP NewReno over an 802.11b chain (200 m spacing, 250 m range, 550 m
/// carrier sense): 4–6 Mbit/s over one hop and goodput falling with the
/// hop count as intra-flow contention and hidden terminals set in.
#[test]
fn newreno_goodput_falls_along_an_80211b_chain() {
    let g: Vec<f64> = (1..=7).map(|h| chain(h).flows[0].goodput_bps).collect();
    let mbps: Vec<String> = g.iter().map(|x| format!("{:.2}", x / 1e6)).collect();
    assert!((4e6..=6e6).contains(&g[0]), "1 hop: {mbps:?}");
    for h in 1..4 {
        assert!(g[h] < g[h - 1], "not falling at {} hops: {mbps:?}", h + 1);
    }
    for (h, &x) in g.iter().enumerate().skip(4) {
        assert!(x < g[2] && x > 0.0, "{} hops: {mbps:?}", h + 1);
    }
    assert!(g[6] < g[3] && g[6] < g[0] / 4.0, "{mbps:?}");
}

/// Every radio on the medium: energy = Σ power × time in each state, the
/// states fill the run, and the transmit time is the airtime the MAC put on
/// the medium. Overhearing nodes are charged for reception.
#[test]
fn medium_energy_is_power_integrated_over_time() {
    let r = run(r#"
stop = "5s"
[topology]
kind = "chain"
hops = 3
[medium]
radio = { tx = "1.65W", rx = "1.4W", idle = "1.2W", sleep = "0.05W" }
[flow]
protocol = "newreno"
app = "backlogged"
"#);
    let m = r.medium.as_ref().unwrap();
    let duration = r.summary.duration_s;
    for n in &r.nodes {
        let sum = n.tx_s + n.rx_s + n.idle_s;
        assert!(
            (sum - duration).abs() < 1e-6,
            "{}: {sum} s of {duration}",
            n.name
        );
        let e = 1.65 * n.tx_s + 1.4 * n.rx_s + 1.2 * n.idle_s;
        assert!(
            (e - n.energy_j).abs() < 1e-6,
            "{}: {e} vs {}",
            n.name,
            n.energy_j
        );
        let airtime = m.tx_airtime_s[n.node as usize];
        // Equal but for a frame still on the air at the stop time.
        let cut = airtime - n.tx_s;
        assert!(
            (-1e-9..2e-3).contains(&cut),
            "{}: {airtime} vs {}",
            n.name,
            n.tx_s
        );
        assert!(n.tx_s > 0.0 && n.rx_s > 0.0, "{}", n.name);
    }
    // Node 0 receives (ACKs, overheard forwards) and the end nodes idle more.
    assert!(m.overheard > 0);
    let total: f64 = r.nodes.iter().map(|n| n.energy_j).sum();
    assert!((total - r.summary.energy_j).abs() < 1e-6);
}

/// Same scenario and seed, same results; another seed, other results.
#[test]
fn medium_runs_are_deterministic() {
    let text = r#"
stop = "3s"
[topology]
kind = "random"
nodes = 12
field = [400, 400]
seed = 7
[medium]
reception = "log_distance"
[flow]
protocol = "newreno"
app = "backlogged"
[[flows]]
from = 0
to = 11
[[flows]]
from = 3
to = 8
"#;
    let json = |seed| {
        let s = scenario(text);
        let r = joulenet_sim::run(&s, &ParamPoint::new(), seed, &mut |_| {}).unwrap();
        let mut v = serde_json::to_value(&r).unwrap();
        v["summary"]["events"] = serde_json::Value::Null;
        (v.to_string(), r)
    };
    let (a, ra) = json(5);
    let (b, _) = json(5);
    let (c, _) = json(6);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(ra.flows.iter().all(|f| f.bytes_delivered > 0));
}

/// A TXOP lets one saturated sender send back to back (SIFS apart) instead
/// of contending for every frame: more goodput than plain DCF.
#[test]
fn txop_bursts_raise_single_sender_goodput() {
    let goodput = |txop: &str| {
        run(&format!(
            r#"
stop = "5s"
[topology]
kind = "chain"
hops = 1
[medium]
standard = "802.11g-54"
txop = "{txop}"
[flow]
protocol = "udp"
app = "cbr"
rate = "60Mbps"
"#
        ))
        .flows[0]
            .goodput_bps
    };
    let (plain, burst) = (goodput("0us"), goodput("8160us"));
    assert!(burst > 1.15 * plain, "txop {burst:.0} vs dcf {plain:.0}");
}

fn grid_flow(outage: &str) -> RunResult {
    run(&format!(
        r#"
stop = "20s"
[topology]
kind = "grid"
rows = 2
cols = 3
spacing = 200
[medium]
range = 250
{outage}
[flow]
protocol = "newreno"
app = "backlogged"
"#
    ))
}

/// A 2 × 3 grid offers two disjoint paths between opposite corners. When a
/// node of the first fails, routes move to the other and the flow goes on;
/// the failed node's radio is off (no energy but the off power) meanwhile.
#[test]
fn routes_follow_a_node_failure() {
    let healthy = grid_flow("");
    let failed = grid_flow(
        r#"[[medium.outages]]
node = 1
start = "2s"
duration = "100s""#,
    );
    let (h, f) = (&healthy.flows[0], &failed.flows[0]);
    assert!(
        f.goodput_bps > 0.6 * h.goodput_bps,
        "{} vs {}",
        f.goodput_bps,
        h.goodput_bps
    );
    let n1 = &failed.nodes[1];
    // Awake until the failure at 2 s (plus the frame then on the air).
    assert!((n1.tx_s + n1.rx_s + n1.idle_s - 2.0).abs() < 2e-3, "{n1:?}");
}

/// The Hop paper's alternating outages of the 3rd and 5th node of a 7-hop
/// path: the flow stalls during each and resumes after; each node is off
/// exactly as long as scheduled.
#[test]
fn scheduled_partitions_alternate() {
    let r = run(r#"
stop = "60s"
[topology]
kind = "chain"
hops = 7
[medium]
routing = "dtn"
[[medium.outages]]
node = 3
start = "10s"
duration = "5s"
period = "20s"
[[medium.outages]]
node = 5
start = "20s"
duration = "5s"
period = "20s"
[flow]
protocol = "newreno"
app = "backlogged"
"#);
    let awake = |n: usize| r.nodes[n].tx_s + r.nodes[n].rx_s + r.nodes[n].idle_s;
    // Node 3 is off 3 × 5 s, node 5 2 × 5 s (its third outage would start
    // at the stop time); each recovery takes the radio's 200 ms off-to-on
    // transition. (Tolerance: a frame on the air when the node fails.)
    assert!((awake(3) - 44.4).abs() < 2e-3, "node 3 awake {}", awake(3));
    assert!((awake(5) - 49.6).abs() < 2e-3, "node 5 awake {}", awake(5));
    assert!((awake(4) - 60.0).abs() < 1e-6);
    assert!(r.flows[0].bytes_delivered > 500_000);
}

/// Good/bad path-loss states per link (the JTP paper's channel: bad 10% of
/// the time, mean bad period 3 s): a light CBR flow over a link that the bad
/// state cuts delivers about 90% of its data.
#[test]
fn link_states_alternate_good_and_bad() {
    let r = run(r#"
stop = "1200s"
[topology]
kind = "chain"
hops = 1
spacing = 50
[medium]
range = 250
reception = { exponent = 3, snr_at_range_db = 3, snr50_db = 4, width_db = 1 }
fading = { mean_good = "27s", mean_bad = "3s", extra_loss_db = 40 }
queue = 5
[flow]
protocol = "udp"
app = "cbr"
rate = "400kbps"
"#);
    let f = &r.flows[0];
    let sent = 400_000.0 / 8.0 * 1200.0;
    let ratio = f.bytes_delivered as f64 / sent;
    assert!((0.84..=0.96).contains(&ratio), "delivered {ratio:.3}");
}

/// Random-waypoint mobility with fading and DTN routing: runs, delivers,
/// and is a pure function of (scenario, seed).
#[test]
fn random_waypoint_mesh_is_deterministic() {
    let text = r#"
stop = "60s"
[topology]
kind = "random"
nodes = 20
field = [90, 90]
seed = 2
[medium]
range = 40
reception = "log_distance"
routing = "dtn"
fading = {}
mobility = { speed = 5, pause = "10s" }
[flow]
protocol = "newreno"
app = "backlogged"
"#;
    let a = run(text);
    let b = run(text);
    assert_eq!(
        serde_json::to_string(&a.flows).unwrap(),
        serde_json::to_string(&b.flows).unwrap()
    );
    assert!(a.flows[0].bytes_delivered > 0);
}

/// Bad `[medium]` and positioned-topology input is rejected with an error
/// naming the key, never a panic.
#[test]
fn medium_errors_name_the_key() {
    let cases: &[(&str, &str)] = &[
        ("[medium]\nmac = \"aloha\"", "medium.mac"),
        ("[medium]\nstandard = \"802.11n\"", "medium.standard"),
        ("[medium]\nrang = 100", "medium.rang"),
        ("[medium]\nrange = -5", "medium.range"),
        (
            "[medium]\nrange = 100\ninterference_range = 50",
            "medium.interference_range",
        ),
        ("[medium]\nrate = \"0bps\"", "medium.rate"),
        ("[medium]\nfading = {}", "medium.fading"),
        (
            "[medium]\nreception = { exponent = -1 }",
            "medium.reception.exponent",
        ),
        ("[medium]\nrouting = \"aodv\"", "medium.routing"),
        ("[medium]\ntdma_slots = 8", "medium.tdma_slots"),
        (
            "[medium]\nmac = \"tdma\"\ntdma_slots = 0",
            "medium.tdma_slots",
        ),
        (
            "[medium]\ncapture_threshold_db = -3",
            "medium.capture_threshold_db",
        ),
        (
            "[medium]\npropagation_delay = \"yes\"",
            "medium.propagation_delay",
        ),
        (
            "[medium]\nrouting = \"link_state\"\nrouting_updates = \"radio\"",
            "medium.routing_updates",
        ),
        (
            "[medium]\nrouting = \"hops\"\nrouting_updates = \"air\"",
            "medium.routing_updates",
        ),
        (
            "[medium]\nmac = \"tdma\"\nrouting = \"link_state\"\nrouting_updates = \"air\"",
            "medium.routing_updates",
        ),
        (
            "[medium]\n[[medium.outages]]\nnode = 9\nduration = \"1s\"",
            "medium.outages[0].node",
        ),
        (
            "[medium]\n[[medium.outages]]\nnode = 1\nduration = \"2s\"\nperiod = \"1s\"",
            "medium.outages[0].period",
        ),
        (
            "[medium]\n[[medium.links]]\na = 0\nb = 1\nper = 2",
            "medium.links[0].per",
        ),
        (
            "[medium]\nmobility = { speed = 0 }",
            "medium.mobility.speed",
        ),
        (
            "[medium]\nmobility = { nodes = [\"x\"] }",
            "medium.mobility.nodes[0].node",
        ),
        ("[topology]\nkind = \"ring\"\n[medium]", "topology.kind"),
        ("[topology]\nkind = \"chain\"\n[medium]", "topology.hops"),
        (
            "[topology]\nkind = \"grid\"\nrows = 1\ncols = 1\n[medium]",
            "topology.cols",
        ),
        (
            "[topology]\nkind = \"explicit\"\npositions = [[0, 0]]\n[medium]",
            "topology.positions",
        ),
        (
            "[topology]\nkind = \"explicit\"\npositions = [[0, 0], [1]]\n[medium]",
            "topology.positions",
        ),
        (
            "[topology]\nkind = \"random\"\nnodes = 5\nfield = [100000, 100000]\n[medium]",
            "topology.field",
        ),
        (
            "[topology]\nkind = \"explicit\"\npositions = [[0, 0], [1000, 0]]\n[medium]",
            "flows[0].to",
        ),
    ];
    for (body, key) in cases {
        let text = if body.contains("[topology]") {
            format!("stop = \"1s\"\n{body}")
        } else {
            format!("stop = \"1s\"\n[topology]\nkind = \"chain\"\nhops = 2\n{body}")
        };
        let e = joulenet_sim::Scenario::parse_str(&text, "t", ".".into())
            .and_then(|s| s.spec(&ParamPoint::new()).map(|_| ()))
            .expect_err(body);
        assert_eq!(e.key, *key, "{body}: {e}");
    }
}

/// Link-state routing learns of a failure only at its next periodic update:
/// the flow stalls until then (stale view), then goes around the failed
/// node; instant static routing never stalls.
#[test]
fn link_state_views_are_stale_until_the_next_update() {
    let outage = r#"[[medium.outages]]
node = 1
start = "2s"
duration = "100s""#;
    let instant = grid_flow(outage);
    let ls = grid_flow(&format!(
        "routing = \"link_state\"\nrouting_updates = \"instant\"\nrouting_interval = \"6s\"\n{outage}"
    ));
    let (i, l) = (instant.flows[0].goodput_bps, ls.flows[0].goodput_bps);
    assert!(l < 0.9 * i, "link state {l:.0} vs instant {i:.0}");
    assert!(l > 0.3 * i, "link state {l:.0} vs instant {i:.0}");
}

fn tdma_chain(extra: &str) -> RunResult {
    run(&format!(
        r#"
stop = "10s"
[topology]
kind = "chain"
hops = 4
[medium]
mac = "tdma"
{extra}
[flow]
protocol = "newreno"
app = "backlogged"
"#
    ))
}

/// TDMA: the pseudo-random schedule is collision-free (none at all, hidden
/// terminals included), radios sleep outside their slots, and link ARQ
/// retries lost frames in later slots up to the attempt limit.
#[test]
fn tdma_has_no_collisions_and_sleeps_between_slots() {
    let r = tdma_chain("");
    let m = r.medium.as_ref().unwrap();
    assert_eq!(m.collisions, 0);
    assert_eq!(m.data_collisions, 0);
    assert!(r.flows[0].goodput_bps > 100e3, "{}", r.flows[0].goodput_bps);
    for n in &r.nodes {
        assert!(
            n.sleep_s > 0.4 * r.summary.duration_s,
            "{}: {}",
            n.name,
            n.sleep_s
        );
        let sum = n.tx_s + n.rx_s + n.idle_s + n.sleep_s;
        assert!(sum <= r.summary.duration_s + 1e-6);
    }
    // Longer frames (extra slots filled with non-conflicting links) and a
    // grid with more conflicts: still not a single collision.
    let long = tdma_chain("tdma_slots = 24");
    assert_eq!(long.medium.as_ref().unwrap().collisions, 0);
    assert!(long.flows[0].goodput_bps > 100e3);
    let grid = run(r#"
stop = "10s"
[topology]
kind = "grid"
rows = 3
cols = 3
spacing = 150
[medium]
mac = "tdma"
[flow]
protocol = "newreno"
app = "backlogged"
[[flows]]
from = 0
to = 8
[[flows]]
from = 2
to = 6
"#);
    assert_eq!(grid.medium.as_ref().unwrap().collisions, 0);
    assert!(grid.flows.iter().all(|f| f.bytes_delivered > 0));
    let csma = chain(4);
    let (e_tdma, e_csma) = (r.summary.energy_j, csma.summary.energy_j * 0.5);
    assert!(
        e_tdma < e_csma,
        "tdma {e_tdma} J vs csma {e_csma} J per 10 s"
    );

    let lossy = "[[medium.links]]\na = 1\nb = 2\nper = 0.3";
    let arq = tdma_chain(&format!("retry_limit = 7\n{lossy}"));
    let none = tdma_chain(&format!("retry_limit = 0\n{lossy}"));
    let (ma, mn) = (arq.medium.unwrap(), none.medium.unwrap());
    assert!(ma.retransmissions > 0 && ma.channel_losses > 0);
    assert_eq!(mn.retransmissions, 0);
    assert_eq!(mn.acks_tx, 0);
    assert!(arq.flows[0].goodput_bps > none.flows[0].goodput_bps);
}

fn two_categories(first: &str, second: &str) -> RunResult {
    run(&format!(
        r#"
stop = "10s"
[topology]
kind = "cells"
stations = 2
radius = 30
[medium]
edca = true
[flow]
protocol = "udp"
app = "cbr"
rate = "8Mbps"
message = 1000
[[flows]]
from = "sta1"
to = "ap"
access_category = "{first}"
[[flows]]
from = "sta2"
to = "ap"
access_category = "{second}"
"#
    ))
}

/// EDCA from the scenario: two saturated stations, one voice (AIFSN 2,
/// CW 7..15), one background (AIFSN 7, CW 31..1023). Voice wins most
/// accesses; with both in one category the share is even.
#[test]
fn voice_gets_the_larger_share_of_a_saturated_cell() {
    let r = two_categories("voice", "background");
    let (vo, bk) = (r.flows[0].goodput_bps, r.flows[1].goodput_bps);
    assert!(vo > 4.0 * bk, "voice {vo:.0} vs background {bk:.0}");
    let even = two_categories("best_effort", "best_effort");
    let (a, b) = (even.flows[0].goodput_bps, even.flows[1].goodput_bps);
    assert!((a / b - 1.0).abs() < 0.1, "{a:.0} vs {b:.0}");
    // The total stays near the cell's capacity either way.
    assert!(vo + bk > 0.9 * (a + b), "{} vs {}", vo + bk, a + b);
}

#[test]
fn access_category_errors_name_the_key() {
    let chain = "stop = \"1s\"\n[topology]\nkind = \"chain\"\nhops = 2\n";
    let cases: &[(String, &str)] = &[
        (
            format!("{chain}[medium]\nedca = true\n[flow]\naccess_category = \"gold\""),
            "flow.access_category",
        ),
        (
            format!("{chain}[medium]\n[flow]\naccess_category = \"voice\""),
            "flow.access_category",
        ),
        (
            format!("{chain}[medium]\nedca = true\n[[flows]]\naccess_category = 3"),
            "flows[0].access_category",
        ),
        (
            "stop = \"1s\"\n[flow]\naccess_category = \"voice\"".to_string(),
            "flow.access_category",
        ),
    ];
    for (text, key) in cases {
        let e = joulenet_sim::Scenario::parse_str(text, "t", ".".into())
            .and_then(|s| s.spec(&ParamPoint::new()).map(|_| ()))
            .expect_err(text);
        assert_eq!(e.key, *key, "{text}: {e}");
    }
}

fn detour_flow(medium: &str) -> RunResult {
    run(&format!(
        r#"
stop = "20s"
[topology]
kind = "explicit"
positions = [[0, 0], [200, 0], [400, 0], [0, 200], [200, 200], [400, 200]]
[medium]
range = 250
{medium}
[[medium.outages]]
node = 1
start = "2.5s"
duration = "100s"
[flow]
protocol = "newreno"
app = "backlogged"
from = 0
to = 2
"#
    ))
}

/// Link-state advertisements over the air: flooded broadcast frames that
/// cost airtime, and views that learn a failure only when the failed
/// node's neighbours stop advertising it (dead interval, 3 × the update
/// interval) and that news floods to the source — later than views
/// refreshed without messages, but the routes do converge around it.
/// (0–1–2 is the only 2-hop path; 0–3–4–5–2 the detour.)
#[test]
fn over_the_air_link_state_converges_after_a_failure() {
    let instant = detour_flow("");
    let abstract_ = detour_flow(
        "routing = \"link_state\"\nrouting_updates = \"instant\"\nrouting_interval = \"1s\"",
    );
    let air = detour_flow("routing = \"link_state\"\nrouting_interval = \"1s\"");
    let m = air.medium.as_ref().unwrap();
    // 6 nodes × ~20 advertisements, each flooded on by the others.
    assert!(m.lsa_originated >= 100, "{m:?}");
    assert!(m.lsa_forwarded > m.lsa_originated, "{m:?}");
    assert!(m.broadcasts >= m.lsa_originated + m.lsa_forwarded - 10);
    assert_eq!(abstract_.medium.as_ref().unwrap().lsa_originated, 0);
    let (i, a, o) = (
        instant.flows[0].goodput_bps,
        abstract_.flows[0].goodput_bps,
        air.flows[0].goodput_bps,
    );
    // (Views refreshed every second hide the failure for less than TCP's
    // 1 s minimum RTO: no worse than instant routing.)
    assert!(
        o < 0.9 * a && a <= i,
        "air {o:.0}, abstract {a:.0}, instant {i:.0}"
    );
    // Converged: after the stall the flow runs around the failed node.
    assert!(o > 0.4 * i, "air {o:.0} vs instant {i:.0}");
    assert_eq!(m.hop_limit_drops, 0);
}

/// Every scenario shipped under scenarios/multihop/ validates at every
/// sweep point.
#[test]
fn shipped_multihop_scenarios_are_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/multihop");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let s = joulenet_sim::Scenario::from_file(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for p in s.points() {
                s.spec(&p)
                    .unwrap_or_else(|e| panic!("{} {p:?}: {e}", path.display()));
            }
            count += 1;
        }
    }
    assert!(count >= 10, "{count} scenarios");
}

fn long_link(propagation: bool) -> RunResult {
    run(&format!(
        r#"
stop = "10s"
[topology]
kind = "explicit"
positions = [[0, 0], [1500, 0]]
[medium]
range = 1600
propagation_delay = {propagation}
[flow]
protocol = "udp"
app = "cbr"
rate = "8Mbps"
message = 1000
"#
    ))
}

/// Propagation delay: over 1500 m every exchange waits 2 × 5.0 µs more
/// (data to the receiver, ACK back), so a saturated sender completes
/// N · T / (T + 10 µs) frames instead of N (T = 10 s / N, the exchange
/// time without delay); the ACK timeout allows for the round trip, so
/// nothing is retransmitted.
#[test]
fn propagation_delay_lengthens_every_exchange() {
    let (plain, delayed) = (long_link(false), long_link(true));
    let frames = |r: &RunResult| r.medium.as_ref().unwrap().data_delivered as f64;
    let (n0, n1) = (frames(&plain), frames(&delayed));
    let t = 10.0 / n0;
    let rtt = 2.0 * 1500.0 / 299_792_458.0;
    let expected_loss = n0 - 10.0 / (t + rtt);
    let ratio = (n0 - n1) / expected_loss;
    assert!(
        (0.8..=1.2).contains(&ratio),
        "{n0} vs {n1} frames: lost {} for {expected_loss:.1} expected",
        n0 - n1
    );
    assert_eq!(delayed.medium.as_ref().unwrap().retransmissions, 0);
}

fn capture_pair(threshold: &str) -> RunResult {
    run(&format!(
        r#"
stop = "10s"
[topology]
kind = "explicit"
positions = [[-50, 0], [0, 0], [240, 0], [480, 0]]
names = ["a", "r", "c", "d"]
[medium]
range = 250
carrier_sense_range = 250
interference_range = 250
{threshold}
[flow]
protocol = "udp"
app = "cbr"
rate = "6Mbps"
[[flows]]
from = "a"
to = "r"
[[flows]]
from = "c"
to = "d"
"#
    ))
}

/// Capture: a (50 m from r) sends to r while c, hidden from a (290 m,
/// beyond carrier sense), sends to d; c's frames reach r at 240 m. Without
/// capture every overlap spoils a's frame at r. With a 10 dB threshold a's
/// signal at r is 30 · log10(240 / 50) = 20.4 dB above c's, so a's frame
/// survives c's, and takes r over from a frame of c's already on the air;
/// with a 25 dB threshold capture never applies.
#[test]
fn capture_lets_the_near_sender_survive_a_far_interferer() {
    let none = capture_pair("");
    let capture = capture_pair("capture_threshold_db = 10");
    let too_high = capture_pair("capture_threshold_db = 25");
    let collided = |r: &RunResult| r.medium.as_ref().unwrap().data_collisions;
    assert!(collided(&none) > 500, "{}", collided(&none));
    assert!(
        collided(&capture) * 3 < collided(&none),
        "capture {} vs none {}",
        collided(&capture),
        collided(&none)
    );
    // Above the margin the geometry offers, capture never applies.
    assert_eq!(collided(&too_high), collided(&none));
    // Without capture r is nearly always locked onto c's frames when a's
    // arrive: a→r starves. With it a gets through, c pays for r's ACKs
    // (which c senses), and the two flows together carry more.
    let (g0, g1) = (none.flows[0].goodput_bps, capture.flows[0].goodput_bps);
    let (d0, d1) = (none.flows[1].goodput_bps, capture.flows[1].goodput_bps);
    assert!(
        g0 < 0.2e6 && g1 > 2e6,
        "a→r: capture {g1:.0} vs none {g0:.0}"
    );
    assert!(g1 + d1 > 1.3 * (g0 + d0), "{g1} + {d1} vs {g0} + {d0}");
}

/// E2TCP's M, ε and o over the shared medium: M is every delivered bit once
/// over each hop of the (3-hop) path at the data rate, charged at transmit
/// plus receive power; the run spends more (headers, ACKs, contention,
/// idle listening), so 0 < ε < 1 and o = (S − M) / M.
#[test]
fn e2tcp_energy_metrics_cover_the_shared_medium() {
    let r = run(r#"
stop = "5s"
[topology]
kind = "chain"
hops = 3
[medium]
radio = { tx = "1.65W", rx = "1.4W", idle = "1.2W", sleep = "0.05W" }
[flow]
protocol = "newreno"
app = "bulk"
bytes = "500kB"
"#);
    let s = &r.summary;
    let bits = r.flows[0].bytes_delivered as f64 * 8.0;
    assert_eq!(r.flows[0].bytes_delivered, 500_000);
    let m = 3.0 * bits / 11e6 * (1.65 + 1.4);
    assert!(
        (s.minimum_energy_j - m).abs() < 1e-9,
        "{} vs {m}",
        s.minimum_energy_j
    );
    let eps = s.efficiency.expect("ε defined");
    assert!(eps > 0.0 && eps < 1.0, "{eps}");
    assert!((eps - m / s.energy_j).abs() < 1e-12);
    let o = s.energy_overhead.unwrap();
    assert!((o - (s.energy_j - m) / m).abs() < 1e-9);
}

fn chain_with(hops: u32, flow: &str) -> RunResult {
    run(&format!(
        r#"
stop = "20s"
[topology]
kind = "chain"
hops = {hops}
spacing = 200
[medium]
standard = "802.11b"
range = 250
carrier_sense_range = 550
[flow]
{flow}
"#
    ))
}

/// The chain's own capacity flattens (Li et al. 2001): nodes more than
/// carrier-sense range apart send at once, so a 0.9 Mbit/s stream (about
/// 1/5 of one hop's 5 Mbit/s) crosses 5, 7 and 9 hops whole. And TCP with
/// its window clamped near the chain's optimum (3 segments, Fu et al. 2003)
/// falls steadily with the hop count, without the seed-to-seed swings the
/// unclamped window's queue overflows cause (docs/validation.md).
#[test]
fn chain_capacity_flattens_and_clamped_tcp_falls_steadily() {
    for hops in [5, 7, 9] {
        let r = chain_with(
            hops,
            "protocol = \"udp\"\napp = \"cbr\"\nrate = \"0.9Mbps\"\nbackground = false",
        );
        let g = r.flows[0].goodput_bps;
        assert!(g > 0.97 * 0.9e6, "{hops} hops: {g:.0}");
    }
    let g: Vec<f64> = (1..=7)
        .map(|h| {
            chain_with(
                h,
                "protocol = \"newreno\"\napp = \"backlogged\"\ntcp = { mss = 1000, recv_buffer = 3000 }",
            )
            .flows[0]
                .goodput_bps
        })
        .collect();
    for h in 1..g.len() {
        assert!(g[h] < g[h - 1], "{} hops: {g:?}", h + 1);
    }
    assert!(g[6] > g[0] / 8.0 && g[6] < g[0] / 5.0, "{g:?}");
}

fn bridged(per: f64) -> RunResult {
    run(&format!(
        r#"
stop = "60.5s"
[topology]
kind = "chain"
hops = 9
[medium]
routing = "link_state"
routing_interval = "2s"
[[medium.links]]
a = 4
b = 5
per = {per}
[flow]
protocol = "udp"
app = "cbr"
rate = "20kbps"
"#
    ))
}

/// Advertisements are single broadcasts, and each crosses the link 4–5 of
/// a 10-node chain once. With that link's PER at 0.99999 for 1000 bytes
/// (61% for an 83-byte advertisement) most are lost, and at the end of the
/// run many views on either side hold an older advertisement of an origin
/// on the other (25 pairs each way, ~60% expected stale); on clean links
/// views keep up.
#[test]
fn lost_advertisements_leave_views_stale() {
    let clean = bridged(0.0);
    let lossy = bridged(0.99999);
    let (c, l) = (clean.medium.unwrap(), lossy.medium.unwrap());
    assert!(c.lsa_stale_views <= 2, "clean: {c:?}");
    assert!(l.lsa_stale_views >= 10, "lossy: {l:?}");
    assert!(l.lsa_forwarded < c.lsa_forwarded * 3 / 4);
}

/// Per-node frame counters on the shared medium add up to the medium's own
/// totals, and along a chain every node both sends and receives (TCP ACKs
/// are data frames of the reverse direction). The source's 1000-byte
/// segments put far more bytes on the air than the sink's 40-byte ACKs.
#[test]
fn per_node_frame_counters_match_the_medium_totals() {
    let r = chain(3);
    let m = r
        .medium
        .as_ref()
        .expect("a chain on the medium has medium stats");
    let sent: u64 = r.nodes.iter().map(|n| n.frames_sent).sum();
    let received: u64 = r.nodes.iter().map(|n| n.frames_received).sum();
    assert_eq!(sent, m.data_tx);
    assert_eq!(received, m.data_delivered);
    assert_eq!(r.nodes.len(), 4);
    for n in &r.nodes {
        assert!(
            n.frames_sent > 0 && n.frames_received > 0,
            "node {}: {n:?}",
            n.node
        );
        assert!(
            n.bytes_on_air >= n.frames_sent * 28,
            "node {}: {n:?}",
            n.node
        );
    }
    let (source, sink) = (&r.nodes[0], &r.nodes[3]);
    assert!(
        source.bytes_on_air > 5 * sink.bytes_on_air,
        "{source:?} {sink:?}"
    );
}

/// A frame sent without a link ACK says nothing of its fate, so it must not
/// count in the link's measured ETX: a UDP flow without ARQ over a clean
/// direct link keeps that link under link-state routing with measured ETX,
/// and never detours through the third node (it did when such frames
/// counted as failed attempts: ETX 100 on the direct link).
#[test]
fn frames_without_link_ack_do_not_make_measured_etx_route_around_a_link() {
    let r = run(r#"
stop = "30s"
[topology]
kind = "explicit"
positions = [[0, 0], [200, 0], [100, 100]]
[medium]
routing = "link_state"
routing_updates = "air"
routing_interval = "1s"
[flow]
protocol = "udp"
udp = { link_arq = false }
app = "cbr"
rate = "1Mbps"
message = 1000
background = false
stop = "20s"
from = 0
to = 1
"#);
    let m = r.medium.unwrap();
    assert!(m.lsa_originated > 0, "routing advertised over the air");
    assert!(m.frames_received[1] > 2_000, "the flow delivered: {m:?}");
    assert_eq!(m.frames_received[2], 0, "a detour through node 2: {m:?}");
}
