//! `joulenet demo`: the built-in scenario comparing the TCP variants on a
//! bursty wireless link, over several seeds, printed as one table.

use clap::Args;
use joulenet_sim::interval::Interval;
use joulenet_sim::output;
use joulenet_sim::present;
use joulenet_sim::scenario::value_text;
use joulenet_sim::{RunResult, Scenario};

use crate::runner::run_all;

/// The demo scenario, also shipped as scenarios/demo.toml.
pub const DEMO: &str = include_str!("../../../scenarios/demo.toml");

/// Its second part: the same variants over a 4-hop 802.11b chain on the
/// shared medium, shipped as scenarios/multihop/demo-chain.toml.
pub const DEMO_CHAIN: &str = include_str!("../../../scenarios/multihop/demo-chain.toml");

#[derive(Args)]
pub struct DemoArgs {
    /// Number of seeds per protocol
    #[arg(long, default_value_t = 5)]
    pub seeds: u64,
    /// No progress bar
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

pub fn demo(args: DemoArgs) -> Result<(), String> {
    part(&args, DEMO, "demo", "scenarios/demo.toml")?;
    println!();
    part(
        &args,
        DEMO_CHAIN,
        "demo-chain",
        "scenarios/multihop/demo-chain.toml",
    )
}

fn part(args: &DemoArgs, text: &str, name: &str, path: &str) -> Result<(), String> {
    let scenario = Scenario::parse_str(text, name, ".".into()).map_err(|e| e.to_string())?;
    let points = scenario.points();
    let seeds: Vec<u64> = (1..=args.seeds.max(1)).collect();
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = std::time::Instant::now();
    let runs = run_all(&scenario, &points, &seeds, jobs, args.quiet)?;
    println!("joulenet demo — {}", scenario_description(text));
    println!("{} seeds per protocol\n", seeds.len());
    let rows: Vec<(String, Vec<Option<Interval>>)> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let group: Vec<&RunResult> = runs[i * seeds.len()..(i + 1) * seeds.len()]
                .iter()
                .collect();
            let label = p.values().map(value_text).collect::<Vec<_>>().join(" ");
            (label, output::aggregate(&group))
        })
        .collect();
    print!("{}", present::aggregate_table("protocol", &rows));
    println!(
        "\n{} runs in {:.2} s wall. Scenario: {path} (joulenet run {path} --seeds 1..6).",
        runs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn scenario_description(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("description = \""))
        .map(|d| d.trim_end_matches('"').to_string())
        .unwrap_or_default()
}
