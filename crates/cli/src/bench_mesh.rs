//! `joulenet bench --case mesh`: the scale benchmark of docs/PERFORMANCE.md
//! (issue 18). A random 802.11b mesh (ETX routing) of `--nodes` nodes at
//! the density of `scenarios/multihop/mesh-20.toml` (20 nodes in 500 m ×
//! 500 m), with 1, 10, 100, … concurrent NewReno flows between random pairs
//! of nodes. Reports, per flow count, CPU time, events and data frames on
//! the air per CPU second, CPU time per data frame (the per-packet cost
//! that should stay flat as flows are added) and peak resident memory. The
//! rates count the traffic's CPU time only: a 1-ms run of the same network
//! first measures the set-up (placement, routes, agents). With `--idle`
//! every flow opens its connection and then sends one 100-byte
//! message per 10,000 s: the memory a flow costs while it waits.
//! A benchmark, never a test.

use indicatif::{ProgressBar, ProgressStyle};
use joulenet_sim::rng::Streams;
use joulenet_sim::{ParamPoint, Scenario};
use rand_core::RngCore;

use crate::bench::{peak_rss_kib, BenchArgs};

/// Side of a square field holding `nodes` at mesh-20's density.
fn field_side(nodes: u32) -> f64 {
    (500.0 * (nodes as f64 / 20.0).sqrt()).round()
}

/// The scenario with `flows` flows between random distinct pairs, drawn
/// from their own seeded stream so that every run of the bench is the same.
fn scenario(nodes: u32, flows: u32, stop: &str, idle: bool) -> String {
    let side = field_side(nodes);
    let app = if idle {
        r#"app = "poisson"
message = 100
mean_interval = "10000s""#
    } else {
        r#"app = "backlogged""#
    };
    let mut s = format!(
        r#"
name = "bench-mesh-{nodes}-{flows}"
stop = "{stop}"
[topology]
kind = "random"
nodes = {nodes}
field = [{side}, {side}]
seed = 3
[medium]
standard = "802.11b"
reception = "log_distance"
routing = "etx"
[flow]
protocol = "newreno"
{app}
tcp = {{ mss = 1000 }}
"#
    );
    let mut rng = Streams::new(1).stream("bench/mesh/pairs");
    for _ in 0..flows {
        let from = (rng.next_u64() % nodes as u64) as u32;
        let mut to = (rng.next_u64() % (nodes as u64 - 1)) as u32;
        if to >= from {
            to += 1;
        }
        s.push_str(&format!("[[flows]]\nfrom = {from}\nto = {to}\n"));
    }
    s
}

/// CPU seconds (user + system) this process has used, from
/// `/proc/self/stat` (Linux; clock ticks of 1/100 s). The shared build
/// machine stretches wall time several-fold; CPU time much less.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and
    // stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// Parse, build and run one scenario: its CPU time and result.
fn timed_run(
    nodes: u32,
    flows: u32,
    stop: &str,
    idle: bool,
) -> Result<(f64, joulenet_sim::RunResult), String> {
    let text = scenario(nodes, flows, stop, idle);
    let started = cpu_seconds();
    let scenario =
        Scenario::parse_str(&text, "bench-mesh", ".".into()).map_err(|e| e.to_string())?;
    // On a worker thread, as `joulenet run` does: its own allocator arena,
    // so resident memory compares with a run's.
    // A 1,000-node run takes the better part of a minute: show simulated
    // time on stderr (stdout keeps the table clean for a file).
    let bar = ProgressBar::new(1_000).with_style(
        ProgressStyle::with_template("  {flows} flows: [{bar:30}] {msg} simulated, {elapsed} wall")
            .map(|s| s.progress_chars("#>-"))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key(
                "flows",
                move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{flows}");
                },
            ),
    );
    let mut show = |p: joulenet_sim::Progress| {
        if let Some(stop) = p.stop {
            let (now, end) = (p.now.as_secs_f64(), stop.as_secs_f64());
            bar.set_position((now / end * 1_000.0) as u64);
            bar.set_message(format!("{now:.0} of {end:.0} s"));
        }
    };
    let r = std::thread::scope(|s| {
        s.spawn(|| joulenet_sim::run(&scenario, &ParamPoint::new(), 1, &mut show))
            .join()
    })
    .map_err(|_| "the run panicked".to_string())?
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    Ok((cpu_seconds() - started, r))
}

/// Flow counts from a comma-separated list.
fn flow_counts(list: &str) -> Result<Vec<u32>, String> {
    list.split(',')
        .map(|f| {
            f.trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("--flows: \"{f}\" is not a flow count of at least 1"))
        })
        .collect()
}

pub fn bench_mesh(args: &BenchArgs) -> Result<(), String> {
    if args.nodes < 2 {
        return Err("--nodes: a mesh needs at least 2 nodes".into());
    }
    let counts = flow_counts(&args.flows)?;
    println!(
        "joulenet bench --case mesh: {} nodes in {} m × {} m, 802.11b, ETX, NewReno ({}), {} simulated",
        args.nodes,
        field_side(args.nodes),
        field_side(args.nodes),
        if args.idle { "idle flows" } else { "backlogged" },
        args.stop
    );
    println!("flows  setup_cpu_s  cpu_s  events  events/cpu_s  data_frames  frames/cpu_s  us/frame  goodput_Mbps  peak_rss_MiB");
    for flows in counts {
        // The same network run for 1 ms first: what building it costs
        // (placement, routes, agents), left out of the per-frame cost.
        let (setup, _) = timed_run(args.nodes, flows, "1ms", args.idle)?;
        let (cpu, r) = timed_run(args.nodes, flows, &args.stop, args.idle)?;
        let events = r.summary.events;
        let frames = r.medium.as_ref().map_or(0, |m| m.data_tx);
        let traffic = (cpu - setup).max(0.01);
        println!(
            "{flows:>5}  {setup:>11.2}  {cpu:>5.2}  {events:>6}  {:>8.0}  {frames:>11}  {:>8.0}  {:>8.2}  {:>12.3}  {:>12.1}",
            events as f64 / traffic,
            frames as f64 / traffic,
            traffic * 1e6 / frames.max(1) as f64,
            r.summary.aggregate_goodput_bps / 1e6,
            peak_rss_kib().unwrap_or(0) as f64 / 1024.0,
        );
    }
    println!(
        "(peak RSS is the process's so far: run one flow count per process for each figure alone)"
    );
    Ok(())
}
