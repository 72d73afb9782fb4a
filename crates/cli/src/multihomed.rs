//! R²CP on real hosts: `recv --proto r2cp` with several `--bind`s (the
//! multi-homed receiver) and `offer` (its senders). Argument parsing only;
//! the work is in `joulenet_runtime::multihomed`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

use clap::Args;
use joulenet_runtime::multihomed::offer::{run_offer, OfferOptions};
use joulenet_runtime::multihomed::receiver::{run_receiver, PathAddrs, ReceiverOptions};
use joulenet_runtime::{signals, Format};

use crate::real::{dur, Common, ServeArgs};

/// `recv`'s options for a multi-homed protocol.
#[derive(Args)]
pub struct MultihomedArgs {
    /// R²CP: a sender (`joulenet offer`), HOST:PORT, per --bind in the
    /// same order; one --server serves every --bind
    #[arg(long)]
    pub server: Vec<String>,
    /// R²CP: hand off to the newest path instead of aggregating every
    /// live path (server migration when its server differs)
    #[arg(long)]
    pub handoff: bool,
    /// R²CP: a path whose sender is silent this long after it was sent
    /// to is taken down (a pipe's interface going down is seen at once)
    #[arg(long, default_value = "1s")]
    pub silence: String,
}

impl MultihomedArgs {
    pub fn refuse_without_r2cp(&self) -> Result<(), String> {
        if !self.server.is_empty() || self.handoff {
            return Err(
                "--server and --handoff are for --proto r2cp (or r2cp-s, r2cp-stripe)".into(),
            );
        }
        Ok(())
    }
}

fn resolve(s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .map_err(|e| format!("--server {s}: {e}"))?
        .next()
        .ok_or_else(|| format!("--server {s}: no address"))
}

/// Pairs each `--bind` with its `--server`.
fn paths(binds: &[SocketAddr], servers: &[String]) -> Result<Vec<PathAddrs>, String> {
    let servers: Vec<SocketAddr> = servers
        .iter()
        .map(|s| resolve(s))
        .collect::<Result<_, _>>()?;
    let server_of = |i: usize| match servers.len() {
        1 => Ok(servers[0]),
        n if n == binds.len() => Ok(servers[i]),
        n => Err(format!(
            "{n} --server for {} --bind: give one, or one per --bind",
            binds.len()
        )),
    };
    binds
        .iter()
        .enumerate()
        .map(|(i, &local)| {
            Ok(PathAddrs {
                local,
                server: server_of(i)?,
            })
        })
        .collect()
}

pub fn recv(name: &str, out: &Path, a: &ServeArgs, m: &MultihomedArgs) -> Result<(), String> {
    if m.server.is_empty() {
        return Err(format!(
            "--proto {name}: give the senders with --server HOST:PORT"
        ));
    }
    let mut o = ReceiverOptions::new(paths(&a.bind, &m.server)?, out.to_path_buf());
    o.protocol = name.to_string();
    o.aggregate = !m.handoff;
    o.tuning = a.common.tuning()?;
    o.silence = dur(&m.silence)?;
    o.idle_timeout = dur(&a.common.idle_timeout)?;
    o.stop = Some(signals::stop_on_termination()?);
    let report = run_receiver(&o)?;
    print(&a.common, serde_json::to_string(&report), || {
        let mut s = format!(
            "{}: {} bytes in {:.2} s, {:.2} Mbit/s, {} pipes opened\n",
            report.status,
            report.bytes,
            report.seconds,
            report.goodput_bps / 1e6,
            report.pipes_opened
        );
        for p in &report.paths {
            s += &format!(
                "  path {} -> {}: {} bytes received, down {} times ({:?})\n",
                p.local, p.server, p.bytes_received, p.downs, p.last_down
            );
        }
        s
    });
    match report.status.as_str() {
        "verified" => Ok(()),
        other => Err(format!("transfer failed ({other}): {}", report.reason)),
    }
}

fn print(c: &Common, json: Result<String, serde_json::Error>, human: impl FnOnce() -> String) {
    match c.format() {
        Format::Human => print!("{}", human()),
        _ => println!("{}", json.unwrap_or_default()),
    }
}

#[derive(Args)]
pub struct OfferArgs {
    /// File the receivers pull
    pub file: PathBuf,
    /// Address and port to serve on (repeat for several)
    #[arg(long, required = true)]
    pub bind: Vec<SocketAddr>,
    /// Stop after this long (default: until SIGINT/SIGTERM)
    #[arg(long)]
    pub duration: Option<String>,
    /// Most pipes served at once
    #[arg(long, default_value_t = 64)]
    pub max_pipes: usize,
    #[command(flatten)]
    pub common: Common,
}

pub fn offer(a: OfferArgs) -> Result<(), String> {
    let mut o = OfferOptions::new(a.file.clone(), a.bind.clone());
    o.tuning = a.common.tuning()?;
    o.max_pipes = a.max_pipes.max(1);
    o.idle_timeout = dur(&a.common.idle_timeout)?;
    o.duration = a.duration.as_deref().map(dur).transpose()?;
    o.stop = Some(signals::stop_on_termination()?);
    let report = run_offer(&o)?;
    print(&a.common, serde_json::to_string(&report), || {
        let mut s = String::new();
        for p in &report.pipes {
            s += &format!(
                "pipe {} <- {} (connection {:016x}): {} data bytes sent, {} retransmitted\n",
                p.bind, p.peer, p.conn_id, p.data_bytes_sent, p.retransmitted_bytes
            );
        }
        s
    });
    Ok(())
}
