//! The registry's own promises: every name is unique and made as itself,
//! runtime codes never collide, and options are checked with the key named.

use joulenet_proto::Addr;
use toml::Table;

use crate::options::Reader;
use crate::{by_code, entries, entry, HostSettings, ProtocolSpec, Wire};

fn hosts() -> HostSettings {
    HostSettings {
        min_rto: joulenet_proto::Duration::from_millis(200),
        send_buffer: 4 << 20,
        recv_buffer: 4 << 20,
        segment: 1400,
        timestamps: true,
    }
}

#[test]
fn every_name_is_unique_and_made_as_itself() {
    let mut names: Vec<&str> = entries().map(|e| e.name).collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "a protocol name is listed twice");
    for e in entries() {
        let spec = ProtocolSpec::named(e.name).unwrap();
        // jtp0 is jtp with its default loss tolerance: the same protocol.
        let expected = if e.name == "jtp0" { "jtp" } else { e.name };
        assert_eq!(spec.name(), expected);
        assert!(!e.about.is_empty());
    }
    assert!(entry("nope").is_none());
}

#[test]
fn runtime_codes_are_unique_and_round_trip() {
    let mut codes = Vec::new();
    let mut multihomed = Vec::new();
    for e in entries() {
        match e.wire {
            Wire::Code(c) => {
                assert!(!codes.contains(&c), "code {c} used twice");
                codes.push(c);
                assert_eq!(by_code(c).unwrap().name, e.name);
            }
            Wire::Multihomed(c) => multihomed.push((c, e.name)),
            Wire::Unavailable(_) => {}
        }
    }
    // R²CP's codes (issue 20) share the header's byte with the others.
    assert_eq!(
        multihomed,
        [(28, "r2cp"), (29, "r2cp-s"), (30, "r2cp-stripe")]
    );
    assert!(multihomed.iter().all(|(c, _)| !codes.contains(c)));
    // The codes the runtime has used since framing v2 (docs/wire.md), and
    // rate-sack's, added with the registry.
    let expected: [(u8, &str); 22] = [
        (1, "tahoe"),
        (2, "reno"),
        (3, "newreno"),
        (4, "sack"),
        (5, "cubic"),
        (6, "rate-sack"),
        (7, "stp"),
        (16, "udp"),
        (17, "wwp"),
        (18, "e2tcp"),
        (19, "rcp"),
        (20, "rcp-stp"),
        (21, "hbh-tcp"),
        (22, "hop"),
        (23, "jtp"),
        (24, "jtp0"),
        (25, "jtp10"),
        (26, "jtp20"),
        (27, "atp"),
        (31, "e2tcp-split"),
        (32, "nackrate"),
        (33, "dtn"),
    ];
    for (code, name) in expected {
        assert_eq!(by_code(code).map(|e| e.name), Some(name));
    }
    assert_eq!(codes.len(), expected.len());
}

#[test]
fn what_has_a_code_runs_on_hosts_and_what_has_none_says_why() {
    for e in entries() {
        let mut spec = ProtocolSpec::named(e.name).unwrap();
        let tuned = spec.on_hosts(&hosts());
        match e.wire {
            Wire::Code(_) | Wire::Multihomed(_) => {
                tuned.unwrap_or_else(|err| panic!("{}: {err}", e.name));
                let (_client, _server) = spec.agents(Addr::new(0, 1), Addr::new(1, 1));
            }
            Wire::Unavailable(why) => {
                assert!(tuned.is_err(), "{} has no code but accepted hosts", e.name);
                assert!(!why.is_empty());
            }
        }
    }
}

fn configure(name: &str, text: &str) -> Result<ProtocolSpec, crate::OptionError> {
    let table: Table = text.parse().unwrap();
    let names = ["a".to_string(), "b".to_string(), "c".to_string()];
    let mut spec = ProtocolSpec::named(name).unwrap();
    spec.configure(&Reader::new(&table, "flow"), &names)?;
    Ok(spec)
}

#[test]
fn options_errors_name_the_key() {
    let cases = [
        ("sack", "[tcp]\nmss = 10", "flow.tcp.mss"),
        (
            "newreno",
            "[tcp]\nmin_rto = \"2s\"\nmax_rto = \"1s\"",
            "flow.tcp.max_rto",
        ),
        ("sack", "[tcp]\nsack = false", "flow.tcp.sack"),
        (
            "newreno",
            "[tcp]\nstp_polls_per_rtt = 4",
            "flow.tcp.stp_polls_per_rtt",
        ),
        ("reno", "[tcp]\nmsss = 1000", "flow.tcp.msss"),
        (
            "wwp",
            "[wwp]\nlevels = 15\nsegments_per_level = 20",
            "flow.wwp.segments_per_level",
        ),
        (
            "wwp",
            "[wwp]\ngradual_resume = \"yes\"",
            "flow.wwp.gradual_resume",
        ),
        (
            "wwp",
            "[wwp]\ninitial_segment = 16777216",
            "flow.wwp.initial_segment",
        ),
        (
            "e2tcp",
            "[e2tcp]\nmin_window = 40\nmax_window = 8",
            "flow.e2tcp.min_window",
        ),
        ("e2tcp", "[e2tcp]\nsplit_at = \"zz\"", "flow.e2tcp.split_at"),
        ("e2tcp", "[e2tcp]\nwired = \"cubic\"", "flow.e2tcp.wired"),
        ("rcp", "[rcp]\npower_save = 3", "flow.rcp.power_save"),
        (
            "jtp10",
            "[jtp]\nloss_tolerance = 0.3",
            "flow.jtp.loss_tolerance",
        ),
        ("hop", "[hop]\nbackpressure = false\nh = 2", "flow.hop.h"),
        (
            "atp",
            "[atp]\nincrease_gain = 2.0",
            "flow.atp.increase_gain",
        ),
        (
            "atp",
            "[atp]\ninitial_rate = \"0bps\"",
            "flow.atp.initial_rate",
        ),
        (
            "rate-sack",
            "[tcp]\ndupack_threshold = 0",
            "flow.tcp.dupack_threshold",
        ),
        ("udp", "[tcp]\nmss = 1000", "flow.tcp"),
        ("udp", "[udp]\nlink_arq = 1", "flow.udp.link_arq"),
        ("udp", "[udp]\narq = false", "flow.udp.arq"),
        ("dtn", "[dtn]\nbundle = 0", "flow.dtn.bundle"),
        (
            "dtn",
            "[dtn]\nbundle = \"1MB\"\nstorage = \"100KB\"",
            "flow.dtn.storage",
        ),
        ("dtn", "[tcp]\nmss = 10", "flow.tcp.mss"),
        (
            "r2cp",
            "[r2cp]\ncontroller = \"cubic\"",
            "flow.r2cp.controller",
        ),
        ("r2cp-s", "[r2cp]\ncontroller = 1", "flow.r2cp.controller"),
        (
            "r2cp",
            "[r2cp]\npaths = [{ server = \"a\" }, { server = \"b\", controller = \"vegas\" }]",
            "flow.r2cp.paths[1].controller",
        ),
        (
            "r2cp",
            "[r2cp]\npaths = [{ server = \"a\", cc = \"stp\" }, { server = \"b\" }]",
            "flow.r2cp.paths[0].cc",
        ),
    ];
    for (name, text, key) in cases {
        let err = configure(name, text).expect_err(text);
        assert_eq!(err.key, key, "{name} {text}: {err}");
    }
}

#[test]
fn options_reach_the_configuration() {
    let spec = configure("sack", "[tcp]\nmss = 536\ndelayed_ack = false").unwrap();
    let c = spec.config_as::<joulenet_proto::tcp::TcpConfig>().unwrap();
    assert_eq!((c.mss, c.delayed_ack), (536, None));
    let spec = configure("stp", "[tcp]\nstp_polls_per_rtt = 8").unwrap();
    let c = spec.config_as::<joulenet_proto::tcp::TcpConfig>().unwrap();
    assert_eq!(c.stp.map(|s| s.polls_per_rtt), Some(8));
    assert_eq!(c.protocol_name(), "stp");
    let spec = configure(
        "e2tcp",
        "[e2tcp]\nsplit_at = \"b\"\nrelay_buffer = \"64KB\"",
    )
    .unwrap();
    let e = spec.config_as::<crate::e2tcp::E2tcp>().unwrap();
    let split = e.split.as_ref().unwrap();
    assert_eq!((split.at, split.buffer), (1, 64 * 1000));
    assert!(spec.relay().is_some());
    let spec = configure("wwp", "[wwp]\ngradual_resume = true").unwrap();
    let w = spec.config_as::<joulenet_proto::wwp::WwpConfig>().unwrap();
    assert!(w.gradual_resume);
    let udp = |text| {
        configure("udp", text)
            .unwrap()
            .config_as::<crate::udp::Udp>()
            .unwrap()
            .link_attempts
    };
    assert_eq!(udp(""), None, "the link's own retry limit by default");
    assert_eq!(udp("[udp]\nlink_arq = false"), Some(1));
    assert_eq!(udp("[udp]\nlink_arq = true"), None);
    let spec = configure("dtn", "[dtn]\nbundle = \"64KB\"\n[tcp]\nmss = 1000").unwrap();
    let d = spec.config_as::<joulenet_proto::dtn::DtnConfig>().unwrap();
    assert_eq!((d.bundle, d.tcp.mss), (64_000, 1000));
    assert_eq!(
        d.tcp.max_consecutive_rtos,
        u32::MAX,
        "custody is never given up"
    );
    assert!(spec.relay().is_some());
}

/// R²CP's per-interface congestion control (§4.1.1): a path's own
/// controller, else the flow's `controller`, else NewReno.
#[test]
fn r2cp_controllers_reach_each_path() {
    use joulenet_proto::rcp::RcpController;
    let spec = configure(
        "r2cp",
        "[r2cp]\ncontroller = \"stp\"\npaths = [{ server = \"a\" }, \
         { server = \"b\", via = \"c\", controller = \"newreno\" }]",
    )
    .unwrap();
    let r = spec.config_as::<crate::r2cp::R2cpSpec>().unwrap();
    assert_eq!(r.cfg.rcp.controller, RcpController::Stp);
    let per_path: Vec<_> = r.paths.iter().map(|p| p.controller).collect();
    assert_eq!(per_path, vec![None, Some(RcpController::NewReno)]);
    let spec = configure("r2cp-s", "[r2cp]\nservers = [\"b\"]").unwrap();
    let r = spec.config_as::<crate::r2cp::R2cpSpec>().unwrap();
    assert_eq!(r.cfg.rcp.controller, RcpController::NewReno);
}
