//! Hop across partitions (paper §3.4, §5.7): a 7-hop 802.11b chain whose
//! 3rd and 5th nodes are down in turn, so no end-to-end path exists at any
//! moment. DTN routing names the next hop of the complete network's path
//! while that node is up; Hop moves each block as far as the path allows
//! and holds it there (its cache, backpressure's H) until the next hop
//! comes back, so the file arrives. An end-to-end transport gets nothing.

use joulenet_sim::{run, RunResult, Scenario};

const PARTITIONED: &str = r#"
stop = "400s"
[topology]
kind = "chain"
hops = 7
spacing = 200
[medium]
standard = "802.11b"
range = 250
carrier_sense_range = 550
routing = "dtn"
txop = "8160us"
retry_limit = 18
[[medium.outages]]
node = 3
start = "0s"
duration = "30s"
period = "60s"
[[medium.outages]]
node = 5
start = "30s"
duration = "30s"
period = "60s"
[flow]
protocol = "hop"
app = "bulk"
bytes = "3MB"
"#;

const FILE: u64 = 3_000_000;

fn run_with(sets: &[(&str, &str)], seed: u64) -> RunResult {
    let mut text = PARTITIONED.to_string();
    for (from, to) in sets {
        assert!(text.contains(from), "{from} not in the scenario");
        text = text.replace(from, to);
    }
    let s = Scenario::parse_str(&text, "partitions", std::env::temp_dir()).expect("valid");
    run(&s, &s.points()[0], seed, &mut |_| {}).expect("runs")
}

#[test]
fn hop_carries_a_file_across_a_path_that_is_never_whole() {
    for h in ["1", "100"] {
        let r = run_with(
            &[(
                "bytes = \"3MB\"",
                &format!("bytes = \"3MB\"\nhop = {{ h = {h} }}"),
            )],
            1,
        );
        let f = &r.flows[0];
        assert!(f.completed, "H = {h}: {f:?}");
        assert_eq!(f.bytes_delivered, FILE, "H = {h}: every byte, once");
        assert_eq!(f.corrupt_deliveries, 0);
        // The file needed at least one full cycle of outages: it crossed
        // while some node on the path was always down.
        assert!(f.completion_time_s.unwrap() > 30.0, "{f:?}");
        for n in &r.nodes[1..7] {
            assert!(
                n.relay_bytes_sent >= FILE,
                "H = {h}: node {} moved the file on: {n:?}",
                n.node
            );
        }
    }
}

#[test]
fn end_to_end_tcp_delivers_nothing_across_the_same_partitions() {
    let r = run_with(&[("protocol = \"hop\"", "protocol = \"newreno\"")], 1);
    assert_eq!(r.flows[0].bytes_delivered, 0, "{:?}", r.flows[0]);
}
