//! Runs `scripts/netns-test.sh` for nackrate (issue 18): a 1 MB file over
//! the 10 Mbit/s two-host namespace link with 30% and then 40% random loss
//! in both directions (after the rate limiter: scripts/netns-lib.sh), each
//! verified by its SHA-256. About 10 s; skipped, with the reason printed, when not
//! root or when `ip`/`nft` are missing. Goodput is measured by
//! scripts/bench-runtime.sh, not here (no timed tests).

use std::process::Command;

#[test]
fn a_file_crosses_a_link_losing_30_and_40_percent_both_ways_with_nackrate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/netns-test.sh"))
        .env("JOULENET_BIN", env!("CARGO_BIN_EXE_joulenet"))
        .env("SIZE", "1000000")
        .env("RATE", "10mbit")
        .env("LOSSES", "30 40")
        .env("PROTOS", "nackrate")
        .env("TOPOLOGIES", "two")
        .env("JN_NS", format!("jnh{}", std::process::id()))
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    match out.status.code() {
        Some(77) => println!("netns high-loss test skipped: {}", stdout.trim()),
        Some(0) => {
            assert!(stdout.contains("all transfers verified"));
            assert!(stdout.contains("ok   two-host loss 30% nackrate"));
            assert!(stdout.contains("ok   two-host loss 40% nackrate"));
        }
        other => panic!("netns-test.sh (nackrate, 30 and 40% loss) failed ({other:?}):\n{stdout}"),
    }
}
