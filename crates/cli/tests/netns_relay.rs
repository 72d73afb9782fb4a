//! Runs `scripts/netns-relay-test.sh`: files through 3- and 5-host chains
//! of namespaced hosts with `joulenet relay` on the middle ones, at 0% and
//! 5% random loss on every link, for hbh-tcp (terminated at every relay)
//! and e2tcp (forwarded by every relay), each file verified by its SHA-256
//! and the relays' reports checked (the transit probe: hop limits at the
//! ends, forwarded counts at every relay). About 40 s. Skipped, with the
//! reason printed, when not root or when `ip`/`nft` are missing.

use std::process::Command;

#[test]
fn files_through_relay_chains_over_network_namespaces() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/netns-relay-test.sh"))
        .env("JOULENET_BIN", env!("CARGO_BIN_EXE_joulenet"))
        .env("JN_NS", format!("jnr{}", std::process::id()))
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    match out.status.code() {
        Some(77) => println!("netns relay test skipped: {}", stdout.trim()),
        Some(0) => {
            assert!(stdout.contains("all relayed transfers verified"));
            // Both chains and both protocols ran.
            for line in ["3-host chain loss 5% hbh-tcp", "5-host chain loss 5% e2tcp"] {
                assert!(stdout.contains(&format!("ok   {line}")), "missing: {line}");
            }
        }
        other => panic!("netns-relay-test.sh failed ({other:?})"),
    }
}
