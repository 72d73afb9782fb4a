//! `joulenet reproduce jtp --quick` runs end to end and its tables say what
//! the paper's claims need: each reliability level is met, and the caching
//! analysis holds where the paper's assumptions do.

use std::path::PathBuf;

use joulenet_experiments::{reproduce, Options};

fn rows(path: &std::path::Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn quick_jtp_reproduction_meets_each_reliability_level_and_equation_5() {
    let out = std::env::temp_dir().join(format!("joulenet-jtp-{}", std::process::id()));
    let options = Options {
        quick: true,
        seeds: None,
        scenarios: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios")),
        out: out.clone(),
        echo: false,
        baseline: None,
    };
    let outcome = reproduce("jtp", &options).unwrap();
    assert!(outcome.report.contains("Fig. 6"), "{}", outcome.report);
    // Every qualitative claim of the paper is followed by our verdict, and
    // the disagreements are counted and listed again at the end.
    let report = &outcome.report;
    let lines: Vec<&str> = report.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("paper:") {
            assert!(
                lines.get(i + 1).is_some_and(|n| n.starts_with("  ours ")),
                "no verdict under {l}"
            );
        }
    }
    let disagree = lines
        .iter()
        .filter(|l| l.starts_with("  ours DISAGREES"))
        .count();
    let listed = format!("Where ours disagrees with the paper ({disagree};");
    assert_eq!(report.contains(&listed), disagree > 0, "{report}");
    let fig2 = rows(&out.join("jtp_fig2.csv"));
    assert_eq!(fig2.len(), 3);
    for r in &fig2 {
        let (delivered, required): (f64, f64) = (r[1].parse().unwrap(), r[2].parse().unwrap());
        // The share is of the source's first sendings, which count one
        // packet more than the stream's messages (501 for 500 here): jtp0
        // delivering every message reads 0.998.
        assert!(
            delivered + 0.01 >= required,
            "{} delivered {delivered}",
            r[0]
        );
    }
    for r in rows(&out.join("jtp_caching.csv")) {
        let (cached, eq5): (f64, f64) = (r[3].parse().unwrap(), r[4].parse().unwrap());
        assert!((cached / eq5 - 1.0).abs() < 0.1, "{r:?}");
    }
    let fig6 = rows(&out.join("jtp_fig6.csv"));
    assert_eq!(fig6.len(), 6, "2 path lengths x 3 protocols");
    assert!(fig6.iter().all(|r| r[2].parse::<f64>().unwrap() > 0.0));
    // The paper's measure, transport packets only, is part of all
    // transmissions: above 0 and below the whole.
    assert!(fig6.iter().all(|r| {
        let (all, transport) = (r[2].parse::<f64>().unwrap(), r[4].parse::<f64>().unwrap());
        transport > 0.0 && transport < all
    }));
    // Fig. 3: relays recovered packets for the reliable flow in both
    // variants, and both flows got through.
    let fig3 = rows(&out.join("jtp_fig3.csv"));
    assert_eq!(fig3.len(), 2, "with and without the back-off");
    for r in &fig3 {
        let (udp, reliable, local): (f64, f64, f64) = (
            r[1].parse().unwrap(),
            r[3].parse().unwrap(),
            r[7].parse().unwrap(),
        );
        assert!(udp > 0.0 && reliable > 0.0 && local > 0.0, "{r:?}");
    }
    // Fig. 4: constant feedback every second sends more ACKs than every
    // 10 s. Whether it also sends more than JTP's variable feedback
    // (T_lb = 10 s) is the full run's question, not this one's: in the
    // quick run's 100 s (ten feedback periods) the opening overshoot drops
    // over a thousand packets, and the SNACKs that overflow into extra ACKs
    // outnumber constant feedback's (191 against 138); over the full 300 s
    // variable feedback sends fewer (docs/reproduction/jtp.md § Fig. 4).
    let fig4 = rows(&out.join("jtp_fig4.csv"));
    let acks = |period: &str| -> f64 {
        fig4.iter().find(|r| r[0] == period).unwrap()[5]
            .parse()
            .unwrap()
    };
    assert!(acks("1") > acks("10") && acks("0") > 0.0, "{fig4:?}");
    // Fig. 5: the short flow got a share while it ran.
    let fig5 = rows(&out.join("jtp_fig5.csv"));
    assert!(fig5[0][2].parse::<f64>().unwrap() > 0.0, "{fig5:?}");
    // Figs. 7, 8 and Table 2: every protocol delivered on the same draws.
    // (file, the column of energy per delivered bit)
    for (file, energy) in [
        ("jtp_fig7.csv", 2),
        ("jtp_fig8.csv", 2),
        ("jtp_table2.csv", 1),
    ] {
        let table = rows(&out.join(file));
        assert_eq!(table.len(), 3, "{file}: one row per protocol");
        assert!(
            table
                .iter()
                .all(|r| r[energy].parse::<f64>().unwrap() > 0.0),
            "{file}: {table:?}"
        );
    }
    std::fs::remove_dir_all(&out).ok();
}
