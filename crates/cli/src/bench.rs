//! `joulenet bench`: the simulator benchmark of docs/PERFORMANCE.md.
//!
//! A 50 MB NewReno transfer over a 10 Mbit/s, 50 ms link with 1% random loss
//! on the data direction. Reports simulated data packets and events per wall
//! second and the process's peak resident memory. A benchmark, never a test.

use clap::Args;
use joulenet_sim::{ParamPoint, Scenario};

#[derive(Args)]
pub struct BenchArgs {
    /// Bytes to transfer
    #[arg(long, default_value = "50MB")]
    pub bytes: String,
    /// Repetitions (the best is reported, and every one is printed)
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Link medium: wireless (radios and energy accounted) or wired
    #[arg(long, default_value = "wireless")]
    pub medium: String,
    /// TCP variant
    #[arg(long, default_value = "newreno")]
    pub protocol: String,
    /// Which benchmark: `link` (the 50 MB transfer above) or `mesh` (the
    /// scale benchmark: a random 802.11b mesh with many flows)
    #[arg(long, default_value = "link")]
    pub case: String,
    /// Mesh: nodes
    #[arg(long, default_value_t = 1000)]
    pub nodes: u32,
    /// Mesh: the flow counts to run, one run each
    #[arg(long, default_value = "1,10,100,1000")]
    pub flows: String,
    /// Mesh: simulated time of each run
    #[arg(long, default_value = "600s")]
    pub stop: String,
    /// Mesh: flows open their connection and stay idle (memory per flow)
    #[arg(long)]
    pub idle: bool,
}

fn scenario(args: &BenchArgs) -> String {
    format!(
        r#"
name = "bench-{protocol}-{medium}"
[topology]
kind = "two_nodes"
[link]
rate = "10Mbps"
delay = "50ms"
queue = 100
medium = "{medium}"
loss = {{ model = "bernoulli", rate = 0.01 }}
loss_reverse = "none"
[flow]
protocol = "{protocol}"
app = "bulk"
bytes = "{bytes}"
tcp = {{ recv_buffer = "4MiB", send_buffer = "1MiB" }}
"#,
        protocol = args.protocol,
        medium = args.medium,
        bytes = args.bytes
    )
}

/// Peak resident set size of this process, in KiB (Linux).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

pub fn bench(args: BenchArgs) -> Result<(), String> {
    match args.case.as_str() {
        "link" => bench_link(args),
        "mesh" => crate::bench_mesh::bench_mesh(&args),
        other => Err(format!(
            "--case: unknown benchmark \"{other}\" (known: link, mesh)"
        )),
    }
}

fn bench_link(args: BenchArgs) -> Result<(), String> {
    let scenario =
        Scenario::parse_str(&scenario(&args), "bench", ".".into()).map_err(|e| e.to_string())?;
    let point = ParamPoint::new();
    let mut best: Option<(f64, u64, u64, f64)> = None;
    println!(
        "joulenet bench: {} {} over 10 Mbit/s, 50 ms, 1% loss ({} link)",
        args.bytes, args.protocol, args.medium
    );
    for i in 0..args.repeat.max(1) {
        let started = std::time::Instant::now();
        let r = joulenet_sim::run(&scenario, &point, 1 + i as u64, &mut |_| {})
            .map_err(|e| e.to_string())?;
        let wall = started.elapsed().as_secs_f64();
        let f = &r.flows[0];
        let packets = f.data_packets + f.retransmitted_packets;
        let events = r.summary.events;
        println!(
            "  run {}: {:.3} s wall, {:.1} s simulated, {} data packets ({:.2} M/s), {} events ({:.2} M/s), goodput {:.3} Mb/s{}",
            i + 1,
            wall,
            r.summary.duration_s,
            packets,
            packets as f64 / wall / 1e6,
            events,
            events as f64 / wall / 1e6,
            f.goodput_bps / 1e6,
            if f.completed { "" } else { " (INCOMPLETE)" }
        );
        if best.is_none_or(|b| wall < b.0) {
            best = Some((wall, packets, events, r.summary.duration_s));
        }
    }
    let (wall, packets, events, _) = best.expect("at least one run");
    println!(
        "best: {:.2} M data packets/s, {:.2} M events/s",
        packets as f64 / wall / 1e6,
        events as f64 / wall / 1e6
    );
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS: {:.1} MiB", kib as f64 / 1024.0);
    }
    Ok(())
}
