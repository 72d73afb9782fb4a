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
    /// Each point's (named key, value) pairs and its metrics' means, in the
    /// order of the columns asked for.
    labels: Vec<Vec<(String, String)>>,
    means: Vec<Vec<f64>>,
}

impl Table {
    /// The mean of metric `m` at the point running `protocol` with the
    /// other swept key at `value`.
    fn at(&self, protocol: &str, value: &str, m: usize) -> Option<f64> {
        self.labels
            .iter()
            .position(|l| {
                l.iter().any(|(k, v)| k == "protocol" && v == protocol)
                    && l.iter().any(|(k, v)| k != "protocol" && v == value)
            })
            .map(|i| self.means[i][m])
    }

    /// The values of the swept key that is not the protocol, in order.
    fn values(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for l in &self.labels {
            for (k, v) in l {
                if k != "protocol" && !out.contains(v) {
                    out.push(v.clone());
                }
            }
        }
        out
    }

    /// The swept values at which `holds(value)` fails, for a claim's text.
    fn failing(&self, holds: impl Fn(&str) -> Option<bool>) -> Vec<String> {
        self.values()
            .into_iter()
            .filter(|v| holds(v) != Some(true))
            .collect()
    }
}

/// The paper's claims checked against our figures: each verdict goes under
/// its table, the disagreements are listed at the end.
#[derive(Default)]
struct Claims(Vec<String>);

impl Claims {
    /// `failing` lists the swept values where the claim does not hold.
    fn check(&mut self, out: &mut String, figure: &str, claim: &str, failing: &[String]) {
        let text = if failing.is_empty() {
            claim.to_string()
        } else {
            format!("{claim} (not at {})", failing.join(", "))
        };
        out.push_str(&crate::verdict(&text, failing.is_empty()));
        if !failing.is_empty() {
            self.0.push(format!("{figure}: {text}"));
        }
    }
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
    let means: Vec<Vec<f64>> = (0..points.len())
        .map(|i| {
            let group = &runs[i * seeds.len()..(i + 1) * seeds.len()];
            columns.iter().map(|(_, f)| mean(group, f)).collect()
        })
        .collect();
    let labelled = |name: &dyn Fn(&str) -> String| -> Vec<Vec<(String, String)>> {
        points
            .iter()
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (name(k), joulenet_sim::scenario::value_text(v)))
                    .collect()
            })
            .collect()
    };
    let short = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let labels = labelled(&parameter_label);
    let mut csv = String::from("point");
    for (c, _) in columns {
        let _ = write!(csv, ",{c}");
    }
    csv.push('\n');
    for (label, row) in labelled(&short).iter().zip(&means) {
        let label: Vec<String> = label.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = write!(csv, "\"{}\"", label.join(" "));
        for v in row {
            let _ = write!(csv, ",{v:.4}");
        }
        csv.push('\n');
    }
    let text = format!(
        "\n## {title}\n\n{}",
        markdown_table(columns, &labels, &means)
    );
    Ok(Table {
        csv,
        text,
        labels,
        means,
    })
}

/// A swept key as the report names it (the CSV keeps the key's last part).
fn parameter_label(key: &str) -> String {
    match key {
        "topology.last_hop.loss.rate" => "last-hop loss rate".into(),
        "topology.last_hop.loss.bad.mean" => "mean bad-state duration".into(),
        "topology.bottleneck.delay" => "bottleneck delay".into(),
        "topology.backbone1.rate" => "second path's rate".into(),
        "topology.backbone1.delay" => "second path's delay".into(),
        k if k.ends_with("protocol") => "protocol".into(),
        k => k
            .rsplitn(3, '.')
            .take(2)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" ")
            .replace('_', " "),
    }
}

/// A column's header and its values as people read them: goodput with the
/// SI prefix that suits the column, counts and shares in plain numbers.
fn readable(name: &str, values: &[f64]) -> joulenet_sim::present::Column {
    use joulenet_sim::present::Column;
    match name {
        "goodput_mbps" => Column::labelled("goodput", "bit/s", 1e6, values),
        "mh_energy_j" => Column::labelled("mobile host energy", "J", 1.0, values),
        "mh_sleep_s" => Column::labelled("mobile host asleep", "s", 1.0, values),
        "buffer_75_pct" => Column::labelled("arrivals at a buffer ≥ 75% full, %", "", 1.0, values),
        other => Column::labelled(&other.replace('_', " "), "", 1.0, values),
    }
}

/// The report's table. Points that vary the protocol and one other key
/// read best as the papers plot them: a row per value of that key, a
/// column per protocol (for each metric); anything else, a row per point.
fn markdown_table(
    columns: &[Column],
    labels: &[Vec<(String, String)>],
    means: &[Vec<f64>],
) -> String {
    let by_protocol = labels
        .iter()
        .all(|l| l.len() == 2 && l.iter().any(|(k, _)| k == "protocol"));
    let shown: Vec<_> = columns
        .iter()
        .enumerate()
        .map(|(m, (name, _))| readable(name, &means.iter().map(|r| r[m]).collect::<Vec<_>>()))
        .collect();
    let mut text = String::new();
    if by_protocol {
        let value = |l: &Vec<(String, String)>, protocol: bool| {
            l.iter()
                .find(|(k, _)| (k == "protocol") == protocol)
                .map(|(k, v)| (k.clone(), v.clone()))
                .unwrap_or_default()
        };
        let mut protocols: Vec<String> = Vec::new();
        let mut rows: Vec<String> = Vec::new();
        for l in labels {
            let (p, r) = (value(l, true).1, value(l, false).1);
            if !protocols.contains(&p) {
                protocols.push(p);
            }
            if !rows.contains(&r) {
                rows.push(r);
            }
        }
        let key = value(&labels[0], false).0;
        let _ = write!(text, "| {key} |");
        for c in &shown {
            for p in &protocols {
                let _ = write!(text, " {p}: {} |", c.header);
            }
        }
        text.push_str("\n|---|");
        text.push_str(&"---|".repeat(shown.len() * protocols.len()));
        text.push('\n');
        for r in &rows {
            let _ = write!(text, "| {r} |");
            for (m, c) in shown.iter().enumerate() {
                for p in &protocols {
                    let cell = labels
                        .iter()
                        .position(|l| value(l, true).1 == *p && value(l, false).1 == *r)
                        .map_or("–".to_string(), |i| c.value(means[i][m]));
                    let _ = write!(text, " {cell} |");
                }
            }
            text.push('\n');
        }
        return text;
    }
    text.push_str("| point |");
    for c in &shown {
        let _ = write!(text, " {} |", c.header);
    }
    text.push_str("\n|---|");
    text.push_str(&"---|".repeat(shown.len()));
    text.push('\n');
    for (l, row) in labels.iter().zip(means) {
        let label: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = write!(text, "| {} |", label.join(" "));
        for (c, v) in shown.iter().zip(row) {
            let _ = write!(text, " {} |", c.value(*v));
        }
        text.push('\n');
    }
    text
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
    let mut claims = Claims::default();
    let above = |a: &str, b: &str, v: &str| Some(t.at(a, v, 0)? > t.at(b, v, 0)?);
    out.push_str("\npaper: even without ELN, RCP constantly achieves better performance than TCP; ELN improves TCP substantially for loss rates between 0.2% and 2%\n");
    claims.check(
        &mut out,
        "Figure 5a",
        "RCP's goodput is above TCP-SACK's at every loss rate",
        &t.failing(|v| above("rcp", "sack", v)),
    );
    let eln_range = |v: &str| v.parse::<f64>().is_ok_and(|x| (0.002..=0.02).contains(&x));
    claims.check(
        &mut out,
        "Figure 5a",
        "TCP-ELN's goodput is above TCP-SACK's at every loss rate from 0.2% to 2%",
        &t.failing(|v| {
            if eln_range(v) {
                above("tcp-eln", "sack", v)
            } else {
                Some(true)
            }
        }),
    );
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
    out.push_str("\npaper (with HTTP background): NewReno-style congestion control (TCP and RCP) does not perform well over the satellite link, while RCP-STP achieves a much better performance\n");
    for other in ["newreno", "rcp"] {
        claims.check(
            &mut out,
            "Figure 5c",
            &format!("RCP-STP's goodput is above {other}'s at every delay"),
            &t.failing(|v| Some(t.at("rcp-stp", v, 0)? > t.at(other, v, 0)?)),
        );
    }
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
    out.push_str("\npaper: the longer the mobile host sleeps the more energy RCP saves, and RCP's throughput is no less than TCP's\n");
    // The power-saving RCP variant, whatever its sweep calls it.
    let rcp = t
        .labels
        .iter()
        .flatten()
        .find(|(k, v)| k == "protocol" && v.starts_with("rcp"))
        .map_or("rcp".to_string(), |(_, v)| v.clone());
    claims.check(
        &mut out,
        "Figure 5d",
        "RCP's mobile host spends less energy than TCP-SACK's at every bad-state duration",
        &t.failing(|v| Some(t.at(&rcp, v, 1)? < t.at("sack", v, 1)?)),
    );
    claims.check(
        &mut out,
        "Figure 5d",
        "RCP's goodput is no less than TCP-SACK's at every bad-state duration",
        &t.failing(|v| Some(t.at(&rcp, v, 0)? >= t.at("sack", v, 0)?)),
    );
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
    out.push_str("\npaper: R²CP and R²CP-s achieve the ideal performance (the sum of the pipes) irrespective of the bandwidth mismatch\n");
    // "Ideal" read as within 10% of the sum of the two pipes' rates (ours:
    // goodput leaves out the headers the pipes also carry).
    let ideal = |v: &str| {
        v.trim_end_matches("Mbps")
            .parse::<f64>()
            .ok()
            .map(|x| 4.0 + x)
    };
    for proto in ["r2cp", "r2cp-s"] {
        claims.check(
            &mut out,
            "Figure 12a",
            &format!("{proto}'s goodput is within 10% of the sum of the pipes at every rate"),
            &t.failing(|v| Some(t.at(proto, v, 0)? >= 0.9 * ideal(v)?)),
        );
    }
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
    out.push_str("\npaper: R²CP closely tracks the ideal at every RTT mismatch; R²CP-s fails to scale beyond a mismatch of 3, its buffer filling up\n");
    claims.check(
        &mut out,
        "Figure 12b",
        "R²CP's goodput is within 10% of the ideal 8 Mbit/s at every delay",
        &t.failing(|v| Some(t.at("r2cp", v, 0)? >= 0.9 * 8.0)),
    );
    let widest = t.values().last().cloned().unwrap_or_default();
    claims.check(
        &mut out,
        "Figure 12b",
        "R²CP-s falls behind R²CP at the largest RTT mismatch",
        &t.failing(|v| {
            if v != widest {
                return Some(true);
            }
            Some(t.at("r2cp-s", v, 0)? < t.at("r2cp", v, 0)?)
        }),
    );
    claims.check(
        &mut out,
        "Figure 12c",
        "R²CP-s finds its buffer 75% full more often than R²CP at the largest RTT mismatch",
        &t.failing(|v| {
            if v != widest {
                return Some(true);
            }
            Some(t.at("r2cp-s", v, 1)? > t.at("r2cp", v, 1)?)
        }),
    );
    files.push(("aggregation_rtt.csv", t.csv));
    // TCP-friendliness: mean and CoV of per-flow goodput, k RCP flows of 20.
    let mut csv = String::from("rcp_flows,mean_mbps,cov,mean_rcp_mbps,mean_tcp_mbps\n");
    out.push_str("\n## TCP-friendliness: 20 flows on the Figure 3 dumbbell (10 Mbit/s bottleneck), k of them RCP (Figure 4a/b)\n\n| RCP flows | mean per-flow Mbit/s | CoV | mean RCP | mean TCP-SACK |\n|---|---|---|---|---|\n");
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
        // No flow of a kind (k = 0 or 20): a dash, not NaN.
        let cell = |v: f64| {
            if v.is_nan() {
                "–".to_string()
            } else {
                format!("{v:.3}")
            }
        };
        out.push_str(&format!(
            "| {k} | {m:.3} | {c:.3} | {} | {} |\n",
            cell(mr),
            cell(mt)
        ));
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
    out.push_str("\n## Reverse-path loss: 20 forward flows, 0–100 Pareto on/off UDP sources on the reverse path, mean per-flow goodput Mbit/s (Figure 4d; TCP-SACK with delayed ACKs, and acknowledging every segment as in the other figures)\n\n| reverse sources | TCP-SACK | TCP-SACK, ACK per segment | RCP |\n|---|---|---|---|\n");
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
    out.push_str("\n## R²CP under fluctuating cross traffic: 4 + 4 Mbit/s paths, 10 Pareto on/off sources each (mean load 1.67 Mbit/s per path, so ideal ≈ 4.67 Mbit/s), goodput Mbit/s (Figure 12d)\n\n| fluctuation index c | R²CP | R²CP-s | striping |\n|---|---|---|---|\n");
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
    report.push_str(&crate::disagreement_list("rcp", &claims.0));
    // A CSV that could not be written is an error, not a silent gap.
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    for (name, csv) in files {
        let path = args.out.join(name);
        std::fs::write(&path, csv).map_err(|e| format!("{}: {e}", path.display()))?;
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

    #[test]
    fn a_claim_lists_the_points_where_it_fails() {
        let point = |p: &str, r: &str| {
            vec![
                ("loss".to_string(), r.to_string()),
                ("protocol".to_string(), p.to_string()),
            ]
        };
        let t = Table {
            csv: String::new(),
            text: String::new(),
            labels: vec![
                point("rcp", "0.01"),
                point("sack", "0.01"),
                point("rcp", "0.1"),
                point("sack", "0.1"),
            ],
            means: vec![vec![1.0], vec![2.0], vec![3.0], vec![1.0]],
        };
        assert_eq!(t.values(), ["0.01", "0.1"]);
        assert_eq!(t.at("sack", "0.1", 0), Some(1.0));
        assert_eq!(t.at("udp", "0.1", 0), None);
        let failing = t.failing(|v| Some(t.at("rcp", v, 0)? > t.at("sack", v, 0)?));
        assert_eq!(failing, ["0.01"]);
        // A point that was not run cannot bear the claim out.
        assert_eq!(
            t.failing(|v| Some(t.at("udp", v, 0)? > 0.0)),
            ["0.01", "0.1"]
        );
        let (mut out, mut claims) = (String::new(), Claims::default());
        claims.check(&mut out, "Figure 5a", "RCP above SACK", &failing);
        assert_eq!(out, "  ours DISAGREES: RCP above SACK (not at 0.01)\n");
        assert_eq!(claims.0, ["Figure 5a: RCP above SACK (not at 0.01)"]);
    }

    #[test]
    fn a_protocol_sweep_reads_as_the_paper_plots_it() {
        let goodput = |_: &RunResult| 0.0;
        let timeouts = |_: &RunResult| 0.0;
        let columns: Vec<Column> = vec![("goodput_mbps", &goodput), ("timeouts", &timeouts)];
        let point = |p: &str, r: &str| {
            vec![
                ("last-hop loss rate".to_string(), r.to_string()),
                ("protocol".to_string(), p.to_string()),
            ]
        };
        let labels = vec![
            point("sack", "0.01"),
            point("rcp", "0.01"),
            point("sack", "0.1"),
        ];
        let means = vec![vec![1.214, 1.0], vec![1.2, 0.0], vec![0.06, 8.0]];
        let text = markdown_table(&columns, &labels, &means);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "| last-hop loss rate | sack: goodput Mbit/s | rcp: goodput Mbit/s | sack: timeouts | rcp: timeouts |"
        );
        assert_eq!(lines[2], "| 0.01 | 1.21 | 1.20 | 1 | 0 |");
        // A point not run reads as a dash.
        assert_eq!(lines[3], "| 0.1 | 0.06 | – | 8 | – |");
    }

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
