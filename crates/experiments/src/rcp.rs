//! `joulenet reproduce rcp [--quick]`: the RCP paper's simulation
//! experiments that this tree implements, our numbers beside the paper's
//! claims. Results are also written as CSV to the output folder
//! (`results/reproduce/rcp/` by default; the write-up's copy is
//! `docs/reproduction/rcp/`).

use std::fmt::Write as _;

use joulenet_sim::{RunResult, Scenario};

use crate::{run_all, Options};

const WIRELESS: &str = r#"
name = "rcp-wireless-loss"
stop = "STOP"
[topology]
kind = "dumbbell"
pairs = 1
[topology.access]
rate = "20Mbps"
delay = "4ms"
[topology.bottleneck]
rate = "10Mbps"
delay = "40ms"
[topology.last_hop]
rate = "2Mbps"
delay = "15ms"
medium = "wireless"
radio = "80211b"
loss = { model = "bernoulli", rate = 0.01 }
[flow]
app = "backlogged"
background = false
[flow.tcp]
delayed_ack = false
[sweep]
"topology.last_hop.loss.rate" = [0.0001, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]
"flow.protocol" = ["sack", "tcp-eln", "rcp", "rcp-eln"]
"#;

/// Figure 5b: the Figure 5a set-up with the same seven frames lost on the
/// wireless hop towards the mobile host and nothing else (the reverse
/// direction is clean, and a 64 KiB window keeps the queues from
/// overflowing). `trace` is the path of a frame-fate trace
/// (`seven_loss_trace`); `protocols` a TOML list's items.
fn seven_losses_scenario(trace: &str, protocols: &str) -> String {
    let topology = &WIRELESS[..WIRELESS.find("[flow]").expect("WIRELESS has a flow")];
    let topology = topology
        .replace("rcp-wireless-loss", "rcp-seven-losses")
        .replace("STOP", "12s")
        .replace(
            "loss = { model = \"bernoulli\", rate = 0.01 }",
            &format!("loss = {{ model = \"trace\", file = \"{trace}\" }}\nloss_reverse = \"none\""),
        );
    format!(
        "{topology}[flow]\napp = \"backlogged\"\nbackground = false\n\
         [flow.tcp]\ndelayed_ack = false\nrecv_buffer = \"64KiB\"\n\
         [flow.rcp]\nrecv_buffer = \"64KiB\"\n\
         [output]\nseries = [\"receiver.ooo_bytes\", \"receiver.eln_reports\"]\nseries_interval = \"1ms\"\n\
         [sweep]\n\"flow.protocol\" = [{protocols}]\n"
    )
}

/// Every protocol of Figure 5a and 5b, and NewReno (TCP-ELN without ELN).
const SEVEN_LOSS_PROTOCOLS: &str = "\"tcp-eln\", \"rcp-eln\", \"newreno\", \"sack\", \"rcp\"";

/// The paper's lost packets (Figure 5b): 500, 504, 508, 512, 525, 528, 531.
pub const SEVEN_LOST: [u64; 7] = [500, 504, 508, 512, 525, 528, 531];

/// Frame fates for the wireless hop towards the mobile host: the frames at
/// the positions in `SEVEN_LOST` are lost (0-based, so the SYN is frame 0).
pub fn seven_loss_trace() -> String {
    let last = SEVEN_LOST[SEVEN_LOST.len() - 1];
    let mut t = String::from("# Figure 5b: seven wireless losses\n");
    for frame in 0..=last {
        t.push_str(if SEVEN_LOST.contains(&frame) {
            "1\n"
        } else {
            "0\n"
        });
    }
    t
}

/// Figure 5b's recovery time, from the mobile host's gauges sampled every
/// millisecond: (from the first moment it holds out-of-order data, i.e.
/// just after the first loss, until every hole is filled; from the moment
/// its link layer reported the last of the seven losses until then — ELN
/// protocols only).
fn recovery_time(r: &RunResult) -> (f64, Option<f64>) {
    let samples = |name: &'static str| {
        r.series
            .iter()
            .filter(move |s| s.series == name && s.entity == "flow0")
    };
    let held: Vec<f64> = samples("receiver.ooo_bytes")
        .filter(|s| s.value > 0.0)
        .map(|s| s.time_s)
        .collect();
    let (Some(first), Some(last)) = (held.first(), held.last()) else {
        return (0.0, None);
    };
    let end = last + 0.001;
    let last_loss = samples("receiver.eln_reports")
        .find(|s| s.value >= SEVEN_LOST.len() as f64)
        .map(|s| end - s.time_s);
    (end - first, last_loss)
}

/// Runs the seven-loss scenario for `protocols`, one run each.
fn run_seven_losses(protocols: &str) -> Result<Vec<RunResult>, String> {
    let path = std::env::temp_dir().join(format!(
        "joulenet-rcp-seven-losses-{}-{}.trace",
        std::process::id(),
        protocols.len()
    ));
    std::fs::write(&path, seven_loss_trace()).map_err(|e| e.to_string())?;
    let text = seven_losses_scenario(&path.display().to_string(), protocols);
    let runs = Scenario::parse_str(&text, "rcp-seven-losses", ".".into())
        .map_err(|e| e.to_string())
        .and_then(|sc| {
            let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
            run_all(&sc, &sc.points(), &[1], jobs)
        });
    let _ = std::fs::remove_file(&path);
    runs
}

/// Figure 5b: the seven-loss pattern for each protocol, recovery time
/// beside the paper's. Deterministic (a trace, no random loss): one seed.
fn seven_losses(out: &mut String, files: &mut Vec<(&str, String)>) -> Result<(), String> {
    let runs = run_seven_losses(SEVEN_LOSS_PROTOCOLS)?;
    let paper = |p: &str| match p {
        "tcp-eln" => "1.43",
        "rcp-eln" => "0.12",
        _ => "–",
    };
    let mut csv = String::from(
        "protocol,recovery_s,after_last_loss_s,paper_s,window_cuts,timeouts,retransmitted\n",
    );
    out.push_str(
        "\n## Seven wireless losses (frames 500, 504, 508, 512, 525, 528, 531 towards the mobile host; Figure 5b): recovery time\n\n\
         | protocol | first loss → all holes filled, s | last loss → all filled, s | paper s | window cuts | timeouts | retransmitted |\n|---|---|---|---|---|---|---|\n",
    );
    for r in &runs {
        let f = &r.flows[0];
        let (t, after) = recovery_time(r);
        let after = after.map_or("–".to_string(), |a| format!("{a:.3}"));
        let (cuts, to, retx) = (f.fast_recoveries, f.timeouts, f.retransmitted_packets);
        let name = f.protocol.as_str();
        let p = paper(name);
        csv.push_str(&format!("{name},{t:.3},{after},{p},{cuts},{to},{retx}\n"));
        out.push_str(&format!(
            "| {name} | {t:.3} | {after} | {p} | {cuts} | {to} | {retx} |\n"
        ));
    }
    files.push(("seven_losses.csv", csv));
    Ok(())
}

const SATELLITE: &str = r#"
name = "rcp-satellite"
stop = "STOP"
[topology]
kind = "dumbbell"
pairs = 2
[topology.access]
rate = "10Mbps"
delay = "2ms"
[topology.bottleneck]
rate = "1.5Mbps"
delay = "250ms"
queue = 60
[topology.last_hop]
rate = "10Mbps"
delay = "2ms"
medium = "wired"
[flow]
app = "backlogged"
[flow.tcp]
delayed_ack = false
[[flows]]
from = "s0"
to = "r0"
background = false
# Reverse-path load (asymmetry): a backlogged TCP flow the other way.
[[flows]]
from = "r1"
to = "s1"
protocol = "newreno"
background = true
[sweep]
"topology.bottleneck.delay" = ["50ms", "150ms", "250ms"]
"flows.0.protocol" = ["newreno", "stp", "rcp", "rcp-stp"]
"#;

/// Figure 5c's background: "four HTTP traffic sources in each direction"
/// (§3.4.3). The paper's ns-2 web model is not given; ours (an
/// assumption): TCP NewReno flows whose application sends Pareto on/off
/// bursts (250 kbit/s while on, mean on 1 s, off 4 s, shape 1.5), 50 kbit/s
/// each on average, on four more pairs of the dumbbell, four each way.
fn with_http_background(text: &str) -> String {
    let mut flows = String::new();
    for i in 2..6 {
        for (from, to) in [
            (format!("s{i}"), format!("r{i}")),
            (format!("r{i}"), format!("s{i}")),
        ] {
            let _ = write!(
                flows,
                "[[flows]]\nfrom = \"{from}\"\nto = \"{to}\"\nprotocol = \"newreno\"\nbackground = true\n\
                 app = \"pareto\"\nrate = \"250kbps\"\nmessage = 1000\nmean_on = \"1s\"\nmean_off = \"4s\"\n"
            );
        }
    }
    text.replace("pairs = 2", "pairs = 6")
        .replace("[sweep]\n", &(flows + "[sweep]\n"))
}

const POWER: &str = r#"
name = "rcp-power"
stop = "STOP"
[topology]
kind = "dumbbell"
pairs = 1
[topology.access]
rate = "20Mbps"
delay = "4ms"
[topology.bottleneck]
rate = "10Mbps"
delay = "40ms"
[topology.last_hop]
rate = "2Mbps"
delay = "15ms"
medium = "wireless"
radio = "80211b"
loss = { model = "gilbert_elliott", good = { mean = "10s", loss = 0.0001 }, bad = { mean = "5s", loss = 0.1 } }
[flow]
app = "backlogged"
background = false
[flow.tcp]
delayed_ack = false
[sweep]
"topology.last_hop.loss.bad.mean" = ["1s", "4s", "7s", "10s"]
"flow.protocol" = ["sack", "rcp-ps"]
"#;

const AGGREGATION: &str = r#"
name = "r2cp-aggregation"
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
queue = 50
[topology.backbone1]
rate = "4Mbps"
delay = "13ms"
queue = 50
[flow]
from = "srv0"
to = "mh"
app = "backlogged"
background = false
[flow.r2cp]
servers = ["srv1"]
[sweep]
"#;

/// The aggregation scenario with both paths to ONE server (point-to-point
/// aggregation): the access points share server `srv`, and each path is a
/// pipe to its own port there, pinned to its interface (`via`).
fn point_to_point(text: &str) -> String {
    text.replace(
        "kind = \"multihomed\"",
        "kind = \"multihomed\"\nshared_server = true",
    )
    .replace("from = \"srv0\"", "from = \"srv\"")
    .replace(
        "servers = [\"srv1\"]",
        "paths = [{ server = \"srv\", via = \"ap0\" }, { server = \"srv\", via = \"ap1\" }]",
    )
}

/// Per-interface congestion control (§4.1.1): the point-to-point scenario
/// with the first interface's pipes on NewReno and the second's on the
/// flow's default controller, which the sweep sets.
fn per_interface(text: &str) -> String {
    point_to_point(text).replace(
        "{ server = \"srv\", via = \"ap0\" }",
        "{ server = \"srv\", via = \"ap0\", controller = \"newreno\" }",
    )
}

/// The second interface's controller: NewReno or the STP-like one.
const CC_SWEEP: &str = "\"topology.backbone1.rate\" = [\"1Mbps\", \"4Mbps\"]\n\"flow.r2cp.controller\" = [\"newreno\", \"stp\"]\n\"flow.protocol\" = [\"r2cp\"]\n";

/// Bandwidth-mismatch sweep lines: 4 + 1–6 Mbit/s.
const BW_SWEEP: &str = "\"topology.backbone1.rate\" = [\"1Mbps\", \"2Mbps\", \"4Mbps\", \"6Mbps\"]\n\"flow.protocol\" = [\"r2cp\", \"r2cp-s\", \"r2cp-stripe\", \"rcp\"]\n";

/// TCP-friendliness: 20 flows over the Figure 3 dumbbell, `k` of them RCP.
fn friendliness(k: usize, stop: &str) -> String {
    let mut t = format!(
        "name = \"rcp-friendliness\"\nstop = \"{stop}\"\n[topology]\nkind = \"dumbbell\"\npairs = 20\n\
         [topology.access]\nrate = \"20Mbps\"\ndelay = \"4ms\"\n\
         [topology.bottleneck]\nrate = \"10Mbps\"\ndelay = \"40ms\"\nqueue = 100\n\
         [topology.last_hop]\nrate = \"20Mbps\"\ndelay = \"4ms\"\n\
         [flow]\napp = \"backlogged\"\nbackground = false\n[flow.tcp]\ndelayed_ack = false\n"
    );
    for i in 0..20 {
        let proto = if i < k { "rcp" } else { "sack" };
        t.push_str(&format!(
            "[[flows]]\nfrom = \"s{i}\"\nto = \"r{i}\"\nprotocol = \"{proto}\"\nstart = \"{}ms\"\n",
            i * 50
        ));
    }
    t
}

/// Reverse-path loss: 20 forward flows of one protocol and `n` Pareto
/// on/off UDP sources (500 kbit/s bursts, 1 s on, 2 s off) the other way.
fn reverse_path(proto: &str, n: usize, stop: &str) -> String {
    // `sack` keeps our TCP's delayed ACKs here (one per two segments), as
    // Figure 4d always had; `sack-every-ack` acknowledges every segment as
    // in every other figure (issue 21: both are shown).
    let (proto, every_ack) = match proto {
        REVERSE_EVERY_ACK => ("sack", true),
        p => (p, false),
    };
    // `[flow.tcp]` would reach the UDP sources too (refused), so the
    // every-segment setting goes on each forward flow.
    let mut t = friendliness(0, stop)
        .replace("\"sack\"", &format!("\"{proto}\""))
        .replace("[flow.tcp]\ndelayed_ack = false\n", "");
    if every_ack {
        t = t.replace(
            "protocol = \"sack\"\n",
            "protocol = \"sack\"\ntcp = { delayed_ack = false }\n",
        );
    }
    for i in 0..n {
        t.push_str(&format!(
            "[[flows]]\nfrom = \"r{}\"\nto = \"s{}\"\nprotocol = \"udp\"\nbackground = true\n\
             app = \"pareto\"\nrate = \"500kbps\"\nmessage = 1000\nmean_on = \"1s\"\nmean_off = \"2s\"\n",
            i % 20,
            i % 20
        ));
    }
    t
}

/// Figure 4d's TCP-SACK acknowledging every segment (the label of the
/// second TCP column).
const REVERSE_EVERY_ACK: &str = "sack-every-ack";

/// R²CP under fluctuating cross traffic: 10 Pareto on/off UDP sources on
/// each path's backbone (500 kbit/s bursts, on 0.1c s, off 0.2c s).
fn fluctuating(proto: &str, c: f64, stop: &str) -> String {
    let mut t = AGGREGATION.replace("STOP", stop).replace("[sweep]\n", "");
    t = t.replace("[flow]\n", &format!("[flow]\nprotocol = \"{proto}\"\n"));
    for path in 0..2 {
        for _ in 0..10 {
            t.push_str(&format!(
                "[[flows]]\nfrom = \"srv{path}\"\nto = \"ap{path}\"\nprotocol = \"udp\"\nbackground = true\n\
                 app = \"pareto\"\nrate = \"500kbps\"\nmessage = 1000\nmean_on = \"{}s\"\nmean_off = \"{}s\"\n",
                0.1 * c,
                0.2 * c
            ));
        }
    }
    // The measured flow must be listed too once [[flows]] exists.
    t.push_str("[[flows]]\nfrom = \"srv0\"\nto = \"mh\"\n");
    t
}

/// Figure 11d: policy aggregation. R²CP with a 720 kbit/s token bucket
/// (the first path spends tokens first, the second only what is left)
/// while 10 Pareto on/off UDP sources (800 kbit/s bursts, on 1 s, off 1 s:
/// 4 Mbit/s on average, the backbone's rate) load the first path only. The paper's testbed had background traffic in the
/// first cell; its load is not given (ours). The receiver's bytes per pipe
/// are sampled every second, the paper's 1 s bins.
fn policy(stop: &str) -> String {
    let mut t = AGGREGATION.replace("STOP", stop).replace("[sweep]\n", "");
    t = t.replace(
        "servers = [\"srv1\"]",
        "servers = [\"srv1\"]\nrate_limit = \"720kbps\"",
    );
    for _ in 0..10 {
        t.push_str(
            "[[flows]]\nfrom = \"srv0\"\nto = \"ap0\"\nprotocol = \"udp\"\nbackground = true\n\
             app = \"pareto\"\nrate = \"800kbps\"\nmessage = 1000\nmean_on = \"1s\"\nmean_off = \"1s\"\n",
        );
    }
    t.push_str("[[flows]]\nfrom = \"srv0\"\nto = \"mh\"\nprotocol = \"r2cp\"\n");
    t.push_str(
        "[output]\nseries = [\"receiver.pipe_bytes_0\", \"receiver.pipe_bytes_1\"]\nseries_interval = \"1s\"\n",
    );
    t
}

/// Per-second kbit/s of one sampled byte counter of the measured (last)
/// flow, from the 10th second on (slow start and the second pipe's opening
/// left out).
fn per_second(r: &RunResult, name: &str) -> Vec<f64> {
    let entity = format!("flow{}", r.flows.len() - 1);
    let mut pts: Vec<(f64, f64)> = r
        .series
        .iter()
        .filter(|row| row.entity == entity && row.series.ends_with(name))
        .map(|row| (row.time_s, row.value))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts.windows(2)
        .filter(|w| w[0].0 >= 10.0)
        .map(|w| (w[1].1 - w[0].1) * 8.0 / 1e3 / (w[1].0 - w[0].0))
        .collect()
}

fn mean_cov(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    (m, var.sqrt() / m.max(1e-9))
}

/// Figure 11d as a table: mean and coefficient of variation of the 1 s
/// throughput of each pipe and of their sum, over the seeds; the CSV has
/// seed 1's seconds.
fn policy_table(
    out: &mut String,
    files: &mut Vec<(&str, String)>,
    seeds: &[u64],
    stop: &str,
) -> Result<(), String> {
    let sc =
        Scenario::parse_str(&policy(stop), "r2cp-policy", ".".into()).map_err(|e| e.to_string())?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runs = run_all(&sc, &sc.points(), seeds, jobs)?;
    let mut sums = [(0.0, 0.0); 3];
    let mut csv = String::from("second,pipe0_kbps,pipe1_kbps,aggregate_kbps\n");
    for (i, r) in runs.iter().enumerate() {
        let a = per_second(r, "pipe_bytes_0");
        let b = per_second(r, "pipe_bytes_1");
        let sum: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        for (k, v) in [&a, &b, &sum].into_iter().enumerate() {
            let (m, c) = mean_cov(v);
            sums[k].0 += m / runs.len() as f64;
            sums[k].1 += c / runs.len() as f64;
        }
        if i == 0 {
            for (t, ((x, y), z)) in a.iter().zip(&b).zip(&sum).enumerate() {
                let _ = writeln!(csv, "{},{x:.1},{y:.1},{z:.1}", t + 10);
            }
        }
    }
    out.push_str("\n## R²CP policy aggregation: 720 kbit/s token bucket, the first pipe spends first, bursty UDP load on the first path only (Figure 11d); 1 s throughput from the 10th second\n\n| | mean kbit/s | CoV of 1 s bins |\n|---|---|---|\n");
    for (label, (m, c)) in ["first pipe (loaded)", "second pipe", "aggregate"]
        .into_iter()
        .zip(sums)
    {
        let _ = writeln!(out, "| {label} | {m:.0} | {c:.3} |");
    }
    files.push(("policy.csv", csv));
    Ok(())
}

fn scenario(text: &str, stop: &str, name: &str) -> Result<Scenario, String> {
    let text = text.replace("STOP", stop);
    // `rcp-ps` is RCP with `[flow.rcp] power_save = true`.
    let text = text.replace("\"rcp-ps\"]", "\"rcp\"]\n[flow.rcp]\npower_save = true");
    Scenario::parse_str(&text, name, ".".into()).map_err(|e| e.to_string())
}

/// Mean of `f` over the runs of one point.
fn mean(runs: &[RunResult], f: impl Fn(&RunResult) -> f64) -> f64 {
    runs.iter().map(&f).sum::<f64>() / runs.len().max(1) as f64
}

/// A named metric of one run.
type Column<'a> = (&'a str, &'a dyn Fn(&RunResult) -> f64);

struct Table {
    csv: String,
    text: String,
}

fn run_table(
    title: &str,
    sc: &Scenario,
    seeds: &[u64],
    columns: &[Column],
) -> Result<Table, String> {
    let points = sc.points();
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runs = run_all(sc, &points, seeds, jobs)?;
    let mut csv = String::from("point");
    let mut text = format!("\n## {title}\n\n| point |");
    for (c, _) in columns {
        let _ = write!(csv, ",{c}");
        let _ = write!(text, " {c} |");
    }
    csv.push('\n');
    text.push_str("\n|---|");
    text.push_str(&"---|".repeat(columns.len()));
    text.push('\n');
    for (i, p) in points.iter().enumerate() {
        let group = &runs[i * seeds.len()..(i + 1) * seeds.len()];
        let label: Vec<String> = p
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    k.rsplit('.').next().unwrap_or(k),
                    joulenet_sim::scenario::value_text(v)
                )
            })
            .collect();
        let label = label.join(" ");
        let _ = write!(csv, "\"{label}\"");
        let _ = write!(text, "| {label} |");
        for (_, f) in columns {
            let v = mean(group, f);
            let _ = write!(csv, ",{v:.4}");
            let _ = write!(text, " {v:.3} |");
        }
        csv.push('\n');
        text.push('\n');
    }
    Ok(Table { csv, text })
}

fn goodput(r: &RunResult) -> f64 {
    r.flows.first().map_or(0.0, |f| f.goodput_bps / 1e6)
}
fn timeouts(r: &RunResult) -> f64 {
    r.flows.first().map_or(0.0, |f| f.timeouts as f64)
}
/// Energy of the mobile host (the first receiver of the dumbbell).
fn mh_energy(r: &RunResult) -> f64 {
    r.nodes
        .iter()
        .find(|n| n.name == "r0")
        .map_or(0.0, |n| n.energy_j)
}
fn mh_sleep(r: &RunResult) -> f64 {
    r.nodes
        .iter()
        .find(|n| n.name == "r0")
        .map_or(0.0, |n| n.sleep_s)
}

/// `[output]` for Figure 12c: the receiver's `buffer_75` gauge, sampled
/// (the last sample is the whole run's share), then the sweep.
const BUFFER_75_SERIES: &str =
    "[output]\nseries = [\"receiver.buffer_75\"]\nseries_interval = \"1s\"\n[sweep]\n";

/// Percentage of the first flow's arrivals that found the R²CP receive
/// buffer at least 75 % full (Figure 12c), from its last sample.
fn buffer_75_pct(r: &RunResult) -> f64 {
    r.series
        .iter()
        .filter(|row| row.entity == "flow0" && row.series.ends_with("buffer_75"))
        .max_by(|a, b| a.time_s.total_cmp(&b.time_s))
        .map_or(0.0, |row| row.value * 100.0)
}

/// Figure 4c: 5 TCP-SACK and 5 RCP flows from the start, 5 more TCP-SACK
/// flows from 50 s to 150 s and 5 more RCP flows from 100 s to 200 s, on
/// the friendliness dumbbell; the paper plots each flow's sequence-number
/// progression and compares the late groups' final heights and spread.
/// Figure 4c's groups of five flows: protocol, start and stop (s).
const MICRO_SCHEDULE: [(&str, usize, Option<usize>); 4] = [
    ("sack", 0, None),
    ("rcp", 0, None),
    ("sack", 50, Some(150)),
    ("rcp", 100, Some(200)),
];

fn microscopic() -> String {
    let mut t = friendliness(0, "200s");
    t.truncate(t.find("[[flows]]").unwrap_or(t.len()));
    for (g, (proto, start, stop)) in MICRO_SCHEDULE.into_iter().enumerate() {
        for j in 0..5 {
            let i = g * 5 + j;
            let _ = write!(
                t,
                "[[flows]]\nfrom = \"s{i}\"\nto = \"r{i}\"\nprotocol = \"{proto}\"\nstart = \"{}ms\"\n",
                start * 1000 + j * 50
            );
            if let Some(stop) = stop {
                let _ = writeln!(t, "stop = \"{}ms\"", stop * 1000 + j * 50);
            }
        }
    }
    t
}

/// Figure 4c's groups: (label, first flow index).
const MICRO_GROUPS: [(&str, usize); 4] = [
    ("TCP-SACK, 0–200 s", 0),
    ("RCP, 0–200 s", 5),
    ("TCP-SACK, 50–150 s", 10),
    ("RCP, 100–200 s", 15),
];

/// Figure 4c as a table: per group of five flows, the mean bytes each
/// delivered, and the smallest and largest (the paper's "height of their
/// final points, and the width of dispersion"); the CSV has every flow.
fn micro_table(
    out: &mut String,
    files: &mut Vec<(&str, String)>,
    seeds: &[u64],
) -> Result<(), String> {
    // Every flow's bytes delivered over time: the paper's sequence-number
    // progression curves.
    let text = microscopic() + "[output]\nseries = [\"delivered\"]\nseries_interval = \"1s\"\n";
    let sc =
        Scenario::parse_str(&text, "rcp-microscopic", ".".into()).map_err(|e| e.to_string())?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runs = run_all(&sc, &sc.points(), seeds, jobs)?;
    let mut csv = String::from("seed,flow,protocol,start_s,delivered_mb\n");
    for (r, seed) in runs.iter().zip(seeds) {
        for f in &r.flows {
            let _ = writeln!(
                csv,
                "{seed},{},{},{},{:.4}",
                f.flow,
                f.protocol,
                f.start_s,
                f.bytes_delivered as f64 / 1e6
            );
        }
    }
    out.push_str("\n## Microscopic behaviour: 5 TCP-SACK + 5 RCP flows from 0 s, 5 TCP-SACK flows 50–150 s, 5 RCP flows 100–200 s (Figure 4c); MB delivered per flow over its life, mean over seeds\n\n| group | mean MB per flow | smallest | largest |\n|---|---|---|---|\n");
    let n = runs.len().max(1) as f64;
    for (label, first) in MICRO_GROUPS {
        let (mut m, mut lo, mut hi) = (0.0, 0.0, 0.0);
        for r in &runs {
            let mb: Vec<f64> = r.flows[first..first + 5]
                .iter()
                .map(|f| f.bytes_delivered as f64 / 1e6)
                .collect();
            m += mb.iter().sum::<f64>() / 5.0 / n;
            lo += mb.iter().copied().fold(f64::INFINITY, f64::min) / n;
            hi += mb.iter().copied().fold(0.0, f64::max) / n;
        }
        let _ = writeln!(out, "| {label} | {m:.2} | {lo:.2} | {hi:.2} |");
    }
    files.push(("microscopic.csv", csv));
    files.push(("microscopic_series.csv", progression_csv(&runs[0])));
    Ok(())
}

/// Figure 4c's curves from one run: each flow's megabytes delivered at
/// each sample, while the flow is running (from its start to its stop).
fn progression_csv(r: &RunResult) -> String {
    let mut csv = String::from("time_s,flow,protocol,delivered_mb\n");
    for row in r.series.iter().filter(|row| row.series == "delivered") {
        let Some(f) = row
            .entity
            .strip_prefix("flow")
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| r.flows.get(i))
        else {
            continue;
        };
        let stop = MICRO_SCHEDULE[f.flow / 5].2;
        let running =
            row.time_s >= f.start_s && stop.is_none_or(|stop| row.time_s <= stop as f64 + 1.0);
        if running {
            let _ = writeln!(
                csv,
                "{},{},{},{:.4}",
                row.time_s,
                f.flow,
                f.protocol,
                row.value / 1e6
            );
        }
    }
    csv
}

/// Run the RCP / R²CP experiments; returns the report.
pub fn reproduce(args: &Options) -> Result<String, String> {
    let started = std::time::Instant::now();
    // Seeds as every paper's reproduction counts them (`--seeds`; one with
    // `--quick`); the full run defaults to the 10 seeds the write-up uses.
    let n = args.seeds.unwrap_or(if args.quick { 1 } else { 10 }).max(1);
    let seeds: Vec<u64> = (1..=n).collect();
    let (stop_w, stop_p, stop_a, stop_f) = if args.quick {
        ("60s", "120s", "30s", "30s")
    } else {
        ("300s", "300s", "120s", "300s")
    };
    let mut out = String::new();
    let mut files = Vec::new();
    let t = run_table(
        "Wireless last hop: goodput (Mbit/s) vs random loss both ways (Figure 5a)",
        &scenario(WIRELESS, stop_w, "rcp-wireless")?,
        &seeds,
        &[("goodput_mbps", &goodput), ("timeouts", &timeouts)],
    )?;
    out.push_str(&t.text);
    files.push(("wireless.csv", t.csv));
    seven_losses(&mut out, &mut files)?;
    let t = run_table(
        "Satellite bottleneck 1.5 Mbit/s with reverse TCP load: goodput (Mbit/s) (Figure 5c)",
        &scenario(SATELLITE, stop_w, "rcp-satellite")?,
        &seeds,
        &[("goodput_mbps", &goodput), ("timeouts", &timeouts)],
    )?;
    out.push_str(&t.text);
    files.push(("satellite.csv", t.csv));
    let t = run_table(
        "Satellite, as above, with HTTP-like background: four Pareto on/off TCP sources each way (ours: the paper's HTTP model is not given) (Figure 5c)",
        &scenario(&with_http_background(SATELLITE), stop_w, "rcp-satellite-http")?,
        &seeds,
        &[("goodput_mbps", &goodput), ("timeouts", &timeouts)],
    )?;
    out.push_str(&t.text);
    files.push(("satellite_http.csv", t.csv));
    let t = run_table(
        "Power management, two-state channel: mobile host energy and goodput (Figure 5d)",
        &scenario(POWER, stop_p, "rcp-power")?,
        &seeds,
        &[
            ("goodput_mbps", &goodput),
            ("mh_energy_j", &mh_energy),
            ("mh_sleep_s", &mh_sleep),
            ("timeouts", &timeouts),
        ],
    )?;
    out.push_str(&t.text);
    files.push(("power.csv", t.csv));
    // R²CP aggregation: bandwidth mismatch, then RTT mismatch (Figure 12).
    let bw = AGGREGATION.to_string() + BW_SWEEP;
    let t = run_table(
        "R²CP aggregation, bandwidth mismatch: 4 Mbit/s + 1–6 Mbit/s, goodput (Mbit/s) (Figure 12a; ideal = sum)",
        &scenario(&bw, stop_a, "r2cp-bw")?,
        &seeds,
        &[("goodput_mbps", &goodput)],
    )?;
    out.push_str(&t.text);
    files.push(("aggregation_bw.csv", t.csv));
    let t = run_table(
        "R²CP point-to-point aggregation: two interfaces to ONE server, 4 Mbit/s + 1–6 Mbit/s, goodput (Mbit/s) (ideal = sum; rcp = one path)",
        &scenario(&point_to_point(&bw), stop_a, "r2cp-p2p-bw")?,
        &seeds,
        &[("goodput_mbps", &goodput)],
    )?;
    out.push_str(&t.text);
    files.push(("aggregation_p2p.csv", t.csv));
    let t = run_table(
        "R²CP per-interface congestion control (§4.1.1): point-to-point, first interface NewReno, second NewReno or STP-like, 4 Mbit/s + 1 or 4 Mbit/s, goodput (Mbit/s)",
        &scenario(&(per_interface(AGGREGATION) + CC_SWEEP), stop_a, "r2cp-cc")?,
        &seeds,
        &[("goodput_mbps", &goodput)],
    )?;
    out.push_str(&t.text);
    files.push(("aggregation_cc.csv", t.csv));
    // Figure 12c from the same runs: the receiver's share of arrivals that
    // found its buffer at least 75 % full (its `buffer_75` gauge).
    let mut rtt = AGGREGATION.replace("[sweep]\n", BUFFER_75_SERIES);
    rtt.push_str("\"topology.backbone1.delay\" = [\"13ms\", \"43ms\", \"73ms\", \"103ms\"]\n");
    rtt.push_str("\"flow.protocol\" = [\"r2cp\", \"r2cp-s\", \"r2cp-stripe\"]\n");
    let t = run_table(
        "R²CP aggregation, RTT mismatch: path RTTs 30 ms + 30–210 ms, 4 + 4 Mbit/s, goodput (Mbit/s) (Figure 12b; ideal = 8) and % of arrivals finding the receive buffer ≥ 75 % full (Figure 12c)",
        &scenario(&rtt, stop_a, "r2cp-rtt")?,
        &seeds,
        &[("goodput_mbps", &goodput), ("buffer_75_pct", &buffer_75_pct)],
    )?;
    out.push_str(&t.text);
    files.push(("aggregation_rtt.csv", t.csv));
    // TCP-friendliness: mean and CoV of per-flow goodput, k RCP flows of 20.
    let mut csv = String::from("rcp_flows,mean_mbps,cov,mean_rcp_mbps,mean_tcp_mbps\n");
    out.push_str("\n## TCP-friendliness: 20 flows on the Figure 3 dumbbell (10 Mbit/s bottleneck), k of them RCP (Figure 4a/b)\n\n| RCP flows | mean per-flow Mb/s | CoV | mean RCP | mean TCP-SACK |\n|---|---|---|---|---|\n");
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    for k in [0usize, 5, 10, 15, 20] {
        let sc = Scenario::parse_str(&friendliness(k, stop_f), "rcp-friendliness", ".".into())
            .map_err(|e| e.to_string())?;
        let runs = run_all(&sc, &sc.points(), &seeds, jobs)?;
        let (mut m, mut c, mut mr, mut mt) = (0.0, 0.0, 0.0, 0.0);
        for r in &runs {
            let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps / 1e6).collect();
            let mean = g.iter().sum::<f64>() / g.len() as f64;
            let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64;
            m += mean;
            c += var.sqrt() / mean.max(1e-9);
            let avg = |v: &[f64]| {
                if v.is_empty() {
                    f64::NAN
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            };
            mr += avg(&g[..k]);
            mt += avg(&g[k..]);
        }
        let n = runs.len() as f64;
        let (m, c, mr, mt) = (m / n, c / n, mr / n, mt / n);
        csv.push_str(&format!("{k},{m:.4},{c:.4},{mr:.4},{mt:.4}\n"));
        out.push_str(&format!("| {k} | {m:.3} | {c:.3} | {mr:.3} | {mt:.3} |\n"));
    }
    files.push(("friendliness.csv", csv));
    micro_table(&mut out, &mut files, &seeds)?;
    // Reverse-path loss.
    let counts: &[usize] = if args.quick {
        &[0, 50, 100]
    } else {
        &[0, 25, 50, 75, 100]
    };
    let mut csv = String::from("sources,protocol,mean_mbps\n");
    out.push_str("\n## Reverse-path loss: 20 forward flows, 0–100 Pareto on/off UDP sources on the reverse path, mean per-flow goodput Mb/s (Figure 4d; TCP-SACK with delayed ACKs, and acknowledging every segment as in the other figures)\n\n| reverse sources | TCP-SACK | TCP-SACK, ACK per segment | RCP |\n|---|---|---|---|\n");
    for &n in counts {
        let mut row = format!("| {n} |");
        for proto in ["sack", REVERSE_EVERY_ACK, "rcp"] {
            let sc =
                Scenario::parse_str(&reverse_path(proto, n, stop_f), "rcp-reverse", ".".into())
                    .map_err(|e| e.to_string())?;
            let runs = run_all(&sc, &sc.points(), &seeds, jobs)?;
            let m = mean(&runs, |r| {
                let g: Vec<f64> = r.flows[..20].iter().map(|f| f.goodput_bps / 1e6).collect();
                g.iter().sum::<f64>() / 20.0
            });
            csv.push_str(&format!("{n},{proto},{m:.4}\n"));
            row.push_str(&format!(" {m:.3} |"));
        }
        out.push_str(&row);
        out.push('\n');
    }
    files.push(("reverse.csv", csv));
    // Fluctuating cross traffic on both R²CP paths.
    let indices: &[f64] = if args.quick {
        &[1.0, 10.0, 50.0]
    } else {
        &[1.0, 5.0, 10.0, 20.0, 50.0]
    };
    let mut csv = String::from("fluctuation,protocol,goodput_mbps\n");
    out.push_str("\n## R²CP under fluctuating cross traffic: 4 + 4 Mbit/s paths, 10 Pareto on/off sources each (mean load 1.67 Mbit/s per path, so ideal ≈ 4.67 Mbit/s), goodput Mb/s (Figure 12d)\n\n| fluctuation index c | R²CP | R²CP-s | striping |\n|---|---|---|---|\n");
    for &c in indices {
        let mut row = format!("| {c} |");
        for proto in ["r2cp", "r2cp-s", "r2cp-stripe"] {
            let sc = Scenario::parse_str(&fluctuating(proto, c, stop_a), "r2cp-fluct", ".".into())
                .map_err(|e| e.to_string())?;
            let runs = run_all(&sc, &sc.points(), &seeds, jobs)?;
            let m = mean(&runs, |r| {
                r.flows.last().map_or(0.0, |f| f.goodput_bps / 1e6)
            });
            csv.push_str(&format!("{c},{proto},{m:.4}\n"));
            row.push_str(&format!(" {m:.3} |"));
        }
        out.push_str(&row);
        out.push('\n');
    }
    files.push(("fluctuation.csv", csv));
    policy_table(&mut out, &mut files, &seeds, stop_a)?;
    let mut report = format!(
        "# joulenet reproduce rcp{}\n{} seed(s) per point{}",
        if args.quick { " --quick" } else { "" },
        seeds.len(),
        out
    );
    if std::fs::create_dir_all(&args.out).is_ok() {
        for (name, csv) in files {
            let _ = std::fs::write(args.out.join(name), csv);
        }
    }
    report.push_str(&format!(
        "\n{:.1} s wall; CSV in {}\n",
        started.elapsed().as_secs_f64(),
        args.out.display()
    ));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figure 4d's two TCP-SACK settings: delayed ACKs, and an ACK per
    /// segment set on each forward flow (a `[flow.tcp]` table would reach
    /// the UDP sources and be refused).
    #[test]
    fn figure_4d_runs_tcp_sack_both_ways() {
        let every = reverse_path(REVERSE_EVERY_ACK, 3, "1s");
        let delayed = reverse_path("sack", 3, "1s");
        assert_eq!(every.matches("tcp = { delayed_ack = false }").count(), 20);
        assert!(!delayed.contains("delayed_ack"));
        for text in [every, delayed] {
            Scenario::parse_str(&text, "t", ".".into()).unwrap();
        }
    }

    /// Goodput (Mbit/s) of one point of the bandwidth-mismatch sweep.
    fn bw_point(text: &str, rate: &str, proto: &str) -> f64 {
        let text = text.to_string()
            + &format!(
                "\"topology.backbone1.rate\" = [\"{rate}\"]\n\"flow.protocol\" = [\"{proto}\"]\n"
            );
        let sc = scenario(&text, "20s", "t").unwrap();
        let runs = run_all(&sc, &sc.points(), &[1], 1).unwrap();
        goodput(&runs[0])
    }

    #[test]
    fn point_to_point_aggregates_as_well_as_two_servers() {
        let p2p = point_to_point(AGGREGATION);
        assert!(p2p.contains("shared_server = true") && p2p.contains("via = \"ap1\""));
        let one = bw_point(&p2p, "4Mbps", "rcp");
        let two = bw_point(&p2p, "4Mbps", "r2cp");
        let multipoint = bw_point(AGGREGATION, "4Mbps", "r2cp");
        assert!(one > 3.5 && one < 4.0, "{one}");
        assert!(two > 1.8 * one && two < 8.0, "{two} vs {one}");
        assert!(
            (two - multipoint).abs() < 0.05 * multipoint,
            "{two} vs {multipoint}"
        );
    }

    #[test]
    fn each_interface_may_run_its_own_controller() {
        let text = per_interface(AGGREGATION) + CC_SWEEP;
        assert!(text.contains("via = \"ap0\", controller = \"newreno\""));
        let sc = scenario(&text, "5s", "t").unwrap();
        let runs = run_all(&sc, &sc.points(), &[1], 1).unwrap();
        assert_eq!(runs.len(), 4);
        assert!(runs.iter().all(|r| goodput(r) > 1.0));
    }

    #[test]
    fn the_trace_loses_exactly_the_seven_frames() {
        let trace = seven_loss_trace();
        let fates: Vec<&str> = trace.lines().skip(1).collect();
        let lost: Vec<u64> = (0..fates.len() as u64)
            .filter(|&i| fates[i as usize] == "1")
            .collect();
        assert_eq!(lost, SEVEN_LOST);
    }

    #[test]
    fn seven_losses_rcp_eln_recovers_all_holes_in_parallel_tcp_eln_one_per_rtt() {
        let runs = run_seven_losses("\"tcp-eln\", \"rcp-eln\"").unwrap();
        let (tcp, rcp) = (&runs[0], &runs[1]);
        for r in [tcp, rcp] {
            let f = &r.flows[0];
            assert_eq!(f.retransmitted_packets, 7, "{}", f.protocol);
            assert_eq!((f.fast_recoveries, f.timeouts), (0, 0), "{}", f.protocol);
        }
        let (t_tcp, after_tcp) = recovery_time(tcp);
        let (t_rcp, after_rcp) = recovery_time(rcp);
        // The losses span 31 frames (~0.19 s at 2 Mbit/s): a floor for both.
        assert!(t_rcp > 0.19 && t_rcp < 0.5, "{t_rcp}");
        assert!(t_tcp > 2.0 * t_rcp, "{t_tcp} vs {t_rcp}");
        // After the last loss RCP-ELN needs about one round trip (~0.12 s).
        let (after_tcp, after_rcp) = (after_tcp.unwrap(), after_rcp.unwrap());
        assert!(after_rcp < 0.2, "{after_rcp}");
        assert!(after_tcp > 3.0 * after_rcp, "{after_tcp} vs {after_rcp}");
    }
}
