//! 802.11 bit-rate selection on the shared medium: SampleRate picks the
//! top rate on a clean link, falls back on a lossy one (where the reception
//! model makes lower rates lose less), is deterministic per seed, and the
//! fixed rate is what runs without the key.

mod common;

use common::{run_seed, scenario};
use joulenet_sim::RunResult;

/// One UDP sender `distance` m from its receiver (250 m range, log-distance
/// reception), link ARQ at its default.
fn link(distance: u32, rate_control: &str) -> RunResult {
    run_seed(
        &format!(
            r#"
stop = "5s"
[topology]
kind = "explicit"
positions = [[0, 0], [{distance}, 0]]
names = ["a", "b"]
[medium]
reception = "log_distance"
{rate_control}
[flow]
protocol = "udp"
app = "cbr"
rate = "8Mbps"
message = 1000
from = "a"
to = "b"
"#
        ),
        1,
    )
}

const SAMPLERATE: &str = "rate_control = \"samplerate\"";

/// Share of data attempts at each 802.11b rate, slowest first.
fn shares(r: &RunResult) -> Vec<f64> {
    let by_rate = &r.medium.as_ref().unwrap().data_tx_by_rate;
    let rates: Vec<u64> = by_rate.iter().map(|x| x.0).collect();
    assert_eq!(rates, [1_000_000, 2_000_000, 5_500_000, 11_000_000]);
    let total: u64 = by_rate.iter().map(|x| x.1).sum();
    assert!(total > 0);
    by_rate.iter().map(|x| x.1 as f64 / total as f64).collect()
}

#[test]
fn samplerate_keeps_the_top_rate_on_a_clean_link() {
    let r = link(50, SAMPLERATE);
    let s = shares(&r);
    // Sampling takes at most every 10th frame.
    assert!(s[3] >= 0.9, "{s:?}");
    let fixed = link(50, "");
    let (a, b) = (r.flows[0].bytes_delivered, fixed.flows[0].bytes_delivered);
    assert!(a as f64 >= 0.95 * b as f64, "samplerate {a} fixed {b}");
}

/// Near the edge of range a 1000-byte frame is lost about 70% of the time
/// at 11 Mbit/s: SampleRate moves to slower rates and delivers more.
#[test]
fn samplerate_falls_back_on_a_lossy_link() {
    let r = link(245, SAMPLERATE);
    let fixed = link(245, "");
    let s = shares(&r);
    assert!(s[3] < 0.3, "{s:?}");
    let m = fixed.medium.as_ref().unwrap();
    assert!(m.channel_losses * 2 > m.data_tx, "the link must be lossy");
    assert!(m.data_tx_by_rate.is_empty());
    let (a, b) = (r.flows[0].bytes_delivered, fixed.flows[0].bytes_delivered);
    assert!(a as f64 > 1.5 * b as f64, "samplerate {a} fixed {b}");
}

#[test]
fn samplerate_is_deterministic_per_seed() {
    let text = r#"
stop = "3s"
[topology]
kind = "random"
nodes = 10
field = [400, 400]
seed = 7
[medium]
reception = "log_distance"
rate_control = "samplerate"
[flow]
protocol = "newreno"
app = "backlogged"
[[flows]]
from = 0
to = 9
[[flows]]
from = 3
to = 8
"#;
    let json = |seed| {
        let s = scenario(text);
        let points = s.points();
        let r = joulenet_sim::run(&s, &points[0], seed, &mut |_| {}).unwrap();
        let mut v = serde_json::to_value(&r).unwrap();
        v["summary"]["events"] = serde_json::Value::Null;
        v.to_string()
    };
    assert_eq!(json(5), json(5));
    assert_ne!(json(5), json(6));
}

/// `rate_control = "fixed"` is the default: the same run, byte for byte
/// (but the scenario's hash: its text differs).
#[test]
fn fixed_rate_is_the_default() {
    let json = |r: RunResult| {
        let mut v = serde_json::to_value(&r).unwrap();
        v["summary"]["events"] = serde_json::Value::Null;
        v["context"]["scenario_hash"] = serde_json::Value::Null;
        v.to_string()
    };
    let fixed = json(link(200, "rate_control = \"fixed\""));
    assert_eq!(fixed, json(link(200, "")));
    assert!(!fixed.contains("data_tx_by_rate"));
}

#[test]
fn rate_control_errors_name_the_key() {
    for (medium, key) in [
        ("rate_control = \"minstrel\"", "rate_control"),
        (
            "mac = \"tdma\"\nrate_control = \"samplerate\"",
            "rate_control",
        ),
    ] {
        let text = format!(
            "[topology]\nkind = \"chain\"\nnodes = 2\n[medium]\n{medium}\n[flow]\nprotocol = \"udp\"\n"
        );
        let err = joulenet_sim::Scenario::parse_str(&text, "t", common::scratch_dir())
            .err()
            .unwrap_or_else(|| panic!("accepted: {medium}"))
            .to_string();
        assert!(err.contains(key), "{err}");
    }
}
