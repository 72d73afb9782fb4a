//! Bad scenarios are rejected with an error naming the exact key at fault,
//! and no input (text or value at a known key) makes validation panic.

mod common;

use common::{rejection, scratch_dir};
use joulenet_sim::scenario::set_path;
use joulenet_sim::{Scenario, Simulation};
use proptest::prelude::*;
use toml::{Table, Value};

/// (what is wrong, scenario text, key the error must name, text the message must contain)
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "rate without a unit that parses",
        "[link]\nrate = \"fast\"",
        "link.rate",
        "",
    ),
    (
        "negative rate",
        "[link]\nrate = -3",
        "link.rate",
        "positive",
    ),
    (
        "misspelt link key",
        "[link]\nrat = \"1Mbps\"",
        "link.rat",
        "did you mean `rate`",
    ),
    (
        "state loss out of range",
        "[link]\nloss = { model = \"gilbert_elliott\", good = { mean = \"1s\", loss = 1.5 }, bad = { mean = \"1s\", loss = 0.5 } }",
        "link.loss.good.loss",
        "[0, 1]",
    ),
    (
        "unknown loss model",
        "[link]\nloss = { model = \"rayleigh\" }",
        "link.loss.model",
        "unknown loss model",
    ),
    (
        "bernoulli without rate",
        "[link]\nloss = { model = \"bernoulli\" }",
        "link.loss.rate",
        "missing",
    ),
    (
        "unknown protocol",
        "[flow]\nprotocol = \"quic\"",
        "flow.protocol",
        "unknown protocol",
    ),
    (
        "flow from a node that does not exist",
        "[[flows]]\nfrom = 0\nto = 1\n[[flows]]\nfrom = 7\nto = 1",
        "flows[1].from",
        "no node 7",
    ),
    (
        "flow to a node name that does not exist",
        "[[flows]]\nto = \"n9\"",
        "flows[0].to",
        "no node named",
    ),
    (
        "unknown topology",
        "[topology]\nkind = \"ring\"",
        "topology.kind",
        "unknown topology",
    ),
    (
        "chain without hops",
        "[topology]\nkind = \"chain\"",
        "topology.hops",
        "missing",
    ),
    (
        "chain with zero hops",
        "[topology]\nkind = \"chain\"\nhops = 0",
        "topology.hops",
        "",
    ),
    (
        "negative battery capacity",
        "[[batteries]]\nnode = 0\ncapacity = -5",
        "batteries[0].capacity",
        "",
    ),
    (
        "battery for a missing node",
        "[[batteries]]\nnode = 4\ncapacity = 5",
        "batteries[0].node",
        "",
    ),
    (
        "unknown energy policy",
        "[energy]\npolicy = \"greedy\"",
        "energy.policy",
        "intermediate",
    ),
    (
        "active weight without intermediate policy",
        "[energy]\npolicy = \"ideal\"\nactive_weight = 0.3",
        "energy.active_weight",
        "",
    ),
    (
        "zero series interval",
        "[output]\nseries_interval = \"0s\"",
        "output.series_interval",
        "1 us",
    ),
    (
        "mss too small",
        "[flow.tcp]\nmss = 10",
        "flow.tcp.mss",
        "64..=65000",
    ),
    (
        "no basic rate at or below the data rate",
        "[topology]\nkind = \"chain\"\nhops = 2\n[medium]\nbasic_rates = [\"24Mbps\"]",
        "medium.basic_rates",
        "at or below the data rate",
    ),
    (
        "unknown tcp profile",
        "[flow.tcp]\nprofile = \"bsd\"",
        "flow.tcp.profile",
        "xkernel-1998",
    ),
    (
        "misspelt tcp option",
        "[flow.tcp]\nsakc = true",
        "flow.tcp.sakc",
        "did you mean `sack`",
    ),
    (
        "explicit topology with a flow between disconnected nodes",
        "[topology]\nkind = \"explicit\"\nnodes = 4\n[[topology.links]]\na = 0\nb = 1\n[[topology.links]]\na = 2\nb = 3\n[[flows]]\nfrom = 0\nto = 3",
        "flows[0].to",
        "no path",
    ),
    (
        "explicit topology with an absurd node count",
        "[topology]\nkind = \"explicit\"\nnodes = 1000000000000\n[[topology.links]]\na = 0\nb = 1",
        "topology.nodes",
        "at most",
    ),
    (
        "backlogged flow that never stops",
        "[flow]\napp = \"backlogged\"",
        "flow.stop",
        "never ends",
    ),
    (
        "flow stop before its start",
        "[flow]\nstart = \"2s\"\nstop = \"1s\"",
        "flow.stop",
        "after",
    ),
    (
        "trace file that does not exist",
        "[link]\nloss = { model = \"trace\", file = \"no-such-trace-file.txt\" }",
        "link.loss.file",
        "cannot read",
    ),
    (
        "wired link with a radio",
        "[link]\nmedium = \"wired\"\nradio = \"wavelan\"",
        "link.radio",
        "wired",
    ),
    (
        "unknown radio preset",
        "[link]\nradio = \"walkie-talkie\"",
        "link.radio",
        "unknown radio preset",
    ),
    (
        "unknown top-level key",
        "stpo = \"1s\"",
        "stpo",
        "did you mean `stop`",
    ),
    (
        "only background traffic and no stop",
        "[flow]\nprotocol = \"udp\"\napp = \"cbr\"\nrate = \"1Mbps\"",
        "stop",
        "background",
    ),
    (
        "E2TCP minimum window above the maximum: the minimum is at fault",
        "[flow]\nprotocol = \"e2tcp\"\n[flow.e2tcp]\nmin_window = 40\nmax_window = 10",
        "flow.e2tcp.min_window",
        "must not exceed max_window",
    ),
    (
        "E2TCP burst window above the maximum",
        "[flow]\nprotocol = \"e2tcp\"\n[flow.e2tcp]\nburst_window = 40\nmax_window = 10",
        "flow.e2tcp.burst_window",
        "must not exceed max_window",
    ),
    (
        "WWP initial level above the number of levels",
        "[flow]\nprotocol = \"wwp\"\n[flow.wwp]\nlevels = 3\ninitial_level = 9",
        "flow.wwp.initial_level",
        "1..=3",
    ),
    (
        "RCP max_rto below min_rto",
        "[flow]\nprotocol = \"rcp\"\n[flow.rcp]\nmin_rto = \"2s\"\nmax_rto = \"1s\"",
        "flow.rcp.max_rto",
        "at least min_rto",
    ),
    (
        "split relay buffer too small",
        "[topology]\nkind = \"chain\"\nhops = 2\n[flow]\nprotocol = \"e2tcp\"\n[flow.e2tcp]\nsplit_at = 1\nrelay_buffer = 10",
        "flow.e2tcp.relay_buffer",
        "between 1 KB and 1 GB",
    ),
    (
        "JTP loss tolerance above 1",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nloss_tolerance = 1.5",
        "flow.jtp.loss_tolerance",
        "[0, 1]",
    ),
    (
        "JTP loss tolerance set on jtp10, which fixes it",
        "[flow]\nprotocol = \"jtp10\"\n[flow.jtp]\nloss_tolerance = 0.2",
        "flow.jtp.loss_tolerance",
        "fixes the loss tolerance",
    ),
    (
        "JTP priority without a tolerance",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\npriority_pattern = [0, 2]\npriority_tolerance = [0.1, 0.2]",
        "flow.jtp.priority_pattern",
        "priority 2 has no tolerance",
    ),
    (
        "JTP priority tolerance above 1",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\npriority_pattern = [0]\npriority_tolerance = [1.5]",
        "flow.jtp.priority_tolerance",
        "[0, 1]",
    ),
    (
        "JTP priority that is not a byte",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\npriority_pattern = [0.5]\npriority_tolerance = [0.1]",
        "flow.jtp.priority_pattern",
        "0..=255",
    ),
    (
        "JTP unknown header layout",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nformat = \"prototype\"",
        "flow.jtp.format",
        "\"paper\"",
    ),
    (
        "JTP empty packets",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\npacket_size = 0",
        "flow.jtp.packet_size",
        "1..=65000",
    ),
    (
        "JTP zero energy budget",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nenergy_budget_uj = 0",
        "flow.jtp.energy_budget_uj",
        "1..=",
    ),
    (
        "JTP negative budget factor",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nbudget_factor = -1",
        "flow.jtp.budget_factor",
        "at least 0",
    ),
    (
        "JTP zero link attempts",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nmax_attempts = 0",
        "flow.jtp.max_attempts",
        "1..=255",
    ),
    (
        "JTP assumed link loss above 1",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nassumed_link_loss = 2",
        "flow.jtp.assumed_link_loss",
        "[0, 1]",
    ),
    (
        "JTP initial rate of zero",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\ninitial_rate = 0",
        "flow.jtp.initial_rate",
        "positive",
    ),
    (
        "JTP feedback lower bound that is not a duration",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nfeedback_lower_bound = \"soon\"",
        "flow.jtp.feedback_lower_bound",
        "",
    ),
    (
        "JTP zero packets per feedback",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nfeedback_packets = 0",
        "flow.jtp.feedback_packets",
        "1..=",
    ),
    (
        "JTP late back-off that does not back off",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nlate_backoff = 1.0",
        "flow.jtp.late_backoff",
        "(0, 1)",
    ),
    (
        "JTP empty SNACK",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nmax_snack = 0",
        "flow.jtp.max_snack",
        "1..=",
    ),
    (
        "JTP cache size that is not a number",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\ncache_packets = \"many\"",
        "flow.jtp.cache_packets",
        "",
    ),
    (
        "JTP misspelt option",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\ncache_size = 10",
        "flow.jtp.cache_size",
        "",
    ),
    (
        "JTP monitor gain out of range",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\nmonitor = { beta = 2.0 }",
        "flow.jtp.monitor.beta",
        "(0, 1]",
    ),
    (
        "JTP controller gain out of range",
        "[flow]\nprotocol = \"jtp\"\n[flow.jtp]\ncontroller = { k_i = 0 }",
        "flow.jtp.controller.k_i",
        "(0, 1)",
    ),
    (
        "Hop option misspelt",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nblock_sise = \"64KB\"",
        "flow.hop.block_sise",
        "did you mean `block_size`",
    ),
    (
        "Hop block of more than 65535 frames",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nblock_size = \"100MB\"",
        "flow.hop.block_size",
        "65535 frames",
    ),
    (
        "Hop TXOP of no frames",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\ntxop_frames = 0",
        "flow.hop.txop_frames",
        "",
    ),
    (
        "Hop H of zero blocks",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nh = 0",
        "flow.hop.h",
        "",
    ),
    (
        "Hop H with backpressure off",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nbackpressure = false\nh = 2",
        "flow.hop.h",
        "backpressure = true",
    ),
    (
        "Hop micro-block threshold with micro-blocks off",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nmicro_blocks = false\nmicro_block_threshold = \"8KB\"",
        "flow.hop.micro_block_threshold",
        "micro_blocks = true",
    ),
    (
        "Hop micro-block larger than one BSYN",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nmicro_block_threshold = \"1MB\"",
        "flow.hop.micro_block_threshold",
        "one BSYN",
    ),
    (
        "Hop switch that is not a boolean",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nack_withholding = \"yes\"",
        "flow.hop.ack_withholding",
        "",
    ),
    (
        "Hop virtual retransmission switch that is not a boolean",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nvirtual_retransmission = 1",
        "flow.hop.virtual_retransmission",
        "",
    ),
    (
        "Hop zero end-to-end timeout",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\ninitial_e2e_timeout = \"0s\"",
        "flow.hop.initial_e2e_timeout",
        "positive",
    ),
    (
        "Hop zero TTL",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nttl = 0",
        "flow.hop.ttl",
        "",
    ),
];

#[test]
fn each_bad_scenario_names_its_key() {
    let mut failures = Vec::new();
    for &(what, text, key, needle) in CASES {
        let e = rejection(text);
        if e.key != key || !e.message.contains(needle) {
            failures.push(format!(
                "{what}: expected key `{key}` with message containing {needle:?}, got key `{}`: {}",
                e.key, e.message
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn the_good_twin_of_each_case_is_accepted() {
    // Guard against the table passing because everything is rejected.
    for text in [
        "[link]\nrate = \"1Mbps\"",
        "[link]\nloss = { model = \"gilbert_elliott\", good = { mean = \"1s\", loss = 0.01 }, bad = { mean = \"1s\", loss = 0.5 } }",
        "[flow]\nprotocol = \"sack\"",
        "[topology]\nkind = \"chain\"\nhops = 3",
        "[[batteries]]\nnode = 0\ncapacity = 5",
        "[energy]\npolicy = \"intermediate\"\nactive_weight = 0.3",
        "[output]\nseries_interval = \"1ms\"",
        "[flow.tcp]\nmss = 536\nsack = true",
        "[flow.tcp]\nprofile = \"linux\"\nmin_rto = \"300ms\"",
        "[topology]\nkind = \"chain\"\nhops = 2\n[medium]\nbasic_rates = [\"1Mbps\", \"24Mbps\"]",
        "[flow]\napp = \"backlogged\"\nstop = \"1s\"",
        "[flow]\nprotocol = \"hop\"\n[flow.hop]\nblock_size = \"64KB\"\ntxop_frames = 4\nh = 2\nbackpressure = true\nack_withholding = false\nmicro_blocks = true\nmicro_block_threshold = \"8KB\"\nvirtual_retransmission = false\ninitial_e2e_timeout = \"5s\"\nttl = 10\nbsyn_retry = \"100ms\"\npace_queue = false",
    ] {
        if let Err(e) = Scenario::parse_str(text, "good", scratch_dir()) {
            panic!("rejected a valid scenario ({e}):\n{text}");
        }
    }
}

#[test]
fn invalid_toml_is_an_error_with_a_line() {
    let e = rejection("[link]\nrate = \n");
    assert!(e.message.contains("line 2"), "{e}");
}

// ---------------------------------------------------------------------------
// Robustness: nothing panics.

const SECTIONS: &[&str] = &[
    "[link]",
    "[topology]",
    "[[topology.links]]",
    "[topology.last_hop]",
    "[flow]",
    "[flow.tcp]",
    "[[flows]]",
    "[energy]",
    "[output]",
    "[[batteries]]",
    "[sweep]",
    "[link.loss]",
    "[link.loss.good]",
];

const KEYS: &[&str] = &[
    "rate",
    "delay",
    "queue",
    "overhead",
    "medium",
    "radio",
    "arq",
    "loss",
    "loss_reverse",
    "kind",
    "hops",
    "pairs",
    "nodes",
    "a",
    "b",
    "protocol",
    "app",
    "bytes",
    "message",
    "mean_interval",
    "mean_on",
    "mean_off",
    "shape",
    "start",
    "stop",
    "from",
    "to",
    "port",
    "mss",
    "sack",
    "policy",
    "active_weight",
    "series",
    "series_interval",
    "pcap",
    "node",
    "capacity",
    "model",
    "file",
    "good",
    "bad",
    "mean",
    "min",
    "max",
    "ber",
    "seed",
    "name",
];

const VALUES: &[&str] = &[
    "1",
    "0",
    "-1",
    "2",
    "1.5",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "9223372036854775807",
    "-9223372036854775808",
    "true",
    "\"\"",
    "\"1Mbps\"",
    "\"0bps\"",
    "\"-5ms\"",
    "\"1e400s\"",
    "\"99999999999999999999GB\"",
    "\"2000mAh@3.7V\"",
    "\"0J\"",
    "\"chain\"",
    "\"explicit\"",
    "\"dumbbell\"",
    "\"wired\"",
    "\"wireless\"",
    "\"trace\"",
    "\"bernoulli\"",
    "\"udp\"",
    "\"cbr\"",
    "\"pareto\"",
    "\"poisson\"",
    "\"backlogged\"",
    "\"n1\"",
    "[]",
    "[1, 2]",
    "[\"a\", \"b\"]",
    "{}",
    "{ model = \"bernoulli\", rate = 2 }",
    "{ model = \"gilbert_elliott\", good = { min = \"2s\", max = \"1s\", loss = 0 } }",
    "{ retries = 300 }",
    "{ preset = \"wavelan\", idle = \"-1W\" }",
];

fn toml_ish_line() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(SECTIONS).prop_map(str::to_string),
        (prop::sample::select(KEYS), prop::sample::select(VALUES))
            .prop_map(|(k, v)| format!("{k} = {v}")),
        (prop::sample::select(KEYS), "\\PC{0,16}").prop_map(|(k, v)| format!("{k} = {v}")),
        "\\PC{0,24}",
    ]
}

fn unit_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "-?[0-9]{1,25}(\\.[0-9]{0,4})?(e[0-9]{1,3})?(ns|us|ms|s|min|h|bps|kbps|Mbps|Gbps|B|kB|MB|GB|KiB|MiB|J|mJ|kJ|W|mW|mAh@3.7V)?",
        prop::sample::select(VALUES).prop_map(|v| v.trim_matches('"').to_string()),
        "\\PC{0,12}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Value::Integer),
        (-3i64..20).prop_map(Value::Integer),
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
            Just(1e300),
            -1.0..2.0f64,
        ]
        .prop_map(Value::Float),
        any::<bool>().prop_map(Value::Boolean),
        unit_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 10, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(KEYS), inner, 0..4).prop_map(|m| {
                Value::Table(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

const DOTTED_KEYS: &[&str] = &[
    "stop",
    "seed",
    "name",
    "sweep",
    "link.rate",
    "link.delay",
    "link.queue",
    "link.overhead",
    "link.medium",
    "link.radio",
    "link.radio.idle",
    "link.arq",
    "link.loss",
    "link.loss.model",
    "link.loss.rate",
    "link.loss.good",
    "link.loss_reverse",
    "topology.kind",
    "topology.hops",
    "topology.pairs",
    "topology.nodes",
    "topology.links",
    "topology.last_hop",
    "flow.protocol",
    "flow.app",
    "flow.bytes",
    "flow.rate",
    "flow.message",
    "flow.mean_interval",
    "flow.mean_on",
    "flow.mean_off",
    "flow.shape",
    "flow.start",
    "flow.stop",
    "flow.port",
    "flow.from",
    "flow.to",
    "flow.background",
    "flow.tcp",
    "flow.tcp.mss",
    "flow.tcp.initial_window",
    "flow.tcp.initial_ssthresh",
    "flow.tcp.min_rto",
    "flow.tcp.max_rto",
    "flow.tcp.delayed_ack",
    "flow.tcp.sack",
    "flow.tcp.send_buffer",
    "flows",
    "batteries",
    "energy.policy",
    "energy.active_weight",
    "output.series",
    "output.series_interval",
    "output.pcap",
];

const BASE: &str = r#"
stop = "1s"
[topology]
kind = "two_nodes"
[link]
rate = "1Mbps"
delay = "5ms"
loss = { model = "bernoulli", rate = 0.01 }
[flow]
protocol = "reno"
app = "bulk"
bytes = "10kB"
[energy]
policy = "ideal"
[output]
pcap = false
"#;

/// Validate a table and, when it is accepted, build (not run) every point's
/// simulation: construction must not panic on anything validation let by.
fn validate_and_build(table: Table) {
    if let Ok(s) = Scenario::from_table(table, "prop", scratch_dir()) {
        for point in s.points().into_iter().take(8) {
            let spec = s.spec(&point).expect("points were validated on load");
            if spec.nodes.len() <= 64 {
                let _ = Simulation::new(&spec, 1);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn toml_ish_text_never_panics(lines in prop::collection::vec(toml_ish_line(), 0..14)) {
        let text = lines.join("\n");
        if let Ok(s) = Scenario::parse_str(&text, "prop", scratch_dir()) {
            validate_and_build(s.table().clone());
        }
    }

    #[test]
    fn any_value_at_known_keys_never_panics(
        edits in prop::collection::vec((prop::sample::select(DOTTED_KEYS), value()), 1..4)
    ) {
        let mut table: Table = BASE.parse().unwrap();
        for (key, v) in edits {
            if set_path(&mut table, key, v).is_err() {
                return Ok(());
            }
        }
        validate_and_build(table);
    }
}
