//! Hop (Li, Agrawal, Ganesan, Venkataramani: block-switched networks,
//! NSDI 2009): the multi-hop microbenchmark (§5.2), graceful degradation
//! under injected loss (§5.1.2), the component breakdown (§5.4), 30
//! concurrent flows (§5.3), the 7-to-1 access point (§5.5, Table 3) and the
//! partitioned path (§5.7, Table 4) and the delay of one small file beside
//! backlogged flows (§5.6.1, Fig. 13).
//!
//! The paper's 20-node UMass testbed cannot be copied; its substitutes are
//! our 802.11b chain (one flow), one 802.11b link with loss injected below
//! the transport, and the seeded 20-node random mesh of
//! `scenarios/multihop/mesh-20.toml` (`docs/reproduction/hop.md`). So the
//! numbers that stand beside the paper's are ratios (Hop over each
//! baseline), compared in direction and magnitude, not testbed goodputs.
//! Every row carries the energy per delivered bit: every node's radio energy
//! over the run, over the bits the measured flows delivered.

use joulenet_sim::{RunResult, Scenario};

use super::{paper, Ctx};

mod dynamics;
mod links;
mod mesh;
mod voip;
mod web;

/// A protocol as the experiments run it: a label and its overrides.
struct Variant {
    label: &'static str,
    sets: &'static [&'static str],
}

const fn variant(label: &'static str, sets: &'static [&'static str]) -> Variant {
    Variant { label, sets }
}

/// §5.2's protocols. UDP is a constant bit rate above the link's capacity
/// ([`UDP_STREAM`]), stopped at 20 s: the paper's "as fast as the card can
/// transmit" upper bound, with the medium's maximum ARQ and without ARQ.
const MULTIHOP: &[Variant] = &[
    variant("hop", &["flow.protocol=\"hop\""]),
    variant("cubic", &["flow.protocol=\"cubic\""]),
    variant("newreno", &["flow.protocol=\"newreno\""]),
    variant("hbh-tcp", &["flow.protocol=\"hbh-tcp\""]),
    variant("dtn", &["flow.protocol=\"dtn\""]),
    variant("udp/max-arq", &["flow.protocol=\"udp\""]),
    variant(
        "udp/no-arq",
        &["flow.protocol=\"udp\"", "flow.udp.link_arq=false"],
    ),
];

/// A UDP flow as the paper's upper bound: a measured constant bit rate.
const UDP_STREAM: &[&str] = &[
    "flow.background=false",
    "flow.app=\"cbr\"",
    "flow.rate=\"8Mbps\"",
    "flow.message=1400",
];

/// Table 1's §5.2 rows: Hop's median and mean gain over each baseline.
const PAPER_MULTIHOP: &[(&str, f64, f64)] = &[
    ("cubic", 2.3, 2.0),
    ("hbh-tcp", 2.5, 2.0),
    ("dtn", 2.9, 3.9),
];

/// The paper's mix of path lengths in §5.2 (hops, share of the 100 flows).
const PAPER_HOP_MIX: &[(u32, f64)] = &[(2, 0.3), (3, 0.3), (4, 0.1), (5, 0.2), (7, 0.1)];

/// §5.4's four versions of Hop (the paper's "basic" is per-hop block
/// transfer alone; micro-blocks and virtual retransmission stay on, as they
/// do not act on long-lived flows' throughput).
const BREAKDOWN: &[Variant] = &[
    variant(
        "basic",
        &[
            "flow.hop.backpressure=false",
            "flow.hop.ack_withholding=false",
        ],
    ),
    variant(
        "+ack withholding",
        &[
            "flow.hop.backpressure=false",
            "flow.hop.ack_withholding=true",
        ],
    ),
    variant(
        "+backpressure",
        &[
            "flow.hop.backpressure=true",
            "flow.hop.ack_withholding=false",
        ],
    ),
    variant(
        "full",
        &[
            "flow.hop.backpressure=true",
            "flow.hop.ack_withholding=true",
        ],
    ),
];

/// Fig. 12 at 10 and 30 flows, as Table 1 and §5.4's text give it (gain
/// over basic Hop; the 20-flow bars are not in the text).
const PAPER_BREAKDOWN: &[(usize, [Option<f64>; 4])] = &[
    (10, [Some(1.0), Some(1.2), Some(1.2), None]),
    (30, [Some(1.0), Some(2.5), Some(3.7), Some(4.8)]),
];

pub(super) fn reproduce(ctx: &mut Ctx) -> Result<(), String> {
    ctx.say(&format!(
        "Hop vs its paper — {} seed(s) per point; energy is every node's radio energy per \
         delivered bit (the paper reports none)\n",
        ctx.seeds
    ));
    multihop(ctx)?;
    links::random_links(ctx)?;
    loss(ctx)?;
    breakdown(ctx)?;
    partitions(ctx)?;
    concurrent_flows(ctx)?;
    access_point(ctx)?;
    micro_block_delay(ctx)?;
    web::web(ctx)?;
    voip::voip(ctx)?;
    dynamics::dynamic_routing(ctx)?;
    dynamics::g24(ctx)
}

/// What one protocol measured over every seed at one point.
#[derive(Clone, Debug, Default)]
struct Sample {
    /// Per flow, per seed: goodput in bit/s.
    goodputs: Vec<f64>,
    /// Per seed: aggregate goodput of the measured flows, bit/s.
    aggregate: Vec<f64>,
    /// Per seed: energy per delivered bit, µJ (NaN when nothing arrived).
    energy_uj: Vec<f64>,
    /// Per seed: Jain's index of the flows' goodputs.
    jain: Vec<f64>,
    completed: usize,
    flows: usize,
}

impl Sample {
    fn of(runs: &[RunResult]) -> Sample {
        let mut s = Sample::default();
        for r in runs {
            s.goodputs.extend(r.flows.iter().map(|f| f.goodput_bps));
            s.aggregate.push(r.summary.aggregate_goodput_bps);
            s.energy_uj
                .push(r.summary.energy_per_bit_j.map_or(f64::NAN, |j| j * 1e6));
            s.jain.push(r.summary.jain_fairness.unwrap_or(f64::NAN));
            s.completed += r.flows.iter().filter(|f| f.completed).count();
            s.flows += r.flows.len();
        }
        s
    }

    fn goodput_mbps(&self) -> f64 {
        mean(&self.goodputs) / 1e6
    }

    fn energy(&self) -> f64 {
        mean(&self.energy_uj)
    }
}

/// How long the long-lived experiments run. Hop hands a block to the
/// application only when it is whole, so a flow's goodput moves in steps of
/// a block (1 MiB): a short run quantises it (30 s at 280 kb/s is one
/// block) and needs several blocks per flow to say anything.
fn measured_for(ctx: &Ctx) -> &'static str {
    if ctx.quick {
        "60s"
    } else {
        "200s"
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// The q-quantile of `xs` (linear between order statistics).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Run `scenario` with `sets` plus `extra` for every seed.
fn sample(
    ctx: &mut Ctx,
    scenario: &Scenario,
    sets: &[&str],
    extra: &[String],
) -> Result<Sample, String> {
    let mut all: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    all.extend_from_slice(extra);
    Ok(Sample::of(&ctx.runs_of(scenario, &all)?))
}

/// §5.2: one flow over 1–7 hops, goodput and energy per protocol.
fn multihop(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("multihop.toml")?;
    let hops: &[u32] = if ctx.quick {
        &[2, 4]
    } else {
        &[1, 2, 3, 4, 5, 6, 7]
    };
    let bytes = if ctx.quick { "1MB" } else { "2MB" };
    ctx.say(&format!(
        "\n§5.2 multi-hop: one {bytes} transfer over an 802.11b chain (11 Mbit/s, TXOP, 18 \
         retries), per path length\n"
    ));
    ctx.say(&format!(
        "{:>4} {:>12} | {:>13} | {:>9} | {:>10} | {:>9}\n",
        "hops", "protocol", "goodput Mb/s", "hop / it", "µJ / bit", "completed"
    ));
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    let mut energy_fig = Vec::new();
    // (hops, label, goodput) for the paper's path mix below.
    let mut by_hops: Vec<(u32, &str, f64)> = Vec::new();
    for &h in hops {
        let mut hop_goodput = f64::NAN;
        for v in MULTIHOP {
            let mut extra = vec![
                format!("topology.hops={h}"),
                format!("flow.bytes=\"{bytes}\""),
            ];
            if v.label.starts_with("udp") {
                extra.extend(UDP_STREAM.iter().map(|x| x.to_string()));
                extra.push("flow.stop=\"20s\"".to_string());
            }
            let s = sample(ctx, &scenario, v.sets, &extra)?;
            let g = s.goodput_mbps();
            if v.label == "hop" {
                hop_goodput = g;
            }
            let reliable = !v.label.starts_with("udp");
            let completed = if reliable {
                format!("{}/{}", s.completed, s.flows)
            } else {
                "(datagrams)".to_string()
            };
            ctx.say(&format!(
                "{h:>4} {:>12} | {g:>13.3} | {:>9.2} | {:>10.2} | {completed:>9}\n",
                v.label,
                hop_goodput / g,
                s.energy()
            ));
            rows.push(format!(
                "{h},{},{g},{},{},{}",
                v.label,
                s.energy(),
                s.completed,
                s.flows
            ));
            fig.push((h as f64, v.label.to_string(), g));
            energy_fig.push((h as f64, v.label.to_string(), s.energy()));
            by_hops.push((h, v.label, g));
        }
    }
    mix_summary(ctx, hops, &by_hops);
    ctx.csv(
        "hop_multihop.csv",
        "hops,protocol,goodput_mbps,energy_uj_per_bit,completed,flows",
        &rows,
    )?;
    ctx.figure(
        "hop_multihop",
        "Multi-hop goodput (§5.2, Fig. 10)",
        "hops",
        "goodput (Mbit/s)",
        false,
        &fig,
    )?;
    ctx.figure(
        "hop_multihop_energy",
        "Multi-hop energy (§5.2)",
        "hops",
        "energy per delivered bit (µJ)",
        false,
        &energy_fig,
    )
}

/// Hop's gain over each baseline on the paper's mix of path lengths (the
/// lengths we ran; the mean is weighted by the paper's shares).
fn mix_summary(ctx: &mut Ctx, hops: &[u32], by_hops: &[(u32, &str, f64)]) {
    let goodput = |h: u32, label: &str| {
        by_hops
            .iter()
            .find(|(hh, l, _)| *hh == h && *l == label)
            .map(|t| t.2)
    };
    let mix: Vec<(u32, f64)> = PAPER_HOP_MIX
        .iter()
        .copied()
        .filter(|(h, _)| hops.contains(h))
        .collect();
    ctx.say(&format!(
        "Hop's gain on the paper's path-length mix ({} of its 2/3/4/5/7-hop shares ran): \
         ratio of weighted means, and the median of per-length ratios; paper: median (mean)\n",
        mix.iter()
            .map(|(h, _)| h.to_string())
            .collect::<Vec<_>>()
            .join("/")
    ));
    for v in MULTIHOP.iter().filter(|v| v.label != "hop") {
        let weighted = |label: &str| {
            let w: f64 = mix.iter().map(|m| m.1).sum();
            mix.iter()
                .map(|&(h, share)| share * goodput(h, label).unwrap_or(f64::NAN))
                .sum::<f64>()
                / w
        };
        let ratios: Vec<f64> = mix
            .iter()
            .map(|&(h, _)| {
                goodput(h, "hop").unwrap_or(f64::NAN) / goodput(h, v.label).unwrap_or(f64::NAN)
            })
            .collect();
        let (paper_median, paper_mean) = PAPER_MULTIHOP
            .iter()
            .find(|p| p.0 == v.label)
            .map_or((None, None), |p| (Some(p.1), Some(p.2)));
        ctx.say(&format!(
            "  hop / {:<12} mean {:>6.2} median {:>6.2}   paper {} ({})\n",
            v.label,
            weighted("hop") / weighted(v.label),
            quantile(&ratios, 0.5),
            paper(paper_median, 1),
            paper(paper_mean, 1)
        ));
    }
}

/// §5.1.2, Fig. 8(b): one link, loss injected below the transport.
fn loss(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("loss.toml")?;
    let rates: &[f64] = if ctx.quick {
        &[0.0, 0.2, 0.5]
    } else {
        &[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    };
    ctx.say(
        "\n§5.1.2 graceful degradation: one 802.11b hop, loss injected in both directions below \
         the transport (no link ARQ), a 2 MB file, 60 s at most\n",
    );
    ctx.say(&format!(
        "{:>5} {:>8} | {:>13} | {:>12} | {:>10}\n",
        "loss", "protocol", "goodput Mb/s", "of loss 0", "µJ / bit"
    ));
    let protocols = ["hop", "cubic", "newreno"];
    let mut base = [f64::NAN; 3];
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    for &p in rates {
        for (i, proto) in protocols.iter().enumerate() {
            let sets = [
                format!("flow.protocol=\"{proto}\""),
                format!("medium.links=[{{ a = 0, b = 1, per = {p} }}]"),
            ];
            let s = Sample::of(&ctx.runs_of(&scenario, &sets)?);
            let g = s.goodput_mbps();
            if p == 0.0 {
                base[i] = g;
            }
            ctx.say(&format!(
                "{:>4.0}% {proto:>8} | {g:>13.3} | {:>12.2} | {:>10.2}\n",
                p * 100.0,
                g / base[i],
                s.energy()
            ));
            rows.push(format!("{p},{proto},{g},{}", s.energy()));
            fig.push((p * 100.0, proto.to_string(), g));
        }
    }
    ctx.say(
        "paper (Fig. 8(b), plot only): TCP near zero at about 20% loss; Hop degrades about \
         linearly and still works at about 80%\n",
    );
    ctx.csv(
        "hop_loss.csv",
        "loss,protocol,goodput_mbps,energy_uj_per_bit",
        &rows,
    )?;
    ctx.figure(
        "hop_loss",
        "Goodput vs injected loss (§5.1.2, Fig. 8b)",
        "injected loss (%)",
        "goodput (Mbit/s)",
        false,
        &fig,
    )
}

/// The first `n` flows of `base` (a scenario listing `[[flows]]`).
fn first_flows(ctx: &Ctx, base: &Scenario, n: usize) -> Result<Scenario, String> {
    let mut table = base.table().clone();
    let flows = table
        .get_mut("flows")
        .and_then(|f| f.as_array_mut())
        .ok_or_else(|| format!("{}: no [[flows]] to take {n} of", base.name()))?;
    if flows.len() < n {
        return Err(format!(
            "{}: {} flows listed, {n} needed",
            base.name(),
            flows.len()
        ));
    }
    flows.truncate(n);
    Scenario::from_table(table, base.name(), ctx.dir.clone()).map_err(|e| e.to_string())
}

/// §5.4, Fig. 12: aggregate goodput of the four versions of Hop, 10, 20
/// and 30 flows on the mesh.
fn breakdown(ctx: &mut Ctx) -> Result<(), String> {
    let mesh = ctx.load("mesh.toml")?;
    let loads: &[usize] = if ctx.quick { &[10] } else { &[10, 30] };
    let stop = measured_for(ctx);
    ctx.say(&format!(
        "\n§5.4 breakdown: N backlogged Hop flows on the 20-node random mesh, {stop}; aggregate \
         goodput and its gain over basic Hop\n"
    ));
    ctx.say(&format!(
        "{:>5} {:>17} | {:>13} | {:>8} {:>8} | {:>10}\n",
        "flows", "version", "aggr. Mb/s", "gain", "paper", "µJ / bit"
    ));
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    for &n in loads {
        let scenario = first_flows(ctx, &mesh, n)?;
        let paper_gains = PAPER_BREAKDOWN.iter().find(|p| p.0 == n).map(|p| p.1);
        let mut basic = f64::NAN;
        for (i, v) in BREAKDOWN.iter().enumerate() {
            let extra = [
                format!("stop=\"{stop}\""),
                "flow.protocol=\"hop\"".to_string(),
            ];
            let s = sample(ctx, &scenario, v.sets, &extra)?;
            let aggr = mean(&s.aggregate) / 1e6;
            if i == 0 {
                basic = aggr;
            }
            let paper_gain = paper_gains.and_then(|g| g[i]);
            ctx.say(&format!(
                "{n:>5} {:>17} | {aggr:>13.3} | {:>8.2} {:>8} | {:>10.2}\n",
                v.label,
                aggr / basic,
                paper(paper_gain, 1),
                s.energy()
            ));
            rows.push(format!(
                "{n},{},{aggr},{},{}",
                v.label,
                aggr / basic,
                s.energy()
            ));
            fig.push((n as f64, v.label.to_string(), aggr));
        }
    }
    ctx.csv(
        "hop_breakdown.csv",
        "flows,version,aggregate_mbps,gain_over_basic,energy_uj_per_bit",
        &rows,
    )?;
    ctx.figure(
        "hop_breakdown",
        "Hop breakdown (§5.4, Fig. 12)",
        "concurrent flows",
        "aggregate goodput (Mbit/s)",
        false,
        &fig,
    )
}

/// §5.7, Table 4: the partitioned 7-hop path.
fn partitions(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("partitions.toml")?;
    let stop = if ctx.quick { "240s" } else { "480s" };
    ctx.say(&format!(
        "\n§5.7 partitions (Table 4): 7-hop 802.11b path, nodes 3 and 5 down a minute each in \
         turn (never an end-to-end path), backlogged, {stop}\n"
    ));
    ctx.say(&format!(
        "{:>10} | {:>13} | {:>14} | {:>10}\n",
        "protocol", "goodput kb/s", "paper kb/s", "µJ / bit"
    ));
    const VARIANTS: &[(&str, &[&str], Option<f64>)] = &[
        (
            "hop H=1",
            &["flow.protocol=\"hop\"", "flow.hop.h=1"],
            Some(320.0),
        ),
        (
            "hop H=100",
            &["flow.protocol=\"hop\"", "flow.hop.h=100"],
            Some(457.0),
        ),
        ("dtn", &["flow.protocol=\"dtn\""], Some(159.0)),
        ("hbh-tcp", &["flow.protocol=\"hbh-tcp\""], None),
        ("cubic", &["flow.protocol=\"cubic\""], Some(0.0)),
    ];
    let mut rows = Vec::new();
    for (label, sets, paper_kbps) in VARIANTS {
        let s = sample(ctx, &scenario, sets, &[format!("stop=\"{stop}\"")])?;
        let kbps = s.goodput_mbps() * 1e3;
        ctx.say(&format!(
            "{label:>10} | {kbps:>13.1} | {:>14} | {:>10.2}\n",
            paper(*paper_kbps, 0),
            s.energy()
        ));
        rows.push(format!("{label},{kbps},{}", s.energy()));
    }
    ctx.say(
        "paper's DTN2.5 is a custody-transfer bundle relay over per-hop TCP; ours is `dtn` \
         (1 MiB bundles, CUBIC per hop)\n",
    );
    ctx.csv(
        "hop_partitions.csv",
        "protocol,goodput_kbps,energy_uj_per_bit",
        &rows,
    )
}

/// §5.3, Fig. 11 and Table 2: 30 concurrent flows, per-flow quartiles and
/// Jain's index.
fn concurrent_flows(ctx: &mut Ctx) -> Result<(), String> {
    let mesh = ctx.load("mesh.toml")?;
    let n = if ctx.quick { 10 } else { 30 };
    let stop = measured_for(ctx);
    let scenario = first_flows(ctx, &mesh, n)?;
    ctx.say(&format!(
        "\n§5.3 high load: {n} backlogged flows on the 20-node random mesh, {stop}; per-flow \
         goodput over every flow and seed (kb/s)\n"
    ));
    ctx.say(&format!(
        "{:>8} | {:>8} {:>8} {:>8} {:>8} | {:>6} {:>6} | {:>10}\n",
        "protocol", "Q1", "median", "Q3", "mean", "Jain", "paper", "µJ / bit"
    ));
    const PROTOCOLS: &[(&str, Option<f64>)] = &[
        ("hop", Some(0.78)),
        ("cubic", Some(0.12)),
        ("hbh-tcp", Some(0.21)),
    ];
    let mut rows = Vec::new();
    for (proto, paper_jain) in PROTOCOLS {
        let sets = [
            format!("flow.protocol=\"{proto}\""),
            format!("stop=\"{stop}\""),
        ];
        let s = Sample::of(&ctx.runs_of(&scenario, &sets)?);
        let kbps: Vec<f64> = s.goodputs.iter().map(|g| g / 1e3).collect();
        let q = [0.25, 0.5, 0.75].map(|p| quantile(&kbps, p));
        let jain = mean(&s.jain);
        ctx.say(&format!(
            "{proto:>8} | {:>8.1} {:>8.1} {:>8.1} {:>8.1} | {jain:>6.2} {:>6} | {:>10.2}\n",
            q[0],
            q[1],
            q[2],
            mean(&kbps),
            paper(*paper_jain, 2),
            s.energy()
        ));
        rows.push(format!(
            "{proto},{},{},{},{},{jain},{}",
            q[0],
            q[1],
            q[2],
            mean(&kbps),
            s.energy()
        ));
    }
    ctx.say(
        "paper (30 flows, 30 min): Hop median 54.9 kb/s, the others < 2.8; mean gain 1.25x over \
         TCP, 1.4x over hop-by-hop TCP; Jain's index hop-weighted (ours is not weighted)\n",
    );
    ctx.csv(
        "hop_concurrent.csv",
        "protocol,q1_kbps,median_kbps,q3_kbps,mean_kbps,jain,energy_uj_per_bit",
        &rows,
    )
}

/// §5.5, Table 3: seven hidden senders to one access point.
fn access_point(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("access-point.toml")?;
    let stop = measured_for(ctx);
    ctx.say(&format!(
        "\n§5.5 access point (Table 3): 7 backlogged stations to one AP, each hidden from four \
         others, {stop}; per-flow goodput (kb/s)\n"
    ));
    ctx.say(&format!(
        "{:>13} | {:>7} {:>7} | {:>7} {:>7} | {:>5} {:>5} | {:>10}\n",
        "protocol", "mean", "paper", "median", "paper", "Jain", "paper", "µJ / bit"
    ));
    const VARIANTS: &[(&str, &[&str], [f64; 3])] = &[
        ("hop", &["flow.protocol=\"hop\""], [663.0, 652.0, 0.93]),
        (
            "hop blind-first",
            &["flow.protocol=\"hop\"", "flow.hop.bsyn_first=false"],
            [663.0, 652.0, 0.93],
        ),
        ("cubic", &["flow.protocol=\"cubic\""], [587.0, 244.0, 0.35]),
        (
            "cubic+RTS/CTS",
            &["flow.protocol=\"cubic\"", "medium.rts_threshold=true"],
            [463.0, 333.0, 0.4],
        ),
    ];
    let mut rows = Vec::new();
    for (label, sets, p) in VARIANTS {
        let s = sample(ctx, &scenario, sets, &[format!("stop=\"{stop}\"")])?;
        let kbps: Vec<f64> = s.goodputs.iter().map(|g| g / 1e3).collect();
        let (m, med, jain) = (mean(&kbps), quantile(&kbps, 0.5), mean(&s.jain));
        ctx.say(&format!(
            "{label:>14} | {m:>7.0} {:>7.0} | {med:>7.0} {:>7.0} | {jain:>5.2} {:>5.2} | {:>10.2}\n",
            p[0],
            p[1],
            p[2],
            s.energy()
        ));
        rows.push(format!("{label},{m},{med},{jain},{}", s.energy()));
    }
    ctx.csv(
        "hop_access_point.csv",
        "protocol,mean_kbps,median_kbps,jain,energy_uj_per_bit",
        &rows,
    )
}

/// `base` with the size of its last `[[flows]]` entry (the small file) set.
fn small_file_of(ctx: &Ctx, base: &Scenario, bytes: u64) -> Result<Scenario, String> {
    let mut table = base.table().clone();
    let last = table
        .get_mut("flows")
        .and_then(|f| f.as_array_mut())
        .and_then(|f| f.last_mut())
        .and_then(|f| f.as_table_mut())
        .ok_or_else(|| format!("{}: no [[flows]] entry for the small file", base.name()))?;
    last.insert("bytes".into(), (bytes as i64).into());
    Scenario::from_table(table, base.name(), ctx.dir.clone()).map_err(|e| e.to_string())
}

/// §5.6.1, Fig. 13: the delay of one small file sent to an access point
/// while four hidden or neighbouring stations send continually.
fn micro_block_delay(ctx: &mut Ctx) -> Result<(), String> {
    let base = ctx.load("micro-block.toml")?;
    let sizes: &[u64] = if ctx.quick {
        &[4, 64]
    } else {
        &[1, 2, 4, 8, 16, 32, 64, 128]
    };
    const VARIANTS: &[(&str, &[&str])] = &[
        ("hop", &["flow.protocol=\"hop\""]),
        (
            "hop blind-first",
            &["flow.protocol=\"hop\"", "flow.hop.bsyn_first=false"],
        ),
        ("cubic", &["flow.protocol=\"cubic\""]),
        (
            "cubic+RTS/CTS",
            &["flow.protocol=\"cubic\"", "medium.rts_threshold=true"],
        ),
    ];
    ctx.say(
        "\n§5.6.1 small-file delay (Fig. 13): 4 backlogged stations and one small file (at 20 s) \
         to an access point; completion time of the file, s (— = not within 40 s, never); TCP's \
         includes its handshake (the paper subtracts it)\n",
    );
    ctx.say(&format!("{:>6} |", "KB"));
    for (label, _) in VARIANTS {
        ctx.say(&format!(" {label:>14} |"));
    }
    ctx.say(&format!(" {:>10}\n", "hop µJ/bit"));
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    for &kb in sizes {
        let scenario = small_file_of(ctx, &base, kb * 1000)?;
        ctx.say(&format!("{kb:>6} |"));
        let mut hop_energy = f64::NAN;
        for (label, sets) in VARIANTS {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let runs = ctx.runs_of(&scenario, &sets)?;
            let delays: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.flows.last().and_then(|f| f.completion_time_s))
                .collect();
            let delay = if delays.len() == runs.len() {
                mean(&delays)
            } else {
                f64::NAN
            };
            let energy = Sample::of(&runs).energy();
            if *label == "hop" {
                hop_energy = energy;
            }
            let shown = if delay.is_nan() {
                "—".to_string()
            } else {
                format!("{delay:.3}")
            };
            ctx.say(&format!(" {shown:>14} |"));
            rows.push(format!("{kb},{label},{delay},{},{energy}", delays.len()));
            if !delay.is_nan() {
                fig.push((kb as f64, label.to_string(), delay));
            }
        }
        ctx.say(&format!(" {hop_energy:>10.2}\n"));
    }
    ctx.say(
        "paper: Hop's delay below TCP's (with or without RTS/CTS) at every size, 3-15x below 16 KB\n",
    );
    ctx.csv(
        "hop_micro_block.csv",
        "kbytes,protocol,delay_s,completed_runs,energy_uj_per_bit",
        &rows,
    )?;
    ctx.figure(
        "hop_micro_block",
        "Small-file delay at an access point (§5.6.1, Fig. 13)",
        "file size (KB)",
        "delay (s)",
        true,
        &fig,
    )
}
