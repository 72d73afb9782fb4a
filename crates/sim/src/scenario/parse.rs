//! From a scenario table to a validated [`Spec`].

use std::path::Path;

use joulenet_proto::{AccessClass, Duration, NodeId};
use toml::Table;

use super::reader::{Reader, Result};
use super::topology::{node_ref, topology, Topology};
use super::ScenarioError;
use crate::app::AppSpec;
use crate::medium::MediumSpec;
use crate::protocols::ProtocolSpec;
use crate::spec::{FlowSpec, LinkSpec, NodeSpec, OutputSpec, Spec};
use joulenet_registry::Placement;

pub fn spec(table: &Table, default_name: &str, dir: &Path) -> Result<Spec> {
    let root = Reader::new(table, "");
    let name = root.str("name")?.unwrap_or(default_name).to_string();
    let description = root.str("description")?.unwrap_or_default().to_string();
    root.u64("seed")?;
    let stop = root.duration("stop")?;
    if stop.is_some_and(|d| d.0 == 0) {
        return Err(root.error("stop", "must be positive"));
    }
    let (
        Topology {
            names,
            links,
            default_flows,
        },
        medium,
    ) = match root.table("medium")? {
        Some(m) => {
            let (t, spec) = super::medium::topology(&root, &m)?;
            (t, Some(spec))
        }
        None => (topology(&root, dir)?, None),
    };
    let mut nodes: Vec<NodeSpec> = names
        .iter()
        .map(|n| NodeSpec {
            name: n.clone(),
            battery: None,
        })
        .collect();
    super::energy::batteries(&root, &names, &mut nodes)?;
    let energy = super::energy::energy(&root)?;
    let flows = flows(&root, &names, &links, &default_flows, medium.as_ref())?;
    let output = output(&root)?;
    root.finish()?;
    let spec = Spec {
        name,
        description,
        nodes,
        links,
        flows,
        energy_policy: energy.policy,
        frame_model: energy.frames,
        dead_fraction: energy.dead_fraction,
        stop,
        output,
        medium,
    };
    check_routes(&spec)?;
    check_termination(&spec, table.contains_key("flows"))?;
    Ok(spec)
}

fn output(root: &Reader) -> Result<OutputSpec> {
    let Some(o) = root.table("output")? else {
        return Ok(OutputSpec::default());
    };
    let mut out = OutputSpec::default();
    if let Some(series) = o.strings("series")? {
        out.series = series;
    }
    if let Some(interval) = o.duration("series_interval")? {
        if interval < Duration::from_micros(1) {
            return Err(o.error("series_interval", "must be at least 1 us"));
        }
        out.series_interval = interval;
    }
    out.pcap = o.bool("pcap")?.unwrap_or(false);
    o.finish()?;
    Ok(out)
}

fn flows(
    root: &Reader,
    names: &[String],
    links: &[LinkSpec],
    defaults: &[(NodeId, NodeId)],
    medium: Option<&MediumSpec>,
) -> Result<Vec<FlowSpec>> {
    let base = match root.get("flow") {
        None => None,
        Some(toml::Value::Table(t)) => Some((t, "flow".to_string())),
        Some(_) => return Err(root.error("flow", "expected a table of flow defaults")),
    };
    let base_layer = || base.clone();
    let entries = root.tables("flows")?;
    let mut flows = Vec::new();
    if entries.is_empty() {
        for (i, &(from, to)) in defaults.iter().enumerate() {
            let r = Reader::layered(None, base_layer());
            flows.push(flow(&r, i, names, links, (from, to), medium)?);
            r.finish()?;
        }
    } else {
        let (from, to) = defaults[0];
        for (i, (table, path)) in entries.into_iter().enumerate() {
            let r = Reader::layered(Some((table, path)), base_layer());
            let f = flow(&r, i, names, links, (from, to), medium)?;
            r.finish()?;
            check_ports(&r, &flows, &f, names)?;
            flows.push(f);
        }
    }
    Ok(flows)
}

/// R²CP `paths` bind senders on the flow's port + 1, + 2, …: another flow
/// bound at one of those addresses would take its packets.
fn check_ports(r: &Reader, earlier: &[FlowSpec], f: &FlowSpec, names: &[String]) -> Result<()> {
    let addrs = |f: &FlowSpec| {
        let client = joulenet_proto::Addr::new(f.from, f.port);
        let mut a = vec![client, joulenet_proto::Addr::new(f.to, f.port)];
        a.extend(f.protocol.extra_addrs(client));
        a
    };
    let mine = addrs(f);
    for (j, g) in earlier.iter().enumerate() {
        let theirs = addrs(g);
        if mine.len() == 2 && theirs.len() == 2 {
            continue;
        }
        if let Some(a) = mine.iter().find(|a| theirs.contains(a)) {
            return Err(r.error(
                "port",
                format!(
                    "port {} at {} is also used by flows[{j}] (R²CP paths use the flow's port + 1, + 2, …)",
                    a.port, names[a.node as usize]
                ),
            ));
        }
    }
    Ok(())
}

const FLOW_KEYS: &[&str] = &[
    "label",
    "protocol",
    "from",
    "to",
    "port",
    "start",
    "stop",
    "app",
    "bytes",
    "rate",
    "message",
    "mean_interval",
    "mean_on",
    "mean_off",
    "shape",
    "background",
    "access_category",
];

fn flow(
    r: &Reader,
    index: usize,
    names: &[String],
    links: &[LinkSpec],
    default: (NodeId, NodeId),
    medium: Option<&MediumSpec>,
) -> Result<FlowSpec> {
    let protocol_name = r.str("protocol")?.unwrap_or("newreno");
    let mut protocol = ProtocolSpec::named(protocol_name).ok_or_else(|| {
        let known: Vec<&str> = crate::protocols::entries().map(|e| e.name).collect();
        r.error(
            "protocol",
            format!(
                "unknown protocol \"{protocol_name}\" (known: {})",
                known.join(", ")
            ),
        )
    })?;
    protocol.configure(r, names)?;
    let from = if r.has("from") {
        node_ref(r, "from", names)?
    } else {
        default.0
    };
    let to = if r.has("to") {
        node_ref(r, "to", names)?
    } else {
        default.1
    };
    if from == to {
        return Err(r.error("to", "a flow needs two different nodes"));
    }
    let port = r.int_in("port", 1, 65_535)?.unwrap_or(5000 + index as u64) as u16;
    let links: Vec<(NodeId, NodeId)> = links.iter().map(|l| (l.a, l.b)).collect();
    protocol.check_placement(
        r,
        &Placement {
            from,
            to,
            port,
            links: &links,
            names,
        },
    )?;
    let start = r.duration("start")?.unwrap_or(Duration::ZERO);
    let stop = r.duration("stop")?;
    if let Some(stop) = stop {
        if stop <= start {
            return Err(r.error("stop", "must be after the flow's start"));
        }
    }
    let app = app(r)?;
    let background = r.bool("background")?.unwrap_or(protocol.is_datagram());
    let access_class = access_category(r, medium)?;
    let label = r
        .str("label")?
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}-{index}", protocol.name()));
    // Defaults in [flow] may serve other applications than this flow's.
    for k in FLOW_KEYS
        .iter()
        .copied()
        .chain(joulenet_registry::option_tables())
    {
        r.allow(k);
    }
    Ok(FlowSpec {
        label,
        protocol,
        from,
        to,
        port,
        start,
        stop,
        app,
        background,
        access_class,
    })
}

/// `access_category`: the flow's 802.11e category on an EDCA medium.
fn access_category(r: &Reader, medium: Option<&MediumSpec>) -> Result<Option<AccessClass>> {
    let Some(name) = r.str("access_category")? else {
        return Ok(None);
    };
    let ac = match name {
        "voice" | "vo" => AccessClass::Voice,
        "video" | "vi" => AccessClass::Video,
        "best_effort" | "be" => AccessClass::BestEffort,
        "background" | "bk" => AccessClass::Background,
        other => {
            return Err(r.error(
                "access_category",
                format!(
                    "unknown access category \"{other}\" (known: voice, video, best_effort, background)"
                ),
            ))
        }
    };
    match medium {
        None => Err(r.error(
            "access_category",
            "access categories are a shared [medium]'s (point-to-point links have one queue)",
        )),
        Some(m) if !m.edca => Err(r.error(
            "access_category",
            "needs `edca = true` in [medium] (plain DCF has one category)",
        )),
        Some(_) => Ok(Some(ac)),
    }
}

fn app(r: &Reader) -> Result<AppSpec> {
    let kind = r.str("app")?.unwrap_or("bulk");
    let positive_rate = |key: &str| r.req(key, r.rate(key));
    let message = || -> Result<u32> {
        let m = r.size("message")?.unwrap_or(1000);
        if m == 0 || m > 65_000 {
            return Err(r.error(
                "message",
                format!("must be between 1 and 65000 bytes, got {m}"),
            ));
        }
        Ok(m as u32)
    };
    let positive = |key: &str, d: Option<Duration>| -> Result<Option<Duration>> {
        match d {
            Some(d) if d.0 == 0 => Err(r.error(key, "must be positive")),
            d => Ok(d),
        }
    };
    Ok(match kind {
        "bulk" => {
            let bytes = r.size("bytes")?.unwrap_or(1_000_000);
            if bytes == 0 {
                return Err(r.error("bytes", "a bulk transfer needs at least one byte"));
            }
            AppSpec::Bulk { bytes }
        }
        "backlogged" => AppSpec::Backlogged,
        "cbr" => AppSpec::Cbr {
            rate_bps: positive_rate("rate")?,
            message: message()?,
        },
        "poisson" => AppSpec::Poisson {
            mean_interval: r.req(
                "mean_interval",
                positive("mean_interval", r.duration("mean_interval")?),
            )?,
            message: message()?,
        },
        "pareto" => {
            let shape = r.f64("shape")?.unwrap_or(1.5);
            if shape <= 1.0 {
                return Err(r.error(
                    "shape",
                    format!("must be greater than 1 for a finite mean, got {shape}"),
                ));
            }
            AppSpec::ParetoOnOff {
                rate_bps: positive_rate("rate")?,
                message: message()?,
                mean_on: r.req("mean_on", positive("mean_on", r.duration("mean_on")?))?,
                mean_off: r.req("mean_off", positive("mean_off", r.duration("mean_off")?))?,
                shape,
            }
        }
        other => {
            return Err(r.error(
                "app",
                format!(
                "unknown application \"{other}\" (known: bulk, backlogged, cbr, poisson, pareto)"
            ),
            ))
        }
    })
}

/// Every flow's endpoints must be connected.
fn check_routes(spec: &Spec) -> Result<()> {
    let n = spec.nodes.len();
    let mut adj = vec![Vec::new(); n];
    if let Some(m) = &spec.medium {
        for (a, list) in m.adjacency().into_iter().enumerate() {
            adj[a].extend(list.into_iter().map(|b| b as usize));
        }
    }
    for l in &spec.links {
        adj[l.a as usize].push(l.b as usize);
        adj[l.b as usize].push(l.a as usize);
    }
    // Neighbourhood is symmetric (links and radio range both ways), so a
    // path exists exactly within a connected component: label them once
    // rather than search the network again for every flow.
    let mut component = vec![usize::MAX; n];
    for start in 0..n {
        if component[start] != usize::MAX {
            continue;
        }
        let mut stack = vec![start];
        while let Some(u) = stack.pop() {
            if component[u] == usize::MAX {
                component[u] = start;
                stack.extend(adj[u].iter().copied());
            }
        }
    }
    for (i, f) in spec.flows.iter().enumerate() {
        if component[f.from as usize] != component[f.to as usize] {
            return Err(ScenarioError::new(
                format!("flows[{i}].to"),
                format!(
                    "no path from {} to {}",
                    spec.nodes[f.from as usize].name, spec.nodes[f.to as usize].name
                ),
            ));
        }
    }
    Ok(())
}

/// A run must be able to end: measured flows with endless applications need
/// a stop time, and so do scenarios with only background flows.
fn check_termination(spec: &Spec, table_has_flows: bool) -> Result<()> {
    if spec.stop.is_some() {
        return Ok(());
    }
    for (i, f) in spec.flows.iter().enumerate() {
        if !f.background && f.app.total_bytes().is_none() && f.stop.is_none() {
            let key = if table_has_flows {
                format!("flows[{i}].stop")
            } else {
                "flow.stop".to_string()
            };
            return Err(ScenarioError::new(
                key,
                format!("a {} flow never ends by itself: give the flow a `stop` or the scenario a `stop`", f.app.name()),
            ));
        }
    }
    if spec.flows.iter().all(|f| f.background) {
        return Err(ScenarioError::new(
            "stop",
            "every flow is background traffic: give the scenario a `stop` time",
        ));
    }
    Ok(())
}
