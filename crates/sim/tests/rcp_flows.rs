//! RCP and R²CP inside the simulator: whole, verified streams through loss,
//! ELN reports (RCP-ELN and TCP-ELN), power save, and an R²CP interface outage.

use joulenet_sim::{ParamPoint, Scenario};

fn run(text: &str) -> joulenet_sim::RunResult {
    let sc = Scenario::parse_str(text, "t", ".".into()).expect("valid scenario");
    joulenet_sim::run(&sc, &ParamPoint::default(), 1, &mut |_| {}).expect("runs")
}

const WIRELESS: &str = r#"
stop = "120s"
[topology]
kind = "two_nodes"
[link]
rate = "2Mbps"
delay = "15ms"
radio = "80211b"
loss = { model = "bernoulli", rate = 0.03 }
[flow]
protocol = "PROTO"
app = "bulk"
bytes = "1MB"
"#;

#[test]
fn rcp_variants_deliver_whole_verified_streams_over_a_lossy_hop() {
    for proto in ["rcp", "rcp-eln", "rcp-stp"] {
        let r = run(&WIRELESS.replace("PROTO", proto));
        let f = &r.flows[0];
        assert!(f.completed, "{proto}");
        assert_eq!(f.bytes_delivered, 1_000_000, "{proto}");
        assert_eq!(f.corrupt_deliveries, 0, "{proto}");
    }
}

#[test]
fn eln_avoids_the_window_cuts_random_loss_causes() {
    let plain = run(&WIRELESS.replace("PROTO", "rcp"));
    let eln = run(&WIRELESS.replace("PROTO", "rcp-eln"));
    assert!(eln.flows[0].fast_recoveries < plain.flows[0].fast_recoveries);
    assert!(eln.flows[0].goodput_bps > plain.flows[0].goodput_bps);
}

#[test]
fn tcp_eln_takes_fewer_window_cuts_than_newreno_and_delivers_everything() {
    // A 32 KiB window keeps slow start out of the 100-frame queue, so the
    // losses are the channel's (with a 1 MiB window both flows overshoot
    // the queue, and NewReno's one-hole-per-RTT recovery dominates).
    let scenario = |proto: &str| {
        WIRELESS.replace("PROTO", proto).replace("0.03", "0.02")
            + "[flow.tcp]\nrecv_buffer = \"32KiB\"\n"
    };
    let plain = run(&scenario("newreno"));
    let eln = run(&scenario("tcp-eln"));
    let f = &eln.flows[0];
    assert_eq!(f.protocol, "tcp-eln");
    assert!(f.completed);
    assert_eq!(f.bytes_delivered, 1_000_000);
    assert_eq!(f.corrupt_deliveries, 0);
    assert!(f.fast_recoveries < plain.flows[0].fast_recoveries);
    assert!(f.goodput_bps > plain.flows[0].goodput_bps);
}

#[test]
fn power_save_sleeps_through_bad_periods() {
    let text = r#"
stop = "60s"
[topology]
kind = "two_nodes"
[link]
rate = "2Mbps"
delay = "15ms"
radio = "80211b"
loss = { model = "gilbert_elliott", good = { mean = "5s", loss = 0.0001 }, bad = { mean = "5s", loss = 0.1 } }
[flow]
protocol = "rcp"
app = "bulk"
bytes = "4MB"
[flow.rcp]
power_save = true
"#;
    let r = run(text);
    assert!(r.flows[0].completed);
    assert_eq!(r.flows[0].corrupt_deliveries, 0);
    assert!(r.nodes[1].sleep_s > 1.0, "the receiver slept");
}

#[test]
fn r2cp_survives_an_interface_outage_and_migrates_to_the_other_server() {
    let text = r#"
stop = "120s"
[topology]
kind = "multihomed"
[topology.interface0]
rate = "11Mbps"
delay = "2ms"
radio = "80211b"
down = ["2s..4s"]
[topology.interface1]
rate = "11Mbps"
delay = "2ms"
radio = "80211b"
down = ["5s..7s"]
[topology.backbone0]
rate = "4Mbps"
delay = "10ms"
[topology.backbone1]
rate = "2Mbps"
delay = "40ms"
[flow]
protocol = "PROTO"
from = "srv0"
to = "mh"
app = "bulk"
bytes = "4MB"
[flow.r2cp]
servers = ["srv1"]
"#;
    for proto in ["r2cp", "r2cp-s", "r2cp-stripe"] {
        let r = run(&text.replace("PROTO", proto));
        let f = &r.flows[0];
        assert!(f.completed, "{proto}");
        assert_eq!(f.bytes_delivered, 4_000_000, "{proto}");
        assert_eq!(f.corrupt_deliveries, 0, "{proto}");
    }
}

#[test]
fn eln_is_refused_for_tcp_variants_other_than_newreno() {
    let text = WIRELESS.replace("PROTO", "sack") + "[flow.tcp]\neln = true\n";
    let Err(err) = Scenario::parse_str(&text, "t", ".".into()) else {
        panic!("sack with eln must be refused");
    };
    let err = err.to_string();
    assert!(err.contains("eln") && err.contains("newreno"), "{err}");
    let ok = WIRELESS.replace("PROTO", "newreno") + "[flow.tcp]\neln = true\n";
    assert!(Scenario::parse_str(&ok, "t", ".".into()).is_ok());
}

/// Nine interfaces, nine servers, one pipe each: more pipes than the 7 the
/// driver's fixed timer table used to allow one connection.
#[test]
fn r2cp_aggregates_over_nine_interfaces() {
    let mut text = String::from(
        r#"
stop = "300s"
[topology]
kind = "multihomed"
interfaces = 9
[link]
rate = "1Mbps"
delay = "5ms"
[flow]
protocol = "r2cp"
from = "srv0"
to = "mh"
app = "bulk"
bytes = "2MB"
[flow.r2cp]
servers = ["srv1", "srv2", "srv3", "srv4", "srv5", "srv6", "srv7", "srv8"]
"#,
    );
    text.push('\n');
    let r = run(&text);
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.bytes_delivered, 2_000_000);
    assert_eq!(f.corrupt_deliveries, 0);
    // Every server's wireless hop toward the mobile host carried data.
    let names = &r.nodes;
    let mh = names.iter().find(|n| n.name == "mh").unwrap().node;
    for i in 0..9 {
        let ap = names
            .iter()
            .find(|n| n.name == format!("ap{i}"))
            .unwrap()
            .node;
        let l = r.links.iter().find(|l| l.from == ap && l.to == mh).unwrap();
        assert!(
            l.frames_delivered > 20,
            "interface {i}: {} frames",
            l.frames_delivered
        );
    }
}
