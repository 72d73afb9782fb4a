//! R²CP's multi-homed receiver on loopback (issue 20): two paths from two
//! local addresses (127.0.0.1 and 127.0.0.2) to `run_offer` senders; the
//! file is verified on disk by the receiver and checked here. The
//! namespace tests (`crates/cli/tests/netns_r2cp.rs`) take interfaces
//! down; here a path whose sender never answers is taken down by silence.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

mod common;

use common::{make_file, tmpdir};
use joulenet_proto::Duration;
use joulenet_runtime::app::hash_file;
use joulenet_runtime::multihomed::liveness::DownReason;
use joulenet_runtime::multihomed::offer::{run_offer, OfferOptions, OfferReport};
use joulenet_runtime::multihomed::receiver::{
    run_receiver, PathAddrs, ReceiverOptions, ReceiverReport,
};

/// Free UDP ports on 127.0.0.1, for the offers to bind.
fn free_ports(n: usize) -> Vec<SocketAddr> {
    let socks: Vec<_> = (0..n)
        .map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    socks.iter().map(|s| s.local_addr().unwrap()).collect()
}

/// Path 0 from 127.0.0.1 to `servers[0]`, path 1 from 127.0.0.2 to
/// `servers[1]`.
fn two_paths(servers: &[SocketAddr]) -> Vec<PathAddrs> {
    ["127.0.0.1:0", "127.0.0.2:0"]
        .iter()
        .zip(servers)
        .map(|(local, &server)| PathAddrs {
            local: local.parse().unwrap(),
            server,
        })
        .collect()
}

/// Pulls `src` over `paths` while an offer serves `binds`.
fn pull(
    src: &Path,
    binds: Vec<SocketAddr>,
    paths: Vec<PathAddrs>,
    out: &Path,
    silence: Duration,
) -> (ReceiverReport, OfferReport) {
    let stop = Arc::new(AtomicBool::new(false));
    let mut o = OfferOptions::new(src.to_path_buf(), binds);
    o.stop = Some(Arc::clone(&stop));
    let offer = thread::spawn(move || run_offer(&o).unwrap());
    let mut r = ReceiverOptions::new(paths, out.to_path_buf());
    r.silence = silence;
    r.idle_timeout = Duration::from_secs(20);
    let report = run_receiver(&r).unwrap();
    stop.store(true, Ordering::Relaxed);
    (report, offer.join().unwrap())
}

#[test]
fn a_file_pulled_over_two_paths_arrives_verified_through_both() {
    let dir = tmpdir("mh-two");
    let src = make_file(&dir, "pulled.bin", 2_000_000, 7);
    let binds = free_ports(2);
    let paths = two_paths(&binds);
    let out = dir.join("in");
    let (r, offer) = pull(&src, binds, paths, &out, Duration::from_secs(1));
    assert_eq!(r.status, "verified", "{}", r.reason);
    assert_eq!(
        hash_file(&out.join("pulled.bin")).unwrap(),
        hash_file(&src).unwrap()
    );
    assert!(
        r.paths.iter().all(|p| p.bytes_received > 0),
        "{:?}",
        r.paths
    );
    assert_eq!(r.pipes_opened, 2);
    // Both senders served the one connection; together they sent at
    // least the file.
    assert_eq!(offer.pipes.len(), 2);
    let sent: u64 = offer.pipes.iter().map(|p| p.data_bytes_sent).sum();
    assert!(sent >= 2_000_000, "{sent}");
}

#[test]
fn a_path_whose_sender_is_silent_is_taken_down_and_the_other_carries_the_file() {
    let dir = tmpdir("mh-silent");
    // Big enough that the transfer outlasts the 30 ms silence several
    // times even on a quiet machine (2 MB took 12 ms over loopback there,
    // and the silent path was never declared down).
    let src = make_file(&dir, "pulled.bin", 40_000_000, 9);
    let binds = free_ports(2);
    // The second sender's port is free: nobody answers there.
    let paths = two_paths(&binds);
    let out = dir.join("in");
    let (r, _) = pull(&src, vec![binds[0]], paths, &out, Duration::from_millis(30));
    assert_eq!(r.status, "verified", "{}", r.reason);
    assert!(r.paths[0].bytes_received > 40_000_000);
    assert_eq!(r.paths[1].datagrams_received, 0);
    // Its SYNs went unanswered for 30 ms: down by silence (the route
    // exists), reported up again after as long, and down again.
    assert!(r.paths[1].downs >= 1, "{:?} in {} s", r.paths[1], r.seconds);
    assert_eq!(r.paths[1].last_down, Some(DownReason::Silence));
    assert!(r.pipes_opened >= 3, "a new pipe probes the path each time");
}
