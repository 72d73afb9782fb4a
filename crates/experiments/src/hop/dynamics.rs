//! §5.9 and §5.10: §5.3's many concurrent flows on the mesh under other
//! network conditions — routes that change during the transfers (Fig. 15)
//! and 802.11g at 24 Mbit/s (Fig. 16). Per-flow goodput quartiles, Jain's
//! index and energy per bit per protocol, and Hop's gain over each.
//!
//! "TCP + auto-rate" runs TCP with the medium's SampleRate (the paper's
//! MadWifi *Sample*, `[medium] rate_control`); Hop stays at the fixed rate,
//! as in the paper (auto-rate needs the link ARQ Hop turns off for data).

use super::{first_flows, mean, quantile, Ctx, Sample};

/// One protocol and network condition, with the paper's median and mean
/// gain of Hop over it (Table 1).
struct Case<'a> {
    label: &'a str,
    sets: &'a [&'a str],
    paper_gain: Option<(f64, f64)>,
}

const STATIC: &str = "medium.routing=\"etx\"";
const DYNAMIC: &str = "medium.routing=\"link_state\"";
const OVER_THE_AIR: &str = "medium.routing_updates=\"air\"";
const AUTO_RATE: &str = "medium.rate_control=\"samplerate\"";

/// §5.9: ETX routes fixed from the channel model (the paper's static OLSR
/// snapshot) against link-state routing whose advertisements travel the
/// air every 5 s with ETX measured from the traffic (the paper's OLSR), so
/// routes move with the load.
pub(super) fn dynamic_routing(ctx: &mut Ctx) -> Result<(), String> {
    let cases = [
        Case {
            label: "hop/static",
            sets: &["flow.protocol=\"hop\"", STATIC],
            paper_gain: None,
        },
        Case {
            label: "hop/dynamic",
            sets: &["flow.protocol=\"hop\"", DYNAMIC, OVER_THE_AIR],
            paper_gain: None,
        },
        Case {
            label: "cubic/static",
            sets: &["flow.protocol=\"cubic\"", STATIC],
            paper_gain: None,
        },
        Case {
            label: "cubic/dynamic",
            sets: &["flow.protocol=\"cubic\"", DYNAMIC, OVER_THE_AIR],
            paper_gain: Some((4.0, 1.0)),
        },
        Case {
            label: "cubic/static+auto",
            sets: &["flow.protocol=\"cubic\"", STATIC, AUTO_RATE],
            paper_gain: Some((95.0, 2.4)),
        },
        Case {
            label: "cubic/dynamic+auto",
            sets: &["flow.protocol=\"cubic\"", DYNAMIC, OVER_THE_AIR, AUTO_RATE],
            paper_gain: Some((5.0, 1.8)),
        },
    ];
    let intro = "§5.9 dynamic routing (Fig. 15): backlogged flows on the mesh, static ETX routes \
                 against link-state routing over the air (5 s advertisements, ETX measured from \
                 traffic); TCP also with SampleRate auto-rate (Hop at the fixed 11 Mbit/s)";
    // --quick runs Hop's two cases only (TCP's static one is §5.3's).
    let cases = if ctx.quick { &cases[..2] } else { &cases[..] };
    many_flows(ctx, intro, "hop_routing", cases, &[])
}

/// §5.10: the same mesh at 802.11g's 24 Mbit/s (the paper's fixed rate).
/// Our mesh keeps its geometry (250 m range at every rate), where the
/// paper's testbed lost nodes under 802.11g and used 15 of them.
pub(super) fn g24(ctx: &mut Ctx) -> Result<(), String> {
    let cases = [
        Case {
            label: "hop",
            sets: &["flow.protocol=\"hop\""],
            paper_gain: None,
        },
        Case {
            label: "cubic",
            sets: &["flow.protocol=\"cubic\""],
            paper_gain: Some((22.0, 1.0)),
        },
        Case {
            label: "cubic+auto",
            sets: &["flow.protocol=\"cubic\"", AUTO_RATE],
            paper_gain: Some((6.0, 3.0)),
        },
    ];
    let intro = "§5.10 802.11g (Fig. 16): backlogged flows on the mesh at 24 Mbit/s; TCP also \
                 with SampleRate auto-rate over 6–54 Mbit/s (Hop at the fixed 24)";
    many_flows(
        ctx,
        intro,
        "hop_80211g",
        &cases,
        &["medium.standard=\"802.11g-24\"".to_string()],
    )
}

/// Run every case on the mesh's first flows; print and write quartiles,
/// Jain's index, energy, and Hop's (the first case's) gain over the others.
fn many_flows(
    ctx: &mut Ctx,
    intro: &str,
    name: &str,
    cases: &[Case],
    extra: &[String],
) -> Result<(), String> {
    let mesh = ctx.load("mesh.toml")?;
    let n = if ctx.quick { 10 } else { 30 };
    let stop = super::measured_for(ctx);
    let scenario = first_flows(ctx, &mesh, n)?;
    ctx.say(&format!(
        "\n{intro}; {n} flows, {stop}; per-flow goodput over every flow and seed (kb/s)\n"
    ));
    ctx.say(&format!(
        "{:>18} | {:>8} {:>8} {:>8} {:>8} | {:>5} | {:>14} {:>14} | {:>9}\n",
        "protocol",
        "Q1",
        "median",
        "Q3",
        "mean",
        "Jain",
        "hop/it median",
        "mean (paper)",
        "µJ / bit"
    ));
    let mut stats = Vec::new();
    for c in cases {
        let mut sets: Vec<String> = c.sets.iter().map(|s| s.to_string()).collect();
        sets.push(format!("stop=\"{stop}\""));
        sets.extend_from_slice(extra);
        let s = Sample::of(&ctx.runs_of(&scenario, &sets)?);
        let kbps: Vec<f64> = s.goodputs.iter().map(|g| g / 1e3).collect();
        stats.push((kbps, mean(&s.jain), s.energy()));
    }
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    let (hop_median, hop_mean) = (quantile(&stats[0].0, 0.5), mean(&stats[0].0));
    for (c, (kbps, jain, energy)) in cases.iter().zip(&stats) {
        let q = [0.25, 0.5, 0.75].map(|p| quantile(kbps, p));
        let m = mean(kbps);
        let paper = c
            .paper_gain
            .map_or("—".to_string(), |(med, avg)| format!("{med}x ({avg}x)"));
        ctx.say(&format!(
            "{:>18} | {:>8.1} {:>8.1} {:>8.1} {m:>8.1} | {jain:>5.2} | {:>6.2} {:>7.2} {paper:>14} | {energy:>9.2}\n",
            c.label,
            q[0],
            q[1],
            q[2],
            hop_median / q[1],
            hop_mean / m,
        ));
        rows.push(format!(
            "{},{},{},{},{m},{jain},{energy}",
            c.label, q[0], q[1], q[2]
        ));
        let mut sorted = kbps.clone();
        sorted.sort_by(f64::total_cmp);
        for (i, g) in sorted.iter().enumerate() {
            fig.push((
                (i + 1) as f64 / sorted.len() as f64,
                c.label.to_string(),
                *g,
            ));
        }
    }
    ctx.csv(
        &format!("{name}.csv"),
        "protocol,q1_kbps,median_kbps,q3_kbps,mean_kbps,jain,energy_uj_per_bit",
        &rows,
    )?;
    ctx.figure(
        name,
        intro.split(':').next().unwrap_or(name),
        "fraction of flows",
        "goodput (kb/s)",
        false,
        &fig,
    )
}
