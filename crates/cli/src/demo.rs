//! `joulenet demo`: the built-in scenario comparing the TCP variants on a
//! bursty wireless link, over several seeds, printed as one table.

use clap::Args;
use joulenet_sim::output::{self, Table};
use joulenet_sim::scenario::value_text;
use joulenet_sim::{RunResult, Scenario};

use crate::runner::run_all;

/// The demo scenario, also shipped as scenarios/demo.toml.
pub const DEMO: &str = include_str!("../../../scenarios/demo.toml");

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
    let scenario = Scenario::parse_str(DEMO, "demo", ".".into()).map_err(|e| e.to_string())?;
    let points = scenario.points();
    let seeds: Vec<u64> = (1..=args.seeds.max(1)).collect();
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = std::time::Instant::now();
    let runs = run_all(&scenario, &points, &seeds, jobs, args.quiet)?;
    println!("joulenet demo — {}", scenario_description());
    println!(
        "{} seeds per protocol; mean ± 95% confidence interval\n",
        seeds.len()
    );
    let mut t = Table::new(&[
        "protocol",
        "goodput Mb/s",
        "time s",
        "retx pkts",
        "timeouts",
        "energy J",
        "µJ/bit",
        "efficiency ε",
        "overhead o",
    ]);
    for (i, p) in points.iter().enumerate() {
        let group: Vec<&RunResult> = runs[i * seeds.len()..(i + 1) * seeds.len()]
            .iter()
            .collect();
        let mut row = vec![p.values().map(value_text).collect::<Vec<_>>().join(" ")];
        row.extend(output::aggregate(&group).iter().map(output::format_ci));
        t.row(row);
    }
    print!("{}", t.render());
    println!(
        "\n{} runs in {:.2} s wall. Scenario: scenarios/demo.toml (joulenet run scenarios/demo.toml --seeds 1..6).",
        runs.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn scenario_description() -> String {
    DEMO.lines()
        .find_map(|l| l.strip_prefix("description = \""))
        .map(|d| d.trim_end_matches('"').to_string())
        .unwrap_or_default()
}
