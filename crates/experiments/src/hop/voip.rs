//! §5.8, Table 5: one VoIP call beside 5 or 10 backlogged Hop or TCP flows,
//! every flow over a random pair three hops apart on the 20-node mesh
//! (`scenarios/hop/voip.toml`). The call is UDP, 20-byte packets at
//! 8 kbit/s (G.729A); it is scored by the E-model of ITU-T G.107
//! (`crate::emodel`) from its one-way delay, loss and loss burstiness, and
//! its conditional loss probability is measured from which packets arrived.

use super::mesh::{flow, with_flows, Mesh};
use super::{mean, quantile, Ctx, Sample};
use crate::emodel::{burst_ratio, mos, rating, Connection, G729A};
use rand::{Rng, SeedableRng};

/// Mouth-to-ear delay the network does not add: G.729A's two 10 ms frames
/// per packet and its 5 ms look-ahead.
const CODEC_DELAY_MS: f64 = 25.0;

/// A row of Table 5.
struct PaperRow {
    flows: usize,
    protocol: &'static str,
    median_kbps: f64,
    mean_kbps: f64,
    clp: f64,
    mos: f64,
}

const fn row(
    flows: usize,
    protocol: &'static str,
    [median_kbps, mean_kbps, clp, mos]: [f64; 4],
) -> PaperRow {
    PaperRow {
        flows,
        protocol,
        median_kbps,
        mean_kbps,
        clp,
        mos,
    }
}

const PAPER: &[PaperRow] = &[
    row(5, "hop", [468.5, 1474.0, 0.37, 4.12]),
    row(5, "cubic", [2.0, 1372.0, 0.48, 4.19]),
    row(10, "hop", [184.0, 336.0, 0.57, 3.92]),
    row(10, "cubic", [1.7, 260.0, 0.31, 4.16]),
];

/// `base` with backlogged flows over `pairs`, then the call over `call`.
fn with_call(
    ctx: &Ctx,
    base: &joulenet_sim::Scenario,
    pairs: &[(u32, u32)],
    call: (u32, u32),
) -> Result<joulenet_sim::Scenario, String> {
    let mut flows: Vec<_> = pairs.iter().map(|&(a, b)| flow(a, b, &[])).collect();
    flows.push(flow(
        call.0,
        call.1,
        &[
            ("protocol", "udp".into()),
            ("app", "cbr".into()),
            ("rate", "8kbps".into()),
            ("message", 20.into()),
            ("background", true.into()),
            ("label", "voip".into()),
        ],
    ));
    with_flows(ctx, base, flows)
}

/// What the call got in one run: (loss, CLP, one-way delay ms, MOS).
fn call_quality(r: &joulenet_sim::RunResult) -> Option<(f64, f64, f64, f64)> {
    let call = r.flows.iter().find(|f| f.label == "voip")?;
    let (got, lost) = (call.messages_received?, call.messages_lost?);
    let loss = lost as f64 / (got + lost).max(1) as f64;
    let clp = call.conditional_loss_probability.unwrap_or(0.0);
    let delay = call.delay_mean_ms? + CODEC_DELAY_MS;
    let r = rating(&Connection::voice(
        delay,
        G729A,
        loss,
        burst_ratio(loss, clp),
    ));
    Some((loss, clp, delay, mos(r)))
}

pub(super) fn voip(ctx: &mut Ctx) -> Result<(), String> {
    let base = ctx.load("voip.toml")?;
    let mesh = Mesh::of(ctx, &base)?;
    let three = mesh.pairs(|h| h == 3);
    if three.is_empty() {
        return Err("hop-voip: no pair of mesh nodes is three hops apart".into());
    }
    let loads: &[usize] = if ctx.quick { &[5] } else { &[5, 10] };
    let stop = super::measured_for(ctx);
    ctx.say(&format!(
        "\n§5.8 VoIP (Table 5): one call (UDP, 20 B at 8 kb/s, G.729A) beside N backlogged \
         flows, each over a random pair three hops apart on the mesh (802.11e queues), {stop}; \
         data flows' goodput (kb/s), the call's loss, CLP, delay (network + 25 ms codec) and \
         E-model MOS\n"
    ));
    ctx.say(&format!(
        "{:>5} {:>6} | {:>7} {:>7} | {:>7} {:>7} | {:>5} | {:>5} {:>5} | {:>8} | {:>4} {:>4} | {:>8}\n",
        "flows", "proto", "median", "paper", "mean", "paper", "loss", "CLP", "paper", "delay ms",
        "MOS", "pap.", "µJ / bit"
    ));
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(58);
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    for &n in loads {
        let pairs: Vec<(u32, u32)> = (0..n)
            .map(|_| three[rng.random_range(0..three.len())])
            .collect();
        let call = three[rng.random_range(0..three.len())];
        let scenario = with_call(ctx, &base, &pairs, call)?;
        for proto in ["hop", "cubic"] {
            let sets = [
                format!("flow.protocol=\"{proto}\""),
                format!("stop=\"{stop}\""),
            ];
            let runs = ctx.runs_of(&scenario, &sets)?;
            let quality: Vec<(f64, f64, f64, f64)> = runs.iter().filter_map(call_quality).collect();
            let data: Vec<f64> = runs
                .iter()
                .flat_map(|r| r.flows.iter().filter(|f| f.label != "voip"))
                .map(|f| f.goodput_bps / 1e3)
                .collect();
            let s = Sample::of(&runs);
            let pick = |i: usize| {
                mean(
                    &quality
                        .iter()
                        .map(|q| [q.0, q.1, q.2, q.3][i])
                        .collect::<Vec<_>>(),
                )
            };
            let (loss, clp, delay, score) = (pick(0), pick(1), pick(2), pick(3));
            let p = PAPER.iter().find(|p| p.flows == n && p.protocol == proto);
            let paper = |f: fn(&PaperRow) -> f64, prec: usize| super::paper(p.map(f), prec);
            let (med, avg) = (quantile(&data, 0.5), mean(&data));
            ctx.say(&format!(
                "{n:>5} {proto:>6} | {med:>7.1} {:>7} | {avg:>7.1} {:>7} | {:>4.1}% | {clp:>5.2} {:>5} | {delay:>8.1} | {score:>4.2} {:>4} | {:>8.2}\n",
                paper(|p| p.median_kbps, 1),
                paper(|p| p.mean_kbps, 0),
                loss * 100.0,
                paper(|p| p.clp, 2),
                paper(|p| p.mos, 2),
                s.energy()
            ));
            fig.push((n as f64, proto.to_string(), score));
            rows.push(format!(
                "{n},{proto},{med},{avg},{loss},{clp},{delay},{score},{}",
                s.energy()
            ));
        }
    }
    ctx.figure(
        "hop_voip",
        "VoIP beside Hop or TCP flows (§5.8, Table 5): the call's MOS",
        "concurrent flows",
        "MOS (E-model)",
        false,
        &fig,
    )?;
    ctx.csv(
        "hop_voip.csv",
        "flows,protocol,median_kbps,mean_kbps,call_loss,call_clp,call_delay_ms,mos,energy_uj_per_bit",
        &rows,
    )
}
