//! Hop at an access point (docs/reproduction/hop.md §5.5, §5.6.1): ack
//! withholding acts at the node that receives, across every flow it
//! receives (the flows' sinks share the node's receiving side through
//! `Net::node_shared`), and a small file crosses one 802.11 hop quickly.

use joulenet_sim::{run, Scenario};

fn run_once(text: &str, seed: u64) -> joulenet_sim::RunResult {
    let s = Scenario::parse_str(text, "t", std::env::temp_dir()).expect("valid scenario");
    run(&s, &s.points()[0], seed, &mut |_| {}).expect("runs")
}

/// `stations` on a 200 m circle around an access point (250 m range, 300 m
/// carrier sense: each station is hidden from those not next to it), as
/// `scenarios/hop/access-point.toml`, sending backlogged Hop flows to it
/// with `[flow.hop]` options `hop`.
fn around_an_access_point(stations: u32, stop: &str, hop: &str) -> String {
    format!(
        r#"
stop = "{stop}"
[topology]
kind = "cells"
stations = {stations}
radius = 200
[medium]
standard = "802.11b"
range = 250
carrier_sense_range = 300
txop = "8160us"
retry_limit = 18
[flow]
protocol = "hop"
app = "backlogged"
[flow.hop]
{hop}
"#
    )
}

/// The 7-station access point of §5.5, 60 s.
fn access_point(withholding: bool) -> String {
    around_an_access_point(7, "60s", &format!("ack_withholding = {withholding}"))
}

fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    sum * sum / (xs.len() as f64 * squares)
}

#[test]
fn ack_withholding_serialises_hidden_senders_at_the_access_point() {
    let goodputs = |withholding| {
        let r = run_once(&access_point(withholding), 1);
        assert_eq!(r.flows.len(), 7);
        r.flows.iter().map(|f| f.goodput_bps).collect::<Vec<f64>>()
    };
    let with = goodputs(true);
    let without = goodputs(false);
    eprintln!(
        "AP, Jain's index: {:.2} with ack withholding, {:.2} without",
        jain(&with),
        jain(&without)
    );
    // One BSYN answered at a time across the AP's seven flows: every
    // station gets its turn. Without it, hidden stations collide with each
    // other's repair rounds and some deliver almost nothing.
    assert!(
        with.iter().all(|g| *g > 0.0),
        "every station delivers: {with:?}"
    );
    assert!(jain(&with) > 0.9, "{with:?}");
    assert!(jain(&without) < 0.7, "{without:?}");
}

/// One 802.11b hop, nothing else on the air: a small file.
fn one_hop(bytes: u64) -> String {
    format!(
        r#"
stop = "10s"
[topology]
kind = "chain"
hops = 1
spacing = 200
[medium]
standard = "802.11b"
range = 250
[flow]
protocol = "hop"
app = "bulk"
bytes = {bytes}
"#
    )
}

#[test]
fn a_small_file_crosses_one_80211b_hop_in_well_under_a_second() {
    // 1 KB rides whole on its BSYN; 4 KB and 12 KB are micro-blocks of
    // several frames (voice category, link ARQ, then the BSYN).
    for bytes in [1_000, 4_000, 12_000] {
        let r = run_once(&one_hop(bytes), 1);
        let f = &r.flows[0];
        assert!(f.completed, "{bytes} B: {f:?}");
        assert_eq!(f.bytes_delivered, bytes);
        let t = f.completion_time_s.expect("completed");
        eprintln!("{bytes} B over one 802.11b hop: {:.1} ms", t * 1e3);
        assert!(t < 0.05, "{bytes} B took {t} s");
    }
}

/// `scenarios/hop/micro-block.toml`, shortened: four backlogged stations
/// and, at 5 s, a 4 KB file from the fifth, hidden from two of them.
fn small_file_at_the_access_point(bsyn_first: bool) -> String {
    let mut text = around_an_access_point(5, "15s", &format!("bsyn_first = {bsyn_first}"));
    for s in 1..=4 {
        text += &format!("[[flows]]\nfrom = \"sta{s}\"\nto = \"ap\"\n");
    }
    text + "[[flows]]\nfrom = \"sta5\"\nto = \"ap\"\napp = \"bulk\"\nbytes = 4000\nstart = \"5s\"\n"
}

#[test]
fn opening_with_a_bsyn_lets_a_small_file_past_hidden_senders() {
    let delay = |bsyn_first| {
        let r = run_once(&small_file_at_the_access_point(bsyn_first), 1);
        let f = r.flows.last().expect("the small file");
        assert!(f.completed, "bsyn_first = {bsyn_first}: {f:?}");
        f.completion_time_s.expect("completed")
    };
    let (blind, first) = (delay(false), delay(true));
    eprintln!("4 KB at the AP: {blind:.3} s with blind first rounds, {first:.3} s BSYN first");
    // With first rounds held back by the AP's turn, nothing hidden bursts
    // over the micro-block (§5.6.1: well under TCP's 0.2 s here).
    assert!(first < 0.1, "{first} s");
    // Blind first rounds took 1.7 s here until issue 13's third pass, and
    // 0.016 s since (no BSYN repeated behind a queue that still holds one:
    // the hidden stations' duplicate BSYNs and BACKs no longer crowd the
    // AP); docs/reproduction/hop.md § 5.6.1 has both over two seeds.
    assert!(blind < 1.0, "{blind} s");
}
