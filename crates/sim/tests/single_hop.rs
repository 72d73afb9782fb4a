//! WWP, E2TCP and the E2TCP split connection run in the simulator.

use joulenet_sim::{run, RunResult, Scenario};

fn run_text(text: &str) -> Vec<RunResult> {
    let s = Scenario::parse_str(text, "t", std::env::temp_dir()).expect("valid scenario");
    s.points()
        .iter()
        .map(|p| run(&s, p, 1, &mut |_| {}).expect("runs"))
        .collect()
}

const TWO_NODES: &str = r#"
[topology]
kind = "two_nodes"
[link]
rate = "2Mbps"
delay = "20ms"
queue = 100
medium = "wireless"
radio = "wavelan"
loss = { model = "on_off", on = "2s", off = "2s", rate = 0.3, start = "off" }
[energy]
policy = "intermediate"
active_weight = 0.5
[flow]
app = "bulk"
bytes = "1MB"
[flow.wwp]
behaviour = "aggressive"
[flow.e2tcp]
compression = false
[sweep]
"flow.protocol" = ["wwp", "e2tcp"]
"#;

#[test]
fn wwp_and_e2tcp_complete_over_a_lossy_hop() {
    for r in run_text(TWO_NODES) {
        let f = &r.flows[0];
        assert!(f.completed, "{} did not complete", f.protocol);
        assert_eq!(f.bytes_delivered, 1_000_000);
        assert_eq!(f.corrupt_deliveries, 0);
        assert!(f.retransmitted_packets > 0, "{} saw no loss", f.protocol);
    }
}

const SPLIT: &str = r#"
[topology]
kind = "explicit"
nodes = ["host", "bs", "mobile"]
[[topology.links]]
a = "host"
b = "bs"
rate = "10Mbps"
delay = "10ms"
[[topology.links]]
a = "bs"
b = "mobile"
rate = "1Mbps"
delay = "20ms"
medium = "wireless"
radio = "wavelan"
loss = { model = "bernoulli", rate = 0.05 }
[flow]
protocol = "e2tcp"
from = "host"
to = "mobile"
app = "bulk"
bytes = "200KB"
[flow.e2tcp]
split_at = "bs"
wired = "reno"
"#;

#[test]
fn split_download_relays_every_byte() {
    let r = run_text(SPLIT).remove(0);
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.bytes_delivered, 200_000);
    assert_eq!(f.corrupt_deliveries, 0);
}

#[test]
fn split_upload_relays_every_byte() {
    let text = SPLIT
        .replace(
            "from = \"host\"\nto = \"mobile\"",
            "from = \"mobile\"\nto = \"host\"",
        )
        .replace(
            "wired = \"reno\"",
            "wired = \"reno\"\nwired_side = \"server\"",
        );
    let r = run_text(&text).remove(0);
    let f = &r.flows[0];
    assert_eq!(f.bytes_delivered, 200_000);
    assert_eq!(f.corrupt_deliveries, 0);
}

/// `e2tcp-split` (the proxy on every node between the ends, as `joulenet
/// relay` runs it on hosts) is the same flow as `e2tcp` split at the base
/// station: on a chain of two links the one node between is the base
/// station, and the runs are identical event for event.
#[test]
fn e2tcp_split_on_every_relay_is_the_split_at_the_base_station() {
    let placed = run_text(SPLIT).remove(0);
    let text = SPLIT
        .replace("protocol = \"e2tcp\"", "protocol = \"e2tcp-split\"")
        .replace("split_at = \"bs\"\n", "");
    let everywhere = run_text(&text).remove(0);
    let (a, b) = (&placed.flows[0], &everywhere.flows[0]);
    assert!(b.completed);
    assert_eq!(b.protocol, "e2tcp-split");
    assert_eq!(b.bytes_delivered, 200_000);
    assert_eq!(
        (a.completion_time_s, a.data_packets, a.retransmitted_packets),
        (b.completion_time_s, b.data_packets, b.retransmitted_packets)
    );
}

#[test]
fn split_at_an_end_is_rejected() {
    let text = SPLIT.replace("split_at = \"bs\"", "split_at = \"mobile\"");
    let err = Scenario::parse_str(&text, "t", std::env::temp_dir())
        .and_then(|s| s.spec(&s.points()[0]).map(|_| ()))
        .unwrap_err();
    assert!(err.to_string().contains("split_at"), "{err}");
}

/// A proxy off the route would never see the flow: the transfer would run
/// end to end with E2TCP talking to a wired TCP server, and fail.
#[test]
fn split_at_a_node_off_the_route_is_rejected() {
    let text = SPLIT
        .replace(
            "nodes = [\"host\", \"bs\", \"mobile\"]",
            "nodes = [\"host\", \"bs\", \"mobile\", \"aside\"]",
        )
        .replace(
            "[flow]\n",
            "[[topology.links]]\na = \"host\"\nb = \"aside\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n[flow]\n",
        )
        .replace("split_at = \"bs\"", "split_at = \"aside\"");
    let err = Scenario::parse_str(&text, "t", std::env::temp_dir())
        .and_then(|s| s.spec(&s.points()[0]).map(|_| ()))
        .unwrap_err();
    assert_eq!(err.key, "flow.e2tcp.split_at", "{err}");
    assert!(err.message.contains("not on a shortest route"), "{err}");
    // The same topology with the proxy on the route is accepted.
    let on_route = text.replace("split_at = \"aside\"", "split_at = \"bs\"");
    let s = Scenario::parse_str(&on_route, "t", std::env::temp_dir()).unwrap();
    s.spec(&s.points()[0]).unwrap();
}

#[test]
fn bad_protocol_options_are_rejected_with_the_key() {
    for (table, bad, key) in [
        ("[flow.wwp]", "behaviour = \"reckless\"", "behaviour"),
        ("[flow.wwp]", "levels = 20", "levels"),
        ("[flow.e2tcp]", "min_window = 64", "max_window"),
        ("[flow.e2tcp]", "wired = \"reno\"", "wired"),
    ] {
        let proto = if table.contains("wwp") {
            "wwp"
        } else {
            "e2tcp"
        };
        let text = format!(
            "[topology]\nkind = \"two_nodes\"\n[flow]\nprotocol = \"{proto}\"\n{table}\n{bad}\n"
        );
        let err = Scenario::parse_str(&text, "t", std::env::temp_dir()).unwrap_err();
        assert!(err.to_string().contains(key), "{bad}: {err}");
    }
}
