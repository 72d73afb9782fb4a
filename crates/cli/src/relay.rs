//! `joulenet relay`: argument parsing for a relay host; the work is in
//! `joulenet_runtime::relay`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use joulenet_channel::units::parse_duration;
use joulenet_runtime::conn::Tuning;
use joulenet_runtime::relay::{self, RelayOptions};
use joulenet_runtime::route::parse_node;
use joulenet_runtime::routes::RouteTable;

#[derive(Args)]
pub struct RelayArgs {
    /// Address and port of the relay's one socket
    #[arg(long)]
    pub bind: SocketAddr,
    /// This node's id; datagrams addressed to it are not relayed
    #[arg(long, value_parser = parse_node)]
    pub node: u32,
    /// A route, NODE=ADDR (next hop for that node) or default=ADDR; repeat
    /// for more. List each neighbour before the nodes behind it: the first
    /// node routed via an address names the neighbour there.
    #[arg(long = "route")]
    pub route: Vec<String>,
    /// A file of routes: one `NODE ADDR` or `default ADDR` per line, `#` comments
    #[arg(long)]
    pub routes: Option<PathBuf>,
    /// Print the report as JSON
    #[arg(short = 'J', long)]
    pub json: bool,
    /// Stop after this long (default: run until SIGINT or SIGTERM; the
    /// report is printed either way)
    #[arg(long)]
    pub duration: Option<String>,
    /// Lower bound of the relay agents' TCP retransmission timeout
    #[arg(long, default_value = "200ms")]
    pub min_rto: String,
    /// Segment size of the relay agents (give the ends the same `--mss`)
    #[arg(long)]
    pub mss: Option<u16>,
    /// The rate of the relay's links (e.g. 10Mbps): each neighbour's
    /// datagrams wait in an interface queue served at it, which the relay
    /// agents see (Hop paces by it; JTP and ATP stamp the rate left)
    #[arg(long)]
    pub link_rate: Option<String>,
}

pub fn relay(a: RelayArgs) -> Result<(), String> {
    let mut routes = RouteTable::new();
    if let Some(path) = &a.routes {
        routes.add_file(path)?;
    }
    for r in &a.route {
        routes.add_arg(r)?;
    }
    if routes.is_empty() {
        return Err("a relay needs routes: --route NODE=ADDR or --routes FILE".into());
    }
    let mut tuning = Tuning {
        min_rto: parse_duration(&a.min_rto).map_err(|e| e.to_string())?,
        link_rate_bps: crate::real::link_rate(a.link_rate.as_deref())?,
        ..Tuning::default()
    };
    if let Some(mss) = a.mss {
        tuning = tuning.with_segment(mss)?;
    }
    let mut o = RelayOptions::new(a.bind, a.node, routes);
    o.tuning = tuning;
    o.duration = a
        .duration
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| e.to_string())?;
    o.stop = Some(relay::stop_on_signals());
    let sock = relay::bind(&o)?;
    if !a.json {
        eprintln!(
            "relay node {} on {}: routes {}",
            a.node,
            a.bind,
            o.routes
                .entries()
                .iter()
                .map(|(n, addr)| format!("{n}={addr}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let report = relay::run_relay(&o, sock)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", report.table());
    }
    Ok(())
}
