//! The `joulenet` command-line tool: run scenarios, compare protocols,
//! reproduce papers, benchmark the simulator, and run the protocols over
//! real networks (serve/client/send/recv/emulate).
//!
//! This crate only parses arguments, drives the simulator and runtime crates and prints;
//! it holds no simulation or protocol logic.

// The argument structs' doc comments are clap's `--help` text, written for
// a terminal (`HOST[:PORT]`, `<paper>`), not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod bench;
mod bench_mesh;
mod demo;
mod list;
mod multihomed;
mod real;
mod relay;
mod reproduce;
mod runner;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "joulenet",
    version,
    about = "Energy-efficient transport over lossy wireless networks: simulate, compare, deploy"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file for one or more seeds (and every point of its [sweep])
    Run(runner::RunArgs),
    /// Check a scenario file without running it
    Check {
        /// Scenario file (TOML)
        file: PathBuf,
    },
    /// Compare the TCP variants on a bursty wireless link (built-in scenario, a few seconds)
    Demo(demo::DemoArgs),
    /// List protocols, loss models, radio presets, topologies, applications and series
    List,
    /// Reproduce a paper's experiments: `joulenet reproduce wwp|e2tcp [--quick]`
    Reproduce(reproduce::ReproduceArgs),
    /// Benchmark the simulator: 50 MB NewReno over 10 Mbit/s, 50 ms, 1% loss
    Bench(bench::BenchArgs),
    /// Write an HTML report of a sweep campaign (SQLite store of the Python package)
    Report {
        /// Arguments for `python -m joulenet report`: DB [-o report.html]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Real network: accept connections and measure them (iperf3 -s)
    Serve(real::ServeArgs),
    /// Real network: send a generated stream to a server and measure it (iperf3 -c)
    Client(real::ClientArgs),
    /// Real network: send a file to `joulenet recv`
    Send(real::SendArgs),
    /// Real network: receive files, verify their SHA-256, then move them into place
    Recv(real::RecvArgs),
    /// Real network: a UDP relay applying the simulator's loss models, delay and rate
    Emulate(real::EmulateArgs),
    /// Real network: offer a file to R²CP receivers (`recv --proto r2cp`), one passive RCP sender per pipe
    Offer(multihomed::OfferArgs),
    /// Real network: relay routed datagrams by a static route table, running the protocols' relay agents (hbh-tcp)
    Relay(relay::RelayArgs),
}

/// Reports are drawn by the Python package (pandas, matplotlib); the binary
/// only hands over, so it does not depend on Python to build or run.
fn report(args: &[String]) -> Result<(), String> {
    let python = std::env::var("JOULENET_PYTHON").unwrap_or_else(|_| "python3".into());
    let status = std::process::Command::new(&python)
        .args(["-m", "joulenet", "report"])
        .args(args)
        .status()
        .map_err(|e| format!("could not run {python}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{python} -m joulenet report` failed; it needs the joulenet Python package (`pip install .`, docs/python.md); set JOULENET_PYTHON to choose the interpreter"
        ))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => runner::run(args),
        Command::Check { file } => runner::check(&file),
        Command::Demo(args) => demo::demo(args),
        Command::List => {
            list::list();
            Ok(())
        }
        Command::Bench(args) => bench::bench(args),
        Command::Report { args } => report(&args),
        Command::Reproduce(args) => reproduce::reproduce(args),
        Command::Serve(args) => real::serve(args),
        Command::Client(args) => real::client(args),
        Command::Send(args) => real::send(args),
        Command::Recv(args) => real::recv(args),
        Command::Emulate(args) => real::emulate(args),
        Command::Relay(args) => relay::relay(args),
        Command::Offer(args) => multihomed::offer(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
