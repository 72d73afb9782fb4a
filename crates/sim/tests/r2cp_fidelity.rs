//! R²CP against the faults issue 21 found in it, end to end in the
//! simulator: a slow sending application, and the flow's statistics
//! counting every path's sender.

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

/// A 100 kbit/s source for 20 s: RCP delivers its 250 kB; R²CP used to
/// deliver nothing — its pulls had to cover a whole segment, it had no
/// persist probe, and the sender announced a raised limit only to a
/// receiver waiting on a cumulative request, which R²CP never sends.
#[test]
fn a_slow_source_flows_through_every_scheduler() {
    let app = "app = \"cbr\"\nrate = \"100kbps\"\nmessage = 500\nstop = \"20s\"";
    let rcp = run(&two_servers("rcp", app, "21s"));
    let rcp_bytes = rcp.flows[0].bytes_delivered;
    assert!(rcp_bytes >= 240_000, "RCP delivered {rcp_bytes} B");
    for proto in ["r2cp", "r2cp-s", "r2cp-stripe"] {
        let r = run(&two_servers(proto, app, "21s"));
        let f = &r.flows[0];
        assert!(
            f.bytes_delivered + 2_000 >= rcp_bytes,
            "{proto}: {} B of RCP's {rcp_bytes} B",
            f.bytes_delivered
        );
        assert_eq!(f.corrupt_deliveries, 0, "{proto}");
    }
}

/// Every delivered byte was first sent as data by one of the paths'
/// senders, so the flow's payload bytes cover them; with only path 0's
/// sender counted, they fell short by the second path's share (and a
/// sender counted a first sending below the highest byte it had sent as a
/// retransmission, which rank scheduling's out-of-order pulls often are).
#[test]
fn flow_statistics_count_every_paths_sender() {
    let r = run(&two_servers(
        "r2cp",
        "app = \"bulk\"\nbytes = \"3MB\"",
        "60s",
    ));
    let f = &r.flows[0];
    assert!(f.completed);
    assert!(
        f.data_bytes >= f.bytes_delivered,
        "data bytes {} < delivered {}",
        f.data_bytes,
        f.bytes_delivered
    );
    assert!(f.transport_bytes > f.data_bytes);
}
