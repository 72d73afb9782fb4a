//! Runs `scripts/netns-test.sh` (file transfers over namespaced veth links
//! with kernel random loss) with the `joulenet` binary built for this test.
//!
//! Every reliable protocol (TCP family, WWP, E2TCP, RCP, RCP-STP), two-host
//! and three-host (relay) topologies. Skipped, with the reason printed, when
//! not root or when `ip`/`nft` are missing. Outside CI it runs the 0% and 5%
//! loss levels with 200 kB files (about 20 s); with `CI=true` or
//! `JOULENET_NETNS_FULL=1` also 20% (100 kB files, a few minutes: at 20% in
//! both directions the Reno family and RCP spend most of it in backed-off
//! retransmission timeouts).

use std::process::Command;

#[test]
fn file_transfers_over_network_namespaces() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let full = std::env::var("CI").is_ok_and(|v| v == "true")
        || std::env::var("JOULENET_NETNS_FULL").is_ok_and(|v| v == "1");
    if !full {
        println!("netns: 20% loss level skipped (set JOULENET_NETNS_FULL=1 or CI=true to run it)");
    }
    let mut runs = vec![("0 5", "200000")];
    if full {
        runs.push(("20", "100000"));
    }
    for (losses, size) in runs {
        run_script(&root, losses, size);
    }
}

fn run_script(root: &std::path::Path, losses: &str, size: &str) {
    let out = Command::new("bash")
        .arg(root.join("scripts/netns-test.sh"))
        .env("JOULENET_BIN", env!("CARGO_BIN_EXE_joulenet"))
        .env("SIZE", size)
        .env("LOSSES", losses)
        .env("JN_NS", format!("jnt{}", std::process::id()))
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    match out.status.code() {
        Some(77) => println!("netns test skipped: {}", stdout.trim()),
        Some(0) => assert!(stdout.contains("all transfers verified")),
        other => panic!("netns-test.sh failed ({other:?})"),
    }
}
