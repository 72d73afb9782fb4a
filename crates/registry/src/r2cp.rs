//! R²CP: `r2cp` (rank scheduling), `r2cp-s` (first
//! come, first served) and `r2cp-stripe` (application-level striping over
//! the same pipes). The flow's `from` node is the first path's sender; more
//! senders come from `[flow.r2cp] servers` (node names or indices), each an
//! unchanged RCP sender listening on the flow's port with the same content.
//!
//! Point-to-point aggregation: `paths = [{ server = "srv", via = "ap0" },
//! { server = "srv", via = "ap1" }]` lists every path instead (`servers`
//! is then refused). Path *i*'s sender listens at its server on the flow's
//! port + *i* (path 0 is the flow's own `from` and port), and when `via`
//! (a neighbour of the flow's `to`) is given the simulator pins both
//! directions of that pipe to the interface toward `via` with policy
//! routes (`Core::pin_path`): two pipes to one server then use two
//! interfaces, which routing by destination alone cannot do.
//!
//! `[flow.r2cp]`: `servers`, `paths`, `aggregate` (true; false = handoff to the
//! newest path), `rate_limit` (token bucket rate; the first path spends
//! first), `bucket` (its depth, 16 segments), `recv_buffer` (256 KiB),
//! `stripe_block` (segments per stripe, 8), `mss`, `initial_window`,
//! `min_rto`, `controller` (every pipe's congestion controller, `"newreno"`
//! or `"stp"`; default `"newreno"`). A `paths` entry may name its own
//! `controller`, which overrides it for that path's pipes: the paper's
//! per-interface congestion control (§4.1.1).

use std::any::Any;

use joulenet_proto::r2cp::{PathSpec, R2cpConfig, R2cpReceiver, Scheduler, TokenBucket};
use joulenet_proto::rcp::{RcpController, RcpSender};
use joulenet_proto::{Addr, Agent, ConfigError, NodeId};
use toml::Value;

use crate::graph::{adjacent, reachable_avoiding};
use crate::options::{node_ref, Reader, Result};
use crate::protocol::{Entry, HostSettings, Placement, Protocol, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "r2cp",
        about: "R²CP: multi-homed receiver, one RCP pipe per path, rank scheduling",
        options: Some("r2cp"),
        wire: Wire::Multihomed(28),
        make: || Box::new(named(Scheduler::Rank)),
    },
    Entry {
        name: "r2cp-s",
        about: "R²CP-s: R²CP with first-come-first-served binding",
        options: Some("r2cp"),
        wire: Wire::Multihomed(29),
        make: || Box::new(named(Scheduler::Fcfs)),
    },
    Entry {
        name: "r2cp-stripe",
        about: "application-level striping over one RCP pipe per path",
        options: Some("r2cp"),
        wire: Wire::Multihomed(30),
        make: || Box::new(named(Scheduler::Stripe(8))),
    },
];

#[derive(Clone, Debug, PartialEq)]
pub struct R2cpSpec {
    pub cfg: R2cpConfig,
    /// Senders beyond the flow's own `from`.
    pub servers: Vec<NodeId>,
    /// `paths`: every path (the first is the flow's own `from`), each to
    /// its sender on the flow's port + its index. Empty: `servers` applies.
    pub paths: Vec<SharedPath>,
}

/// One entry of `[flow.r2cp] paths`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedPath {
    pub server: NodeId,
    /// The receiver's neighbour the path leaves through (pinned by policy
    /// routes); `None`: the ordinary route.
    pub via: Option<NodeId>,
    /// The path's congestion controller; `None`: the flow's.
    pub controller: Option<RcpController>,
}

fn named(scheduler: Scheduler) -> R2cpSpec {
    R2cpSpec {
        cfg: R2cpConfig {
            scheduler,
            ..R2cpConfig::default()
        },
        servers: Vec::new(),
        paths: Vec::new(),
    }
}

impl Protocol for R2cpSpec {
    fn name(&self) -> &'static str {
        match self.cfg.scheduler {
            Scheduler::Rank => "r2cp",
            Scheduler::Fcfs => "r2cp-s",
            Scheduler::Stripe(_) => "r2cp-stripe",
        }
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Rcp
    }

    fn config(&self) -> &dyn Any {
        self
    }

    fn configure(&mut self, flow: &Reader, names: &[String]) -> Result<()> {
        configure(flow, self)?;
        resolve(flow, self, names)
    }

    fn check_placement(&self, flow: &Reader, place: &Placement) -> Result<()> {
        check(flow, self, place)
    }

    /// Every pipe takes the host's RTO floor, segment and buffers, as RCP
    /// does; the runtime gives each path its own socket
    /// (`joulenet_runtime::multihomed`).
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        crate::rcp::on_hosts(&mut self.cfg.rcp, s)
    }

    fn agents(&self, client: Addr, _server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        agents(self, client)
    }

    fn extra_agents(&self, client: Addr) -> Vec<(Addr, Box<dyn Agent>)> {
        extra_agents(self, client)
    }

    fn extra_addrs(&self, client: Addr) -> Vec<Addr> {
        extra_addrs(self, client)
    }

    fn pinned(&self, client: Addr) -> Vec<(Addr, NodeId)> {
        pinned(self, client)
    }
}

fn configure(flow: &Reader, s: &mut R2cpSpec) -> Result<()> {
    let Some(t) = flow.table("r2cp")? else {
        return Ok(());
    };
    let c = &mut s.cfg;
    t.allow("servers");
    t.allow("paths");
    if let Some(a) = t.bool("aggregate")? {
        c.aggregate = a;
    }
    if let Some(rate) = t.rate("rate_limit")? {
        let depth = t.size("bucket")?.unwrap_or(16 * c.rcp.mss as u64);
        c.token_bucket = Some(TokenBucket {
            rate_bps: rate,
            depth_bytes: depth.max(c.rcp.mss as u64),
        });
    } else {
        t.allow("bucket");
    }
    if let Some(b) = t.size("recv_buffer")? {
        c.rcp.recv_buffer = b.clamp(4 * c.rcp.mss as u64, 1 << 30) as usize;
    }
    if let Some(n) = t.int_in("stripe_block", 1, 1 << 20)? {
        if let Scheduler::Stripe(_) = c.scheduler {
            c.scheduler = Scheduler::Stripe(n as u32);
        }
    }
    if let Some(mss) = t.int_in("mss", 64, 65_000)? {
        c.rcp.mss = mss as u16;
    }
    if let Some(iw) = t.int_in("initial_window", 1, 10_000)? {
        c.rcp.initial_window = iw as u32;
    }
    if let Some(d) = t.duration("min_rto")? {
        c.rcp.min_rto = d;
    }
    if let Some(cc) = controller(&t, "controller")? {
        c.rcp.controller = cc;
    }
    t.finish()
}

/// A congestion controller by name: the pipes' default, or one path's.
fn controller(t: &Reader, key: &str) -> Result<Option<RcpController>> {
    match t.str(key)? {
        None => Ok(None),
        Some("newreno") => Ok(Some(RcpController::NewReno)),
        Some("stp") => Ok(Some(RcpController::Stp)),
        Some(other) => Err(t.error(
            key,
            format!("unknown controller \"{other}\" (expected \"newreno\" or \"stp\")"),
        )),
    }
}

/// Paths one R²CP connection may list (each its own pipe and sender).
pub const MAX_PATHS: usize = 64;

/// `servers` names nodes, so it is read once the topology's names are known.
fn resolve(flow: &Reader, s: &mut R2cpSpec, names: &[String]) -> Result<()> {
    let Some(t) = flow.table("r2cp")? else {
        return Ok(());
    };
    s.paths.clear();
    if t.has("paths") {
        if t.has("servers") {
            return Err(t.error("paths", "give either `servers` or `paths`, not both"));
        }
        let items = t.tables("paths")?;
        if items.len() < 2 {
            return Err(t.error("paths", "list at least two paths"));
        }
        if items.len() > MAX_PATHS {
            return Err(t.error("paths", format!("at most {MAX_PATHS} paths")));
        }
        for (table, key) in items {
            let r = Reader::new(table, &key);
            let server = node_ref(&r, "server", names)?;
            let via = if r.has("via") {
                Some(node_ref(&r, "via", names)?)
            } else {
                None
            };
            let controller = controller(&r, "controller")?;
            r.finish()?;
            s.paths.push(SharedPath {
                server,
                via,
                controller,
            });
        }
        return Ok(());
    }
    let Some(v) = t.get("servers") else {
        return Ok(());
    };
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    s.servers.clear();
    for item in items {
        let node = match item {
            Value::Integer(i) if *i >= 0 && (*i as usize) < names.len() => *i as NodeId,
            Value::String(n) => match names.iter().position(|x| x == n) {
                Some(i) => i as NodeId,
                None => return Err(t.error("servers", format!("no node named \"{n}\""))),
            },
            _ => return Err(t.error("servers", "expected node names or indices")),
        };
        s.servers.push(node);
    }
    if s.servers.len() >= MAX_PATHS {
        return Err(t.error(
            "servers",
            format!("at most {} more servers (paths)", MAX_PATHS - 1),
        ));
    }
    Ok(())
}

/// `paths` once the flow's ends are known: every path must leave the
/// receiver `to` through a neighbour, reach its server without coming back
/// through `to`, and the first must be the flow's own `from`.
fn check(flow: &Reader, s: &R2cpSpec, place: &Placement) -> Result<()> {
    let (from, to, port, names) = (place.from, place.to, place.port, place.names);
    if s.paths.is_empty() {
        return Ok(());
    }
    let Some(t) = flow.table("r2cp")? else {
        return Ok(());
    };
    let items = t.tables("paths")?;
    if port as usize + s.paths.len() - 1 > u16::MAX as usize {
        return Err(t.error(
            "paths",
            format!(
                "ports {port}..{} do not fit",
                port as usize + s.paths.len() - 1
            ),
        ));
    }
    for (i, (p, (table, key))) in s.paths.iter().zip(items).enumerate() {
        let r = Reader::new(table, &key);
        if i == 0 && p.server != from {
            return Err(r.error(
                "server",
                format!(
                    "the first path's server is the flow's `from` ({})",
                    names[from as usize]
                ),
            ));
        }
        if p.server == to {
            return Err(r.error("server", "the receiver cannot be its own server"));
        }
        if let Some(via) = p.via {
            if !adjacent(place.links, to, via) {
                return Err(r.error(
                    "via",
                    format!(
                        "{} is not a neighbour of the receiver {} (no link between them)",
                        names[via as usize], names[to as usize]
                    ),
                ));
            }
            if via != p.server && !reachable_avoiding(place.links, via, p.server, to) {
                return Err(r.error(
                    "via",
                    format!(
                        "no path from {} to {} that avoids {}",
                        names[via as usize], names[p.server as usize], names[to as usize]
                    ),
                ));
            }
        }
        if s.paths[..i]
            .iter()
            .any(|q| (q.server, q.via) == (p.server, p.via))
        {
            return Err(r.error("server", "the same server through the same interface twice"));
        }
    }
    Ok(())
}

/// The paths: each sender's address, the receiver's neighbour it is
/// pinned to, and its own controller.
fn senders(s: &R2cpSpec, client: Addr) -> Vec<PathSpec> {
    if s.paths.is_empty() {
        return std::iter::once(client.node)
            .chain(s.servers.iter().copied())
            .map(|n| PathSpec::to(Addr::new(n, client.port)))
            .collect();
    }
    s.paths
        .iter()
        .enumerate()
        .map(|(i, p)| PathSpec {
            sender: Addr::new(p.server, client.port + i as u16),
            via: p.via,
            controller: p.controller,
        })
        .collect()
}

/// The pipes to pin, for both directions: (sender address, receiver's
/// neighbour the pipe goes through). Only `paths` entries with `via`.
fn pinned(s: &R2cpSpec, client: Addr) -> Vec<(Addr, NodeId)> {
    senders(s, client)
        .into_iter()
        .filter_map(|p| Some((p.sender, p.via?)))
        .collect()
}

fn agents(s: &R2cpSpec, client: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let mut cfg = s.cfg.clone();
    cfg.paths = senders(s, client);
    (
        Box::new(RcpSender::listen(cfg.rcp.clone())),
        Box::new(R2cpReceiver::new(cfg)),
    )
}

/// Where the other senders listen.
fn extra_addrs(s: &R2cpSpec, client: Addr) -> Vec<Addr> {
    senders(s, client)
        .into_iter()
        .skip(1)
        .map(|p| p.sender)
        .collect()
}

/// The other senders, each listening at its node on its path's port (the
/// flow's port with `servers`, the flow's port + path index with `paths`).
fn extra_agents(s: &R2cpSpec, client: Addr) -> Vec<(Addr, Box<dyn Agent>)> {
    extra_addrs(s, client)
        .into_iter()
        .map(|addr| {
            let a: Box<dyn Agent> = Box::new(RcpSender::listen(s.cfg.rcp.clone()));
            (addr, a)
        })
        .collect()
}
