//! Command-line and scenario errors found by hand (issue 15): each used to
//! panic, abort on an 8 GB allocation, run a default scenario, or report a
//! typo as something else. Each must now be a clear error, exit code 2.

use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jn-cli-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn demo() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join("scenarios/demo.toml")).unwrap()
}

/// Runs `joulenet ARGS`; returns (exit code, stderr).
fn joulenet(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_joulenet"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn seed_ranges_beyond_the_limit_are_errors_not_panics_or_aborts() {
    let demo = scratch("demo.toml", &demo());
    let demo = demo.to_str().unwrap();
    for range in ["0..=18446744073709551615", "0..1000000000"] {
        let (code, err) = joulenet(&["run", demo, "--seeds", range]);
        assert_eq!(code, Some(2), "{range}: {err}");
        assert!(err.contains("limit of 1000000"), "{range}: {err}");
    }
    let (code, err) = joulenet(&["run", demo, "--seeds", "5..5"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("empty"), "{err}");
}

#[test]
fn scenario_mistakes_are_named() {
    let typo = scratch(
        "typo.toml",
        &demo().replace("loss = 0.002 }", "los = 0.002 }"),
    );
    let (code, err) = joulenet(&["check", typo.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("link.loss.good") && err.contains("`los`"),
        "{err}"
    );

    let nan = scratch(
        "nan.toml",
        &demo().replace("loss = 0.002 }", "loss = nan }"),
    );
    let (code, err) = joulenet(&["check", nan.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("nan") && !err.contains("got a number"),
        "{err}"
    );

    for (name, text) in [("empty.toml", ""), ("comments.toml", "# nothing yet\n\n")] {
        let f = scratch(name, text);
        let (code, err) = joulenet(&["check", f.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains("empty"), "{name}: {err}");
    }
}

/// `reproduce` without its scenario folder (run outside the repository)
/// fails, and says how to point it at the folder (issue 17).
#[test]
fn reproduce_without_its_scenarios_says_to_pass_them() {
    let empty = std::env::temp_dir().join(format!("jn-no-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let scenarios = empty.join("scenarios");
    let out = empty.join("out");
    let (code, err) = joulenet(&[
        "reproduce",
        "jtp",
        "--quick",
        "--no-plots",
        "--scenarios",
        scenarios.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--scenarios"), "{err}");
    // Nothing written: no results folder left behind by a failed run.
    assert!(!out.exists(), "{} was created", out.display());
    let _ = std::fs::remove_dir_all(&empty);
}
