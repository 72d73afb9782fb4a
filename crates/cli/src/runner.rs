//! `joulenet run` and `joulenet check`: run every (parameter point, seed) of
//! a scenario on worker threads, then print or write the results.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use joulenet_sim::interval::Interval;
use joulenet_sim::output::{self, AGGREGATE_METRICS};
use joulenet_sim::present;
use joulenet_sim::scenario::{parse_override, value_text};
use joulenet_sim::{ParamPoint, RunResult, Scenario};

#[derive(Args)]
pub struct RunArgs {
    /// Scenario file (TOML)
    pub file: PathBuf,
    /// Seed of a single run (default: the scenario's `seed`, else 1)
    #[arg(long, conflicts_with = "seeds")]
    pub seed: Option<u64>,
    /// A range of seeds, `A..B` (B excluded) or `A..=B`
    #[arg(long)]
    pub seeds: Option<String>,
    /// Override a scenario key for every run: `--set link.loss.rate=0.02`
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print JSON (every run, plus the aggregate) instead of tables
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the per-flow CSV instead of tables
    #[arg(long)]
    pub csv: bool,
    /// Also write runs.json, flows/nodes/links/summary/series/aggregate CSV, pcaps and report.txt here
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores)
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// No progress bar
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

pub fn check(file: &Path) -> Result<(), String> {
    let s = Scenario::from_file(file).map_err(|e| format!("{}: {e}", file.display()))?;
    println!(
        "{}: ok ({} parameter point(s), hash {})",
        file.display(),
        s.points().len(),
        s.hash()
    );
    Ok(())
}

/// Most seeds one `run` takes: each is at least one simulation, and the
/// list and the results are held in memory.
pub const MAX_SEEDS: u64 = 1_000_000;

pub fn parse_seeds(
    seed: Option<u64>,
    seeds: Option<&str>,
    default: u64,
) -> Result<Vec<u64>, String> {
    let Some(range) = seeds else {
        return Ok(vec![seed.unwrap_or(default)]);
    };
    let bad = || format!("--seeds {range}: expected A..B or A..=B");
    let (a, b, inclusive) = if let Some((a, b)) = range.split_once("..=") {
        (a, b, true)
    } else if let Some((a, b)) = range.split_once("..") {
        (a, b, false)
    } else {
        return Err(bad());
    };
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    // Counted in u128: 0..=u64::MAX has 2^64 seeds, one more than u64 holds.
    let count = (b as u128 + u128::from(inclusive)).saturating_sub(a as u128);
    if count == 0 {
        return Err(format!("--seeds {range} is empty"));
    }
    if count > MAX_SEEDS as u128 {
        return Err(format!(
            "--seeds {range} asks for {count} runs per point, more than the limit of {MAX_SEEDS}; \
             split the campaign into smaller ranges (the Python package's sweeps resume)"
        ));
    }
    let seeds: Vec<u64> = if inclusive {
        (a..=b).collect()
    } else {
        (a..b).collect()
    };
    Ok(seeds)
}

/// The scenario with command-line overrides applied: an overridden key
/// leaves the sweep and is set in every point.
pub fn points_with_overrides(
    scenario: &mut Scenario,
    set: &[String],
) -> Result<Vec<ParamPoint>, String> {
    let overrides = set
        .iter()
        .map(|s| parse_override(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let sweep: Vec<_> = scenario
        .sweep()
        .iter()
        .filter(|(k, _)| !overrides.iter().any(|(o, _)| o == k))
        .cloned()
        .collect();
    scenario.set_sweep(sweep);
    let mut points = scenario.points();
    for p in &mut points {
        for (k, v) in &overrides {
            p.insert(k.clone(), v.clone());
        }
    }
    for p in &points {
        scenario.spec(p).map_err(|e| e.to_string())?;
    }
    Ok(points)
}

/// Run every (point, seed) pair; results in (point, seed) order.
pub fn run_all(
    scenario: &Scenario,
    points: &[ParamPoint],
    seeds: &[u64],
    jobs: usize,
    quiet: bool,
) -> Result<Vec<RunResult>, String> {
    let tasks: Vec<(usize, u64)> = (0..points.len())
        .flat_map(|p| seeds.iter().map(move |&s| (p, s)))
        .collect();
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(tasks.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs {msg}",
        )
        .expect("valid template"),
    );
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunResult, String>>>> =
        Mutex::new((0..tasks.len()).map(|_| None).collect());
    let workers = jobs.clamp(1, tasks.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, seed)) = tasks.get(i) else {
                    break;
                };
                let mut tick = |pr: joulenet_sim::Progress| {
                    bar.set_message(format!("t = {:.1} s", pr.now.as_secs_f64()))
                };
                let r = joulenet_sim::run(scenario, &points[p], seed, &mut tick)
                    .map_err(|e| e.to_string());
                results.lock().expect("no worker panicked")[i] = Some(r);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every task ran"))
        .collect()
}

pub fn run(args: RunArgs) -> Result<(), String> {
    let mut scenario =
        Scenario::from_file(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let seeds = parse_seeds(args.seed, args.seeds.as_deref(), scenario.default_seed())?;
    let points = points_with_overrides(&mut scenario, &args.set)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let started = std::time::Instant::now();
    let runs = run_all(&scenario, &points, &seeds, jobs, args.quiet)?;
    let wall = started.elapsed();
    let report = human_report(&runs, &points, seeds.len());
    if args.json {
        println!("{}", json_report(&runs, &points, seeds.len()));
    } else if args.csv {
        print!("{}", output::csv(&refs(&runs), |r| r.flows.clone()));
    } else {
        print!("{report}");
        eprintln!("{} run(s) in {:.2} s wall", runs.len(), wall.as_secs_f64());
    }
    if let Some(dir) = &args.out {
        write_outputs(dir, runs, &points, seeds.len(), &report)?;
    }
    Ok(())
}

fn refs(runs: &[RunResult]) -> Vec<&RunResult> {
    runs.iter().collect()
}

fn point_label(p: &ParamPoint) -> String {
    if p.is_empty() {
        "(base)".into()
    } else {
        p.iter()
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Per-run tables (when there are few) and the aggregate across seeds.
pub fn human_report(runs: &[RunResult], points: &[ParamPoint], per_point: usize) -> String {
    let mut out = String::new();
    if runs.len() <= 6 {
        for r in runs {
            out.push_str(&output::run_table(r));
            out.push('\n');
        }
    } else {
        let rows: Vec<(Vec<String>, Vec<Option<f64>>)> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let labels = vec![
                    point_label(&points[i / per_point]),
                    r.context.seed.to_string(),
                ];
                (labels, output::aggregate_values(r))
            })
            .collect();
        out.push_str("per seed:\n");
        out.push_str(&present::per_run_table(&["point", "seed"], &rows));
        out.push('\n');
    }
    if per_point > 1 || points.len() > 1 {
        out.push_str(&format!(
            "mean and 95% interval over {per_point} seed(s):\n"
        ));
        let rows: Vec<(String, Vec<Option<Interval>>)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let group: Vec<&RunResult> =
                    runs[i * per_point..(i + 1) * per_point].iter().collect();
                (point_label(p), output::aggregate(&group))
            })
            .collect();
        out.push_str(&present::aggregate_table("point", &rows));
    } else {
        out.push_str(&present::symbols());
    }
    out
}

fn aggregate_json(
    runs: &[RunResult],
    points: &[ParamPoint],
    per_point: usize,
) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let group: Vec<&RunResult> = runs[i * per_point..(i + 1) * per_point].iter().collect();
            let mut obj = serde_json::Map::new();
            obj.insert(
                "params".into(),
                serde_json::json!(p
                    .iter()
                    .map(|(k, v)| (k.clone(), value_text(v)))
                    .collect::<std::collections::BTreeMap<_, _>>()),
            );
            obj.insert("seeds".into(), serde_json::json!(per_point));
            for (name, ci) in AGGREGATE_METRICS.iter().zip(output::aggregate(&group)) {
                obj.insert(
                    format!("{name}_mean"),
                    serde_json::json!(ci.map(|c| c.mean)),
                );
                obj.insert(
                    format!("{name}_ci95"),
                    serde_json::json!(ci.map(|c| c.t_half_width).filter(|h| h.is_finite())),
                );
                let bound = |b: Option<f64>| serde_json::json!(b.filter(|_| per_point > 1));
                obj.insert(format!("{name}_lo"), bound(ci.map(|c| c.lo)));
                obj.insert(format!("{name}_hi"), bound(ci.map(|c| c.hi)));
            }
            serde_json::Value::Object(obj)
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// A capture folder named by what it holds: the point's parameters
/// (`flow.protocol=sack,link.loss.rate=0.1`), or `default` without a
/// sweep; characters a file name cannot hold become `_`.
fn point_folder(point: &ParamPoint) -> String {
    if point.is_empty() {
        return "default".into();
    }
    point
        .iter()
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(",")
        .chars()
        .map(|c| match c {
            '/' | '\\' | '"' | ':' | '*' | '?' | '<' | '>' | '|' | ' ' => '_',
            c => c,
        })
        .collect()
}

/// The aggregate across seeds as CSV: one row per parameter point, its
/// parameters, the seed count, and each metric's mean, Student's t 95%
/// half-width and the 95% interval kept inside the metric's domain
/// (`lo`, `hi`; empty where undefined), the same numbers as `runs.json`'s
/// `aggregate`.
fn aggregate_csv(runs: &[RunResult], points: &[ParamPoint], per_point: usize) -> String {
    let rows = aggregate_json(runs, points, per_point);
    let rows = rows.as_array().expect("aggregate rows");
    let mut keys: Vec<String> = points.iter().flat_map(|p| p.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    let mut header: Vec<String> = keys.clone();
    header.push("seeds".into());
    for name in AGGREGATE_METRICS {
        header.push(format!("{name}_mean"));
        header.push(format!("{name}_ci95"));
        header.push(format!("{name}_lo"));
        header.push(format!("{name}_hi"));
    }
    let mut text = header.join(",") + "\n";
    for row in rows {
        let params = &row["params"];
        let mut cells: Vec<String> = keys.iter().map(|k| output::csv_cell(&params[k])).collect();
        cells.extend(
            header[keys.len()..]
                .iter()
                .map(|h| output::csv_cell(&row[h])),
        );
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text
}

fn json_report(runs: &[RunResult], points: &[ParamPoint], per_point: usize) -> String {
    let doc =
        serde_json::json!({ "runs": runs, "aggregate": aggregate_json(runs, points, per_point) });
    serde_json::to_string_pretty(&doc).expect("results serialise")
}

fn write_outputs(
    dir: &Path,
    mut runs: Vec<RunResult>,
    points: &[ParamPoint],
    per_point: usize,
    report: &str,
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(io)?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("{}: {e}", dir.join(name).display()))
    };
    write("runs.json", &json_report(&runs, points, per_point))?;
    write("report.txt", report)?;
    let r = refs(&runs);
    write("flows.csv", &output::csv(&r, |r| r.flows.clone()))?;
    write("nodes.csv", &output::csv(&r, |r| r.nodes.clone()))?;
    write("links.csv", &output::csv(&r, |r| r.links.clone()))?;
    write("summary.csv", &output::csv(&r, |r| vec![r.summary.clone()]))?;
    write("aggregate.csv", &aggregate_csv(&runs, points, per_point))?;
    if runs.iter().any(|r| !r.series.is_empty()) {
        write("series.csv", &output::csv(&r, |r| r.series.clone()))?;
    }
    for (i, run) in runs.iter_mut().enumerate() {
        if let Some(capture) = run.pcap.take() {
            let sub = dir
                .join("pcap")
                .join(point_folder(&points[i / per_point]))
                .join(format!("seed{}", run.context.seed));
            capture.write_to(&sub).map_err(io)?;
        }
    }
    Ok(())
}
