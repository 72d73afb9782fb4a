//! `[medium]` and the positioned topologies of a shared wireless medium
//! (`chain`, `grid`, `random`, `cells`, `explicit` with `positions`).

use joulenet_channel::radio::RadioProfile;
use joulenet_proto::{Duration, NodeId};
use rand::Rng;
use toml::{Table, Value};

use super::reader::{Reader, Result};
use super::topology::{node_ref, radio, Topology};
use crate::medium::{
    phy, rate_control::RateControl, Fading, MacKind, MediumSpec, Metric, Mobility, Outage, Phy,
    Reception, Routing, MAX_NODES,
};
use crate::rng::Streams;

pub const KINDS: &[(&str, &str)] = &[
    (
        "chain",
        "`hops` + 1 nodes on a line, `spacing` metres apart",
    ),
    ("grid", "`rows` × `cols` nodes, `spacing` metres apart"),
    (
        "random",
        "`nodes` placed uniformly in a `field` [w, h] with `seed`, connected",
    ),
    (
        "cells",
        "an access point (node 0) and `stations` on a circle of `radius`",
    ),
    ("explicit", "`positions` = [[x, y], ...] (optional `names`)"),
];

/// Positions, optional names, default flows.
type Placement = (Vec<(f64, f64)>, Option<Vec<String>>, Vec<(NodeId, NodeId)>);

/// Read `[topology]` as positions and `[medium]` as the medium's model.
pub fn topology(root: &Reader, m: &Reader) -> Result<(Topology, MediumSpec)> {
    let mut spec = medium(m)?;
    let empty = Table::new();
    let t = root
        .table("topology")?
        .unwrap_or_else(|| Reader::new(&empty, "topology"));
    let kind = t.str("kind")?.unwrap_or("chain");
    let spacing = |default: f64| -> Result<f64> { positive(&t, "spacing", default) };
    let (positions, names, default_flows): Placement = match kind {
        "chain" => {
            let hops = t.req("hops", t.int_in("hops", 1, MAX_NODES as u64 - 1))? as usize;
            let d = spacing(200.0)?;
            let pos = (0..=hops).map(|i| (i as f64 * d, 0.0)).collect();
            (pos, None, vec![(0, hops as NodeId)])
        }
        "grid" => {
            let rows = t.req("rows", t.int_in("rows", 1, MAX_NODES as u64))? as usize;
            let cols = t.req("cols", t.int_in("cols", 1, MAX_NODES as u64))? as usize;
            if rows * cols < 2 || rows * cols > MAX_NODES {
                return Err(t.error(
                    "cols",
                    format!("a grid needs between 2 and {MAX_NODES} nodes"),
                ));
            }
            let d = spacing(200.0)?;
            let pos = (0..rows * cols)
                .map(|i| ((i % cols) as f64 * d, (i / cols) as f64 * d))
                .collect();
            (pos, None, vec![(0, (rows * cols - 1) as NodeId)])
        }
        "random" => {
            let n = t.req("nodes", t.int_in("nodes", 2, MAX_NODES as u64))? as usize;
            let (w, h) = field(&t)?;
            let seed = t.u64("seed")?.unwrap_or(1);
            let pos = random_connected(&mut spec, n, (w, h), seed)
                    .ok_or_else(|| {
                        t.error(
                            "field",
                            format!(
                                "no connected placement of {n} nodes in {w} × {h} m with range {} m after 1000 tries: shrink the field or add nodes",
                                spec.range
                            ),
                        )
                    })?;
            (pos, None, vec![(0, n as NodeId - 1)])
        }
        "cells" => {
            let k = t.req("stations", t.int_in("stations", 1, MAX_NODES as u64 - 1))? as usize;
            let radius = positive(&t, "radius", 100.0)?;
            let mut pos = vec![(0.0, 0.0)];
            for i in 0..k {
                let a = 2.0 * std::f64::consts::PI * i as f64 / k as f64;
                pos.push((radius * a.cos(), radius * a.sin()));
            }
            let mut names = vec!["ap".to_string()];
            names.extend((1..=k).map(|i| format!("sta{i}")));
            (
                pos,
                Some(names),
                (1..=k as NodeId).map(|i| (i, 0)).collect(),
            )
        }
        "explicit" => {
            let pos = positions(&t)?;
            let names = t.strings("names")?;
            if let Some(ns) = &names {
                if ns.len() != pos.len() {
                    return Err(t.error(
                        "names",
                        format!("{} names for {} positions", ns.len(), pos.len()),
                    ));
                }
            }
            let last = pos.len() as NodeId - 1;
            (pos, names, vec![(0, last)])
        }
        other => {
            let known: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
            return Err(t.error(
                "kind",
                format!(
                    "unknown topology \"{other}\" on a shared medium (known: {})",
                    known.join(", ")
                ),
            ));
        }
    };
    t.finish()?;
    spec.positions = positions;
    let names =
        names.unwrap_or_else(|| (0..spec.positions.len()).map(|i| format!("n{i}")).collect());
    per_overrides(m, &names, &mut spec)?;
    spec.outages = outages(m, &names)?;
    spec.mobility = mobility(m, &names, &spec.positions)?;
    m.finish()?;
    Ok((
        Topology {
            names,
            links: Vec::new(),
            default_flows,
        },
        spec,
    ))
}

fn positive(r: &Reader, key: &str, default: f64) -> Result<f64> {
    let v = r.f64(key)?.unwrap_or(default);
    if !(v.is_finite() && v > 0.0) {
        return Err(r.error(key, format!("must be a positive number of metres, got {v}")));
    }
    Ok(v)
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    }
}

fn field(t: &Reader) -> Result<(f64, f64)> {
    match t.get("field") {
        None => Ok((100.0, 100.0)),
        Some(Value::Array(a)) if a.len() == 2 => match (number(&a[0]), number(&a[1])) {
            (Some(w), Some(h)) if w > 0.0 && h > 0.0 => Ok((w, h)),
            _ => Err(t.error("field", "expected [width, height] in positive metres")),
        },
        Some(v) => match number(v) {
            Some(s) if s > 0.0 => Ok((s, s)),
            _ => Err(t.error("field", "expected a side or [width, height] in metres")),
        },
    }
}

fn positions(t: &Reader) -> Result<Vec<(f64, f64)>> {
    let bad = || {
        t.error(
            "positions",
            "expected a list of at least 2 [x, y] pairs in metres",
        )
    };
    let Some(Value::Array(items)) = t.get("positions") else {
        return Err(if t.has("positions") {
            bad()
        } else {
            t.error("positions", "required key is missing")
        });
    };
    if items.len() < 2 || items.len() > MAX_NODES {
        return Err(t.error(
            "positions",
            format!("between 2 and {MAX_NODES} nodes, got {}", items.len()),
        ));
    }
    items
        .iter()
        .map(|p| match p {
            Value::Array(xy) if xy.len() == 2 => match (number(&xy[0]), number(&xy[1])) {
                (Some(x), Some(y)) => Ok((x, y)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        })
        .collect()
}

/// Uniform placements until one is connected (hop by hop, PER < 1).
fn random_connected(
    spec: &mut MediumSpec,
    n: usize,
    (w, h): (f64, f64),
    seed: u64,
) -> Option<Vec<(f64, f64)>> {
    let mut rng = Streams::new(seed).stream("topology/random");
    for _ in 0..1000 {
        spec.positions = (0..n)
            .map(|_| (rng.random::<f64>() * w, rng.random::<f64>() * h))
            .collect();
        let adj = spec.adjacency();
        let mut seen = vec![false; n];
        let mut stack = vec![0usize];
        while let Some(u) = stack.pop() {
            if !std::mem::replace(&mut seen[u], true) {
                stack.extend(adj[u].iter().map(|&v| v as usize));
            }
        }
        if seen.iter().all(|&s| s) {
            return Some(std::mem::take(&mut spec.positions));
        }
    }
    None
}

fn per_overrides(m: &Reader, names: &[String], spec: &mut MediumSpec) -> Result<()> {
    for (table, path) in m.tables("links")? {
        let r = Reader::new(table, &path);
        let a = node_ref(&r, "a", names)?;
        let b = node_ref(&r, "b", names)?;
        if a == b {
            return Err(r.error("b", "a link needs two different nodes"));
        }
        let per = r.req("per", r.probability("per"))?;
        r.finish()?;
        spec.per_overrides.push((a, b, per));
    }
    Ok(())
}

/// The rate of control responses (ACK, CTS) and RTS from a basic-rate
/// set: the highest basic rate not above the data rate (IEEE 802.11-2016
/// §10.6.6.5).
fn control_rate(m: &Reader, rates: &[String], data_rate: u64) -> Result<u64> {
    let mut best = None;
    for r in rates {
        let bps = joulenet_channel::units::parse_rate(r)
            .ok()
            .filter(|&b| b >= 1)
            .ok_or_else(|| m.error("basic_rates", format!("\"{r}\" is not a rate")))?;
        if bps <= data_rate {
            best = best.max(Some(bps));
        }
    }
    best.ok_or_else(|| {
        m.error(
            "basic_rates",
            format!("needs a rate at or below the data rate ({data_rate} bit/s)"),
        )
    })
}

fn medium(m: &Reader) -> Result<MediumSpec> {
    let mac = match m.str("mac")?.unwrap_or("csma") {
        "csma" => MacKind::Csma,
        "tdma" => MacKind::Tdma,
        other => {
            return Err(m.error(
                "mac",
                format!("unknown MAC \"{other}\" (known: csma, tdma)"),
            ))
        }
    };
    let standard = m.str("standard")?.unwrap_or("802.11b");
    let short = match m.str("preamble")?.unwrap_or("long") {
        "long" => false,
        "short" => true,
        other => {
            return Err(m.error(
                "preamble",
                format!("expected \"long\" or \"short\", got \"{other}\""),
            ))
        }
    };
    let mut phy = Phy::preset(standard, short).ok_or_else(|| {
        m.error(
            "standard",
            format!(
                "unknown standard \"{standard}\" (known: {})",
                phy::STANDARDS.join(", ")
            ),
        )
    })?;
    if let Some(rate) = m.rate("rate")? {
        phy.rate_bps = rate;
        phy.basic_rate_bps = phy.basic_rate_bps.min(rate);
    }
    if let Some(rates) = m.strings("basic_rates")? {
        phy.basic_rate_bps = control_rate(m, &rates, phy.rate_bps)?;
    }
    let range = positive(m, "range", 250.0)?;
    let cs_range = positive(m, "carrier_sense_range", 2.2 * range)?;
    let interference_range = positive(m, "interference_range", cs_range.max(range))?;
    if interference_range < range {
        return Err(m.error(
            "interference_range",
            format!("must be at least the range ({range} m)"),
        ));
    }
    let reception = reception(m)?;
    let propagation_delay = m.bool("propagation_delay")?.unwrap_or(false);
    let capture_db = match m.f64("capture_threshold_db")? {
        None => None,
        Some(db) if db.is_finite() && db >= 0.0 => Some(db),
        Some(db) => {
            return Err(m.error(
                "capture_threshold_db",
                format!("must be a non-negative number of dB, got {db}"),
            ))
        }
    };
    let retry_limit = m.int_in("retry_limit", 0, 254)?.unwrap_or(7) as u8;
    let rts_threshold = match m.get("rts_threshold") {
        None => None,
        Some(Value::Boolean(false)) => None,
        Some(Value::Boolean(true)) => Some(0),
        Some(_) => Some(m.req("rts_threshold", m.int_in("rts_threshold", 0, 65_535))? as u32),
    };
    let queue_limit = m.int_in("queue", 1, 1_000_000)?.unwrap_or(50) as usize;
    let edca = m.bool("edca")?.unwrap_or(false);
    let txop = m.duration("txop")?.unwrap_or(Duration::ZERO);
    let tdma_slots = match m.int_in("tdma_slots", 1, 65_536)? {
        Some(_) if mac != MacKind::Tdma => {
            return Err(m.error("tdma_slots", "only meaningful with mac = \"tdma\""))
        }
        slots => slots.unwrap_or(0) as u32,
    };
    let rate_control = match m.str("rate_control")?.unwrap_or("fixed") {
        "fixed" => RateControl::Fixed,
        "samplerate" if mac == MacKind::Tdma => return Err(m.error(
            "rate_control",
            "\"samplerate\" needs mac = \"csma\" (TDMA slots are sized for the configured rate)",
        )),
        "samplerate" => RateControl::SampleRate,
        other => {
            return Err(m.error(
                "rate_control",
                format!("expected \"fixed\" or \"samplerate\", got \"{other}\""),
            ))
        }
    };
    let radio = if m.has("radio") {
        radio(m, "radio")?
    } else {
        RadioProfile::preset("80211b").expect("built-in preset")
    };
    let (metric, routing) = match m.str("routing")?.unwrap_or("hops") {
        "hops" => (Metric::Hops, Routing::Static),
        "etx" => (Metric::Etx, Routing::Static),
        "dtn" => (Metric::Hops, Routing::Dtn),
        "link_state" => (
            Metric::Etx,
            Routing::LinkState {
                interval: positive_duration(m, "routing_interval", Some(Duration::from_secs(5)))?,
                min_samples: m.int_in("routing_min_samples", 1, 1_000_000)?.unwrap_or(20),
                over_air: match m
                    .str("routing_updates")?
                    .unwrap_or(if mac == MacKind::Tdma { "instant" } else { "air" })
                {
                    "air" if mac == MacKind::Tdma => {
                        return Err(m.error(
                            "routing_updates",
                            "advertisements over the air need mac = \"csma\" (TDMA slots are per link, radios asleep outside them: no broadcast)",
                        ))
                    }
                    "air" => true,
                    "instant" => false,
                    other => {
                        return Err(m.error(
                            "routing_updates",
                            format!("expected \"air\" or \"instant\", got \"{other}\""),
                        ))
                    }
                },
            },
        ),
        other => {
            return Err(m.error(
                "routing",
                format!("expected \"hops\", \"etx\", \"dtn\" or \"link_state\", got \"{other}\""),
            ))
        }
    };
    m.allow("links");
    m.allow("outages");
    m.allow("mobility");
    Ok(MediumSpec {
        positions: Vec::new(),
        mac,
        range,
        cs_range,
        interference_range,
        reception,
        propagation_delay,
        capture_db,
        per_overrides: Vec::new(),
        phy,
        retry_limit,
        rts_threshold,
        queue_limit,
        edca,
        txop,
        tdma_slots,
        rate_control,
        radio,
        metric,
        routing,
        outages: Vec::new(),
        fading: fading(m, &reception)?,
        mobility: None,
    })
}

fn reception(m: &Reader) -> Result<Reception> {
    match m.get("reception") {
        None => Ok(Reception::Disc),
        Some(Value::String(s)) if s == "disc" => Ok(Reception::Disc),
        Some(Value::String(s)) if s == "log_distance" => Ok(Reception::LogDistance {
            exponent: 3.0,
            snr_at_range_db: 3.0,
            snr50_db: 4.0,
            width_db: 1.0,
        }),
        Some(Value::Table(_)) => {
            let r = m.table("reception")?.expect("checked to be a table");
            let f = |key: &str, default: f64| -> Result<f64> {
                let v = r.f64(key)?.unwrap_or(default);
                if !v.is_finite() {
                    return Err(r.error(key, "must be a finite number"));
                }
                Ok(v)
            };
            let model = r.str("model")?.unwrap_or("log_distance");
            if model != "log_distance" {
                return Err(r.error(
                    "model",
                    format!("expected \"log_distance\", got \"{model}\""),
                ));
            }
            let exponent = f("exponent", 3.0)?;
            let width_db = f("width_db", 1.0)?;
            if exponent <= 0.0 {
                return Err(r.error("exponent", "must be positive"));
            }
            if width_db <= 0.0 {
                return Err(r.error("width_db", "must be positive"));
            }
            let rec = Reception::LogDistance {
                exponent,
                snr_at_range_db: f("snr_at_range_db", 3.0)?,
                snr50_db: f("snr50_db", 4.0)?,
                width_db,
            };
            r.finish()?;
            Ok(rec)
        }
        Some(_) => Err(m.error(
            "reception",
            "expected \"disc\", \"log_distance\" or a table { exponent, snr_at_range_db, snr50_db, width_db }",
        )),
    }
}

fn positive_duration(r: &Reader, key: &str, default: Option<Duration>) -> Result<Duration> {
    let d = match (r.duration(key)?, default) {
        (Some(d), _) | (None, Some(d)) => d,
        (None, None) => return Err(r.error(key, "required key is missing")),
    };
    if d.0 == 0 {
        return Err(r.error(key, "must be positive"));
    }
    Ok(d)
}

/// `[[medium.outages]]`: node, start, duration, optional period.
fn outages(m: &Reader, names: &[String]) -> Result<Vec<Outage>> {
    let mut out = Vec::new();
    for (table, path) in m.tables("outages")? {
        let r = Reader::new(table, &path);
        let node = node_ref(&r, "node", names)?;
        let start = r.duration("start")?.unwrap_or(Duration::ZERO);
        let duration = positive_duration(&r, "duration", None)?;
        let period = r.duration("period")?;
        if let Some(p) = period {
            if p <= duration {
                return Err(r.error("period", "must be longer than the outage's duration"));
            }
        }
        r.finish()?;
        out.push(Outage {
            node,
            start,
            duration,
            period,
        });
    }
    Ok(out)
}

/// `[medium.fading]`: good/bad path-loss states per link.
fn fading(m: &Reader, reception: &Reception) -> Result<Option<Fading>> {
    let Some(f) = m.table("fading")? else {
        return Ok(None);
    };
    if *reception == Reception::Disc {
        return Err(m.error(
            "fading",
            "needs a path-loss reception model (reception = \"log_distance\" or a table)",
        ));
    }
    let mean_bad = positive_duration(&f, "mean_bad", Some(Duration::from_secs(3)))?;
    let mean_good = positive_duration(&f, "mean_good", Some(Duration::from_secs(27)))?;
    let extra_loss_db = f.f64("extra_loss_db")?.unwrap_or(10.0);
    if !(extra_loss_db.is_finite() && extra_loss_db >= 0.0) {
        return Err(f.error("extra_loss_db", "must be a non-negative number of dB"));
    }
    f.finish()?;
    Ok(Some(Fading {
        mean_good,
        mean_bad,
        extra_loss_db,
    }))
}

/// `[medium.mobility]`: random waypoint.
fn mobility(m: &Reader, names: &[String], positions: &[(f64, f64)]) -> Result<Option<Mobility>> {
    let Some(t) = m.table("mobility")? else {
        return Ok(None);
    };
    let model = t.str("model")?.unwrap_or("random_waypoint");
    if model != "random_waypoint" {
        return Err(t.error(
            "model",
            format!("unknown mobility model \"{model}\" (known: random_waypoint)"),
        ));
    }
    let speed = match t.get("speed") {
        None => (1.0, 1.0),
        Some(Value::Array(a)) if a.len() == 2 => match (number(&a[0]), number(&a[1])) {
            (Some(lo), Some(hi)) if lo > 0.0 && hi >= lo => (lo, hi),
            _ => return Err(t.error("speed", "expected [min, max] m/s with 0 < min <= max")),
        },
        Some(v) => match number(v) {
            Some(x) if x > 0.0 => (x, x),
            _ => return Err(t.error("speed", "expected a positive speed in m/s or [min, max]")),
        },
    };
    let pause = t.duration("pause")?.unwrap_or(Duration::from_secs(100));
    let update = positive_duration(&t, "update", Some(Duration::from_secs(1)))?;
    let field = if t.has("field") {
        field(&t)?
    } else {
        let w = positions.iter().map(|p| p.0).fold(1.0, f64::max);
        let h = positions.iter().map(|p| p.1).fold(1.0, f64::max);
        (w, h)
    };
    let mut nodes = Vec::new();
    if let Some(Value::Array(items)) = t.get("nodes") {
        for (i, v) in items.iter().enumerate() {
            let mut tbl = Table::new();
            tbl.insert("node".into(), v.clone());
            let r = Reader::new(&tbl, &format!("{}[{i}]", t.key("nodes")));
            nodes.push(node_ref(&r, "node", names)?);
        }
    } else if t.has("nodes") {
        return Err(t.error("nodes", "expected a list of node indices or names"));
    }
    t.finish()?;
    Ok(Some(Mobility {
        speed,
        pause,
        field,
        update,
        nodes,
    }))
}
