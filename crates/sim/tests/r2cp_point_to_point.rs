//! R²CP point-to-point aggregation: a multi-homed host with two wireless
//! interfaces, both paths to the same server, one RCP pipe (and sender port)
//! per interface, pinned to its interface by policy routes.

use joulenet_proto::Addr;
use joulenet_sim::{ParamPoint, RunResult, Scenario, Simulation};

fn scenario(text: &str) -> Scenario {
    Scenario::parse_str(text, "t", ".".into()).expect("valid scenario")
}

fn run(text: &str) -> RunResult {
    joulenet_sim::run(&scenario(text), &ParamPoint::default(), 1, &mut |_| {}).expect("runs")
}

/// Nodes: mh 0, ap0 1, ap1 2, srv 3. Two equal 4 Mbit/s backbones behind
/// 11 Mbit/s 802.11b interfaces.
const SHARED: &str = r#"
stop = "120s"
[topology]
kind = "multihomed"
shared_server = true
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
queue = 50
[topology.backbone1]
rate = "4Mbps"
delay = "13ms"
queue = 50
[flow]
protocol = "PROTO"
from = "srv"
to = "mh"
app = "bulk"
bytes = "6MB"
"#;

const PINNED: &str = r#"[flow.r2cp]
paths = [{ server = "srv", via = "ap0" }, { server = "srv", via = "ap1" }]
"#;

fn link_frames(r: &RunResult, from: u32, to: u32) -> u64 {
    r.links
        .iter()
        .filter(|l| l.from == from && l.to == to)
        .map(|l| l.frames_delivered)
        .sum()
}

#[test]
fn two_interfaces_to_one_server_aggregate_and_deliver_every_byte_once() {
    let single = run(&SHARED.replace("PROTO", "rcp"));
    let s = &single.flows[0];
    assert!(s.completed);
    let best_single = s.goodput_bps;
    for proto in ["r2cp", "r2cp-s", "r2cp-stripe"] {
        let r = run(&(SHARED.replace("PROTO", proto) + PINNED));
        let f = &r.flows[0];
        assert!(f.completed, "{proto}");
        assert_eq!(f.bytes_delivered, 6_000_000, "{proto}");
        assert_eq!(f.corrupt_deliveries, 0, "{proto}");
        assert!(
            f.goodput_bps >= 1.5 * best_single,
            "{proto}: {} vs one path {best_single}",
            f.goodput_bps
        );
        // The two backbones carry 8 Mbit/s of frames, headers included.
        assert!(f.goodput_bps < 8e6, "{proto}: {}", f.goodput_bps);
        // Both interfaces carry the pipe both ways: data down, REQs up;
        // and both backbones.
        for (a, b) in [(1, 0), (2, 0), (3, 1), (3, 2)] {
            let n = link_frames(&r, a, b);
            assert!(n > 1000, "{proto}: {a}->{b} delivered {n} frames");
        }
        for (a, b) in [(0, 1), (0, 2), (1, 3), (2, 3)] {
            let n = link_frames(&r, a, b);
            assert!(n > 100, "{proto}: {a}->{b} delivered {n} frames");
        }
    }
}

#[test]
fn without_pinning_both_pipes_share_the_route_by_destination() {
    // The same two pipes (two ports on srv) but no `via`: the server's
    // answers all return over one interface, so nothing is aggregated.
    let text = SHARED.replace("PROTO", "r2cp")
        + "[flow.r2cp]\npaths = [{ server = \"srv\" }, { server = \"srv\" }]\n";
    // Two identical entries are refused; give the second a distinct port
    // by pinning only the first.
    assert!(Scenario::parse_str(&text, "t", ".".into()).is_err());
    let text = SHARED.replace("PROTO", "r2cp")
        + "[flow.r2cp]\npaths = [{ server = \"srv\", via = \"ap0\" }, { server = \"srv\" }]\n";
    let r = run(&text);
    let f = &r.flows[0];
    assert!(f.completed);
    assert_eq!(f.bytes_delivered, 6_000_000);
    assert_eq!(f.corrupt_deliveries, 0);
    assert_eq!(link_frames(&r, 2, 0), 0, "nothing returns over ap1");
    assert_eq!(link_frames(&r, 3, 2), 0, "nothing leaves srv toward ap1");
    let pinned = run(&(SHARED.replace("PROTO", "r2cp") + PINNED));
    assert!(pinned.flows[0].goodput_bps > 1.5 * f.goodput_bps);
}

#[test]
fn policy_routes_leave_ordinary_routing_unchanged() {
    // An R²CP flow pinned to both interfaces, and a TCP flow between the
    // same nodes on another port.
    let text = SHARED.replace("PROTO", "r2cp").replace("[flow]", "[[flows]]")
        + PINNED.replace("[flow.r2cp]", "[flows.r2cp]").as_str()
        + "[[flows]]\nprotocol = \"newreno\"\nfrom = \"srv\"\nto = \"mh\"\napp = \"bulk\"\nbytes = \"1MB\"\nport = 6000\n";
    let spec = scenario(&text).spec(&ParamPoint::default()).expect("spec");
    let plain_text = SHARED.replace("PROTO", "rcp");
    let plain_spec = scenario(&plain_text)
        .spec(&ParamPoint::default())
        .expect("spec");
    let pinned = Simulation::new(&spec, 1);
    let plain = Simulation::new(&plain_spec, 1);
    assert_eq!(plain.policy_routes(), 0);
    // mh→ap_i, ap_i→srv for the requests; srv→ap_i, ap_i→mh for the data.
    assert_eq!(pinned.policy_routes(), 8);
    let (mh, ap0, ap1, srv) = (0, 1, 2, 3);
    // Every (node, destination) for ports the policy does not name routes
    // exactly as without policy routes.
    for node in 0..4 {
        for dst in 0..4 {
            for (sp, dp) in [
                (6000, 6000),
                (5000, 6000),
                (6000, 5001),
                (5002, 5000),
                (5000, 5002),
            ] {
                let (src, dst) = (Addr::new(node, sp), Addr::new(dst, dp));
                assert_eq!(
                    pinned.next_hop(node, src, dst),
                    plain.next_hop(node, src, dst),
                    "node {node} {src:?} -> {dst:?}"
                );
            }
        }
    }
    // The default route to srv is through ap0; the second pipe is not.
    let (rx, p0, p1) = (
        Addr::new(mh, 5000),
        Addr::new(srv, 5000),
        Addr::new(srv, 5001),
    );
    assert_eq!(plain.next_hop(mh, rx, p1), Some(ap0));
    assert_eq!(pinned.next_hop(mh, rx, p0), Some(ap0));
    assert_eq!(pinned.next_hop(mh, rx, p1), Some(ap1));
    assert_eq!(pinned.next_hop(srv, p1, rx), Some(ap1));
    assert_eq!(pinned.next_hop(srv, p0, rx), Some(ap0));
    assert_eq!(pinned.next_hop(ap1, p1, rx), Some(mh));
    assert_eq!(pinned.next_hop(ap1, rx, p1), Some(srv));
    // And the TCP flow runs over the ordinary route.
    let r =
        joulenet_sim::run(&scenario(&text), &ParamPoint::default(), 1, &mut |_| {}).expect("runs");
    for f in &r.flows {
        assert!(f.completed, "{}", f.protocol);
        assert_eq!(f.corrupt_deliveries, 0, "{}", f.protocol);
    }
}

#[test]
fn paths_are_validated_with_named_keys() {
    let base = SHARED.replace("PROTO", "r2cp");
    let err = |extra: &str| match Scenario::parse_str(&(base.clone() + extra), "t", ".".into()) {
        Ok(_) => panic!("accepted: {extra}"),
        Err(e) => e.to_string(),
    };
    let e = err("[flow.r2cp]\npaths = [{ server = \"srv\", via = \"ap0\" }, { server = \"nowhere\", via = \"ap1\" }]\n");
    assert!(
        e.contains("flow.r2cp.paths[1].server") && e.contains("nowhere"),
        "{e}"
    );
    let e = err("[flow.r2cp]\npaths = [{ server = \"srv\", via = \"ap0\" }, { server = \"srv\", via = \"ap7\" }]\n");
    assert!(e.contains("flow.r2cp.paths[1].via"), "{e}");
    // srv is not a neighbour of mh.
    let e = err("[flow.r2cp]\npaths = [{ server = \"srv\", via = \"ap0\" }, { server = \"srv\", via = \"srv\" }]\n");
    assert!(
        e.contains("flow.r2cp.paths[1].via") && e.contains("neighbour"),
        "{e}"
    );
    let e = err("[flow.r2cp]\npaths = [{ server = \"ap1\", via = \"ap0\" }, { server = \"srv\", via = \"ap1\" }]\n");
    assert!(
        e.contains("flow.r2cp.paths[0].server") && e.contains("from"),
        "{e}"
    );
    let e = err("[flow.r2cp]\nservers = [\"srv\"]\npaths = [{ server = \"srv\", via = \"ap0\" }, { server = \"srv\", via = \"ap1\" }]\n");
    assert!(
        e.contains("flow.r2cp.paths") && e.contains("not both"),
        "{e}"
    );
    let e = err("[flow.r2cp]\npaths = [{ server = \"srv\", via = \"ap0\" }]\n");
    assert!(e.contains("flow.r2cp.paths") && e.contains("two"), "{e}");
    let e = err("[flow.r2cp]\npaths = [{ server = \"srv\", via = \"ap0\", port = 3 }, { server = \"srv\", via = \"ap1\" }]\n");
    assert!(e.contains("flow.r2cp.paths[0].port"), "{e}");
}

#[test]
fn the_scenario_file_survives_an_outage_of_one_interface() {
    // scenarios/rcp/r2cp-point-to-point.toml, shortened: the second
    // interface is down 2–4 s of a ~5 s transfer. A pinned path reads its
    // own interface's state (`PathSpec::via`), so the pipe dies and its
    // requests go to the other interface, then it reopens.
    let text = include_str!("../../../scenarios/rcp/r2cp-point-to-point.toml")
        .replace("20MB", "4MB")
        .replace("10s..15s", "2s..4s");
    let sc = scenario(&text);
    let points = sc.points();
    assert_eq!(points.len(), 4);
    let runs: Vec<RunResult> = points
        .iter()
        .map(|p| joulenet_sim::run(&sc, p, 1, &mut |_| {}).expect("runs"))
        .collect();
    let one_path = runs
        .iter()
        .find(|r| r.flows[0].protocol == "rcp")
        .map(|r| r.flows[0].goodput_bps)
        .expect("an rcp point");
    for r in &runs {
        let f = &r.flows[0];
        assert!(f.completed, "{}", f.protocol);
        assert_eq!(f.bytes_delivered, 4_000_000, "{}", f.protocol);
        assert_eq!(f.corrupt_deliveries, 0, "{}", f.protocol);
        if f.protocol != "rcp" {
            assert!(
                link_frames(r, 2, 0) > 500,
                "{}: ap1 carried data",
                f.protocol
            );
            // 4 + 3 Mbit/s with 2 s of 4 + 0: about 1.4× one path. Reading
            // the route to srv instead of the pinned interface, the pipe on
            // the dead interface waits out RTOs (measured ≤ 1.08×).
            assert!(
                f.goodput_bps > 1.25 * one_path,
                "{}: {} vs one path {one_path}",
                f.protocol,
                f.goodput_bps
            );
        }
    }
}

#[test]
fn a_flow_on_a_port_the_paths_use_is_refused() {
    // The R²CP flow's second sender listens at srv:5001, the default port
    // of a second flow.
    let text = SHARED
        .replace("PROTO", "r2cp")
        .replace("[flow]", "[[flows]]")
        + PINNED.replace("[flow.r2cp]", "[flows.r2cp]").as_str()
        + "[[flows]]\nprotocol = \"newreno\"\nfrom = \"srv\"\nto = \"mh\"\napp = \"bulk\"\n";
    let Err(e) = Scenario::parse_str(&text, "t", ".".into()) else {
        panic!("a port clash must be refused");
    };
    let e = e.to_string();
    assert!(e.contains("flows[1].port") && e.contains("5001"), "{e}");
    assert!(Scenario::parse_str(&(text + "port = 6000\n"), "t", ".".into()).is_ok());
}
