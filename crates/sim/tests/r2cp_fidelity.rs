//! R²CP against the faults issue 21 found in it, end to end in the
//! simulator: the flow's statistics counting every path's sender.

use joulenet_sim::{ParamPoint, RunResult, Scenario};

fn run(text: &str) -> RunResult {
    let sc = Scenario::parse_str(text, "t", ".".into()).expect("valid scenario");
    joulenet_sim::run(&sc, &ParamPoint::default(), 1, &mut |_| {}).expect("runs")
}

/// Two interfaces, each to its own server (the Figure 12 topology).
const TWO_SERVERS: &str = r#"
stop = "STOP"
[topology]
kind = "multihomed"
[topology.interface0]
rate = "11Mbps"
delay = "2ms"
radio = "80211b"
[topology.interface1]
rate = "11Mbps"
delay = "2ms"
radio = "80211b"
[topology.backbone0]
rate = "4Mbps"
delay = "13ms"
[topology.backbone1]
rate = "4Mbps"
delay = "13ms"
[flow]
protocol = "PROTO"
from = "srv0"
to = "mh"
APP
[flow.r2cp]
servers = ["srv1"]
"#;

fn two_servers(proto: &str, app: &str, stop: &str) -> String {
    TWO_SERVERS
        .replace("PROTO", proto)
        .replace("APP", app)
        .replace("STOP", stop)
}

/// Every delivered byte was sent as data by one of the paths' senders, so
/// the flow's data bytes (first sendings and again) cover them; with only path 0's sender counted,
/// they fell short by the second path's share.
#[test]
fn flow_statistics_count_every_paths_sender() {
    let r = run(&two_servers(
        "r2cp",
        "app = \"bulk\"\nbytes = \"3MB\"",
        "60s",
    ));
    let f = &r.flows[0];
    assert!(f.completed);
    let sent = f.data_bytes + f.retransmitted_bytes;
    assert!(
        sent >= f.bytes_delivered,
        "data bytes sent {sent} < delivered {}",
        f.bytes_delivered
    );
    assert!(f.transport_bytes > f.data_bytes);
}
