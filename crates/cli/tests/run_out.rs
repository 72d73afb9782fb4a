//! `joulenet run --out DIR` writes every file its help names, the aggregate
//! CSV holds the same numbers as runs.json's aggregate, and captures are
//! filed by parameter point and seed.

use std::process::Command;

#[test]
fn out_writes_the_files_its_help_promises_with_one_aggregate_row_per_point() {
    let dir = std::env::temp_dir().join(format!("joulenet-out-{}", std::process::id()));
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/demo.toml");
    let status = Command::new(env!("CARGO_BIN_EXE_joulenet"))
        .args([
            "run",
            "-q",
            "--seeds",
            "1..3",
            "--set",
            "output.pcap=true",
            "--out",
        ])
        .arg(&dir)
        .arg(scenario)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    for f in [
        "runs.json",
        "report.txt",
        "flows.csv",
        "nodes.csv",
        "links.csv",
        "summary.csv",
        "aggregate.csv",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("runs.json")).unwrap()).unwrap();
    let aggregate = runs["aggregate"].as_array().unwrap();
    let csv = std::fs::read_to_string(dir.join("aggregate.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), aggregate.len(), "one row per parameter point");
    let col = header.iter().position(|h| *h == "energy_j_mean").unwrap();
    for (row, point) in rows.iter().zip(aggregate) {
        assert_eq!(row[header.iter().position(|h| *h == "seeds").unwrap()], "2");
        let mean: f64 = row[col].parse().unwrap();
        assert_eq!(mean, point["energy_j_mean"].as_f64().unwrap());
        assert_eq!(row[0], point["params"]["flow.protocol"].as_str().unwrap());
        // Every metric's interval holds its mean and respects its domain:
        // none of these can be negative.
        for name in [
            "goodput_mbps",
            "retransmitted_packets",
            "timeouts",
            "energy_j",
        ] {
            let get = |suffix: &str| point[format!("{name}_{suffix}")].as_f64().unwrap();
            let (lo, mean, hi) = (get("lo"), get("mean"), get("hi"));
            assert!(
                0.0 <= lo && lo <= mean && mean <= hi,
                "{name}: {lo} {mean} {hi}"
            );
        }
    }
    // Captures are filed by what they hold: the point's parameters, the seed.
    for point in aggregate {
        let folder: Vec<String> = point["params"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
            .collect();
        let folder = folder.join(",");
        assert!(folder.starts_with("flow.protocol="), "{folder}");
        for seed in [1, 2] {
            let sub = dir.join("pcap").join(&folder).join(format!("seed{seed}"));
            assert!(sub.is_dir(), "{} missing", sub.display());
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every paper's reproduction writes the same files: CSV, report.txt and a
/// report.md holding the report and linking each figure (issue 17).
#[test]
fn reproduce_writes_csv_and_a_markdown_report() {
    let dir = std::env::temp_dir().join(format!("joulenet-repro-{}", std::process::id()));
    let scenarios = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let out = Command::new(env!("CARGO_BIN_EXE_joulenet"))
        .args([
            "reproduce",
            "wwp",
            "--quick",
            "--no-plots",
            "--scenarios",
            scenarios,
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.starts_with("# joulenet reproduce wwp"), "{md}");
    assert!(md.contains(report.trim_end()), "report.md lacks the report");
    let csvs = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "csv"))
        .count();
    assert!(csvs > 0, "no CSV written");
    let _ = std::fs::remove_dir_all(&dir);
}
