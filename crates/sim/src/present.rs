//! Numbers for people: what each aggregate metric is called, its unit, the
//! SI prefix a column of it reads best in, and the table that prints means
//! with their 95% intervals and a legend defining every derived metric.
//!
//! Machine outputs (JSON, CSV) keep their raw keys and units; only what a
//! person reads goes through here.

use std::fmt::Write as _;

use crate::interval::{Domain, Interval, Method, BOOTSTRAP_RESAMPLES};
use crate::output::Table;
#[cfg(test)]
use crate::output::AGGREGATE_METRICS;

/// Which way a metric is better, for naming a winner.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// What a person needs to read one aggregate metric.
#[derive(Copy, Clone, Debug)]
pub struct MetricInfo {
    /// The key in JSON and CSV outputs ([`crate::output::AGGREGATE_METRICS`]).
    pub key: &'static str,
    pub label: &'static str,
    /// The paper's symbol, where it has one (E2TCP's ε and o).
    pub symbol: Option<&'static str>,
    /// The SI unit of the quantity, before any prefix; empty when it is a
    /// count or dimensionless.
    pub unit: &'static str,
    /// Factor from the stored value to `unit` (goodput is stored in Mbit/s).
    pub to_unit: f64,
    pub domain: Domain,
    pub better: Better,
    pub definition: &'static str,
    /// Only some runs have it (the lifetime metrics need batteries): a
    /// table leaves its column out when no row has a value.
    pub optional: bool,
}

/// The aggregate metrics, in [`crate::output::AGGREGATE_METRICS`]'s order.
pub const METRICS: &[MetricInfo] = &[
    MetricInfo {
        key: "goodput_mbps",
        label: "goodput",
        symbol: None,
        unit: "bit/s",
        to_unit: 1e6,
        domain: Domain::NonNegative,
        better: Better::Higher,
        definition: "bits delivered by all measured flows over their common interval",
        optional: false,
    },
    MetricInfo {
        key: "completion_time_s",
        label: "time",
        symbol: None,
        unit: "s",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Lower,
        definition: "mean completion time of the measured flows",
        optional: false,
    },
    MetricInfo {
        key: "retransmitted_packets",
        label: "retransmissions",
        symbol: None,
        unit: "",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Lower,
        definition: "data packets sent again, all measured flows",
        optional: false,
    },
    MetricInfo {
        key: "timeouts",
        label: "timeouts",
        symbol: None,
        unit: "",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Lower,
        definition: "retransmission timeouts, all measured flows",
        optional: false,
    },
    MetricInfo {
        key: "energy_j",
        label: "energy",
        symbol: None,
        unit: "J",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Lower,
        definition: "every node's radio energy over the run (S)",
        optional: false,
    },
    MetricInfo {
        key: "energy_per_bit_uj",
        label: "energy/bit",
        symbol: None,
        unit: "J",
        to_unit: 1e-6,
        domain: Domain::NonNegative,
        better: Better::Lower,
        definition: "S over the bits delivered by the measured flows",
        optional: false,
    },
    MetricInfo {
        key: "efficiency",
        label: "efficiency",
        symbol: Some("ε"),
        unit: "",
        to_unit: 1.0,
        domain: Domain::Unit,
        better: Better::Higher,
        definition: "= M/S, where S is the energy spent and M the minimum: every \
                     delivered bit sent once over each wireless hop, with no header, ACK or \
                     retransmission (E2TCP's definition)",
        optional: false,
    },
    MetricInfo {
        key: "energy_overhead",
        label: "overhead",
        symbol: Some("o"),
        unit: "",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Lower,
        definition: "= (S − M)/M, the energy spent beyond the minimum, per unit of it",
        optional: false,
    },
    MetricInfo {
        key: "first_death_s",
        label: "first death",
        symbol: None,
        unit: "s",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Higher,
        definition: "when the first battery-powered node's battery emptied; a mean only when it \
                     happened in every seed (a network that outlived the run is censored)",
        optional: true,
    },
    MetricInfo {
        key: "fraction_dead_s",
        label: "fraction dead",
        symbol: None,
        unit: "s",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Higher,
        definition: "when the scenario's `dead_fraction` of the battery-powered nodes had died; \
                     every seed, as for first death",
        optional: true,
    },
    MetricInfo {
        key: "first_partition_s",
        label: "first partition",
        symbol: None,
        unit: "s",
        to_unit: 1.0,
        domain: Domain::NonNegative,
        better: Better::Higher,
        definition: "when deaths first cut a measured flow's source off from its destination; \
                     every seed, as for first death",
        optional: true,
    },
];

/// The description of an aggregate metric by its key.
pub fn metric(key: &str) -> Option<&'static MetricInfo> {
    METRICS.iter().find(|m| m.key == key)
}

/// An SI prefix and the factor it divides by.
fn prefix_for(largest: f64) -> (&'static str, f64) {
    const PREFIXES: [(&str, f64); 7] = [
        ("G", 1e9),
        ("M", 1e6),
        ("k", 1e3),
        ("", 1.0),
        ("m", 1e-3),
        ("µ", 1e-6),
        ("n", 1e-9),
    ];
    if largest == 0.0 || !largest.is_finite() {
        return ("", 1.0);
    }
    PREFIXES
        .iter()
        .copied()
        .find(|(_, f)| largest >= *f)
        .unwrap_or(PREFIXES[PREFIXES.len() - 1])
}

/// How one column prints: the unit with its prefix, the scale and the
/// decimals that give the column's largest value three significant digits.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub header: String,
    scale: f64,
    decimals: usize,
}

impl Column {
    /// The column for `info` holding these values (in the stored unit).
    pub fn new(info: &MetricInfo, values: &[f64]) -> Column {
        let name = match info.symbol {
            Some(s) => format!("{s} {}", info.label),
            None => info.label.to_string(),
        };
        Column::labelled(&name, info.unit, info.to_unit, values)
    }

    /// A column named `name` of a quantity whose SI unit is `unit` (empty for
    /// counts), stored as `unit` / `to_unit`: the prefix and decimals come
    /// from the largest of `values`, so every row of a column reads alike.
    pub fn labelled(name: &str, unit: &str, to_unit: f64, values: &[f64]) -> Column {
        let largest = values
            .iter()
            .map(|v| (v * to_unit).abs())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        // Seconds read best as s, ms or µs, never ks; counts take no prefix.
        let (prefix, factor) = match unit {
            "" => ("", 1.0),
            "s" if largest >= 1.0 => ("", 1.0),
            _ => prefix_for(largest),
        };
        let scaled = largest / factor;
        // Three significant digits for the column's largest value; a count
        // is a whole number.
        let decimals = match scaled {
            _ if unit.is_empty() && values.iter().all(|v| v.fract() == 0.0) => 0,
            s if s >= 100.0 || s == 0.0 => 0,
            s if s >= 10.0 => 1,
            s if s >= 1.0 => 2,
            _ => 3,
        };
        Column {
            header: if unit.is_empty() {
                name.to_string()
            } else {
                format!("{name} {prefix}{unit}")
            },
            scale: to_unit / factor,
            decimals,
        }
    }

    /// A value with its unit (`"4.31 Mbit/s"`), for a line of prose.
    pub fn with_unit(&self, v: f64) -> String {
        match self.header.rsplit_once(' ') {
            Some((_, unit)) => format!("{} {unit}", self.value(v)),
            None => self.value(v),
        }
    }

    /// A value in this column's unit and precision.
    pub fn value(&self, v: f64) -> String {
        format!("{:.*}", self.decimals, v * self.scale)
    }

    /// `mean (lo–hi)`, with `†` when the interval is a bootstrap one.
    pub fn interval(&self, i: &Interval) -> String {
        match i.method {
            Method::Single => self.value(i.mean),
            Method::StudentT | Method::Bootstrap => format!(
                "{} ({}–{}){}",
                self.value(i.mean),
                self.value(i.lo),
                self.value(i.hi),
                if i.method == Method::Bootstrap {
                    "†"
                } else {
                    ""
                }
            ),
        }
    }
}

/// The aggregate table: one row per labelled point, each metric's mean and
/// 95% interval in a unit chosen per column, then a legend defining the
/// derived metrics and saying how the intervals were made.
pub fn aggregate_table(first: &str, rows: &[(String, Vec<Option<Interval>>)]) -> String {
    let labelled: Vec<(Vec<String>, &[Option<Interval>])> = rows
        .iter()
        .map(|(label, cells)| (vec![label.clone()], cells.as_slice()))
        .collect();
    let mut out = metric_table(
        &[first],
        &labelled,
        |i| i.hi.max(i.mean),
        |c, i| c.interval(i),
    );
    out.push('\n');
    out.push_str(&legend(rows));
    out
}

/// One row per run (the per-seed table of a sweep): the labels in the first
/// columns, then every aggregate metric some run has, each in a unit chosen
/// for its column as in [`aggregate_table`].
pub fn per_run_table(labels: &[&str], rows: &[(Vec<String>, Vec<Option<f64>>)]) -> String {
    let labelled: Vec<(Vec<String>, &[Option<f64>])> = rows
        .iter()
        .map(|(label, values)| (label.clone(), values.as_slice()))
        .collect();
    metric_table(labels, &labelled, |v| *v, |c, v| c.value(*v))
}

/// The table both of the above print: the label columns, then a column
/// per aggregate metric (an optional one only when some row has it), its
/// unit chosen from `magnitude` of the column's cells, each cell written by
/// `cell`, a dash where a row has no value.
fn metric_table<T>(
    labels: &[&str],
    rows: &[(Vec<String>, &[Option<T>])],
    magnitude: impl Fn(&T) -> f64,
    cell: impl Fn(&Column, &T) -> String,
) -> String {
    let shown: Vec<usize> = (0..METRICS.len())
        .filter(|&m| !METRICS[m].optional || rows.iter().any(|(_, cells)| cells[m].is_some()))
        .collect();
    let columns: Vec<Column> = shown
        .iter()
        .map(|&m| {
            let values: Vec<f64> = rows
                .iter()
                .filter_map(|(_, cells)| cells[m].as_ref().map(&magnitude))
                .collect();
            Column::new(&METRICS[m], &values)
        })
        .collect();
    let mut header = labels.to_vec();
    header.extend(columns.iter().map(|c| c.header.as_str()));
    let mut table = Table::new(&header);
    for (label, cells) in rows {
        let mut row = label.clone();
        row.extend(
            shown
                .iter()
                .zip(&columns)
                .map(|(&m, c)| cells[m].as_ref().map_or("-".into(), |v| cell(c, v))),
        );
        table.row(row);
    }
    table.render()
}

/// The papers' symbols (E2TCP's ε and o), each with its definition: a line
/// each, for any output that shows them.
pub fn symbols() -> String {
    let mut out = String::new();
    for info in METRICS.iter().filter(|m| m.symbol.is_some()) {
        let symbol = info.symbol.unwrap_or_default();
        let _ = writeln!(out, "{symbol} {} {}", info.label, info.definition);
    }
    out
}

/// What the derived metrics and the intervals mean.
fn legend(rows: &[(String, Vec<Option<Interval>>)]) -> String {
    let mut out = symbols();
    // The lifetime metrics are rare enough to need saying what they are.
    for (m, info) in METRICS.iter().enumerate().filter(|(_, m)| m.optional) {
        if rows.iter().any(|(_, cells)| cells[m].is_some()) {
            let _ = writeln!(out, "{}: {}", info.label, info.definition);
        }
    }
    let cells = || rows.iter().flat_map(|(_, c)| c.iter().flatten());
    let seeds = cells().map(|i| i.n).max().unwrap_or(0);
    if seeds > 1 {
        let _ = write!(
            out,
            "(lo–hi): 95% interval of the mean over {seeds} seeds, Student's t"
        );
        if cells().any(|i| i.method == Method::Bootstrap) {
            let _ = write!(
                out,
                "; † percentile bootstrap ({BOOTSTRAP_RESAMPLES} resamples), where t would \
                 leave the quantity's range (below 0, or above 1 for ε)"
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::interval95;

    #[test]
    fn per_run_rows_read_in_units_and_whole_counts() {
        let mut a = vec![None; METRICS.len()];
        a[0] = Some(1.853); // goodput, stored in Mbit/s
        a[2] = Some(310.0); // retransmitted packets
        a[5] = Some(1.688); // energy per bit, stored in µJ
        let mut b = a.clone();
        b[0] = Some(0.5);
        b[2] = Some(7.0);
        let rows = vec![(vec!["x".into()], a), (vec!["y".into()], b)];
        let text = per_run_table(&["point"], &rows);
        let header = text.lines().next().unwrap();
        assert!(header.contains("goodput Mbit/s"), "{header}");
        assert!(header.contains("energy/bit µJ"), "{header}");
        assert!(text.contains(" 310 ") || text.contains(" 310\n"), "{text}");
        assert!(!text.contains("310.0"), "{text}");
        assert!(
            text.contains("1.85") && text.contains("0.50") && text.contains("1.69"),
            "{text}"
        );
        // The lifetime metrics are absent from every row: no column.
        assert!(!header.contains("first death"), "{header}");
    }

    #[test]
    fn a_value_with_its_unit_takes_the_prefix_that_reads_best() {
        let c = Column::labelled("", "J", 1.0, &[1.688e-6]);
        assert_eq!(c.with_unit(1.688e-6), "1.69 µJ");
        let g = Column::labelled("goodput", "bit/s", 1.0, &[1.853e6, 2e5]);
        assert_eq!(g.header, "goodput Mbit/s");
        assert_eq!(g.value(2e5), "0.20");
    }

    #[test]
    fn the_catalogue_follows_the_aggregate_metrics() {
        let keys: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
        assert_eq!(keys, AGGREGATE_METRICS);
    }

    #[test]
    fn lifetime_columns_appear_only_when_a_run_has_them() {
        let plain = vec![None; METRICS.len()];
        let table = aggregate_table("point", &[("a".into(), plain.clone())]);
        assert!(!table.contains("first death"), "{table}");
        let mut died = plain;
        let at = METRICS
            .iter()
            .position(|m| m.key == "first_death_s")
            .unwrap();
        died[at] = interval95(&[120.0, 130.0], Domain::NonNegative);
        let table = aggregate_table("point", &[("a".into(), died)]);
        assert!(table.contains("first death s"), "{table}");
        assert!(table.contains("125"), "{table}");
        assert!(table.contains("first death: when the first"), "{table}");
        assert!(!table.contains("first partition"), "{table}");
    }

    #[test]
    fn energy_per_bit_reads_in_microjoules() {
        let c = Column::new(metric("energy_per_bit_uj").unwrap(), &[1.688, 2.13]);
        assert_eq!(c.header, "energy/bit µJ");
        assert_eq!(c.value(1.688), "1.69");
    }

    #[test]
    fn goodput_takes_the_prefix_of_its_largest_value() {
        let c = Column::new(metric("goodput_mbps").unwrap(), &[0.25, 0.9]);
        assert_eq!(c.header, "goodput kbit/s");
        assert_eq!(c.value(0.25), "250");
        let c = Column::new(metric("goodput_mbps").unwrap(), &[1.3, 12.0]);
        assert_eq!(c.header, "goodput Mbit/s");
        assert_eq!(c.value(1.3), "1.3");
    }

    #[test]
    fn short_times_read_in_milliseconds_and_long_ones_in_seconds() {
        let info = metric("completion_time_s").unwrap();
        assert_eq!(Column::new(info, &[0.0123]).header, "time ms");
        assert_eq!(Column::new(info, &[0.0123]).value(0.0123), "12.3");
        assert_eq!(Column::new(info, &[4000.0]).header, "time s");
    }

    #[test]
    fn counts_take_no_prefix_and_no_spurious_decimals() {
        let c = Column::new(metric("retransmitted_packets").unwrap(), &[204.2, 80.4]);
        assert_eq!(c.header, "retransmissions");
        assert_eq!(c.value(204.2), "204");
    }

    #[test]
    fn the_table_marks_bootstrap_intervals_and_defines_epsilon_and_o() {
        let skewed = interval95(&[0.0, 0.0, 2.0, 0.0, 400.0], Domain::NonNegative);
        let plain = interval95(&[1.0, 1.2, 1.1, 0.9, 1.0], Domain::NonNegative);
        let mut cells = vec![plain; METRICS.len()];
        cells[2] = skewed;
        let text = aggregate_table("protocol", &[("sack".into(), cells)]);
        assert!(text.contains('†'), "{text}");
        assert!(text.contains("ε efficiency = M/S"), "{text}");
        assert!(text.contains("o overhead = (S − M)/M"), "{text}");
        assert!(text.contains("over 5 seeds"), "{text}");
        assert!(!text.contains("(-"), "no negative lower bound: {text}");
    }
}
