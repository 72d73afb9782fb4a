//! `joulenet reproduce <paper>`: run a paper's experiments from the scenario
//! files under `scenarios/<paper>/`, print our numbers beside the paper's,
//! write CSV (tables and figure data) and, when Python with matplotlib is
//! available, PNG figures through `scripts/plot_reproduction.py`.

//! The papers' experiments: each runs the scenario files under
//! `scenarios/<paper>/`, prints our numbers beside the paper's, and writes
//! CSV tables, figure data and a report (`report.txt`) into an output
//! directory. Driven by `joulenet reproduce` and by the Python package.
//!
//! Depends on the simulator only; it must not depend on the CLI or Python.

mod e2tcp;
mod emodel;
mod hop;
mod jtp;
mod jtp_mechanisms;
mod jtp_random;
mod rcp;
mod wwp;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use joulenet_proto::tcp::TcpProfile;
use joulenet_sim::scenario::{parse_override, set_path};
use joulenet_sim::{run, RunResult, Scenario};

/// The experiments that can be reproduced, with what they cover.
pub const PAPERS: &[(&str, &str)] = &[
    ("wwp", "Wave & Wait vs TCP Reno (Tables 1, 2, 3, 4, 5)"),
    (
        "e2tcp",
        "E2TCP vs Tahoe/Reno/NewReno (Figures 1-18, Table 1)",
    ),
    (
        "rcp",
        "RCP / R²CP: wireless loss, satellite, power management, friendliness, aggregation",
    ),
    (
        "jtp",
        "JTP vs rate-based TCP-SACK and ATP-like (Figs. 2 and 6, equations 5 and 6)",
    ),
    (
        "hop",
        "Hop vs TCP, hop-by-hop TCP, UDP (§5.1.2, 5.2, 5.3, 5.4, 5.5, 5.6.1, 5.7)",
    ),
];

/// How to run an experiment.
#[derive(Clone, Debug)]
pub struct Options {
    /// A reduced run (fewer points, one seed, smaller transfers).
    pub quick: bool,
    /// Seeds per point (default 1 when quick, else 3).
    pub seeds: Option<u64>,
    /// The directory holding `<paper>/` scenario files.
    pub scenarios: PathBuf,
    /// Where CSV, figure data and the report go.
    pub out: PathBuf,
    /// Print the report to standard output as it is produced.
    pub echo: bool,
    /// The TCP profile of the TCP baselines (`--baseline`): `None` keeps
    /// `rfc`; the papers' own are `xkernel-1998` (WWP), `ns2` (E2TCP) and
    /// `linux` (Hop's testbed ran Linux 2.6's CUBIC).
    pub baseline: Option<TcpProfile>,
}

/// The plain TCP variants a `--baseline` profile applies to (not JTP's
/// `rate-sack` or RCP's `tcp-eln`, which are the papers' own baselines).
const TCP_BASELINES: [&str; 5] = ["tahoe", "reno", "newreno", "sack", "cubic"];

/// The flows of a scenario table that a `--baseline` profile applies to,
/// as key prefixes: each `flows.N` whose protocol (its own, else `[flow]`'s)
/// is a plain TCP variant, or `flow` when there is no `[[flows]]` array.
/// Set per flow, so that a UDP flow beside them (cross traffic) is not
/// given TCP options.
fn baseline_flows(table: &toml::Table) -> Vec<String> {
    let protocol_of = |t: Option<&toml::Value>| {
        t.and_then(|f| f.get("protocol"))
            .and_then(|p| p.as_str())
            .map(str::to_string)
    };
    let default = protocol_of(table.get("flow"));
    let is_tcp = |p: &Option<String>| p.as_deref().is_some_and(|p| TCP_BASELINES.contains(&p));
    match table.get("flows").and_then(|f| f.as_array()) {
        Some(flows) => flows
            .iter()
            .enumerate()
            .filter(|(_, f)| is_tcp(&protocol_of(Some(f)).or_else(|| default.clone())))
            .map(|(i, _)| format!("flows.{i}"))
            .collect(),
        None if is_tcp(&default) => vec!["flow".to_string()],
        None => Vec::new(),
    }
}

/// The report's statement of which TCP profile the baselines follow.
fn baseline_line(paper: &str, baseline: Option<TcpProfile>) -> String {
    let own = match paper {
        "wwp" => "the paper's own: --baseline xkernel-1998",
        "e2tcp" => "the paper's own: --baseline ns2",
        "hop" => "the paper's own, Linux 2.6's default TCP with CUBIC: --baseline linux",
        _ => "no profile switch for this paper's baselines",
    };
    let profile = baseline.unwrap_or_default();
    format!("TCP baselines: profile \"{profile}\" (docs/validation.md; {own})\n\n")
}

/// The line under a table that says whether our figures bear out one of the
/// paper's claims.
pub(crate) fn verdict(claim: &str, holds: bool) -> String {
    let verdict = if holds { "agrees" } else { "DISAGREES" };
    format!("  ours {verdict}: {claim}\n")
}

/// The report's closing list of the paper's claims our figures contradict
/// (empty when there are none).
pub(crate) fn disagreement_list(paper: &str, disagreements: &[String]) -> String {
    if disagreements.is_empty() {
        return String::new();
    }
    let mut list = format!(
        "\nWhere ours disagrees with the paper ({}; docs/reproduction/{paper}.md explains):\n",
        disagreements.len()
    );
    for d in disagreements {
        list.push_str(&format!("- {d}\n"));
    }
    list
}

/// What an experiment produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The report text (also written to `out/report.txt`).
    pub report: String,
    pub runs: usize,
    pub out: PathBuf,
}

/// Run the experiments of `paper` ("wwp" or "e2tcp").
pub fn reproduce(paper: &str, options: &Options) -> Result<Outcome, String> {
    let known: Vec<&str> = PAPERS.iter().map(|p| p.0).collect();
    if !known.contains(&paper) {
        return Err(format!(
            "unknown experiment \"{paper}\" (known: {})",
            known.join(", ")
        ));
    }
    // Checked before anything is written: run outside the repository, a
    // failed reproduction must not leave an empty results folder behind.
    // (RCP's scenarios are built in code.)
    let dir = options.scenarios.join(paper);
    if paper != "rcp" && !dir.is_dir() {
        return Err(format!(
            "{}: no such folder; run from the joulenet repository or pass \
             --scenarios DIR (the folder holding wwp/, e2tcp/, rcp/, jtp/, hop/)",
            dir.display()
        ));
    }
    let out = options.out.clone();
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    if options.baseline.is_some() && !matches!(paper, "wwp" | "e2tcp" | "hop") {
        return Err(format!(
            "--baseline applies to the TCP baselines of wwp, e2tcp and hop; {paper}'s comparisons keep the rfc profile (docs/reproduction/{paper}.md)"
        ));
    }
    if paper == "rcp" {
        let mut report = baseline_line(paper, None);
        if options.echo {
            print!("{report}");
        }
        report.push_str(&rcp::reproduce(options)?);
        if options.echo {
            print!("{report}");
        }
        std::fs::write(out.join("report.txt"), &report).map_err(|e| e.to_string())?;
        return Ok(Outcome {
            report,
            runs: 0,
            out,
        });
    }
    let seeds = options
        .seeds
        .unwrap_or(if options.quick { 1 } else { 3 })
        .max(1);
    let mut ctx = Ctx {
        dir: options.scenarios.join(paper),
        out: out.clone(),
        seeds,
        quick: options.quick,
        report: String::new(),
        runs: 0,
        echo: options.echo,
        baseline: options.baseline,
        disagreements: Vec::new(),
    };
    ctx.say(&baseline_line(paper, options.baseline));
    let started = std::time::Instant::now();
    match paper {
        "wwp" => wwp::reproduce(&mut ctx)?,
        "jtp" => jtp::reproduce(&mut ctx)?,
        "hop" => hop::reproduce(&mut ctx)?,
        _ => e2tcp::reproduce(&mut ctx)?,
    }
    let list = disagreement_list(paper, &ctx.disagreements);
    ctx.say(&list);
    let summary = format!(
        "\n{} simulation run(s) in {:.1} s; CSV and report in {}\n",
        ctx.runs,
        started.elapsed().as_secs_f64(),
        out.display()
    );
    ctx.say(&summary);
    std::fs::write(out.join("report.txt"), &ctx.report).map_err(|e| e.to_string())?;
    Ok(Outcome {
        report: ctx.report,
        runs: ctx.runs,
        out,
    })
}

/// Run every (point, seed) of `scenario` on `jobs` threads; results in
/// (point, seed) order, so the outcome does not depend on `jobs`.
pub(crate) fn run_all(
    scenario: &Scenario,
    points: &[joulenet_sim::ParamPoint],
    seeds: &[u64],
    jobs: usize,
) -> Result<Vec<RunResult>, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let tasks: Vec<(usize, u64)> = (0..points.len())
        .flat_map(|p| seeds.iter().map(move |&s| (p, s)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunResult, String>>>> =
        Mutex::new((0..tasks.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, tasks.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, seed)) = tasks.get(i) else {
                    break;
                };
                let r = run(scenario, &points[p], seed, &mut |_| {}).map_err(|e| e.to_string());
                results.lock().expect("no worker panicked")[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every task ran"))
        .collect()
}

/// Turn the figure data in `out` into PNGs with
/// `scripts/plot_reproduction.py` (`scripts/plot_rcp.py` for RCP, whose
/// figures are drawn from its tables), found next to the scenarios
/// directory. A missing Python or matplotlib is an error message, not a
/// failure of the experiment.
pub fn plot(paper: &str, out: &Path, scenarios: &Path) -> Result<(), String> {
    let name = if paper == "rcp" {
        "plot_rcp.py"
    } else {
        "plot_reproduction.py"
    };
    let script = scenarios
        .parent()
        .unwrap_or(Path::new("."))
        .join("scripts")
        .join(name);
    match std::process::Command::new("python3")
        .arg(&script)
        .arg(out)
        .stdout(std::process::Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) if s.code() == Some(3) => Err(format!(
            "no PNG figures: Python has no matplotlib (`pip install matplotlib`); CSVs are in {}",
            out.display()
        )),
        Ok(_) => Err(format!(
            "{} failed (is matplotlib installed? `pip install matplotlib`); CSVs are in {}",
            script.display(),
            out.display()
        )),
        Err(e) => Err(format!(
            "could not run python3 ({e}); CSVs are in {}",
            out.display()
        )),
    }
}

pub struct Ctx {
    dir: PathBuf,
    out: PathBuf,
    pub seeds: u64,
    pub quick: bool,
    report: String,
    runs: usize,
    echo: bool,
    /// Profile for the TCP baselines (`Options::baseline`).
    baseline: Option<TcpProfile>,
    /// The paper's claims our figures contradict, for the closing summary.
    disagreements: Vec<String>,
}

/// What one (mean over seeds) run of a single-flow scenario measured.
#[derive(Clone, Debug, Default)]
pub struct Measure {
    pub completed: f64,
    /// Connection time: start to both ends closed (else last delivery).
    pub time_s: f64,
    pub delivered: f64,
    /// Transport bytes both ends sent (headers, ACKs, retransmissions).
    pub transport_bytes: f64,
    /// Packets both ends sent.
    pub packets: f64,
    pub retransmitted: f64,
    pub timeouts: f64,
    pub goodput_bps: f64,
    pub delay_mean_ms: f64,
    pub energy_overhead: f64,
}

impl Ctx {
    pub fn say(&mut self, text: &str) {
        if self.echo {
            print!("{text}");
        }
        self.report.push_str(text);
    }

    /// Check a paper's qualitative claim against our figures and say so
    /// under the table: `ours agrees` or `ours DISAGREES`, so that a reader
    /// never has to compare a "paper:" line with the numbers above it. The
    /// disagreements are listed again at the end of the report.
    pub fn claim(&mut self, figure: &str, claim: &str, holds: bool) {
        self.say(&verdict(claim, holds));
        if !holds {
            self.disagreements.push(format!("{figure}: {claim}"));
        }
    }

    pub fn load(&self, file: &str) -> Result<Scenario, String> {
        let path = self.dir.join(file);
        if !self.dir.is_dir() {
            return Err(format!(
                "no scenario folder {}: run from joulenet's repository root, or pass \
                 --scenarios DIR (the folder holding wwp/, e2tcp/, rcp/, jtp/, hop/)",
                self.dir.display()
            ));
        }
        Scenario::from_file(&path).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// `base` with `sets` (`key=value` overrides) and its one point.
    /// `table()` leaves the file's sweep out: the overrides choose the point.
    fn point_of(
        &self,
        base: &Scenario,
        sets: &[String],
    ) -> Result<(Scenario, joulenet_sim::ParamPoint), String> {
        let mut table = base.table().clone();
        for s in sets {
            let (k, v) = parse_override(s).map_err(|e| e.to_string())?;
            set_path(&mut table, &k, v).map_err(|e| e.to_string())?;
        }
        if let Some(profile) = self.baseline {
            for key in baseline_flows(&table) {
                let set = format!("{key}.tcp.profile=\"{profile}\"");
                let (k, v) = parse_override(&set).map_err(|e| e.to_string())?;
                set_path(&mut table, &k, v).map_err(|e| e.to_string())?;
            }
        }
        let scenario = Scenario::from_table(table, base.name(), self.dir.clone())
            .map_err(|e| format!("{} with {sets:?}: {e}", base.name()))?;
        let point = scenario.points().remove(0);
        Ok((scenario, point))
    }

    /// Run `base` with `sets` (`key=value` overrides) for every seed; means.
    pub fn measure(&mut self, base: &Scenario, sets: &[String]) -> Result<Measure, String> {
        let (scenario, point) = self.point_of(base, sets)?;
        let mut m = Measure::default();
        for seed in 1..=self.seeds {
            let r: RunResult =
                run(&scenario, &point, seed, &mut |_| {}).map_err(|e| e.to_string())?;
            self.runs += 1;
            let f = &r.flows[0];
            m.completed += f.completed as u8 as f64;
            m.time_s += f
                .close_time_s
                .or(f.completion_time_s)
                .unwrap_or(r.summary.duration_s);
            m.delivered += f.bytes_delivered as f64;
            m.transport_bytes += f.transport_bytes as f64;
            m.packets += (f.data_packets + f.retransmitted_packets + f.control_packets) as f64;
            m.retransmitted += f.retransmitted_packets as f64;
            m.timeouts += f.timeouts as f64;
            m.goodput_bps += f.goodput_bps;
            m.delay_mean_ms += f.delay_mean_ms.unwrap_or(0.0);
            m.energy_overhead += r.summary.energy_overhead.unwrap_or(f64::NAN);
        }
        let n = self.seeds as f64;
        for v in [
            &mut m.completed,
            &mut m.time_s,
            &mut m.delivered,
            &mut m.transport_bytes,
            &mut m.packets,
            &mut m.retransmitted,
            &mut m.timeouts,
            &mut m.goodput_bps,
            &mut m.delay_mean_ms,
            &mut m.energy_overhead,
        ] {
            *v /= n;
        }
        Ok(m)
    }

    /// Every seed's run of `base` with `sets` (`key=value` overrides), in
    /// seed order, on all cores.
    pub fn runs_of(&mut self, base: &Scenario, sets: &[String]) -> Result<Vec<RunResult>, String> {
        let (scenario, point) = self.point_of(base, sets)?;
        let seeds: Vec<u64> = (1..=self.seeds).collect();
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        let runs = run_all(&scenario, &[point], &seeds, jobs)?;
        self.runs += runs.len();
        Ok(runs)
    }

    /// One run per seed of `base` with overrides that depend on the seed
    /// (`sets_of(seed)`: a random topology's and flows' draw), in seed
    /// order, on all cores.
    pub fn runs_drawn(
        &mut self,
        base: &Scenario,
        sets_of: &(dyn Fn(u64) -> Vec<String> + Sync),
    ) -> Result<Vec<RunResult>, String> {
        let seeds: Vec<u64> = (1..=self.seeds).collect();
        let mut points = Vec::new();
        for &seed in &seeds {
            points.push(self.point_of(base, &sets_of(seed))?);
        }
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: std::sync::Mutex<Vec<Option<Result<RunResult, String>>>> =
            std::sync::Mutex::new((0..seeds.len()).map(|_| None).collect());
        std::thread::scope(|scope| {
            for _ in 0..jobs.clamp(1, seeds.len()) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((scenario, point)) = points.get(i) else {
                        break;
                    };
                    let r = run(scenario, point, seeds[i], &mut |_| {}).map_err(|e| e.to_string());
                    results.lock().expect("no worker panicked")[i] = Some(r);
                });
            }
        });
        self.runs += seeds.len();
        results
            .into_inner()
            .expect("no worker panicked")
            .into_iter()
            .map(|r| r.expect("every seed ran"))
            .collect()
    }

    /// Write a CSV table (header + rows).
    pub fn csv(&self, name: &str, header: &str, rows: &[String]) -> Result<(), String> {
        let mut text = String::new();
        let _ = writeln!(text, "{header}");
        for r in rows {
            let _ = writeln!(text, "{r}");
        }
        std::fs::write(self.out.join(name), text).map_err(|e| e.to_string())
    }

    /// Figure data for the plot script: `# title|xlabel|ylabel|logx` then
    /// `x,series,y` rows.
    pub fn figure(
        &self,
        name: &str,
        title: &str,
        xlabel: &str,
        ylabel: &str,
        logx: bool,
        points: &[(f64, String, f64)],
    ) -> Result<(), String> {
        let mut text = format!("# {title}|{xlabel}|{ylabel}|{logx}\nx,series,y\n");
        for (x, s, y) in points {
            let _ = writeln!(text, "{x},{s},{y}");
        }
        std::fs::write(self.out.join(format!("fig_{name}.csv")), text).map_err(|e| e.to_string())
    }
}

/// Format an optional paper number.
pub(crate) fn paper(v: Option<f64>, prec: usize) -> String {
    match v {
        Some(v) => format!("{v:.prec$}"),
        None => "—".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{baseline_flows, baseline_line};
    use joulenet_proto::tcp::TcpProfile;

    #[test]
    fn each_report_names_its_baseline_profile_and_the_papers_own() {
        let hop = baseline_line("hop", Some(TcpProfile::Linux));
        assert!(hop.starts_with("TCP baselines: profile \"linux\""), "{hop}");
        assert!(hop.contains("--baseline linux"), "{hop}");
        assert!(baseline_line("wwp", None).contains("--baseline xkernel-1998"));
        assert!(baseline_line("e2tcp", None).contains("--baseline ns2"));
        assert!(baseline_line("jtp", None).contains("no profile switch"));
    }

    #[test]
    fn a_baseline_profile_goes_to_tcp_flows_only() {
        let table: toml::Table = toml::from_str(
            r#"
            [flow]
            protocol = "reno"
            [[flows]]
            from = 0
            [[flows]]
            protocol = "udp"
            [[flows]]
            protocol = "wwp"
            [[flows]]
            protocol = "cubic"
            "#,
        )
        .unwrap();
        assert_eq!(baseline_flows(&table), ["flows.0", "flows.3"]);
        let single: toml::Table = toml::from_str("[flow]\nprotocol = \"sack\"").unwrap();
        assert_eq!(baseline_flows(&single), ["flow"]);
        let none: toml::Table = toml::from_str("[flow]\nprotocol = \"e2tcp\"").unwrap();
        assert!(baseline_flows(&none).is_empty());
    }
}
