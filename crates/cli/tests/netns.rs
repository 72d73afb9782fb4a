//! Runs `scripts/netns-test.sh` (file transfers over namespaced veth links
//! with kernel random loss) with the `joulenet` binary built for this test.
//!
//! Every reliable protocol (TCP family, WWP, E2TCP, RCP, RCP-STP), two-host
//! and three-host (relay) topologies. Skipped, with the reason printed, when
//! not root or when `ip`/`nft` are missing. Outside CI it runs the 0% and 5%
//! loss levels with 200 kB files; with `CI=true` or `JOULENET_NETNS_FULL=1`
//! also 20% (100 kB files: at 20% in both directions the Reno family and RCP
//! spend most of it in backed-off retransmission timeouts). Each protocol
//! runs in its own namespaces, all at once: 76 s for the full set on the
//! loaded 2-core machine, where one after another took 199 s.

use std::process::Command;

/// The protocols, each run in its own namespaces (`JN_NS` differs) at the
/// same time as the others: transfers at 20% loss spend most of their time
/// waiting on backed-off timers, not on the CPU, so the suite takes about
/// as long as its slowest protocol rather than the sum of all nine.
const GROUPS: [&str; 9] = [
    "tahoe", "reno", "newreno", "sack", "cubic", "wwp", "e2tcp", "rcp", "rcp-stp",
];

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
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = GROUPS
            .iter()
            .enumerate()
            .map(|(g, protos)| {
                let (root, runs) = (&root, &runs);
                s.spawn(move || {
                    runs.iter()
                        .filter_map(|(losses, size)| {
                            run_script(root, g, protos, losses, size).err()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a group's thread panicked"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One group's transfers at the given loss levels; `Err` says which failed.
fn run_script(
    root: &std::path::Path,
    group: usize,
    protos: &str,
    losses: &str,
    size: &str,
) -> Result<(), String> {
    let out = Command::new("bash")
        .arg(root.join("scripts/netns-test.sh"))
        .env("JOULENET_BIN", env!("CARGO_BIN_EXE_joulenet"))
        .env("SIZE", size)
        .env("LOSSES", losses)
        .env("PROTOS", protos)
        .env("JN_NS", format!("jnt{}{}", std::process::id(), group))
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    match out.status.code() {
        Some(77) => {
            println!("netns test skipped: {}", stdout.trim());
            Ok(())
        }
        Some(0) if stdout.contains("all transfers verified") => Ok(()),
        other => Err(format!(
            "netns-test.sh ({protos}; loss {losses}%) failed ({other:?}):\n{stdout}"
        )),
    }
}
