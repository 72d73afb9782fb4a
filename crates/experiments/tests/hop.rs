//! `joulenet reproduce hop --quick` runs end to end, and its tables show the
//! paper's claims that our simulator reproduces: Hop keeps working on a
//! lossy link where TCP stops (§5.1.2), and it makes progress across a
//! partitioned path where end-to-end TCP delivers nothing (§5.7). Every
//! reliable protocol that delivered has a finite energy per bit.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use joulenet_experiments::{reproduce, Options};

fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap()
}

#[test]
fn quick_hop_reproduction_degrades_gracefully_and_crosses_partitions() {
    let out = std::env::temp_dir().join(format!("joulenet-hop-{}", std::process::id()));
    let options = Options {
        quick: true,
        seeds: None,
        scenarios: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios")),
        out: out.clone(),
        echo: false,
        baseline: None,
    };
    let outcome = reproduce("hop", &options).unwrap();
    for section in ["§5.2", "§5.1.2", "§5.4", "§5.7", "§5.3", "§5.5", "§5.6.1"] {
        assert!(outcome.report.contains(section), "{}", outcome.report);
    }

    // §5.1.2: (loss, protocol) -> goodput.
    let loss: HashMap<(String, String), f64> = rows(&out.join("hop_loss.csv"))
        .into_iter()
        .map(|r| ((r[0].clone(), r[1].clone()), num(&r[2])))
        .collect();
    let at = |p: &str, proto: &str| loss[&(p.to_string(), proto.to_string())];
    // Per-hop repair: at 20% loss Hop keeps most of its lossless goodput,
    // and both TCPs have collapsed to a small fraction of theirs.
    assert!(at("0.2", "hop") > 0.5 * at("0", "hop"), "{loss:?}");
    for tcp in ["cubic", "newreno"] {
        assert!(at("0.2", tcp) < 0.1 * at("0", tcp), "{loss:?}");
        assert!(at("0.5", "hop") > 10.0 * at("0.5", tcp), "{loss:?}");
    }

    // §5.7: no end-to-end path ever exists.
    let parts: HashMap<String, f64> = rows(&out.join("hop_partitions.csv"))
        .into_iter()
        .map(|r| (r[0].clone(), num(&r[1])))
        .collect();
    assert_eq!(parts["cubic"], 0.0, "{parts:?}");
    assert!(parts["hop H=1"] > 0.0, "{parts:?}");
    assert!(parts["hop H=100"] >= parts["hop H=1"], "{parts:?}");

    // §5.2: every reliable transfer completed, with a finite energy per bit.
    let multihop = rows(&out.join("hop_multihop.csv"));
    assert_eq!(multihop.len(), 2 * 6, "2 path lengths x 6 protocols");
    for r in multihop.iter().filter(|r| !r[1].starts_with("udp")) {
        assert_eq!(r[4], r[5], "{r:?} did not complete");
        assert!(num(&r[3]).is_finite() && num(&r[3]) > 0.0, "{r:?}");
    }

    // §5.4: the four versions of Hop at one load, each delivering.
    let breakdown = rows(&out.join("hop_breakdown.csv"));
    assert_eq!(breakdown.len(), 4);
    assert!(breakdown.iter().all(|r| num(&r[2]) > 0.0), "{breakdown:?}");
    std::fs::remove_dir_all(&out).ok();
}
