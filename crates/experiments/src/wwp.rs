//! Wave & Wait vs TCP Reno (Tsaoussidis, Badr, Verma): Tables 1–5.

use joulenet_sim::scenario::Scenario;

use super::{paper, Ctx, Measure};

const MIB5: f64 = 5.0 * 1_048_576.0;
const MIB2: f64 = 2.0 * 1_048_576.0;

/// Paper rows: (drop %, TCP time, TCP total bytes, WWP time, WWP total bytes).
const TABLE1: &[(f64, f64, f64, f64, f64)] = &[
    (0.0, 69.0, 5_319_120.0, 40.5, 5_268_495.0),
    (5.0, 117.4, 5_395_782.0, 71.0, 5_290_519.0),
    (10.0, 132.9, 5_409_384.0, 81.9, 5_295_859.0),
    (20.0, 136.63, 5_410_822.0, 84.08, 5_319_556.0),
    (33.0, 258.89, 5_392_682.0, 85.9, 5_324_601.0),
    (50.0, 259.38, 5_388_348.0, 86.7, 5_275_294.0),
];
const TABLE2: &[(f64, f64, f64, f64, f64)] = &[
    (10.0, 135.67, 5_409_384.0, 81.3, 5_306_219.0),
    (33.0, 368.95, 5_502_300.0, 87.56, 5_344_200.0),
    (50.0, 385.79, 5_514_338.0, 93.9, 5_378_366.0),
];
/// (drop %, phase s, TCP time, WWP time, TCP bytes, WWP bytes).
const TABLE4: &[(f64, f64, f64, f64, f64, f64)] = &[
    (0.0, 0.0, 25.6, 15.6, 2_133_636.0, 2_107_402.0),
    (10.0, 1.0, 63.2, 28.58, 2_192_524.0, 2_137_438.0),
    (33.0, 1.0, 132.89, 31.7, 2_245_877.0, 2_202_410.0),
    (50.0, 1.0, 223.26, 37.42, 2_330_992.0, 2_304_361.0),
    (100.0, 1.0, 985.8, 39.6, 2_305_088.0, 2_296_194.0),
    (100.0, 2.0, 93.1, 32.3, 2_189_628.0, 2_158_208.0),
    (50.0, 2.0, 109.4, 31.8, 2_192_574.0, 2_168_433.0),
    (33.0, 2.0, 85.07, 32.7, 2_189_648.0, 2_163_338.0),
    (33.0, 5.0, 81.9, 32.9, 2_172_392.0, 2_124_361.0),
];

/// How the error phases alternate.
#[derive(Copy, Clone, PartialEq)]
enum Phases {
    /// PHASE_DROP as the paper's tables give it: On and Off phases of the
    /// stated length (the `on_off` loss model).
    Fixed,
    /// VDELDROP's core, "a two state (On/Off) continuous time Markov chain":
    /// exponential sojourns with the stated length as their mean (the
    /// `gilbert_elliott` loss model, error-free good state).
    Markov,
}

/// Which WWP: the paper's behaviours, and the conservative one with our
/// earlier cap after a failed wave (`gradual_resume`).
#[derive(Copy, Clone, PartialEq)]
enum Wwp {
    Conservative,
    Gradual,
    Aggressive,
}

impl Wwp {
    fn sets(self) -> [String; 2] {
        let (behaviour, gradual) = match self {
            Wwp::Conservative => ("conservative", false),
            Wwp::Gradual => ("conservative", true),
            Wwp::Aggressive => ("aggressive", false),
        };
        [
            format!("flow.wwp.behaviour=\"{behaviour}\""),
            format!("flow.wwp.gradual_resume={gradual}"),
        ]
    }
}

fn sets(
    protocol: &str,
    bytes: &str,
    rate_pct: f64,
    phase_s: f64,
    wwp: Wwp,
    phases: Phases,
) -> Vec<String> {
    let mut v = vec![
        format!("flow.protocol=\"{protocol}\""),
        format!("flow.bytes=\"{bytes}\""),
    ];
    v.extend(wwp.sets());
    let rate = rate_pct / 100.0;
    if rate_pct == 0.0 || phase_s == 0.0 {
        v.push("link.loss=\"none\"".into());
    } else if phases == Phases::Markov {
        v.push(format!(
            "link.loss={{ model = \"gilbert_elliott\", start = \"good\", \
             good = {{ mean = \"{phase_s}s\", loss = 0.0 }}, bad = {{ mean = \"{phase_s}s\", loss = {rate} }} }}"
        ));
    } else {
        v.push(format!("link.loss.rate={rate}"));
        v.push(format!("link.loss.on=\"{phase_s}s\""));
        v.push(format!("link.loss.off=\"{phase_s}s\""));
    }
    v
}

/// A time, starred when not every seed completed the transfer.
fn tm(m: &Measure) -> String {
    if m.completed < 1.0 {
        format!("{:.1}*", m.time_s)
    } else {
        format!("{:.1}", m.time_s)
    }
}

struct Row {
    rate: f64,
    phase: f64,
    tcp: Measure,
    wwp: Measure,
}

pub(super) fn reproduce(ctx: &mut Ctx) -> Result<(), String> {
    let base = ctx.load("onoff.toml")?;
    ctx.say(&format!(
        "Wave & Wait vs TCP Reno — {} seed(s) per row; times in s, bytes are transport bytes of both ends;\n\
         * = the transfer did not complete in every seed (TCP gave up after its maximum consecutive RTOs)\n",
        ctx.seeds
    ));
    let m = |ctx: &mut Ctx, p: &str, bytes: &str, rate: f64, phase: f64, w: Wwp| {
        ctx.measure(&base, &sets(p, bytes, rate, phase, w, Phases::Fixed))
    };
    // Tables 1 and 2 share the error-free baseline (tests 1.1/1.2).
    let mut rows1 = Vec::new();
    for &(rate, ..) in TABLE1 {
        let phase = if rate == 0.0 { 0.0 } else { 10.0 };
        rows1.push(Row {
            rate,
            phase,
            tcp: m(ctx, "reno", "5MiB", rate, phase, Wwp::Conservative)?,
            wwp: m(ctx, "wwp", "5MiB", rate, phase, Wwp::Conservative)?,
        });
    }
    let mut rows2 = Vec::new();
    for &(rate, ..) in TABLE2 {
        rows2.push(Row {
            rate,
            phase: 4.0,
            tcp: m(ctx, "reno", "5MiB", rate, 4.0, Wwp::Conservative)?,
            wwp: m(ctx, "wwp", "5MiB", rate, 4.0, Wwp::Conservative)?,
        });
    }
    let base_tcp = rows1[0].tcp.time_s;
    let base_wwp = rows1[0].wwp.time_s;
    let mut csv = Vec::new();
    // Figures 2–3's overhead: byte overhead (KB) per drop rate and phase.
    let mut fig_overhead = Vec::new();
    for (title, rows, paper_rows) in [
        ("Table 1: 5 MB, 10 s On/Off phases", &rows1, TABLE1),
        ("Table 2: 5 MB, 4 s On/Off phases", &rows2, TABLE2),
    ] {
        ctx.say(&format!("\n{title}\n"));
        ctx.say(&format!(
            "{:>5} {:>5} | {:>8} {:>8} | {:>9} {:>9} | {:>8} {:>8} | {:>8} {:>8} | {:>8} {:>8}\n",
            "drop%",
            "proto",
            "time",
            "paper",
            "wastage",
            "paper",
            "t.ovh",
            "paper",
            "thr B/s",
            "paper",
            "retx",
            "timeouts"
        ));
        for (r, p) in rows.iter().zip(paper_rows.iter()) {
            for (name, ours, ptime, pbytes, btime, pbase) in [
                ("TCP", &r.tcp, p.1, p.2, base_tcp, TABLE1[0].1),
                ("WWP", &r.wwp, p.3, p.4, base_wwp, TABLE1[0].3),
            ] {
                let wastage = ours.transport_bytes - MIB5;
                let tovh = ours.time_s - btime;
                let thr = MIB5 / ours.time_s;
                let phase = if r.phase == 4.0 { 4 } else { 10 };
                fig_overhead.push((r.rate, format!("{name} {phase}s (ours)"), wastage / 1024.0));
                fig_overhead.push((
                    r.rate,
                    format!("{name} {phase}s (paper)"),
                    (pbytes - MIB5) / 1024.0,
                ));
                ctx.say(&format!(
                    "{:>5} {:>5} | {:>8} {:>8.1} | {:>9.0} {:>9.0} | {:>8.1} {:>8} | {:>8.0} {:>8.0} | {:>8.0} {:>8.0}\n",
                    r.rate, name, tm(ours), ptime, wastage, pbytes - MIB5, tovh,
                    paper((r.rate > 0.0).then_some(ptime - pbase), 1), thr, MIB5 / ptime,
                    ours.retransmitted, ours.timeouts
                ));
                csv.push(format!(
                    "{},{},{},{:.3},{:.0},{:.0},{:.3},{:.0},{:.3},{:.0},{:.0},{:.0}",
                    r.phase,
                    r.rate,
                    name,
                    ours.time_s,
                    ours.transport_bytes,
                    wastage,
                    tovh,
                    thr,
                    ptime,
                    pbytes,
                    ours.retransmitted,
                    ours.timeouts
                ));
            }
        }
    }
    ctx.figure(
        "wwp_byte_overhead",
        "Byte overhead (Tr. En. Wastage), 5 MB, On/Off phases (Figures 2-3)",
        "drop rate during On phases (%)",
        "bytes beyond the 5 MB delivered (KB)",
        false,
        &fig_overhead,
    )?;
    ctx.csv(
        "wwp_tables_1_2.csv",
        "phase_s,drop_pct,protocol,time_s,total_bytes,wastage_bytes,time_overhead_s,throughput_Bps,paper_time_s,paper_total_bytes,retransmitted,timeouts",
        &csv,
    )?;

    // Table 3: the ratios, ours against the ones the paper's Tables 1–2 give.
    ctx.say(
        "\nTable 3: TCP vs WWP (energy saving = TCP total bytes − WWP total bytes; time saving = TCP time − WWP time; ratios TCP/WWP, energy expenditure = wastage ratio)\n",
    );
    ctx.say(&format!(
        "{:>6} {:>5} | {:>9} {:>9} | {:>7} {:>7} | {:>7} {:>7} | {:>7} {:>7} | {:>7} {:>7}\n",
        "phase",
        "drop%",
        "E.saving",
        "paper",
        "T.sav s",
        "paper",
        "energy",
        "paper",
        "thrput",
        "paper",
        "time",
        "paper"
    ));
    let mut fig_time = Vec::new();
    // Rows where WWP does not beat TCP, on bytes wasted and on time: the
    // paper's Tables 1-2 have WWP ahead on both in every row.
    let (mut more_waste, mut slower) = (Vec::new(), Vec::new());
    for (rows, paper_rows) in [(&rows1, TABLE1), (&rows2, TABLE2)] {
        for (r, p) in rows.iter().zip(paper_rows.iter()) {
            let row = format!("{}% drop, {} s phases", r.rate, r.phase);
            if r.wwp.transport_bytes >= r.tcp.transport_bytes {
                more_waste.push(row.clone());
            }
            if r.wwp.time_s >= r.tcp.time_s {
                slower.push(row);
            }
            let e = (r.tcp.transport_bytes - MIB5) / (r.wwp.transport_bytes - MIB5);
            let pe = (p.2 - MIB5) / (p.4 - MIB5);
            let t = r.tcp.time_s / r.wwp.time_s;
            let pt = p.1 / p.3;
            ctx.say(&format!(
                "{:>6} {:>5} | {:>9.0} {:>9.0} | {:>7.1} {:>7.1} | {:>7.2} {:>7.2} | {:>7.2} {:>7.2} | {:>7.2} {:>7.2}\n",
                r.phase,
                r.rate,
                r.tcp.transport_bytes - r.wwp.transport_bytes,
                p.2 - p.4,
                r.tcp.time_s - r.wwp.time_s,
                p.1 - p.3,
                e,
                pe,
                1.0 / t,
                1.0 / pt,
                t,
                pt
            ));
            let series = |who: &str| {
                format!(
                    "{who} {}s",
                    r.phase.max(if rows.len() == 3 { 4.0 } else { 10.0 })
                )
            };
            fig_time.push((r.rate, series("TCP (ours)"), r.tcp.time_s));
            fig_time.push((r.rate, series("WWP (ours)"), r.wwp.time_s));
            fig_time.push((r.rate, series("TCP (paper)"), p.1));
            fig_time.push((r.rate, series("WWP (paper)"), p.3));
        }
    }
    ctx.say(
        "paper: WWP wastes fewer bytes and finishes sooner than TCP in every row of Tables 1-2\n",
    );
    let except = |rows: &[String]| {
        if rows.is_empty() {
            String::new()
        } else {
            format!(" (not at {})", rows.join("; "))
        }
    };
    ctx.claim(
        "Tables 1-3",
        &format!(
            "WWP wastes fewer bytes than TCP in every row{}",
            except(&more_waste)
        ),
        more_waste.is_empty(),
    );
    ctx.claim(
        "Tables 1-3",
        &format!(
            "WWP finishes sooner than TCP in every row{}",
            except(&slower)
        ),
        slower.is_empty(),
    );
    ctx.figure(
        "wwp_connection_time",
        "Connection time, 5 MB, On/Off phases (Tables 1-2)",
        "drop rate during On phases (%)",
        "connection time (s)",
        false,
        &fig_time,
    )?;

    markov_phases(ctx, &base, &rows1)?;
    cross_traffic(ctx, &base)?;

    // Table 4: 2 MB under rapid changes.
    ctx.say("\nTable 4: 2 MB, rapid On/Off changes\n");
    ctx.say(&format!(
        "{:>5} {:>5} | {:>8} {:>8} | {:>8} {:>8} | {:>9} {:>9} | {:>9} {:>9} | {:>5} {:>5}\n",
        "drop%",
        "phase",
        "TCP t",
        "paper",
        "WWP t",
        "paper",
        "TCP B",
        "paper",
        "WWP B",
        "paper",
        "ratio",
        "paper"
    ));
    let mut csv = Vec::new();
    let mut fig = Vec::new();
    for (i, &(rate, phase, ptt, pwt, ptb, pwb)) in TABLE4.iter().enumerate() {
        let tcp = m(ctx, "reno", "2MiB", rate, phase, Wwp::Conservative)?;
        let wwp = m(ctx, "wwp", "2MiB", rate, phase, Wwp::Conservative)?;
        let ratio = wwp.time_s / tcp.time_s;
        ctx.say(&format!(
            "{:>5} {:>5} | {:>8} {:>8.1} | {:>8} {:>8.1} | {:>9.0} {:>9.0} | {:>9.0} {:>9.0} | {:>5.2} {:>5.2}\n",
            rate, phase, tm(&tcp), ptt, tm(&wwp), pwt, tcp.transport_bytes, ptb,
            wwp.transport_bytes, pwb, ratio, pwt / ptt
        ));
        csv.push(format!(
            "{rate},{phase},{:.3},{:.3},{:.0},{:.0},{ratio:.4},{ptt},{pwt},{ptb},{pwb}",
            tcp.time_s, wwp.time_s, tcp.transport_bytes, wwp.transport_bytes
        ));
        let _ = MIB2;
        fig.push((i as f64, "WWP/TCP time (ours)".to_string(), ratio));
        fig.push((i as f64, "WWP/TCP time (paper)".to_string(), pwt / ptt));
    }
    ctx.csv(
        "wwp_table_4.csv",
        "drop_pct,phase_s,tcp_time_s,wwp_time_s,tcp_bytes,wwp_bytes,time_ratio,paper_tcp_time_s,paper_wwp_time_s,paper_tcp_bytes,paper_wwp_bytes",
        &csv,
    )?;
    ctx.figure(
        "wwp_table4_ratio",
        "WWP/TCP connection-time ratio, 2 MB (Table 4 rows in order)",
        "Table 4 row (0: error-free, then 10/1, 33/1, 50/1, 100/1, 100/2, 50/2, 33/2, 33/5)",
        "time ratio WWP/TCP",
        false,
        &fig,
    )?;

    // Table 5: conservative vs aggressive.
    ctx.say(
        "\nTable 5: conservative (paper resume; and with gradual_resume) vs aggressive WWP, 5 MB, 10 s phases (our set-up: the paper's numbers and set-up are not in our copy); Δ = aggressive over conservative\n",
    );
    ctx.say(&format!(
        "{:>5} | {:>8} {:>9} | {:>8} {:>9} | {:>8} {:>9} | {:>9} {:>9} | {:>9}\n",
        "drop%",
        "cons t",
        "cons B",
        "grad t",
        "grad B",
        "aggr t",
        "aggr B",
        "Δthr %",
        "Δbytes",
        "Δthr grad%"
    ));
    let mut csv = Vec::new();
    let mut fig = Vec::new();
    for rate in [0.0, 5.0, 20.0, 33.0, 50.0, 100.0] {
        let phase = if rate == 0.0 { 0.0 } else { 10.0 };
        let c = m(ctx, "wwp", "5MiB", rate, phase, Wwp::Conservative)?;
        let g = m(ctx, "wwp", "5MiB", rate, phase, Wwp::Gradual)?;
        let a = m(ctx, "wwp", "5MiB", rate, phase, Wwp::Aggressive)?;
        let dthr = (c.time_s / a.time_s - 1.0) * 100.0;
        let dbytes = a.transport_bytes - c.transport_bytes;
        let dthr_gradual = (g.time_s / a.time_s - 1.0) * 100.0;
        ctx.say(&format!(
            "{:>5} | {:>8} {:>9.0} | {:>8} {:>9.0} | {:>8} {:>9.0} | {:>9.1} {:>9.0} | {:>9.1}\n",
            rate,
            tm(&c),
            c.transport_bytes,
            tm(&g),
            g.transport_bytes,
            tm(&a),
            a.transport_bytes,
            dthr,
            dbytes,
            dthr_gradual
        ));
        csv.push(format!(
            "{rate},{:.3},{:.0},{:.3},{:.0},{:.3},{:.0}",
            c.time_s, c.transport_bytes, g.time_s, g.transport_bytes, a.time_s, a.transport_bytes
        ));
        fig.push((rate, "conservative".to_string(), MIB5 / c.time_s / 1024.0));
        fig.push((
            rate,
            "conservative (gradual_resume)".to_string(),
            MIB5 / g.time_s / 1024.0,
        ));
        fig.push((rate, "aggressive".to_string(), MIB5 / a.time_s / 1024.0));
    }
    ctx.csv(
        "wwp_table_5.csv",
        "drop_pct,conservative_time_s,conservative_bytes,gradual_resume_time_s,gradual_resume_bytes,aggressive_time_s,aggressive_bytes",
        &csv,
    )?;
    ctx.figure(
        "wwp_table5_throughput",
        "Effective throughput, conservative vs aggressive WWP (Table 5)",
        "drop rate during On phases (%)",
        "effective throughput (KB/s)",
        false,
        &fig,
    )?;
    Ok(())
}

/// Table 1 again with the error phases drawn from VDELDROP's two-state
/// continuous-time Markov chain (exponential sojourns, mean = the phase
/// length) instead of PHASE_DROP's fixed phases.
fn markov_phases(ctx: &mut Ctx, base: &Scenario, fixed: &[Row]) -> Result<(), String> {
    ctx.say(
        "\nTable 1M: 5 MB, error phases from a two-state Markov chain (exponential sojourns, mean 10 s) vs fixed 10 s phases\n",
    );
    ctx.say(&format!(
        "{:>5} {:>5} | {:>8} {:>8} | {:>9} {:>9}\n",
        "drop%", "proto", "Markov t", "fixed t", "Markov W", "fixed W"
    ));
    let mut csv = Vec::new();
    for r in fixed.iter().filter(|r| r.rate > 0.0) {
        for (name, proto, ours) in [("TCP", "reno", &r.tcp), ("WWP", "wwp", &r.wwp)] {
            let s = sets(
                proto,
                "5MiB",
                r.rate,
                10.0,
                Wwp::Conservative,
                Phases::Markov,
            );
            let mk = ctx.measure(base, &s)?;
            ctx.say(&format!(
                "{:>5} {:>5} | {:>8} {:>8} | {:>9.0} {:>9.0}\n",
                r.rate,
                name,
                tm(&mk),
                tm(ours),
                mk.transport_bytes - MIB5,
                ours.transport_bytes - MIB5
            ));
            csv.push(format!(
                "{},{name},{:.3},{:.0},{:.3},{:.0}",
                r.rate, mk.time_s, mk.transport_bytes, ours.time_s, ours.transport_bytes
            ));
        }
    }
    ctx.csv(
        "wwp_table_1_markov.csv",
        "drop_pct,protocol,markov_time_s,markov_total_bytes,fixed_time_s,fixed_total_bytes",
        &csv,
    )
}

/// The cross traffic of Table 6 (ours: the paper names "competing bursty
/// flows" (§3.4) and "excessive congestion" (§4.1) but no set-up): a UDP
/// Pareto On/Off source that sends at the link's 2 Mbit/s during its On
/// periods (mean 0.5 s) and is silent in its Off periods (mean 1.5 s),
/// a quarter of the link on average, sharing the hop's queue.
const CROSS_TRAFFIC: &str =
    "protocol = \"udp\"\napp = \"pareto\"\nrate = \"2Mbps\"\nmessage = 1000\n\
     mean_on = \"500ms\"\nmean_off = \"1500ms\"\nbackground = true\nlabel = \"cross\"\n";

/// `base` with a second, cross-traffic flow. The measured flow's TCP and
/// WWP options move from `[flow]` (which the cross flow would inherit, and
/// a UDP flow refuses) into its own `[[flows]]` entry; overrides of
/// `flow.*` address that entry as `flows.0.*`.
fn with_cross_traffic(ctx: &Ctx, base: &Scenario) -> Result<Scenario, String> {
    use toml::{Table, Value};
    let mut table = base.table().clone();
    let Some(Value::Table(flow)) = table.get_mut("flow") else {
        return Err(format!("{}: no [flow] table", base.name()));
    };
    let mut measured = Table::new();
    for key in ["tcp", "wwp"] {
        if let Some(v) = flow.remove(key) {
            measured.insert(key.to_string(), v);
        }
    }
    let cross: Table = CROSS_TRAFFIC
        .parse()
        .map_err(|e| format!("cross traffic: {e}"))?;
    table.insert(
        "flows".to_string(),
        Value::Array(vec![Value::Table(measured), Value::Table(cross)]),
    );
    Scenario::from_table(table, base.name(), ctx.dir.clone()).map_err(|e| e.to_string())
}

/// What WWP's wave rule decided: complete waves at levels 3, 2, 1, 0 (too
/// slow), then incomplete waves (the receiver's gauges, last sample).
const VERDICTS: [&str; 5] = [
    "waves_at_level_3",
    "waves_at_level_2",
    "waves_at_level_1",
    "waves_at_level_0",
    "waves_incomplete",
];

/// One protocol under cross traffic: mean time, transport bytes and wave
/// verdicts over the seeds.
fn crossed(
    ctx: &mut Ctx,
    base: &Scenario,
    sets: &[String],
    cross: bool,
) -> Result<(Measure, [f64; 5]), String> {
    let mut all: Vec<String> = sets
        .iter()
        .map(|s| match s.strip_prefix("flow.") {
            Some(rest) if cross && !rest.starts_with("protocol") => format!("flows.0.{rest}"),
            _ => s.clone(),
        })
        .collect();
    let series: Vec<String> = VERDICTS
        .iter()
        .map(|v| format!("\"receiver.{v}\""))
        .collect();
    all.push(format!("output.series=[{}]", series.join(", ")));
    all.push("output.series_interval=\"200ms\"".to_string());
    let runs = ctx.runs_of(base, &all)?;
    let n = runs.len().max(1) as f64;
    let mut m = Measure::default();
    let mut verdicts = [0.0; 5];
    for r in &runs {
        let f = &r.flows[0];
        m.completed += f.completed as u8 as f64 / n;
        m.time_s += f
            .close_time_s
            .or(f.completion_time_s)
            .unwrap_or(r.summary.duration_s)
            / n;
        m.transport_bytes += f.transport_bytes as f64 / n;
        for (v, name) in verdicts.iter_mut().zip(VERDICTS) {
            let last = r
                .series
                .iter()
                .filter(|row| row.entity == "flow0" && row.series.ends_with(name))
                .map(|row| row.value)
                .fold(0.0, f64::max);
            *v += last / n;
        }
    }
    Ok((m, verdicts))
}

/// Table 6 (ours): WWP and Reno under congestion — bursty cross traffic
/// sharing the hop, or PHASE_DROP's per-segment delays (`link.jitter`) —
/// without and with 10 s error phases, so that the wave rule's congestion
/// levels (a complete wave slower than its baseline: level 2 or 1) can occur
/// beside its error verdict (an incomplete wave: level 0, probe). Tables
/// 1–5 have neither, so there every verdict is level 3 or incomplete.
fn cross_traffic(ctx: &mut Ctx, base: &Scenario) -> Result<(), String> {
    let crossed_base = with_cross_traffic(ctx, base)?;
    ctx.say(
        "\nTable 6 (ours, not the paper's): 5 MB under congestion — bursty UDP cross traffic (Pareto On/Off, \
         2 Mbit/s in On, mean On 0.5 s / Off 1.5 s) or per-segment delays uniform in [0, 0.5 s] (PHASE_DROP's \
         delays, in order) — without and with 10 s error phases at 20 %; WWP's wave verdicts per run: complete \
         waves judged level 3/2/1/0 by their time, and incomplete waves (the error verdict)\n",
    );
    ctx.say(&format!(
        "{:>12} {:>5} {:>5} | {:>8} {:>9} | {:>6} {:>6} {:>6} {:>6} {:>7}\n",
        "congestion", "drop%", "proto", "time", "wastage", "L3", "L2", "L1", "L0slow", "incompl"
    ));
    let mut csv = Vec::new();
    for (case, cross) in [("cross", true), ("delays<=0.5s", false)] {
        for rate in [0.0, 20.0] {
            for (name, proto) in [("TCP", "reno"), ("WWP", "wwp")] {
                let mut s = sets(proto, "5MiB", rate, 10.0, Wwp::Conservative, Phases::Fixed);
                let scenario = if cross {
                    &crossed_base
                } else {
                    s.push("link.jitter=\"500ms\"".to_string());
                    base
                };
                let (m, v) = crossed(ctx, scenario, &s, cross)?;
                let shown: Vec<String> = v
                    .iter()
                    .map(|x| {
                        if proto == "wwp" {
                            format!("{x:.1}")
                        } else {
                            "—".into()
                        }
                    })
                    .collect();
                ctx.say(&format!(
                    "{:>12} {:>5} {:>5} | {:>8} {:>9.0} | {:>6} {:>6} {:>6} {:>6} {:>7}\n",
                    case,
                    rate,
                    name,
                    tm(&m),
                    m.transport_bytes - MIB5,
                    shown[0],
                    shown[1],
                    shown[2],
                    shown[3],
                    shown[4]
                ));
                csv.push(format!(
                    "{case},{rate},{name},{:.3},{:.0},{}",
                    m.time_s,
                    m.transport_bytes,
                    v.map(|x| format!("{x:.2}")).join(",")
                ));
            }
        }
    }
    ctx.csv(
        "wwp_table_6_cross_traffic.csv",
        "congestion,drop_pct,protocol,time_s,total_bytes,waves_level_3,waves_level_2,waves_level_1,waves_level_0_slow,waves_incomplete",
        &csv,
    )
}
