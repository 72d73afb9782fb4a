//! §5.1.1, Figs. 6 and 7: single-hop transfers over randomly picked links
//! with the ARQ × TXOP grid. Our links are those of the seeded 20-node
//! random mesh (`scenarios/hop/links.toml`, the positions of §5.3's mesh):
//! every pair within range, drawn with repetition by a fixed draw, each run
//! alone on the mesh with every protocol and setting.

use rand::{Rng, SeedableRng};

use super::{mean, quantile, Ctx, Sample};

/// A protocol and the 802.11 setting it runs with (Fig. 7's labels).
struct Setting {
    label: &'static str,
    sets: &'static [&'static str],
}

const NO_TXOP: &str = "medium.txop=\"0us\"";
const TXOP: &str = "medium.txop=\"8160us\"";

/// The paper's grid: TCP with the MadWifi default (11 retries, no TXOP),
/// with TXOP, and with the Atheros maximum (18) and TXOP; UDP without and
/// with the maximum ARQ, both with TXOP; Hop (link ARQ off for its data,
/// on with the maximum for its control frames, TXOP bursts).
const SETTINGS: &[Setting] = &[
    Setting {
        label: "hop",
        sets: &["flow.protocol=\"hop\"", "medium.retry_limit=18", TXOP],
    },
    Setting {
        label: "tcp/11-arq",
        sets: &["flow.protocol=\"cubic\"", "medium.retry_limit=11", NO_TXOP],
    },
    Setting {
        label: "tcp/11-arq/txop",
        sets: &["flow.protocol=\"cubic\"", "medium.retry_limit=11", TXOP],
    },
    Setting {
        label: "tcp/max-arq/txop",
        sets: &["flow.protocol=\"cubic\"", "medium.retry_limit=18", TXOP],
    },
    Setting {
        label: "udp/no-arq/txop",
        sets: &[
            "flow.protocol=\"udp\"",
            "flow.udp.link_arq=false",
            "medium.retry_limit=18",
            TXOP,
        ],
    },
    Setting {
        label: "udp/max-arq/txop",
        sets: &["flow.protocol=\"udp\"", "medium.retry_limit=18", TXOP],
    },
];

/// UDP's offered rate here: above 802.11b's 11 Mbit/s, so the stream is
/// limited by what the link carries (§5.2's 8 Mbit/s stream is not, on
/// one clean hop with TXOP bursts).
const UDP_SATURATING_BPS: u64 = 12_000_000;

/// Fig. 6's and §5.1.1's text: Hop's gain over TCP/max-ARQ/txop at Q1, Q2,
/// Q3 and the mean (Table 1: 1.6× median and mean).
const PAPER_GAINS: [f64; 4] = [28.0, 1.6, 1.2, 1.6];

pub(super) fn random_links(ctx: &mut Ctx) -> Result<(), String> {
    let scenario = ctx.load("links.toml")?;
    let all = super::mesh::Mesh::of(ctx, &scenario)?.links;
    let (count, bytes): (usize, u64) = if ctx.quick {
        (4, 1_000_000)
    } else {
        (24, 4_000_000)
    };
    // One fixed draw of links with repetition, either direction (the
    // paper's 100 of 56): the seeds vary the channel, not the links.
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(511);
    let picked: Vec<(u32, u32)> = (0..count)
        .map(|_| {
            let (a, b) = all[rng.random_range(0..all.len())];
            if rng.random::<bool>() {
                (a, b)
            } else {
                (b, a)
            }
        })
        .collect();
    ctx.say(&format!(
        "\n§5.1.1 random links: {count} links drawn from the {} within range on the 20-node \
         mesh, a {} MB file each (120 s at most), alone on the mesh; goodput over links and \
         seeds (Mb/s)\n",
        all.len(),
        bytes / 1_000_000
    ));
    ctx.say(&format!(
        "{:>17} | {:>6} {:>6} {:>6} {:>6} | {:>10}\n",
        "setting", "Q1", "median", "Q3", "mean", "µJ / bit"
    ));
    let mut per_setting: Vec<Sample> = Vec::new();
    let mut loss = Vec::new();
    for s in SETTINGS {
        let mut all_runs = Vec::new();
        for &(a, b) in &picked {
            let mut sets: Vec<String> = s.sets.iter().map(|x| x.to_string()).collect();
            sets.extend([format!("flow.from={a}"), format!("flow.to={b}")]);
            if s.label.starts_with("udp") {
                // As fast as the card sends: offered above the PHY rate, so
                // the link, not the stream, sets the goodput (to the last
                // delivery), for as long as the file would take at that
                // rate.
                sets.extend(super::UDP_STREAM.iter().map(|x| x.to_string()));
                sets.push(format!("flow.rate=\"{}bps\"", UDP_SATURATING_BPS));
                let secs = bytes as f64 * 8.0 / UDP_SATURATING_BPS as f64;
                sets.push(format!("flow.stop=\"{secs}s\""));
            } else {
                sets.push(format!("flow.bytes={bytes}"));
            }
            let runs = ctx.runs_of(&scenario, &sets)?;
            if s.label == "udp/no-arq/txop" {
                // The link's own loss: data frames on the air that did not
                // reach it (one attempt each, the flow alone on the mesh).
                for r in &runs {
                    if let Some(m) = &r.medium {
                        loss.push(1.0 - m.data_delivered as f64 / m.data_tx.max(1) as f64);
                    }
                }
            }
            all_runs.extend(runs);
        }
        per_setting.push(Sample::of(&all_runs));
    }
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    for (s, sample) in SETTINGS.iter().zip(&per_setting) {
        let mbps: Vec<f64> = sample.goodputs.iter().map(|g| g / 1e6).collect();
        let q = [0.25, 0.5, 0.75].map(|p| quantile(&mbps, p));
        ctx.say(&format!(
            "{:>17} | {:>6.3} {:>6.3} {:>6.3} {:>6.3} | {:>10.2}\n",
            s.label,
            q[0],
            q[1],
            q[2],
            mean(&mbps),
            sample.energy()
        ));
        rows.push(format!(
            "{},{},{},{},{},{}",
            s.label,
            q[0],
            q[1],
            q[2],
            mean(&mbps),
            sample.energy()
        ));
        for (i, g) in sorted(&mbps).into_iter().enumerate() {
            fig.push(((i + 1) as f64 / mbps.len() as f64, s.label.to_string(), g));
        }
    }
    summarise(ctx, &per_setting, &loss);
    ctx.csv(
        "hop_links.csv",
        "setting,q1_mbps,median_mbps,q3_mbps,mean_mbps,energy_uj_per_bit",
        &rows,
    )?;
    ctx.figure(
        "hop_links",
        "Single-hop random links (§5.1.1, Figs. 6-7): goodput CDF",
        "fraction of links",
        "goodput (Mbit/s)",
        false,
        &fig,
    )
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Hop's gains over TCP/max-ARQ/txop beside Fig. 6's, Hop against the
/// achievable rate (UDP/no-ARQ) and what ARQ costs UDP (Fig. 7's text).
fn summarise(ctx: &mut Ctx, per_setting: &[Sample], loss: &[f64]) {
    let goodputs = |label: &str| -> Vec<f64> {
        SETTINGS
            .iter()
            .position(|s| s.label == label)
            .map_or(Vec::new(), |i| per_setting[i].goodputs.clone())
    };
    let stats = |xs: &[f64]| {
        [
            quantile(xs, 0.25),
            quantile(xs, 0.5),
            quantile(xs, 0.75),
            mean(xs),
        ]
    };
    let hop = stats(&goodputs("hop"));
    let tcp = stats(&goodputs("tcp/max-arq/txop"));
    let no_arq = stats(&goodputs("udp/no-arq/txop"));
    let max_arq = stats(&goodputs("udp/max-arq/txop"));
    ctx.say(&format!(
        "link loss (UDP/no-ARQ frames not delivered): mean {:.0}%, median {:.0}% (paper: 25%, 1%)\n",
        mean(loss) * 100.0,
        quantile(loss, 0.5) * 100.0
    ));
    ctx.say("hop / tcp/max-arq/txop:");
    for (name, i) in [("Q1", 0), ("median", 1), ("Q3", 2), ("mean", 3)] {
        ctx.say(&format!(
            " {name} {:.2} (paper {})",
            hop[i] / tcp[i],
            PAPER_GAINS[i]
        ));
    }
    ctx.say(&format!(
        "\nhop's median / udp/no-arq/txop's (the achievable rate) {:.2} (paper 0.76); \
         udp/max-arq/txop's / udp/no-arq/txop's {:.2} (paper 0.65: ARQ costs 35%)\n",
        hop[1] / no_arq[1],
        max_arq[1] / no_arq[1]
    ));
}
