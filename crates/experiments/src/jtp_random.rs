//! JTP on random topologies: static (Fig. 7), with random-waypoint
//! mobility (Fig. 8) and the JAVeLEN system run's traffic (Table 2). Each
//! seed draws its topology and flows, and every protocol runs on the same
//! draw ("all the protocols run under the same conditions in the same
//! run", §6.1.2).

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;

use joulenet_sim::RunResult;

use crate::jtp::{delivered_bits, mean_ci, transmit_energy_per_bit_uj};
use crate::Ctx;

const PROTOCOLS: [&str; 3] = ["jtp", "atp", "rate-sack"];
/// JTP's payload per packet in these scenarios (Table 1).
const PACKET: f64 = 800.0;

/// The draw's generator: one stream per (seed, experiment).
fn rng(seed: u64, salt: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt)
}

/// `count` backlogged flows between distinct random nodes, started at
/// random within the first 10 s, as a `flows=[…]` override.
fn random_flows(seed: u64, nodes: u32, count: usize) -> String {
    let mut rng = rng(seed, u64::from(nodes));
    let flows: Vec<String> = (0..count)
        .map(|_| {
            let from = rng.random_range(0..nodes);
            let to = (from + rng.random_range(1..nodes)) % nodes;
            let start = rng.random_range(0.0..10.0);
            format!("{{ from = {from}, to = {to}, start = \"{start:.3}s\" }}")
        })
        .collect();
    format!("flows=[{}]", flows.join(", "))
}

/// Sum of the flows' goodput over the run (kb/s).
fn goodput_kbps(r: &RunResult) -> f64 {
    delivered_bits(r) / r.summary.duration_s / 1e3
}

/// Energy per bit and goodput of each protocol on one set of draws.
struct Compared {
    proto: &'static str,
    energy: (f64, f64),
    goodput: (f64, f64),
    runs: Vec<RunResult>,
}

fn compare(
    ctx: &mut Ctx,
    scenario: &joulenet_sim::Scenario,
    sets_of: &(dyn Fn(u64) -> Vec<String> + Sync),
) -> Result<Vec<Compared>, String> {
    let mut out = Vec::new();
    for proto in PROTOCOLS {
        let runs = ctx.runs_drawn(scenario, &|seed| {
            let mut sets = sets_of(seed);
            sets.push(format!("flow.protocol=\"{proto}\""));
            sets
        })?;
        let energy = mean_ci(
            &runs
                .iter()
                .map(transmit_energy_per_bit_uj)
                .collect::<Vec<_>>(),
        );
        let goodput = mean_ci(&runs.iter().map(goodput_kbps).collect::<Vec<_>>());
        out.push(Compared {
            proto,
            energy,
            goodput,
            runs,
        });
    }
    Ok(out)
}

fn header(ctx: &mut Ctx, x: &str) {
    ctx.say(&format!(
        "{x:>6} {:>9} | {:>16} | {:>14} | {:>12}\n",
        "proto", "tx µJ/bit", "goodput kb/s", "ratio to jtp"
    ));
}

/// Print one comparison; rows for the CSV and points for the figures.
/// Where JTP (the first protocol compared) does not lead at point `x`: the
/// baselines that spent less per bit, and those with more goodput.
fn jtp_behind(x: &str, compared: &[Compared], out: &mut (Vec<String>, Vec<String>)) {
    let jtp = &compared[0];
    for c in &compared[1..] {
        if c.energy.0 < jtp.energy.0 {
            out.0.push(format!("{} at {x}", c.proto));
        }
        if c.goodput.0 > jtp.goodput.0 {
            out.1.push(format!("{} at {x}", c.proto));
        }
    }
}

/// The paper's "JTP leads in both metrics at every point", checked.
fn jtp_leads_claims(ctx: &mut Ctx, figure: &str, every: &str, behind: &(Vec<String>, Vec<String>)) {
    let list = |v: &Vec<String>| {
        if v.is_empty() {
            String::new()
        } else {
            format!(" (not: {})", v.join(", "))
        }
    };
    ctx.claim(
        figure,
        &format!(
            "JTP spends the least energy per bit at every {every}{}",
            list(&behind.0)
        ),
        behind.0.is_empty(),
    );
    ctx.claim(
        figure,
        &format!(
            "JTP has the highest goodput at every {every}{}",
            list(&behind.1)
        ),
        behind.1.is_empty(),
    );
}

fn report(
    ctx: &mut Ctx,
    x: f64,
    compared: &[Compared],
    rows: &mut Vec<String>,
    energy_fig: &mut Vec<(f64, String, f64)>,
    goodput_fig: &mut Vec<(f64, String, f64)>,
) {
    let jtp = compared[0].energy.0;
    for c in compared {
        ctx.say(&format!(
            "{x:>6} {:>9} | {:>8.3} ± {:<5.2} | {:>6.0} ± {:<5.0} | {:>12.2}\n",
            c.proto,
            c.energy.0,
            c.energy.1,
            c.goodput.0,
            c.goodput.1,
            c.energy.0 / jtp
        ));
        rows.push(format!(
            "{x},{},{},{},{},{}",
            c.proto, c.energy.0, c.energy.1, c.goodput.0, c.goodput.1
        ));
        energy_fig.push((x, c.proto.to_string(), c.energy.0));
        goodput_fig.push((x, c.proto.to_string(), c.goodput.0));
    }
}

fn figures(
    ctx: &Ctx,
    name: &str,
    title: &str,
    xlabel: &str,
    energy_fig: &[(f64, String, f64)],
    goodput_fig: &[(f64, String, f64)],
) -> Result<(), String> {
    ctx.figure(
        &format!("{name}_energy"),
        &format!("{title}: energy"),
        xlabel,
        "transmit energy per delivered bit (µJ)",
        false,
        energy_fig,
    )?;
    ctx.figure(
        &format!("{name}_goodput"),
        &format!("{title}: goodput"),
        xlabel,
        "goodput (kb/s)",
        false,
        goodput_fig,
    )
}

/// Fig. 7: static random topologies of several sizes, 5 flows.
pub(crate) fn random_static(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("random.toml")?;
    let sizes: &[u32] = if ctx.quick { &[10] } else { &[10, 15, 20, 25] };
    let stop = if ctx.quick { 60.0 } else { 300.0 };
    ctx.say(&format!(
        "\nFig. 7: static random topologies — 5 random flows, one node per 150 m × 150 m, TDMA, \
         good/bad links, {stop} s (the paper: 4000 s, 10 runs)\n"
    ));
    header(ctx, "nodes");
    let (mut rows, mut energy_fig, mut goodput_fig) = (Vec::new(), Vec::new(), Vec::new());
    let mut behind = (Vec::new(), Vec::new());
    for &n in sizes {
        let field = 150.0 * f64::from(n).sqrt();
        let compared = compare(ctx, &scenario, &|seed| {
            vec![
                format!("stop=\"{stop}s\""),
                format!("topology.nodes={n}"),
                format!("topology.field={field:.0}"),
                format!("topology.seed={seed}"),
                random_flows(seed, n, 5),
            ]
        })?;
        jtp_behind(&format!("{n} nodes"), &compared, &mut behind);
        report(
            ctx,
            f64::from(n),
            &compared,
            &mut rows,
            &mut energy_fig,
            &mut goodput_fig,
        );
    }
    ctx.say("paper: JTP spends the least energy per bit and has the highest goodput at every size (plots only)\n");
    jtp_leads_claims(ctx, "Fig. 7", "size", &behind);
    ctx.csv(
        "jtp_fig7.csv",
        "nodes,protocol,tx_uj_per_bit,tx_uj_ci,goodput_kbps,goodput_ci",
        &rows,
    )?;
    figures(
        ctx,
        "jtp_random",
        "Static random topologies (Fig. 7)",
        "nodes",
        &energy_fig,
        &goodput_fig,
    )
}

/// JTP's packets recovered by relays and by the source, per packet
/// delivered (Fig. 8(c)).
fn recovery_shares(r: &RunResult) -> (f64, f64) {
    let delivered =
        (r.flows.iter().map(|f| f.bytes_delivered).sum::<u64>() as f64 / PACKET).max(1.0);
    let local: f64 = (0..r.flows.len())
        .map(|f| {
            r.series
                .iter()
                .rfind(|s| s.series == "jtp_locally_recovered" && s.entity == format!("flow{f}"))
                .map_or(0.0, |s| s.value)
        })
        .sum();
    let end_to_end = r.flows.iter().map(|f| f.retransmitted_packets).sum::<u64>() as f64;
    (local / delivered, end_to_end / delivered)
}

/// Fig. 8: 15 nodes moving by random waypoint at three speeds.
pub(crate) fn mobile(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("mobile.toml")?;
    let speeds: &[f64] = if ctx.quick { &[1.0] } else { &[0.1, 1.0, 5.0] };
    let stop = if ctx.quick { 60.0 } else { 300.0 };
    ctx.say(&format!(
        "\nFig. 8: random waypoint — 15 nodes, 90 m field, 40 m range, 5 random flows, pauses of \
         100 s, {stop} s (the paper: 4000 s, 10 runs)\n"
    ));
    header(ctx, "m/s");
    let (mut rows, mut energy_fig, mut goodput_fig) = (Vec::new(), Vec::new(), Vec::new());
    let mut recovery = Vec::new();
    let mut recovery_fig = Vec::new();
    let mut behind = (Vec::new(), Vec::new());
    for &speed in speeds {
        let compared = compare(ctx, &scenario, &|seed| {
            vec![
                format!("stop=\"{stop}s\""),
                format!("medium.mobility.speed={speed}"),
                format!("topology.seed={seed}"),
                random_flows(seed, 15, 5),
            ]
        })?;
        jtp_behind(&format!("{speed} m/s"), &compared, &mut behind);
        report(
            ctx,
            speed,
            &compared,
            &mut rows,
            &mut energy_fig,
            &mut goodput_fig,
        );
        let shares: Vec<(f64, f64)> = compared[0].runs.iter().map(recovery_shares).collect();
        let local = mean_ci(&shares.iter().map(|s| s.0).collect::<Vec<_>>());
        let e2e = mean_ci(&shares.iter().map(|s| s.1).collect::<Vec<_>>());
        recovery.push((speed, local, e2e));
        recovery_fig.push((speed, "locally recovered".to_string(), local.0));
        recovery_fig.push((speed, "end-to-end recovered".to_string(), e2e.0));
    }
    ctx.say("JTP's recovered packets per delivered packet (Fig. 8(c)):\n");
    for (speed, local, e2e) in &recovery {
        ctx.say(&format!(
            "{speed:>6} m/s | locally {:.4} ± {:.4} | end to end {:.4} ± {:.4}\n",
            local.0, local.1, e2e.0, e2e.1
        ));
    }
    ctx.say(
        "paper: JTP leads in both metrics at every speed, and relays recover packets even when \
         paths keep changing (plots only)\n",
    );
    jtp_leads_claims(ctx, "Fig. 8", "speed", &behind);
    let fastest = recovery.iter().max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((speed, local, _)) = fastest {
        ctx.claim(
            "Fig. 8",
            &format!(
                "relays still recover packets locally at {speed} m/s ({:.3} per delivered packet)",
                local.0
            ),
            local.0 > 0.0,
        );
    }
    let mut recovery_rows: Vec<String> = recovery
        .iter()
        .map(|(s, l, e)| format!("{s},{},{}", l.0, e.0))
        .collect();
    recovery_rows.sort();
    ctx.csv(
        "jtp_fig8_recovery.csv",
        "speed,locally_recovered_per_delivered,end_to_end_per_delivered",
        &recovery_rows,
    )?;
    ctx.csv(
        "jtp_fig8.csv",
        "speed,protocol,tx_uj_per_bit,tx_uj_ci,goodput_kbps,goodput_ci",
        &rows,
    )?;
    ctx.figure(
        "jtp_mobile_recovery",
        "Random waypoint: JTP's recovered packets (Fig. 8c)",
        "speed (m/s)",
        "packets per delivered packet",
        true,
        &recovery_fig,
    )?;
    figures(
        ctx,
        "jtp_mobile",
        "Random waypoint (Fig. 8)",
        "speed (m/s)",
        &energy_fig,
        &goodput_fig,
    )
}

/// Poisson arrivals at every node (mean gap `gap_s`) of transfers with
/// exponential sizes (mean `mean_bytes`) to random other nodes, until
/// `stop_s`, as a `flows=[…]` override.
fn poisson_flows(seed: u64, nodes: u32, gap_s: f64, mean_bytes: f64, stop_s: f64) -> String {
    let mut rng = rng(seed, 0x7AB1E2);
    let gap = Exp::new(1.0 / gap_s).expect("a positive mean gap");
    let size = Exp::new(1.0 / mean_bytes).expect("a positive mean size");
    let mut flows = Vec::new();
    for from in 0..nodes {
        let mut t = gap.sample(&mut rng);
        while t < stop_s {
            let to = (from + rng.random_range(1..nodes)) % nodes;
            let bytes = (size.sample(&mut rng) as u64).max(1);
            flows.push(format!(
                "{{ from = {from}, to = {to}, start = \"{t:.3}s\", bytes = {bytes} }}"
            ));
            t += gap.sample(&mut rng);
        }
    }
    format!("flows=[{}]", flows.join(", "))
}

/// Table 2: the JAVeLEN system run's traffic on a 14-node static mesh.
pub(crate) fn system(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("system.toml")?;
    let stop = if ctx.quick { 300.0 } else { 1800.0 };
    ctx.say(&format!(
        "\nTable 2: the system run — 14 nodes, transfers arriving at each node every 400 s on \
         average, 100 KB on average, steady links, {stop} s\n"
    ));
    ctx.say(&format!(
        "{:>9} | {:>14} {:>10} | {:>16} {:>10} | {:>9}\n",
        "proto", "tx µJ/bit", "paper", "mean flow kb/s", "paper", "completed"
    ));
    const PAPER: [(&str, f64, f64); 3] = [
        ("jtp", 5.4, 0.63),
        ("atp", 6.8, 0.44),
        ("rate-sack", 10.5, 0.17),
    ];
    let compared = compare(ctx, &scenario, &|seed| {
        vec![
            format!("stop=\"{stop}s\""),
            format!("topology.seed={seed}"),
            poisson_flows(seed, 14, 400.0, 100_000.0, stop),
        ]
    })?;
    let mut rows = Vec::new();
    let mut mean_flow_kbps = Vec::new();
    for (c, (_, paper_energy, paper_goodput)) in compared.iter().zip(PAPER) {
        let per_flow = mean_ci(
            &c.runs
                .iter()
                .map(|r| {
                    r.flows.iter().map(|f| f.goodput_bps).sum::<f64>()
                        / r.flows.len().max(1) as f64
                        / 1e3
                })
                .collect::<Vec<_>>(),
        );
        let completed = mean_ci(
            &c.runs
                .iter()
                .map(|r| r.summary.flows_completed as f64 / r.summary.flows.max(1) as f64)
                .collect::<Vec<_>>(),
        );
        mean_flow_kbps.push(per_flow.0);
        ctx.say(&format!(
            "{:>9} | {:>6.3} ± {:<5.2} {:>10} | {:>7.1} ± {:<6.1} {:>10} | {:>9.3}\n",
            c.proto,
            c.energy.0,
            c.energy.1,
            paper_energy,
            per_flow.0,
            per_flow.1,
            paper_goodput,
            completed.0
        ));
        rows.push(format!(
            "{},{},{},{},{},{},{}",
            c.proto, c.energy.0, paper_energy, per_flow.0, paper_goodput, completed.0, c.goodput.0
        ));
    }
    ctx.say(
        "paper (real radios, 30 min): 0.0054 / 0.0068 / 0.0105 mJ per delivered bit and 0.63 / \
         0.44 / 0.17 \"kbps\" average goodput for JTP / ATP / TCP-SACK\n",
    );
    // The paper's order in both columns: JTP, then ATP, then TCP-SACK.
    let names: Vec<&str> = compared.iter().map(|c| c.proto).collect();
    let energy: Vec<f64> = compared.iter().map(|c| c.energy.0).collect();
    ctx.claim(
        "Table 2",
        &format!(
            "energy per bit in the paper's order, {} lowest to highest ({})",
            names.join(" < "),
            energy
                .iter()
                .map(|e| format!("{e:.3}"))
                .collect::<Vec<_>>()
                .join(" / ")
        ),
        energy.windows(2).all(|w| w[0] < w[1]),
    );
    ctx.claim(
        "Table 2",
        &format!(
            "mean flow goodput in the paper's order, {} highest to lowest ({})",
            names.join(" > "),
            mean_flow_kbps
                .iter()
                .map(|g| format!("{g:.1}"))
                .collect::<Vec<_>>()
                .join(" / ")
        ),
        mean_flow_kbps.windows(2).all(|w| w[0] > w[1]),
    );
    ctx.csv(
        "jtp_table2.csv",
        "protocol,tx_uj_per_bit,paper_uj_per_bit,mean_flow_goodput_kbps,paper_goodput_kbps,completed_share,aggregate_goodput_kbps",
        &rows,
    )
}
