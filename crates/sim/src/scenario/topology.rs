//! `[topology]` and `[link]`: the nodes and links of a scenario.
//!
//! Every link is read through two layers: its own overrides (a
//! `[[topology.links]]` entry, or a dumbbell's `[topology.access]`,
//! `[topology.bottleneck]`, `[topology.last_hop]`) over the `[link]` defaults.

use std::path::Path;

use joulenet_channel::loss::LossSpec;
use joulenet_channel::radio::{serrano, RadioProfile};
use joulenet_proto::{Duration, NodeId};
use toml::{Table, Value};

use super::loss;
use super::reader::{Reader, Result};
use crate::link::{Arq, LinkParams};
use crate::spec::LinkSpec;

pub const KINDS: &[(&str, &str)] = &[
    ("two_nodes", "one link between node 0 and node 1"),
    ("chain", "`hops` links in a line: node 0 to node `hops`"),
    ("dumbbell", "`pairs` senders, a bottleneck between two routers, `pairs` receivers (optional wireless last hop)"),
    ("explicit", "`nodes` and a list of `[[topology.links]]` with `a` and `b`"),
    ("multihomed", "a mobile host `mh` with `interfaces` wireless links to access points `ap<i>`, each wired to its own server `srv<i>` (or, with `shared_server = true`, all to one server `srv`)"),
];

/// The nodes (by name) and links of a topology, and the flows it suggests
/// when the scenario names none: (from, to) pairs.
pub struct Topology {
    pub names: Vec<String>,
    pub links: Vec<LinkSpec>,
    pub default_flows: Vec<(NodeId, NodeId)>,
}

pub fn topology(root: &Reader, dir: &Path) -> Result<Topology> {
    let empty = Table::new();
    let t = root
        .table("topology")?
        .unwrap_or_else(|| Reader::new(&empty, "topology"));
    let link_defaults = root.table("link")?;
    let defaults = link_defaults.as_ref();
    let kind = t.str("kind")?.unwrap_or("two_nodes");
    let topo = match kind {
        "two_nodes" => {
            let l = link(None, defaults, 0, 1, dir, None)?;
            Topology {
                names: names(2),
                links: vec![l],
                default_flows: vec![(0, 1)],
            }
        }
        "chain" => {
            let hops = t.req("hops", t.int_in("hops", 1, 10_000))? as u32;
            let links = (0..hops)
                .map(|i| link(None, defaults, i, i + 1, dir, None))
                .collect::<Result<_>>()?;
            Topology {
                names: names(hops as usize + 1),
                links,
                default_flows: vec![(0, hops)],
            }
        }
        "dumbbell" => dumbbell(&t, defaults, dir)?,
        "explicit" => explicit(&t, defaults, dir)?,
        "multihomed" => multihomed(&t, defaults, dir)?,
        other => {
            let known: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
            return Err(t.error(
                "kind",
                format!("unknown topology \"{other}\" (known: {})", known.join(", ")),
            ));
        }
    };
    t.finish()?;
    if let Some(d) = defaults {
        d.finish()?;
    }
    Ok(topo)
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("n{i}")).collect()
}

fn dumbbell(t: &Reader, defaults: Option<&Reader>, dir: &Path) -> Result<Topology> {
    let pairs = t.req("pairs", t.int_in("pairs", 1, 10_000))? as u32;
    let (left, right) = (pairs, pairs + 1);
    let receiver = |i: u32| pairs + 2 + i;
    let access = t.table("access")?;
    let bottleneck = t.table("bottleneck")?;
    let last_hop = t.table("last_hop")?;
    let mut links = Vec::new();
    for i in 0..pairs {
        links.push(link(
            access.as_ref(),
            defaults,
            i,
            left,
            dir,
            Some("wired"),
        )?);
    }
    links.push(link(
        bottleneck.as_ref(),
        defaults,
        left,
        right,
        dir,
        Some("wired"),
    )?);
    for i in 0..pairs {
        links.push(link(
            last_hop.as_ref(),
            defaults,
            right,
            receiver(i),
            dir,
            Some("wired"),
        )?);
    }
    for r in [&access, &bottleneck, &last_hop].into_iter().flatten() {
        r.finish()?;
    }
    let mut names: Vec<String> = (0..pairs).map(|i| format!("s{i}")).collect();
    names.push("left".into());
    names.push("right".into());
    names.extend((0..pairs).map(|i| format!("r{i}")));
    Ok(Topology {
        names,
        links,
        default_flows: (0..pairs).map(|i| (i, receiver(i))).collect(),
    })
}

/// A multi-homed mobile host (node 0, `mh`): interface i is a link to
/// access point `ap<i>` (`[topology.interface<i>]` over `[link]`, wireless
/// by default), which is wired to server `srv<i>` (`[topology.backbone<i>]`
/// over `[link]`). Nodes: mh, ap0, srv0, ap1, srv1, … With `shared_server
/// = true` every access point is wired to one server instead (point-to-point
/// aggregation): nodes mh, ap0, ap1, …, srv.
/// Interfaces a multi-homed host may have (R²CP opens a pipe on each).
pub const MAX_INTERFACES: u64 = 64;

fn multihomed(t: &Reader, defaults: Option<&Reader>, dir: &Path) -> Result<Topology> {
    let n = t.int_in("interfaces", 1, MAX_INTERFACES)?.unwrap_or(2) as u32;
    let shared = t.bool("shared_server")?.unwrap_or(false);
    let mut names = vec!["mh".to_string()];
    let mut links = Vec::new();
    for i in 0..n {
        let (ap, srv) = if shared {
            (1 + i, 1 + n)
        } else {
            (1 + 2 * i, 2 + 2 * i)
        };
        names.push(format!("ap{i}"));
        if !shared {
            names.push(format!("srv{i}"));
        }
        let iface = t.table(&format!("interface{i}"))?;
        let backbone = t.table(&format!("backbone{i}"))?;
        links.push(link(
            iface.as_ref(),
            defaults,
            0,
            ap,
            dir,
            Some("wireless"),
        )?);
        links.push(link(
            backbone.as_ref(),
            defaults,
            ap,
            srv,
            dir,
            Some("wired"),
        )?);
        for r in [&iface, &backbone].into_iter().flatten() {
            r.finish()?;
        }
    }
    let server = if shared {
        names.push("srv".to_string());
        1 + n
    } else {
        2
    };
    Ok(Topology {
        names,
        links,
        default_flows: vec![(server, 0)],
    })
}

/// The largest node count an explicit topology may ask for: as many nodes
/// as the longest chain. Routes are kept as a node × node table, so a count
/// far beyond this would exhaust memory instead of being an error.
const MAX_EXPLICIT_NODES: i64 = 10_001;

fn explicit(t: &Reader, defaults: Option<&Reader>, dir: &Path) -> Result<Topology> {
    let names = match t.get("nodes") {
        Some(Value::Integer(n)) if *n > MAX_EXPLICIT_NODES => {
            return Err(t.error(
                "nodes",
                format!("at most {MAX_EXPLICIT_NODES} nodes, got {n}"),
            ))
        }
        Some(Value::Integer(n)) if *n >= 2 => names(*n as usize),
        Some(Value::Array(items)) if items.len() >= 2 => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| t.error("nodes", "node names must be strings"))
            })
            .collect::<Result<_>>()?,
        Some(_) => {
            return Err(t.error(
                "nodes",
                "expected a node count (at least 2) or a list of at least 2 names",
            ))
        }
        None => return Err(t.error("nodes", "required key is missing")),
    };
    let entries = t.tables("links")?;
    if entries.is_empty() {
        return Err(t.error(
            "links",
            "an explicit topology needs at least one [[topology.links]] entry",
        ));
    }
    let mut links = Vec::new();
    for (table, path) in entries {
        let r = Reader::layered(Some((table, path)), None);
        let a = node_ref(&r, "a", &names)?;
        let b = node_ref(&r, "b", &names)?;
        if a == b {
            return Err(r.error("b", "a link needs two different nodes"));
        }
        links.push(link(Some(&r), defaults, a, b, dir, None)?);
        r.finish()?;
    }
    let last = names.len() as NodeId - 1;
    Ok(Topology {
        names,
        links,
        default_flows: vec![(0, last)],
    })
}

pub use joulenet_registry::options::node_ref;

const LINK_KEYS: &[&str] = &[
    "rate",
    "delay",
    "queue",
    "overhead",
    "frame_time",
    "jitter",
    "medium",
    "radio",
    "arq",
    "loss",
    "loss_reverse",
    "down",
];

/// One link read through its overrides and the `[link]` defaults.
fn link(
    over: Option<&Reader>,
    defaults: Option<&Reader>,
    a: NodeId,
    b: NodeId,
    dir: &Path,
    medium_default: Option<&str>,
) -> Result<LinkSpec> {
    // Look each key up in the override first, then the defaults.
    let pick = |key: &str| -> Option<&Reader> {
        over.filter(|o| o.has(key))
            .or(defaults.filter(|d| d.has(key)))
    };
    for r in [over, defaults].into_iter().flatten() {
        for k in LINK_KEYS {
            r.allow(k);
        }
    }
    let rate = match pick("rate") {
        Some(r) => r.req("rate", r.rate("rate"))?,
        None => 10_000_000,
    };
    let delay = match pick("delay") {
        Some(r) => r.req("delay", r.duration("delay"))?,
        None => Duration::from_millis(10),
    };
    let queue = match pick("queue") {
        Some(r) => r.req("queue", r.int_in("queue", 1, 1_000_000))? as usize,
        None => 100,
    };
    let overhead = match pick("overhead") {
        Some(r) => r.req("overhead", r.int_in("overhead", 0, 65_535))? as u32,
        None => 0,
    };
    let frame_time = match pick("frame_time") {
        Some(r) => r.req("frame_time", r.duration("frame_time"))?,
        None => Duration::ZERO,
    };
    let jitter = match pick("jitter") {
        Some(r) => r.req("jitter", r.duration("jitter"))?,
        None => Duration::ZERO,
    };
    let medium = match pick("medium") {
        Some(r) => r.req("medium", r.str("medium"))?,
        None => medium_default.unwrap_or("wireless"),
    };
    let wireless = match medium {
        "wireless" => true,
        "wired" => false,
        other => {
            let r = pick("medium").expect("a value came from a reader");
            return Err(r.error(
                "medium",
                format!("expected \"wireless\" or \"wired\", got \"{other}\""),
            ));
        }
    };
    let radio = match (wireless, pick("radio")) {
        (false, Some(r)) => {
            return Err(r.error(
                "radio",
                "a wired link has no radio (set medium = \"wireless\")",
            ))
        }
        (false, None) => None,
        (true, Some(r)) => Some(radio(r, "radio")?),
        (true, None) => Some(RadioProfile::preset("ns3-wifi").expect("built-in preset")),
    };
    let arq = match pick("arq") {
        Some(r) => arq(r)?,
        None => None,
    };
    let loss = match pick("loss") {
        Some(r) => loss::loss(r, "loss", dir)?.unwrap_or(LossSpec::None),
        None => LossSpec::None,
    };
    let loss_reverse = match pick("loss_reverse") {
        Some(r) => loss::reverse(r, "loss_reverse", dir)?,
        None => crate::spec::ReverseLoss::SharedChannel,
    };
    let down = match pick("down") {
        Some(r) => {
            let entries = r.strings("down")?.unwrap_or_default();
            crate::link_schedule::Downtime::parse(&entries).map_err(|e| r.error("down", e))?
        }
        None => Default::default(),
    };
    Ok(LinkSpec {
        a,
        b,
        params: LinkParams {
            rate_bps: rate,
            delay,
            queue_limit: queue,
            overhead_bytes: overhead,
            frame_time,
            jitter,
            arq,
            down,
        },
        radio,
        loss,
        loss_reverse,
    })
}

/// `radio = "wavelan"` or `radio = { preset = "wavelan", idle = "1.2W" }` or a
/// full table of powers.
pub fn radio(r: &Reader, key: &str) -> Result<RadioProfile> {
    let unknown = |name: &str| {
        r.error(
            key,
            format!(
                "unknown radio preset \"{name}\" (known: {})",
                RadioProfile::preset_names().join(", ")
            ),
        )
    };
    match r.get(key) {
        Some(Value::String(name)) if serrano::device(name).is_some() => Err(r.error(
            key,
            format!(
                "\"{name}\" was measured at several operating points: give one, \
                 {{ preset = \"{name}\", mcs_mbps = 24, txp_dbm = 15 }}"
            ),
        )),
        Some(Value::String(name)) => RadioProfile::preset(name).ok_or_else(|| unknown(name)),
        Some(Value::Table(_)) => {
            let t = r.table(key)?.expect("checked to be a table");
            let mut p = match t.str("preset")? {
                Some(name) if serrano::device(name).is_some() => serrano_radio(&t, name)?,
                Some(name) => RadioProfile::preset(name).ok_or_else(|| unknown(name))?,
                None => RadioProfile {
                    name: "custom".into(),
                    tx_w: t.req("tx", t.power("tx"))?,
                    rx_w: t.req("rx", t.power("rx"))?,
                    idle_w: t.req("idle", t.power("idle"))?,
                    sleep_w: t.req("sleep", t.power("sleep"))?,
                    off_w: 0.0,
                    sleep_to_idle: Duration::ZERO,
                    off_to_on: Duration::ZERO,
                    transition_w: 0.0,
                },
            };
            let custom = t.str("preset")?.is_none();
            p.tx_w = t.power("tx")?.unwrap_or(p.tx_w);
            p.rx_w = t.power("rx")?.unwrap_or(p.rx_w);
            p.idle_w = t.power("idle")?.unwrap_or(p.idle_w);
            p.sleep_w = t.power("sleep")?.unwrap_or(p.sleep_w);
            p.off_w = t.power("off")?.unwrap_or(p.off_w);
            p.sleep_to_idle = t.duration("sleep_to_idle")?.unwrap_or(p.sleep_to_idle);
            p.off_to_on = t.duration("off_to_on")?.unwrap_or(p.off_to_on);
            p.transition_w =
                t.power("transition")?
                    .unwrap_or(if custom { p.idle_w } else { p.transition_w });
            if let Some(name) = t.str("name")? {
                p.name = name.to_string();
            }
            t.finish()?;
            p.validate().map_err(|e| r.error(key, e.to_string()))?;
            Ok(p)
        }
        Some(_) => Err(r.error(key, "expected a preset name or a table of powers")),
        None => Err(r.error(key, "required key is missing")),
    }
}

/// A device Serrano et al. measured, at the rate (`mcs_mbps`) and transmit
/// power (`txp_dbm`) of one of their measurements.
fn serrano_radio(t: &Reader, name: &str) -> Result<RadioProfile> {
    let device = serrano::device(name).expect("checked by the caller");
    let list = |v: Vec<u32>| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mcs = t.req("mcs_mbps", t.u64("mcs_mbps"))?;
    let rates = device.rates_mbps();
    if !rates.iter().any(|&m| u64::from(m) == mcs) {
        return Err(t.error(
            "mcs_mbps",
            format!("{name} was measured at {} Mbit/s only", list(rates)),
        ));
    }
    let txp = t.req("txp_dbm", t.u64("txp_dbm"))?;
    let powers = device.powers_dbm(mcs as u32);
    u32::try_from(txp)
        .ok()
        .and_then(|p| device.profile(mcs as u32, p))
        .ok_or_else(|| {
            t.error(
                "txp_dbm",
                format!("{name} was measured at {} dBm only", list(powers)),
            )
        })
}

/// `arq = 3` (retries) or `arq = { retries = 3, ack_bytes = 14, sifs = "10us" }`.
/// Zero retries as a number means no ARQ; as a table it means link ACKs
/// without retransmission.
fn arq(r: &Reader) -> Result<Option<Arq>> {
    const ACK_BYTES: u64 = 14;
    let sifs = Duration::from_micros(10);
    match r.get("arq") {
        None | Some(Value::Boolean(false)) => Ok(None),
        Some(Value::Integer(_)) => {
            let retries = r.req("arq", r.int_in("arq", 0, 254))?;
            Ok((retries > 0).then(|| Arq {
                max_attempts: retries as u8 + 1,
                ack_bytes: ACK_BYTES as u32,
                sifs,
            }))
        }
        Some(Value::Table(_)) => {
            let t = r.table("arq")?.expect("checked to be a table");
            let retries = t.req("retries", t.int_in("retries", 0, 254))?;
            let ack_bytes = t.int_in("ack_bytes", 1, 65_535)?.unwrap_or(ACK_BYTES) as u32;
            let sifs = t.duration("sifs")?.unwrap_or(sifs);
            t.finish()?;
            Ok(Some(Arq {
                max_attempts: retries as u8 + 1,
                ack_bytes,
                sifs,
            }))
        }
        Some(_) => Err(r.error(
            "arq",
            "expected a retry count or a table { retries, ack_bytes, sifs }",
        )),
    }
}
