//! File integrity on loopback (issue 15): a file reported verified is the
//! sender's file, and `send` succeeds only when the receiver verified it.
//! Each test reproduces one failure found by hand: two transfers of one
//! name, a stale connection expiring beside a new one, a corrupted byte, a
//! failed rename, a spoofed `Close` or `Refused` in the middle of a
//! transfer, and partial files left behind.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::{make_file, names, quiet, tmpdir, Captured, Relay};
use joulenet_proto::Duration;
use joulenet_runtime::app::{hash_file, FileOutcome};
use joulenet_runtime::frame::{self, Header, Kind, Protocol};
use joulenet_runtime::{
    emulate, parse_loss, run_client, run_emulator, run_server, server, ClientApp, ClientOptions,
    EmulateOptions, Format, ServerMode, ServerOptions, ServerReport,
};

fn cubic() -> Protocol {
    Protocol::named("cubic")
}

type ServerThread = thread::JoinHandle<Result<ServerReport, String>>;

/// A long-running `recv` into `out`; stopped through the returned flag.
fn recv_server(out: &Path, idle: Duration) -> (SocketAddr, Arc<AtomicBool>, ServerThread) {
    let mut opts = ServerOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        ServerMode::Files(out.to_path_buf()),
    );
    opts.idle_timeout = idle;
    let stop = Arc::new(AtomicBool::new(false));
    opts.stop = Some(Arc::clone(&stop));
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    (
        addr,
        stop,
        thread::spawn(move || run_server(&opts, sock, quiet())),
    )
}

/// A one-off `recv` into `out`.
fn one_off_recv(out: &Path) -> (SocketAddr, ServerThread) {
    let mut opts = ServerOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        ServerMode::Files(out.to_path_buf()),
    );
    opts.one_off = true;
    opts.idle_timeout = Duration::from_secs(5);
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    (
        addr,
        thread::spawn(move || run_server(&opts, sock, quiet())),
    )
}

/// An emulator in front of `server` limited to `rate`, so that transfers
/// last long enough to overlap.
fn slow_link(server: SocketAddr, rate_bps: u64) -> (SocketAddr, Arc<AtomicBool>) {
    let mut e = EmulateOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        &server.to_string(),
        parse_loss("none").unwrap(),
    );
    e.rate_bps = Some(rate_bps);
    e.queue_packets = 10_000;
    let s = emulate::bind(&e).unwrap();
    let a = s.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let st = Arc::clone(&stop);
    thread::spawn(move || run_emulator(&e, s, st));
    (a, stop)
}

fn send(to: SocketAddr, file: &Path) -> Result<joulenet_runtime::Summary, String> {
    let mut o = ClientOptions::new(
        &to.to_string(),
        cubic(),
        ClientApp::File(file.to_path_buf()),
    );
    o.idle_timeout = Duration::from_secs(5);
    run_client(&o, quiet())
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    hash_file(a).ok() == hash_file(b).ok()
}

#[test]
fn two_transfers_of_one_name_each_verify_their_own_bytes() {
    let dir = tmpdir("same-name");
    let out = dir.join("out");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    let a = make_file(&dir.join("a"), "same.bin", 3 << 20, 1);
    let b = make_file(&dir.join("b"), "same.bin", 3 << 20, 2);
    let (server_addr, stop, server) = recv_server(&out, Duration::from_secs(5));
    // 40 Mbit/s shared: each transfer takes over a second, so they overlap.
    let (link, link_stop) = slow_link(server_addr, 40_000_000);
    let (a2, b2) = (a.clone(), b.clone());
    let ta = thread::spawn(move || send(link, &a2));
    let tb = thread::spawn(move || send(link, &b2));
    let (ra, rb) = (ta.join().unwrap(), tb.join().unwrap());
    stop.store(true, Ordering::Relaxed);
    link_stop.store(true, Ordering::Relaxed);
    let report = server.join().unwrap().unwrap();
    assert!(ra.is_ok() && rb.is_ok(), "a: {ra:?}\nb: {rb:?}");
    let target = out.join("same.bin");
    assert!(
        same_bytes(&target, &a) || same_bytes(&target, &b),
        "same.bin holds neither sender's file"
    );
    let verified = report
        .files
        .iter()
        .filter(|f| matches!(f, FileOutcome::Complete { .. }))
        .count();
    assert_eq!(verified, 2, "{:?}", report.files);
    assert_eq!(names(&out), ["same.bin"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stale_connection_expiring_leaves_a_new_transfer_of_its_name_alone() {
    let dir = tmpdir("stale");
    let out = dir.join("out");
    std::fs::create_dir_all(dir.join("old")).unwrap();
    let old = make_file(&dir.join("old"), "f.bin", 2 << 20, 3);
    let new = make_file(&dir, "f.bin", 3 << 20, 4);
    let (server_addr, stop, server) = recv_server(&out, Duration::from_millis(1500));
    // The "crashed" sender: its first 60 datagrams arrive, then nothing.
    let mut passed = 0;
    let crash = Relay::rewrite(
        server_addr,
        Box::new(move |d| {
            passed += 1;
            if passed <= 60 {
                vec![d.to_vec()]
            } else {
                Vec::new()
            }
        }),
        Box::new(|d| vec![d.to_vec()]),
    );
    let mut o = ClientOptions::new(&crash.addr.to_string(), cubic(), ClientApp::File(old));
    o.idle_timeout = Duration::from_millis(300);
    assert!(
        run_client(&o, quiet()).is_err(),
        "the crashed sender succeeded"
    );
    crash.stop();
    // The retry, at 20 Mbit/s (over a second), while the stale connection
    // expires at the receiver.
    let (link, link_stop) = slow_link(server_addr, 20_000_000);
    let r = send(link, &new);
    stop.store(true, Ordering::Relaxed);
    link_stop.store(true, Ordering::Relaxed);
    let report = server.join().unwrap().unwrap();
    assert!(r.is_ok(), "{r:?}\n{:?}", report.files);
    assert!(same_bytes(&out.join("f.bin"), &new));
    // Besides the file, only what the crashed sender had sent of the other
    // file, kept for it to resume from (tests/resume.rs).
    let left = names(&out);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left[0].starts_with(".f.bin.") && left[0].ends_with(".resume"),
        "{left:?}"
    );
    assert_eq!(left[1], "f.bin");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `file` through a relay that runs `up` on each client datagram and
/// `down` on each answer; returns the sender's result, its `-J` output and
/// the receiver's report.
fn send_through(
    out: &Path,
    file: &Path,
    up: common::Rewrite,
    down: common::Rewrite,
) -> (
    Result<joulenet_runtime::Summary, String>,
    serde_json::Value,
    ServerReport,
) {
    let (server_addr, server) = one_off_recv(out);
    let relay = Relay::rewrite(server_addr, up, down);
    let mut o = ClientOptions::new(
        &relay.addr.to_string(),
        cubic(),
        ClientApp::File(file.to_path_buf()),
    );
    o.idle_timeout = Duration::from_secs(5);
    o.format = Format::Json;
    let json = Captured::default();
    let r = run_client(&o, Box::new(json.clone()));
    let report = server.join().unwrap().unwrap();
    relay.stop();
    let doc = serde_json::from_str(&json.text()).unwrap_or(serde_json::Value::Null);
    (r, doc, report)
}

fn pass() -> common::Rewrite {
    Box::new(|d| vec![d.to_vec()])
}

#[test]
fn a_byte_corrupted_in_transit_makes_send_fail_with_the_reason() {
    let dir = tmpdir("flip");
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", 1 << 20, 5);
    let mut full = 0;
    let flip: common::Rewrite = Box::new(move |d| {
        let mut d = d.to_vec();
        if d.len() > 1000 {
            full += 1;
            if full == 30 {
                // The last byte of a full segment is file content.
                *d.last_mut().unwrap() ^= 0x40;
            }
        }
        vec![d]
    });
    let (r, doc, report) = send_through(&out, &src, flip, pass());
    let err = r.expect_err("send succeeded with a corrupted file");
    assert!(err.to_lowercase().contains("mismatch"), "{err}");
    assert_eq!(doc["end"]["file"]["status"], "mismatch", "{doc}");
    assert!(doc["end"]["file"]["reason"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    assert!(
        matches!(report.files[..], [FileOutcome::Failed { .. }]),
        "{:?}",
        report.files
    );
    assert!(names(&out).is_empty(), "{:?}", names(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_rename_makes_send_fail_with_the_reason() {
    let dir = tmpdir("rename");
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", 200_000, 6);
    // A non-empty directory where the file should go: rename(2) fails.
    std::fs::create_dir_all(out.join("f.bin").join("x")).unwrap();
    let (r, doc, _) = send_through(&out, &src, pass(), pass());
    let err = r.expect_err("send succeeded though the file could not be put in place");
    assert!(err.contains("rename"), "{err}");
    assert_eq!(doc["end"]["file"]["status"], "rename_failed", "{doc}");
    assert_eq!(names(&out), ["f.bin"]);
    assert!(out.join("f.bin").is_dir());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A relay that, after the 40th answer, slips in a datagram of `kind`
/// for the same connection (what an on-path stranger who saw the
/// connection id could send).
fn inject_after_40(kind: Kind, payload: &'static [u8]) -> common::Rewrite {
    let mut seen = 0;
    Box::new(move |d| {
        seen += 1;
        let mut out = vec![d.to_vec()];
        if seen == 40 {
            if let Ok((h, _)) = frame::parse(d) {
                let forged = Header { kind, ..h };
                out.push(frame::emit(&forged, payload));
            }
        }
        out
    })
}

#[test]
fn a_spoofed_close_or_refused_mid_transfer_is_ignored() {
    for (kind, payload) in [(Kind::Close, &b""[..]), (Kind::Refused, &b"go away"[..])] {
        let dir = tmpdir(&format!("spoof-{kind:?}"));
        let out = dir.join("out");
        let src = make_file(&dir, "f.bin", 4 << 20, 7);
        let (r, doc, report) = send_through(&out, &src, pass(), inject_after_40(kind, payload));
        assert!(r.is_ok(), "{kind:?}: {r:?}");
        assert_eq!(doc["end"]["file"]["status"], "verified", "{kind:?}: {doc}");
        assert!(
            matches!(report.files[..], [FileOutcome::Complete { .. }]),
            "{kind:?}: {:?}",
            report.files
        );
        assert!(same_bytes(&out.join("f.bin"), &src), "{kind:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn stale_partial_files_are_removed_when_recv_starts() {
    let dir = tmpdir("stale-partials");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // What a killed receiver leaves: the old layout and the per-connection one
    // of a process that no longer runs.
    std::fs::write(out.join(".a.bin.partial"), b"half").unwrap();
    std::fs::write(
        out.join(".b.bin.4294967295-00000000000000aa.partial"),
        b"half",
    )
    .unwrap();
    std::fs::write(out.join("keep.bin"), b"a finished file").unwrap();
    let (_, stop, server) = recv_server(&out, Duration::from_secs(5));
    std::thread::sleep(std::time::Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap().unwrap();
    assert_eq!(names(&out), ["keep.bin"]);
    let _ = std::fs::remove_dir_all(&dir);
}
