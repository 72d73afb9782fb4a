//! Results for people (aligned text tables) and for programs (JSON, CSV).
//! Every CSV row carries its run context, so no number is ever separated
//! from how it was made.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::interval::{interval95, Interval};
use crate::present::{Column, METRICS};
use crate::result::{RunContext, RunResult};

/// A plain text table with aligned columns.
#[derive(Clone, Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        format!("{c:<w$}", w = widths[i])
                    } else {
                        format!("{c:>w$}", w = widths[i])
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", parts.join("  ").trim_end());
        };
        line(&self.header, &mut out);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        let _ = writeln!(out, "{}", rule.join("  "));
        for r in &self.rows {
            line(r, &mut out);
        }
        out
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

/// The human report of one run.
pub fn run_table(r: &RunResult) -> String {
    let mut out = String::new();
    let c = &r.context;
    let params: Vec<String> = c.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(
        out,
        "scenario {} ({})  seed {}{}  joulenet {}",
        c.scenario,
        c.scenario_hash,
        c.seed,
        if params.is_empty() {
            String::new()
        } else {
            format!("  [{}]", params.join(" "))
        },
        c.joulenet_version
    );
    let goodputs: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let goodput = Column::labelled("goodput", "bit/s", 1.0, &goodputs);
    let mut t = Table::new(&[
        "flow",
        "protocol",
        "delivered B",
        "done",
        "time s",
        &goodput.header,
        "data pkts",
        "retx pkts",
        "ctrl pkts",
        "timeouts",
        "delay ms",
        "rtt ms",
    ]);
    for f in &r.flows {
        t.row(vec![
            f.label.clone(),
            f.protocol.clone(),
            f.bytes_delivered.to_string(),
            if f.completed {
                "yes".into()
            } else {
                "no".into()
            },
            opt(f.completion_time_s, 3),
            goodput.value(f.goodput_bps),
            f.data_packets.to_string(),
            f.retransmitted_packets.to_string(),
            f.control_packets.to_string(),
            f.timeouts.to_string(),
            opt(f.delay_mean_ms, 1),
            opt(f.rtt_mean_ms, 1),
        ]);
    }
    out.push_str(&t.render());
    let shown = || r.nodes.iter().filter(|n| n.radios > 0 || n.frames_sent > 0);
    // One prefix for every energy column, so they can be added by eye.
    let energies: Vec<f64> = shown().map(|n| n.energy_j).collect();
    let joules = |label: &str| Column::labelled(label, "J", 1.0, &energies);
    let [energy, tx, rx, idle, sleep] = ["energy", "tx", "rx", "idle", "sleep"].map(joules);
    let mut n = Table::new(&[
        "node",
        &energy.header,
        &tx.header,
        &rx.header,
        &idle.header,
        &sleep.header,
        "frames tx",
        "frames rx",
        "died s",
    ]);
    for node in shown() {
        n.row(vec![
            node.name.clone(),
            energy.value(node.energy_j),
            tx.value(node.tx_j),
            rx.value(node.rx_j),
            idle.value(node.idle_j),
            sleep.value(node.sleep_j),
            node.frames_sent.to_string(),
            node.frames_received.to_string(),
            opt(node.died_at_s, 3),
        ]);
    }
    out.push('\n');
    out.push_str(&n.render());
    let s = &r.summary;
    let _ = writeln!(
        out,
        "\nduration {:.3} s{}  goodput {}  energy {}  energy/bit {}  efficiency ε {}  overhead o {}  fairness {}",
        s.duration_s,
        if s.stopped_by_limit { " (stop time)" } else { "" },
        with_unit(s.aggregate_goodput_bps, "bit/s"),
        with_unit(s.energy_j, "J"),
        s.energy_per_bit_j.map_or("-".into(), |e| with_unit(e, "J")),
        opt(s.efficiency, 3),
        opt(s.energy_overhead, 3),
        opt(s.jain_fairness, 3),
    );
    if s.nodes_dead > 0 || s.energy_model != "state" {
        let _ = writeln!(
            out,
            "energy model {}  nodes dead {}  first death {} s  {:.0}% dead {} s  first partition {} s",
            s.energy_model,
            s.nodes_dead,
            opt(s.first_death_s, 3),
            s.dead_fraction * 100.0,
            opt(s.fraction_dead_s, 3),
            opt(s.first_partition_s, 3),
        );
    }
    out
}

/// One value with the SI prefix that reads best (`4.31 Mbit/s`, `1.69 µJ`).
fn with_unit(value: f64, unit: &str) -> String {
    Column::labelled("", unit, 1.0, &[value]).with_unit(value)
}

/// The metrics aggregated across seeds, for one parameter point.
pub const AGGREGATE_METRICS: &[&str] = &[
    "goodput_mbps",
    "completion_time_s",
    "retransmitted_packets",
    "timeouts",
    "energy_j",
    "energy_per_bit_uj",
    "efficiency",
    "energy_overhead",
    "first_death_s",
    "fraction_dead_s",
    "first_partition_s",
];

/// Values of the aggregate metrics for one run (flow metrics summed or
/// averaged over measured flows).
pub fn aggregate_values(r: &RunResult) -> Vec<Option<f64>> {
    let s = &r.summary;
    let flows = &r.flows;
    let n = flows.len().max(1) as f64;
    let completion: Option<f64> = flows
        .iter()
        .map(|f| f.completion_time_s)
        .sum::<Option<f64>>()
        .map(|t| t / n);
    vec![
        Some(s.aggregate_goodput_bps / 1e6),
        completion,
        Some(flows.iter().map(|f| f.retransmitted_packets as f64).sum()),
        Some(flows.iter().map(|f| f.timeouts as f64).sum()),
        Some(s.energy_j),
        s.energy_per_bit_j.map(|e| e * 1e6),
        s.efficiency,
        s.energy_overhead,
        s.first_death_s,
        s.fraction_dead_s,
        s.first_partition_s,
    ]
}

/// The mean and 95% interval of each aggregate metric over a set of runs
/// (one point), inside the metric's domain (`crate::interval`).
pub fn aggregate(runs: &[&RunResult]) -> Vec<Option<Interval>> {
    let values: Vec<Vec<Option<f64>>> = runs.iter().map(|r| aggregate_values(r)).collect();
    METRICS
        .iter()
        .enumerate()
        .map(|(m, info)| {
            let xs: Option<Vec<f64>> = values.iter().map(|v| v[m]).collect();
            xs.and_then(|xs| interval95(&xs, info.domain))
        })
        .collect()
}

/// One JSON document for a run (context, flows, nodes, links, summary, series).
pub fn json(r: &RunResult) -> String {
    serde_json::to_string_pretty(r).expect("results serialise")
}

fn context_columns(c: &RunContext, params: &[String]) -> Vec<(String, Value)> {
    let mut cols = vec![
        ("scenario".to_string(), Value::from(c.scenario.clone())),
        (
            "scenario_hash".to_string(),
            Value::from(c.scenario_hash.clone()),
        ),
        (
            "joulenet_version".to_string(),
            Value::from(c.joulenet_version.clone()),
        ),
        ("seed".to_string(), Value::from(c.seed)),
    ];
    for p in params {
        cols.push((
            format!("param:{p}"),
            Value::from(c.params.get(p).cloned().unwrap_or_default()),
        ));
    }
    cols
}

/// One CSV cell: empty for null, quoted when it holds a comma, a quote or a
/// line break.
pub fn csv_cell(v: &Value) -> String {
    let s = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// CSV of one kind of row (flows, nodes, links, summary, series) across
/// runs, each row prefixed by its run's context and parameters.
pub fn csv<T: Serialize>(runs: &[&RunResult], rows: impl Fn(&RunResult) -> Vec<T>) -> String {
    let mut params: Vec<String> = runs
        .iter()
        .flat_map(|r| r.context.params.keys().cloned())
        .collect();
    params.sort();
    params.dedup();
    let mut out = String::new();
    let mut header_written = false;
    for r in runs {
        let ctx = context_columns(&r.context, &params);
        for row in rows(r) {
            let Value::Object(obj) = serde_json::to_value(&row).expect("rows serialise") else {
                continue;
            };
            let obj: Map<String, Value> = obj;
            if !header_written {
                let names: Vec<String> = ctx
                    .iter()
                    .map(|(k, _)| k.clone())
                    .chain(obj.keys().cloned())
                    .collect();
                let _ = writeln!(out, "{}", names.join(","));
                header_written = true;
            }
            let cells: Vec<String> = ctx
                .iter()
                .map(|(_, v)| csv_cell(v))
                .chain(obj.values().map(csv_cell))
                .collect();
            let _ = writeln!(out, "{}", cells.join(","));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns() {
        let mut t = Table::new(&["a", "bbb"]);
        t.row(vec!["long".into(), "1".into()]);
        let text = t.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "a     bbb");
        assert_eq!(lines[2], "long    1");
    }

    #[test]
    fn csv_cells_are_quoted_when_needed() {
        assert_eq!(csv_cell(&Value::from("a,b")), "\"a,b\"");
        assert_eq!(csv_cell(&Value::from("say \"hi\"")), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell(&Value::Null), "");
        assert_eq!(csv_cell(&Value::from(1.5)), "1.5");
    }
}
