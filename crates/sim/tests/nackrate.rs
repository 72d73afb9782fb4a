//! nackrate in the simulator (issue 18): the namespace link's twin at 30%
//! and 40% loss both ways, and sharing a congested bottleneck with itself
//! and with TCP. Scaled-down runs of scenarios/runtime/nackrate-*.toml.

use joulenet_sim::{ParamPoint, RunResult, Scenario};

fn run(path: &str, set: &[(&str, &str)], seed: u64) -> RunResult {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = std::fs::read_to_string(root.join(path)).unwrap();
    // Drop the sweep: each test sets its own point.
    if let Some(i) = text.find("[sweep]") {
        text.truncate(i);
    }
    for (k, v) in set {
        text = text.replace(k, v);
    }
    let sc = Scenario::parse_str(&text, "t", root).expect("valid scenario");
    joulenet_sim::run(&sc, &ParamPoint::default(), seed, &mut |_| {}).expect("runs")
}

#[test]
fn holds_nine_tenths_of_the_rate_left_by_random_loss() {
    for (loss, seed) in [("0.3", 1), ("0.4", 2)] {
        let r = run(
            "scenarios/runtime/nackrate-high-loss.toml",
            &[
                ("rate = 0.3", &format!("rate = {loss}")),
                ("stop = \"20s\"", "stop = \"10s\""),
                ("bytes = \"20MB\"", "bytes = \"4MB\""),
            ],
            seed,
        );
        let f = &r.flows[0];
        let p: f64 = loss.parse().unwrap();
        assert!(f.completed, "loss {loss}");
        assert_eq!(f.bytes_delivered, 4_000_000);
        assert_eq!(f.corrupt_deliveries, 0);
        assert!(
            f.goodput_bps >= 0.9 * (1.0 - p) * 10e6,
            "loss {loss}: {:.2} Mbit/s",
            f.goodput_bps / 1e6
        );
    }
}

fn shares(second: &str) -> (f64, f64) {
    let r = run(
        "scenarios/runtime/nackrate-sharing.toml",
        &[
            ("stop = \"30s\"", "stop = \"15s\""),
            (
                "start = \"1s\"\nprotocol = \"nackrate\"",
                &format!("start = \"1s\"\nprotocol = \"{second}\""),
            ),
        ],
        1,
    );
    assert_eq!(r.flows[1].protocol, second);
    (r.flows[0].goodput_bps / 1e6, r.flows[1].goodput_bps / 1e6)
}

#[test]
fn shares_a_congested_bottleneck_fairly_with_itself() {
    let (a, b) = shares("nackrate");
    assert!(a + b > 9.0, "the link is used: {a:.2} + {b:.2}");
    assert!(a.min(b) / a.max(b) > 0.7, "{a:.2} / {b:.2} Mbit/s");
}

#[test]
fn does_not_starve_tcp_on_a_congested_bottleneck() {
    for tcp in ["newreno", "cubic"] {
        let (ours, theirs) = shares(tcp);
        assert!(
            theirs > 2.5,
            "{tcp}: {theirs:.2} Mbit/s beside nackrate's {ours:.2}"
        );
    }
}
