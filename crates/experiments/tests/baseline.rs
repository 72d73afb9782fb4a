//! `reproduce --baseline`: the TCP baselines follow the chosen profile, and
//! the report says which.

use std::path::PathBuf;

use joulenet_experiments::{reproduce, Options};
use joulenet_proto::tcp::TcpProfile;

fn options(name: &str, baseline: Option<TcpProfile>) -> Options {
    Options {
        quick: true,
        seeds: None,
        scenarios: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios")),
        out: std::env::temp_dir().join(format!("joulenet-{name}-{}", std::process::id())),
        echo: false,
        baseline,
    }
}

/// Retransmissions of the error-free TCP row of Table 1.
fn error_free_tcp_retransmissions(out: &std::path::Path) -> u64 {
    let text = std::fs::read_to_string(out.join("wwp_tables_1_2.csv")).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("0,0,TCP,"))
        .unwrap_or_else(|| panic!("no error-free TCP row in\n{text}"));
    row.split(',').nth(10).unwrap().parse().unwrap()
}

#[test]
fn the_wwp_papers_own_tcp_is_window_limited_and_named() {
    let own = options("wwp-xk", Some(TcpProfile::Xkernel1998));
    let outcome = reproduce("wwp", &own).unwrap();
    assert!(
        outcome
            .report
            .starts_with("TCP baselines: profile \"xkernel-1998\""),
        "{}",
        &outcome.report[..200]
    );
    // An 8 KB window never overflows the 100-frame queue; our default
    // TCP's slow start does.
    assert_eq!(error_free_tcp_retransmissions(&own.out), 0);
    let rfc = options("wwp-rfc", None);
    let outcome = reproduce("wwp", &rfc).unwrap();
    assert!(outcome.report.starts_with("TCP baselines: profile \"rfc\""));
    assert!(error_free_tcp_retransmissions(&rfc.out) > 0);
}

#[test]
fn papers_whose_baselines_are_their_own_refuse_the_switch() {
    let e = reproduce("jtp", &options("jtp-x", Some(TcpProfile::Linux))).unwrap_err();
    assert!(e.contains("--baseline"), "{e}");
}
