//! Helpers shared by the behaviour tests: load a scenario from TOML text,
//! run it, and write temporary files.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use joulenet_sim::{RunResult, Scenario, ScenarioError};

/// Directory relative paths in test scenarios resolve against.
pub fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("joulenet-simtests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A fresh file name under [`scratch_dir`] holding `contents`; returns the
/// file name (relative to the scratch dir) for use in a scenario.
pub fn scratch_file(stem: &str, contents: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = format!("{stem}-{n}.txt");
    std::fs::write(scratch_dir().join(&name), contents).expect("write temp file");
    name
}

pub fn scenario(text: &str) -> Scenario {
    Scenario::parse_str(text, "test", scratch_dir())
        .unwrap_or_else(|e| panic!("scenario rejected: {e}\n--- scenario ---\n{text}"))
}

/// Run the single point of a scenario with `seed`.
pub fn run_seed(text: &str, seed: u64) -> RunResult {
    let s = scenario(text);
    let points = s.points();
    assert_eq!(points.len(), 1, "test scenarios have one point");
    joulenet_sim::run(&s, &points[0], seed, &mut |_| {}).expect("a validated point runs")
}

pub fn run(text: &str) -> RunResult {
    run_seed(text, 1)
}

/// The error a bad scenario is rejected with.
pub fn rejection(text: &str) -> ScenarioError {
    match Scenario::parse_str(text, "bad", scratch_dir()) {
        Ok(_) => panic!("scenario was accepted but should not be:\n{text}"),
        Err(e) => e,
    }
}

/// Every flow delivered exactly what it asked for, uncorrupted.
pub fn assert_all_delivered(r: &RunResult) {
    for f in &r.flows {
        assert!(
            f.completed,
            "flow {} ({}) incomplete: {f:?}",
            f.flow, f.label
        );
        assert_eq!(
            Some(f.bytes_delivered),
            f.bytes_requested,
            "flow {} bytes",
            f.flow
        );
        assert_eq!(f.corrupt_deliveries, 0, "flow {} corrupt", f.flow);
        assert!(!f.aborted, "flow {} aborted", f.flow);
    }
}
