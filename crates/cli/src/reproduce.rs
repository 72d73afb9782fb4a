//! `joulenet reproduce <paper>`: the experiments of `joulenet-experiments`,
//! then PNG figures through `scripts/plot_reproduction.py`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use joulenet_experiments::Options;

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum Paper {
    /// Wave & Wait vs TCP Reno (Tables 1, 2, 3, 4, 5)
    Wwp,
    /// E2TCP vs Tahoe/Reno/NewReno (Figures 1-18, Table 1)
    E2tcp,
    /// RCP / R²CP: wireless loss, satellite, power management, TCP-friendliness, aggregation
    Rcp,
    /// JTP vs rate-based TCP-SACK and ATP-like (Figs. 2 and 6, equations 5 and 6)
    Jtp,
    /// Hop vs TCP, hop-by-hop TCP, DTN, UDP (§5.1–5.10)
    Hop,
}

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper
    paper: Paper,
    /// A reduced run (fewer points, one seed, smaller transfers): well under a minute
    #[arg(long)]
    quick: bool,
    /// Seeds per point (default 1 with --quick, else 3; 10 for rcp, as its
    /// write-up); results are means
    #[arg(long)]
    seeds: Option<u64>,
    /// Where the scenario files are
    #[arg(long, default_value = "scenarios")]
    scenarios: PathBuf,
    /// Output directory for CSV, report and PNG (default: results/reproduce/<paper>)
    #[arg(long)]
    out: Option<PathBuf>,
    /// Do not call Python for the PNG figures
    #[arg(long)]
    no_plots: bool,
    /// TCP profile of the TCP baselines (rfc, linux, ns3, xkernel-1998,
    /// ns2); the papers' own: `wwp --baseline xkernel-1998`, `e2tcp
    /// --baseline ns2`, `hop --baseline linux` (default rfc)
    #[arg(long)]
    baseline: Option<joulenet_proto::tcp::TcpProfile>,
}

pub fn reproduce(args: ReproduceArgs) -> Result<(), String> {
    let name = match args.paper {
        Paper::Wwp => "wwp",
        Paper::E2tcp => "e2tcp",
        Paper::Rcp => "rcp",
        Paper::Jtp => "jtp",
        Paper::Hop => "hop",
    };
    // Outside the source tree for every paper: a quick run must not replace
    // the write-ups' committed results (refresh those with --out).
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("results/reproduce").join(name));
    let options = Options {
        quick: args.quick,
        seeds: args.seeds,
        scenarios: args.scenarios.clone(),
        out,
        echo: true,
        baseline: args.baseline,
    };
    let outcome = joulenet_experiments::reproduce(name, &options)?;
    if !args.no_plots {
        match joulenet_experiments::plot(name, &outcome.out, &args.scenarios) {
            Ok(()) => println!("figures (PNG) written to {}", outcome.out.display()),
            Err(e) => eprintln!("warning: {e}"),
        }
    }
    let markdown = outcome.out.join("report.md");
    std::fs::write(
        &markdown,
        report_markdown(name, &outcome.report, &outcome.out),
    )
    .map_err(|e| format!("{}: {e}", markdown.display()))?;
    println!("report with its figures: {}", markdown.display());
    Ok(())
}

/// The same Markdown page for every paper: the report (RCP's is Markdown
/// already; the others' fixed-width tables go in a text block), then every
/// figure of the folder, so one file shows a reproduction whole.
fn report_markdown(paper: &str, report: &str, out: &std::path::Path) -> String {
    let mut md = format!(
        "# joulenet reproduce {paper}\n\nOur figures beside the paper's; the write-up that \
         explains the differences is docs/reproduction/{paper}.md.\n\n"
    );
    if report.contains("\n| ") {
        md.push_str(report);
    } else {
        md.push_str("```text\n");
        md.push_str(report);
        md.push_str("```\n");
    }
    let mut figures: Vec<String> = std::fs::read_dir(out)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".png"))
        .collect();
    figures.sort();
    if !figures.is_empty() {
        md.push_str("\n## Figures\n\n");
        for f in figures {
            md.push_str(&format!("![{}]({f})\n\n", f.trim_end_matches(".png")));
        }
    }
    md
}
