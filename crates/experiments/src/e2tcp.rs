//! E2TCP vs TCP Tahoe/Reno/NewReno (Donckers, Havinga, Smit & Smit):
//! Figures 1–18 and Table 1, Scenarios A and B.

use std::collections::BTreeMap;

use super::{Ctx, Measure};

/// A protocol variant: label, overrides, network-header bytes per packet.
struct Variant {
    label: &'static str,
    sets: &'static [&'static str],
    net_header: f64,
}

const TAHOE: Variant = Variant {
    label: "Tahoe",
    sets: &["flow.protocol=\"tahoe\""],
    net_header: 20.0,
};
const RENO: Variant = Variant {
    label: "Reno",
    sets: &["flow.protocol=\"reno\""],
    net_header: 20.0,
};
const NEWRENO: Variant = Variant {
    label: "NewReno",
    sets: &["flow.protocol=\"newreno\""],
    net_header: 20.0,
};
const E2TCP: Variant = Variant {
    label: "E2TCP",
    sets: &["flow.protocol=\"e2tcp\""],
    net_header: 0.0,
};
const E2TCP_NOHC: Variant = Variant {
    label: "E2TCP-noHC",
    sets: &["flow.protocol=\"e2tcp\"", "flow.e2tcp.compression=false"],
    net_header: 20.0,
};
const E2TCP_SACK: Variant = Variant {
    label: "E2TCP-SACKonly",
    sets: &[
        "flow.protocol=\"e2tcp\"",
        "flow.e2tcp.compression=false",
        "flow.e2tcp.window_management=false",
    ],
    net_header: 20.0,
};

#[derive(Copy, Clone, PartialEq)]
enum Sc {
    A,
    B,
}

impl Sc {
    fn name(self) -> &'static str {
        match self {
            Sc::A => "A",
            Sc::B => "B",
        }
    }
    /// Nominal good-state lengths (s).
    fn goods(self, quick: bool) -> Vec<f64> {
        match (self, quick) {
            (Sc::A, false) => vec![300.0, 100.0, 50.0, 20.0, 10.0, 5.0, 2.0, 1.0],
            (Sc::A, true) => vec![100.0, 10.0, 1.0],
            (Sc::B, false) => vec![20.0, 10.0, 5.0, 2.0, 1.0],
            (Sc::B, true) => vec![20.0, 5.0, 1.0],
        }
    }
    /// Channel overrides: uniform sojourns in [0.5 L, 1.5 L].
    fn channel(self, good: f64) -> Vec<String> {
        let bad = match self {
            Sc::A => 0.1,
            Sc::B => good / 10.0,
        };
        let ms = |s: f64| format!("\"{}ms\"", (s * 1000.0).round() as u64);
        vec![
            format!("link.loss.good.min={}", ms(0.5 * good)),
            format!("link.loss.good.max={}", ms(1.5 * good)),
            format!("link.loss.bad.min={}", ms(0.5 * bad)),
            format!("link.loss.bad.max={}", ms(1.5 * bad)),
        ]
    }
}

/// One point of a figure: the metrics the paper plots.
#[derive(Clone, Debug, Default)]
struct Point {
    data_overhead: f64,
    time_overhead: f64,
    /// The paper's definition: the 50/50 average of data and time overhead.
    energy_paper: f64,
    /// The radio model's o = (S − M)/M, intermediate radio, weight 0.5.
    energy_model: f64,
    throughput_kbps: f64,
    latency_ms: f64,
    completed: f64,
}

struct Runner<'a> {
    ctx: &'a mut Ctx,
    base: joulenet_sim::Scenario,
    /// Error-free connection time per (variant, setup) key.
    baselines: BTreeMap<String, f64>,
}

impl Runner<'_> {
    fn run(
        &mut self,
        v: &Variant,
        setup: &[String],
        channel: &[String],
    ) -> Result<Measure, String> {
        let mut sets: Vec<String> = v.sets.iter().map(|s| s.to_string()).collect();
        sets.extend(setup.iter().cloned());
        sets.extend(channel.iter().cloned());
        self.ctx.measure(&self.base, &sets)
    }

    fn point(
        &mut self,
        v: &Variant,
        setup: &[String],
        channel: &[String],
    ) -> Result<Point, String> {
        let key = format!("{}|{}", v.label, setup.join(","));
        let t0 = match self.baselines.get(&key) {
            Some(&t) => t,
            None => {
                let m = self.run(v, setup, &["link.loss=\"none\"".to_string()])?;
                self.baselines.insert(key, m.time_s);
                m.time_s
            }
        };
        let m = self.run(v, setup, channel)?;
        let delivered = m.delivered.max(1.0);
        let sent = m.transport_bytes + v.net_header * m.packets;
        let d = (sent - delivered) / delivered;
        let t = (m.time_s - t0) / t0;
        Ok(Point {
            data_overhead: d,
            time_overhead: t,
            energy_paper: 0.5 * d + 0.5 * t,
            energy_model: m.energy_overhead,
            throughput_kbps: m.goodput_bps / 1000.0,
            latency_ms: m.delay_mean_ms,
            completed: m.completed,
        })
    }
}

/// Table 1 accumulators: version → scenario → (paper o, model o) per point.
type Table1 = BTreeMap<&'static str, BTreeMap<&'static str, Vec<(f64, f64)>>>;
/// A figure family: name, paper figures, (label, overrides) per setup.
type Family = (&'static str, &'static str, Vec<(String, Vec<String>)>);

fn pct(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

pub(super) fn reproduce(ctx: &mut Ctx) -> Result<(), String> {
    let quick = ctx.quick;
    let base = ctx.load("gilbert.toml")?;
    let bytes = if quick { "5MB" } else { "20MB" };
    let bulk: Vec<String> = vec![
        "flow.app=\"bulk\"".into(),
        format!("flow.bytes=\"{bytes}\""),
    ];
    ctx.say(&format!(
        "E2TCP vs TCP — {} seed(s) per point, {bytes} bulk transfers, 1 Mbit/s, 50 ms unless varied;\n\
         good state 0.05 % / bad state 80 % packet error, state lengths uniform in [0.5 L, 1.5 L].\n\
         Overheads in %: data = (bytes sent incl. headers, ACKs, retransmissions − app bytes) / app bytes;\n\
         time = (T − T_error-free) / T_error-free; energy(paper) = ½ data + ½ time;\n\
         energy(model) = (S − M) / M from the radio model (WaveLAN, intermediate radio, 50/50).\n",
        ctx.seeds
    ));
    let mut r = Runner {
        ctx,
        base,
        baselines: BTreeMap::new(),
    };
    let main = [&TAHOE, &RENO, &NEWRENO, &E2TCP, &E2TCP_NOHC, &E2TCP_SACK];
    // Table 1 accumulators: label → (scenario → Vec<(paper o, model o)>).
    let mut table1: Table1 = BTreeMap::new();
    for sc in [Sc::A, Sc::B] {
        let goods = sc.goods(quick);
        let mut results: Vec<Vec<Point>> = Vec::new();
        for v in main {
            let mut row = Vec::new();
            for &g in &goods {
                let p = r.point(v, &bulk, &sc.channel(g))?;
                table1
                    .entry(v.label)
                    .or_default()
                    .entry(sc.name())
                    .or_default()
                    .push((p.energy_paper, p.energy_model));
                row.push(p);
            }
            results.push(row);
        }
        type Get = fn(&Point) -> f64;
        let metrics: [(&str, &str, &str, Get, bool); 6] = [
            (
                "data",
                "Data overhead (%)",
                "Fig. 1/2",
                |p| p.data_overhead * 100.0,
                true,
            ),
            (
                "time",
                "Time overhead (%)",
                "Fig. 3/4",
                |p| p.time_overhead * 100.0,
                true,
            ),
            (
                "energy_paper",
                "Energy overhead, paper's ½data+½time (%)",
                "—",
                |p| p.energy_paper * 100.0,
                true,
            ),
            (
                "energy_model",
                "Energy overhead, radio model (%)",
                "—",
                |p| p.energy_model * 100.0,
                true,
            ),
            (
                "throughput",
                "Throughput (kbit/s)",
                "Fig. 15/16",
                |p| p.throughput_kbps,
                false,
            ),
            (
                "latency",
                "Average latency (ms)",
                "Fig. 17/18",
                |p| p.latency_ms,
                false,
            ),
        ];
        for (key, title, fig, get, _) in metrics {
            let mut text = format!("\nScenario {}: {title} [{fig}]\n{:>8}", sc.name(), "good L");
            for v in main {
                text.push_str(&format!(" {:>14}", v.label));
            }
            text.push('\n');
            let mut points = Vec::new();
            for (i, &g) in goods.iter().enumerate() {
                text.push_str(&format!("{:>8}", g));
                for (vi, v) in main.iter().enumerate() {
                    let p = &results[vi][i];
                    let star = if p.completed < 1.0 { "*" } else { "" };
                    text.push_str(&format!(" {:>14}", format!("{:.1}{star}", get(p))));
                    points.push((g, v.label.to_string(), get(p)));
                }
                text.push('\n');
            }
            r.ctx.say(&text);
            r.ctx.figure(
                &format!("e2tcp_{key}_{}", sc.name()),
                &format!("{title}, Scenario {}", sc.name()),
                "good-state length (s)",
                title,
                true,
                &points,
            )?;
        }
    }

    // Figures 5–14: Tahoe vs E2TCP energy overhead across setups.
    let dur = if quick { "30s" } else { "120s" };
    let families: Vec<Family> = vec![
        (
            "bandwidth",
            "Fig. 5-8",
            (if quick {
                vec![0.5, 2.0]
            } else {
                vec![0.5, 1.0, 2.0, 5.0]
            })
            .into_iter()
            .map(|mbps: f64| {
                let mut s = bulk.clone();
                s.push(format!("link.rate=\"{}kbps\"", (mbps * 1000.0) as u64));
                (format!("{mbps}Mbps"), s)
            })
            .collect(),
        ),
        (
            "delay",
            "Fig. 9/10",
            (if quick {
                vec![40, 70]
            } else {
                vec![40, 50, 60, 70]
            })
            .into_iter()
            .map(|ms| {
                let mut s = bulk.clone();
                s.push(format!("link.delay=\"{ms}ms\""));
                (format!("{ms}ms"), s)
            })
            .collect(),
        ),
        (
            "interactive",
            "Fig. 11/12",
            (if quick {
                vec![0.5, 0.05]
            } else {
                vec![0.5, 0.2, 0.1, 0.05]
            })
            .into_iter()
            .map(|i: f64| {
                (
                    format!("{i}s"),
                    vec![
                        "flow.app=\"poisson\"".into(),
                        format!("flow.mean_interval=\"{}ms\"", (i * 1000.0) as u64),
                        format!("flow.stop=\"{dur}\""),
                    ],
                )
            })
            .collect(),
        ),
        (
            "cbr",
            "Fig. 13/14",
            (if quick {
                vec![0.25, 1.0]
            } else {
                vec![0.25, 0.5, 1.0]
            })
            .into_iter()
            .map(|mbps: f64| {
                (
                    format!("{mbps}Mbps"),
                    vec![
                        "flow.app=\"cbr\"".into(),
                        format!("flow.rate=\"{}kbps\"", (mbps * 1000.0) as u64),
                        format!("flow.stop=\"{dur}\""),
                    ],
                )
            })
            .collect(),
        ),
    ];
    for (family, fig, setups) in families {
        for sc in [Sc::A, Sc::B] {
            let goods = sc.goods(quick);
            let mut text = format!(
                "\nScenario {}: energy overhead (radio model, %) by {family} [{fig}]\n{:>8}",
                sc.name(),
                "good L"
            );
            let mut cols = Vec::new();
            for (label, _) in &setups {
                for v in [&TAHOE, &E2TCP] {
                    text.push_str(&format!(" {:>16}", format!("{} {label}", v.label)));
                    cols.push((label.clone(), v));
                }
            }
            text.push('\n');
            let mut points = Vec::new();
            let mut table: Vec<Vec<f64>> = Vec::new();
            for (label, setup) in &setups {
                for v in [&TAHOE, &E2TCP] {
                    let mut col = Vec::new();
                    for &g in &goods {
                        let p = r.point(v, setup, &sc.channel(g))?;
                        points.push((g, format!("{} {label}", v.label), p.energy_model * 100.0));
                        col.push(p.energy_model * 100.0);
                    }
                    table.push(col);
                }
            }
            for (i, &g) in goods.iter().enumerate() {
                text.push_str(&format!("{:>8}", g));
                for col in &table {
                    text.push_str(&format!(" {:>16.1}", col[i]));
                }
                text.push('\n');
            }
            let _ = cols;
            r.ctx.say(&text);
            r.ctx.figure(
                &format!("e2tcp_{family}_{}", sc.name()),
                &format!("Energy overhead by {family}, Scenario {}", sc.name()),
                "good-state length (s)",
                "energy overhead, radio model (%)",
                true,
                &points,
            )?;
        }
    }

    // Table 1: average energy overhead of the dissected versions.
    let paper_t1 = [
        ("Tahoe", 44.5, 54.5),
        ("E2TCP-noHC", 14.7, 22.4),
        ("E2TCP", 10.1, 17.4),
        ("E2TCP-SACKonly", f64::NAN, f64::NAN),
    ];
    let mut text = String::from(
        "\nTable 1: average energy overhead (%) over all error conditions of each scenario\n",
    );
    text.push_str(&format!(
        "{:>15} | {:>8} {:>8} {:>6} | {:>8} {:>8} {:>6}\n",
        "version", "A paper", "A model", "A pap.", "B paper", "B model", "B pap."
    ));
    let mut rows = Vec::new();
    for (label, pa, pb) in paper_t1 {
        let avg = |sc: &str, which: usize| {
            let v = &table1[label][sc];
            v.iter()
                .map(|x| if which == 0 { x.0 } else { x.1 })
                .sum::<f64>()
                / v.len() as f64
        };
        let (ap, am, bp, bm) = (avg("A", 0), avg("A", 1), avg("B", 0), avg("B", 1));
        let show = |v: f64| {
            if v.is_nan() {
                "—".to_string()
            } else {
                format!("{v:.1}")
            }
        };
        text.push_str(&format!(
            "{:>15} | {:>8} {:>8} {:>6} | {:>8} {:>8} {:>6}\n",
            label,
            pct(ap),
            pct(am),
            show(pa),
            pct(bp),
            pct(bm),
            show(pb)
        ));
        rows.push(format!(
            "{label},{:.4},{:.4},{pa},{:.4},{:.4},{pb}",
            ap * 100.0,
            am * 100.0,
            bp * 100.0,
            bm * 100.0
        ));
    }
    text.push_str("(\"paper\" columns: ours by the paper's ½data+½time definition; \"model\": radio model; \"pap.\": the paper's Table 1)\n");
    r.ctx.say(&text);
    r.ctx.csv(
        "e2tcp_table_1.csv",
        "version,A_ours_half_data_half_time_pct,A_ours_radio_model_pct,A_paper_pct,B_ours_half_data_half_time_pct,B_ours_radio_model_pct,B_paper_pct",
        &rows,
    )?;
    Ok(())
}
