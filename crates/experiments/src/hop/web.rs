//! §5.6.2, Fig. 14: the delay of Web-sized files on the mesh. Files arrive
//! as a Poisson process (λ = 2 per second) between random pairs at least two
//! hops apart (`scenarios/hop/web.toml`); their sizes follow the paper's mix
//! of its IRCache trace (63% below 10 KB, 25% from 10 to 100 KB, the rest
//! above), each range drawn log-uniformly (ours: 1 KB to 1 MB in all, the
//! trace itself is not in the paper). The delay of a file is its completion
//! time, binned by size as the paper's [2^(n−1), 2^n] KB bins.

use super::mesh::{flow, with_flows, Mesh};
use super::{mean, Ctx, Sample};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};

/// The paper's size mix: (share, smallest, largest bytes).
const SIZE_MIX: &[(f64, f64, f64)] = &[(0.63, 1e3, 1e4), (0.25, 1e4, 1e5), (0.12, 1e5, 1e6)];

/// Files per second (the paper's λ).
const ARRIVALS_PER_S: f64 = 2.0;

/// One file of the workload.
struct File {
    from: u32,
    to: u32,
    start_s: f64,
    bytes: u64,
}

fn draw_files(mesh: &Mesh, n: usize) -> Vec<File> {
    let pairs = mesh.pairs(|h| h >= 2);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(562);
    let gap = Exp::new(ARRIVALS_PER_S).expect("positive rate");
    let mut t = 0.0;
    (0..n)
        .map(|_| {
            t += gap.sample(&mut rng);
            let (from, to) = pairs[rng.random_range(0..pairs.len())];
            let mut u: f64 = rng.random();
            let &(_, lo, hi) = SIZE_MIX
                .iter()
                .find(|(share, _, _)| {
                    u -= share;
                    u < 0.0
                })
                .unwrap_or(&SIZE_MIX[SIZE_MIX.len() - 1]);
            let bytes = (lo * (hi / lo).powf(rng.random::<f64>())) as u64;
            File {
                from,
                to,
                start_s: t,
                bytes,
            }
        })
        .collect()
}

/// The paper's bin of a file: 1 for ≤ 2 KB, n for (2^(n−1), 2^n] KB, 10
/// above 512 KB (its edge bins).
fn bin_of(bytes: u64) -> u32 {
    let kb = bytes as f64 / 1e3;
    (kb.log2().ceil().max(1.0) as u32).min(LAST_BIN)
}

const LAST_BIN: u32 = 10;

fn bin_label(bin: u32) -> String {
    match bin {
        1 => "<=2".to_string(),
        LAST_BIN => ">512".to_string(),
        b => format!("{}-{}", 1u32 << (b - 1), 1u32 << b),
    }
}

fn with_files(
    ctx: &Ctx,
    base: &joulenet_sim::Scenario,
    files: &[File],
) -> Result<joulenet_sim::Scenario, String> {
    let flows = files
        .iter()
        .map(|f| {
            let start = format!("{:.3}s", f.start_s);
            flow(
                f.from,
                f.to,
                &[("bytes", (f.bytes as i64).into()), ("start", start.into())],
            )
        })
        .collect();
    with_flows(ctx, base, flows)
}

pub(super) fn web(ctx: &mut Ctx) -> Result<(), String> {
    let base = ctx.load("web.toml")?;
    let mesh = Mesh::of(ctx, &base)?;
    let n = if ctx.quick { 30 } else { 100 };
    let files = draw_files(&mesh, n);
    let last = files.last().map_or(0.0, |f| f.start_s);
    let stop = format!("{:.0}s", last + 60.0);
    let scenario = with_files(ctx, &base, &files)?;
    ctx.say(&format!(
        "\n§5.6.2 Web workload (Fig. 14): {n} files, Poisson arrivals at 2/s between random \
         pairs >= 2 hops apart on the mesh, the paper's size mix; mean delay per size bin, s \
         (files completed of those in the bin; a file not done by {stop} is not averaged); \
         TCP's includes its handshake\n"
    ));
    ctx.say(&format!(
        "{:>8} | {:>5} | {:>12} {:>12} | {:>10}\n",
        "KB", "files", "hop", "cubic", "cubic/hop"
    ));
    let mut per_proto = Vec::new();
    for proto in ["hop", "cubic"] {
        let sets = [
            format!("flow.protocol=\"{proto}\""),
            format!("stop=\"{stop}\""),
        ];
        let runs = ctx.runs_of(&scenario, &sets)?;
        let s = Sample::of(&runs);
        // Per bin: (delays of completed files, files).
        let mut bins: Vec<(Vec<f64>, usize)> = vec![(Vec::new(), 0); LAST_BIN as usize + 1];
        for r in &runs {
            for (f, file) in r.flows.iter().zip(&files) {
                let b = &mut bins[bin_of(file.bytes) as usize];
                b.1 += 1;
                if let Some(d) = f.completion_time_s {
                    b.0.push(d);
                }
            }
        }
        per_proto.push((bins, s.energy()));
    }
    let mut rows = Vec::new();
    let mut fig = Vec::new();
    for bin in 1..=LAST_BIN {
        let (hop, cubic) = (&per_proto[0].0[bin as usize], &per_proto[1].0[bin as usize]);
        if hop.1 == 0 {
            continue;
        }
        let (dh, dc) = (mean(&hop.0), mean(&cubic.0));
        ctx.say(&format!(
            "{:>8} | {:>5} | {:>7.3} {:>2}/{:<2} {:>7.3} {:>2}/{:<2} | {:>10.2}\n",
            bin_label(bin),
            hop.1 / ctx.seeds as usize,
            dh,
            hop.0.len(),
            hop.1,
            dc,
            cubic.0.len(),
            cubic.1,
            dc / dh
        ));
        for (proto, d, b) in [("hop", dh, hop), ("cubic", dc, cubic)] {
            rows.push(format!(
                "{},{proto},{d},{},{}",
                bin_label(bin),
                b.0.len(),
                b.1
            ));
            if d.is_finite() {
                fig.push((f64::from(bin), proto.to_string(), d));
            }
        }
    }
    ctx.say(&format!(
        "energy per delivered bit, µJ: hop {:.2}, cubic {:.2}; paper: Hop's delay comparable or \
         lower in every bin but 16-32 KB (from 19% higher to 6x lower)\n",
        per_proto[0].1, per_proto[1].1
    ));
    rows.push(format!("all,hop-energy,{},,", per_proto[0].1));
    rows.push(format!("all,cubic-energy,{},,", per_proto[1].1));
    ctx.csv(
        "hop_web.csv",
        "kbytes,protocol,delay_s,completed,files",
        &rows,
    )?;
    ctx.figure(
        "hop_web",
        "Web workload delay per file size (§5.6.2, Fig. 14)",
        "size bin n: (2^(n-1), 2^n] KB; 1 = up to 2 KB, 10 = above 512 KB",
        "mean delay (s)",
        false,
        &fig,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_the_papers() {
        assert_eq!(bin_of(1_500), 1);
        assert_eq!(bin_of(2_000), 1);
        assert_eq!(bin_of(3_000), 2);
        assert_eq!(bin_of(16_000), 4);
        assert_eq!(bin_of(20_000), 5);
        assert_eq!(bin_of(500_000), 9);
        assert_eq!(bin_of(900_000), 10);
    }
}
