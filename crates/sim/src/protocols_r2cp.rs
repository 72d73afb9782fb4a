//! R²CP as scenarios name it: `r2cp` (rank scheduling), `r2cp-s` (first
//! come, first served) and `r2cp-stripe` (application-level striping over
//! the same pipes). The flow's `from` node is the first path's sender; more
//! senders come from `[flow.r2cp] servers` (node names or indices), each an
//! unchanged RCP sender listening on the flow's port with the same content.
//!
//! `[flow.r2cp]`: `servers`, `aggregate` (true; false = handoff to the
//! newest path), `rate_limit` (token bucket rate; the first path spends
//! first), `bucket` (its depth, 16 segments), `recv_buffer` (256 KiB),
//! `stripe_block` (segments per stripe, 8), `mss`, `initial_window`,
//! `min_rto`.

use joulenet_proto::r2cp::{PathSpec, R2cpConfig, R2cpReceiver, Scheduler, TokenBucket};
use joulenet_proto::rcp::RcpSender;
use joulenet_proto::{Addr, Agent, NodeId};
use toml::Value;

use crate::scenario::reader::{Reader, Result};

#[derive(Clone, Debug, PartialEq)]
pub struct R2cpSpec {
    pub cfg: R2cpConfig,
    /// Senders beyond the flow's own `from`.
    pub servers: Vec<NodeId>,
}

pub fn named(name: &str) -> Option<R2cpSpec> {
    let scheduler = match name {
        "r2cp" => Scheduler::Rank,
        "r2cp-s" => Scheduler::Fcfs,
        "r2cp-stripe" => Scheduler::Stripe(8),
        _ => return None,
    };
    Some(R2cpSpec {
        cfg: R2cpConfig {
            scheduler,
            ..R2cpConfig::default()
        },
        servers: Vec::new(),
    })
}

pub fn name(s: &R2cpSpec) -> &'static str {
    match s.cfg.scheduler {
        Scheduler::Rank => "r2cp",
        Scheduler::Fcfs => "r2cp-s",
        Scheduler::Stripe(_) => "r2cp-stripe",
    }
}

pub fn configure(flow: &Reader, s: &mut R2cpSpec) -> Result<()> {
    let Some(t) = flow.table("r2cp")? else {
        return Ok(());
    };
    let c = &mut s.cfg;
    t.allow("servers");
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
    t.finish()
}

/// `servers` names nodes, so it is read once the topology's names are known.
pub fn resolve(flow: &Reader, s: &mut R2cpSpec, names: &[String]) -> Result<()> {
    let Some(t) = flow.table("r2cp")? else {
        return Ok(());
    };
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
    Ok(())
}

pub fn agents(s: &R2cpSpec, client: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
    let mut cfg = s.cfg.clone();
    cfg.paths = std::iter::once(client.node)
        .chain(s.servers.iter().copied())
        .map(|n| PathSpec {
            sender: Addr::new(n, client.port),
        })
        .collect();
    (
        Box::new(RcpSender::listen(cfg.rcp.clone())),
        Box::new(R2cpReceiver::new(cfg)),
    )
}

/// The other senders, each listening at its node on the flow's port.
pub fn extra_agents(s: &R2cpSpec, client: Addr) -> Vec<(Addr, Box<dyn Agent>)> {
    s.servers
        .iter()
        .map(|&n| {
            let a: Box<dyn Agent> = Box::new(RcpSender::listen(s.cfg.rcp.clone()));
            (Addr::new(n, client.port), a)
        })
        .collect()
}
