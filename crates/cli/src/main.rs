//! The `joulenet` command-line tool: run scenarios, compare protocols,
//! reproduce papers, benchmark the simulator.
//!
//! This crate only parses arguments, drives the simulator crate and prints;
//! it holds no simulation or protocol logic.

mod bench;
mod demo;
mod list;
mod reproduce_rcp;
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
    /// Benchmark the simulator: 50 MB NewReno over 10 Mbit/s, 50 ms, 1% loss
    Bench(bench::BenchArgs),
    /// Reproduce a paper's experiments (our numbers beside its claims)
    #[command(subcommand)]
    Reproduce(Reproduce),
}

#[derive(Subcommand)]
enum Reproduce {
    /// RCP / R²CP (receiver-centric transport)
    Rcp(reproduce_rcp::ReproduceRcpArgs),
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
        Command::Reproduce(Reproduce::Rcp(args)) => reproduce_rcp::reproduce(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
