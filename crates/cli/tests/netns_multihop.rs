//! Runs `scripts/netns-multihop.sh` (issues 13 and 14 on real relays): a
//! 5-host namespace chain, 4 links of 10 Mbit/s with 5% random loss each
//! way, `joulenet relay` on the 3 middle hosts. A 300 kB file crosses it
//! verified with Hop, JTP, ATP (their relay agents on every relay), the
//! DTN bundle relay (`dtn`: every relay a custodian storing the bundle
//! whole before its TCP hop on) and E2TCP (forwarded); a 2.5 MB Hop file survives the middle relay killed
//! and restarted mid-transfer, and again when it dies holding a block it
//! acknowledged upstream (only the source's end-to-end timeout and a
//! virtual retransmission can bring that block back: the source must count
//! one); a jtp10 stream delivers at least 90% of its packets with fewer
//! datagrams than jtp0's. The relays' measured loss of each link
//! (`crates/runtime/src/link_loss.rs`), pooled over the file runs, is
//! within 4 binomial standard deviations of the 5% set (about ±3 points
//! over ~900 datagrams), and iJTP's link attempts follow it: jtp0 asks 5
//! everywhere, jtp10 asks 2 of most packets once its links are measured.
//! About 100 s (loaded 2-core machine).
//!
//! Hop left this gate for a while: in two of three clean-clone runs a Hop
//! transfer missed the ends' 30 s idle timeout. The causes, found in the
//! runs' reports: a lost end-to-end BACK (the receiver had the whole file,
//! the sender no timeout yet: its first end-to-end timeout was the paper's
//! 60 s, made for control messages under link ARQ, which UDP hops do not
//! have), and a lost verdict (the receiver sent it once, then twice on
//! retiring, and the sender's asks are absorbed by the first relay). On
//! hosts Hop now measures its first end-to-end timeout, and the receiver
//! repeats its verdict while it lingers (docs/runtime.md).
//!
//! Skipped (with the reason printed) when not root or a tool is missing,
//! except under `CI=true`, where that is a failure: CI runs as root with
//! the tools installed, and a silent skip there would hide a regression.

use std::process::Command;

#[test]
fn hop_jtp_and_atp_cross_a_lossy_four_hop_namespace_chain() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/netns-multihop.sh"))
        .env("JOULENET_BIN", env!("CARGO_BIN_EXE_joulenet"))
        .env("JN_NS", format!("jnm{}", std::process::id()))
        .env("RESTART", "1")
        .env("PROTOS", "hop jtp atp e2tcp dtn")
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    match out.status.code() {
        Some(77) if !ci => println!("netns multihop test skipped: {}", stdout.trim()),
        Some(0) => {
            assert!(stdout.contains("all multihop checks passed"));
            for line in [
                "ok   file hop",
                "ok   restart hop",
                "ok   restart: relay 2",
                "ok   forced hop",
                "ok   forced: relay 2",
                "ok   file jtp",
                "ok   file atp",
                "ok   file e2tcp",
                "ok   file dtn",
                "ok   stream: jtp10",
                "ok   link loss",
                "ok   attempts",
            ] {
                assert!(stdout.contains(line), "missing: {line}");
            }
        }
        other => panic!("netns-multihop.sh failed ({other:?})"),
    }
}
