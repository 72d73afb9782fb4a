//! Resuming an interrupted file transfer (issue 15): the receiver keeps
//! what arrived, offers its length and hash, and a sender whose file has
//! the same prefix sends only the rest — after a relay restart (a new
//! upstream port, so a new connection) or a receiver restart. Before, every
//! retry started from byte 0.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration as StdDuration, Instant};

use common::{make_file, names, quiet, tmpdir, Captured, Relay};
use joulenet_proto::Duration;
use joulenet_runtime::app::hash_file;
use joulenet_runtime::frame::Protocol;
use joulenet_runtime::seal::Psk;
use joulenet_runtime::{
    emulate, parse_loss, run_client, run_emulator, run_server, server, ClientApp, ClientOptions,
    EmulateOptions, Format, ServerMode, ServerOptions, ServerReport,
};

fn sack() -> Protocol {
    Protocol::named("sack")
}
const SIZE: usize = 3 << 20;

type Server = (
    SocketAddr,
    Arc<AtomicBool>,
    thread::JoinHandle<Result<ServerReport, String>>,
);

fn recv(out: &Path) -> Server {
    recv_with(out, None)
}

fn recv_with(out: &Path, psk: Option<Psk>) -> Server {
    let mut opts = ServerOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        ServerMode::Files(out.to_path_buf()),
    );
    opts.psk = psk;
    // Short, so that a cut connection is given up and its prefix kept
    // quickly; long enough that a loaded machine's scheduling gaps do not
    // cut a live one.
    opts.idle_timeout = Duration::from_millis(1_000);
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

/// How long a sender waits hearing nothing before it gives up: short for
/// a transfer the test cuts (it must fail fast), generous for one that must
/// finish (400 ms aborted a sealed transfer once on a machine at load 15).
const CUT_IDLE: Duration = Duration::from_millis(400);
const LIVE_IDLE: Duration = Duration::from_millis(5_000);

/// Sends `file` to `to`; returns the result and the `-J` document.
fn send(
    to: SocketAddr,
    file: &Path,
) -> (Result<joulenet_runtime::Summary, String>, serde_json::Value) {
    send_with(to, file, None, LIVE_IDLE)
}

/// Sends `file` over a path the test will cut.
fn send_cut(
    to: SocketAddr,
    file: &Path,
) -> (Result<joulenet_runtime::Summary, String>, serde_json::Value) {
    send_with(to, file, None, CUT_IDLE)
}

fn send_with(
    to: SocketAddr,
    file: &Path,
    psk: Option<Psk>,
    idle: Duration,
) -> (Result<joulenet_runtime::Summary, String>, serde_json::Value) {
    let mut o = ClientOptions::new(&to.to_string(), sack(), ClientApp::File(file.to_path_buf()));
    o.psk = psk;
    o.idle_timeout = idle;
    o.format = Format::Json;
    let j = Captured::default();
    let r = run_client(&o, Box::new(j.clone()));
    (
        r,
        serde_json::from_str(&j.text()).unwrap_or(serde_json::Value::Null),
    )
}

/// Waits (bounded) until `out` holds a kept prefix; returns its length.
fn kept_prefix(out: &Path) -> u64 {
    let until = Instant::now() + StdDuration::from_secs(10);
    while Instant::now() < until {
        let kept = std::fs::read_dir(out).ok().and_then(|d| {
            d.flatten()
                .find(|e| e.file_name().to_string_lossy().ends_with(".resume"))
        });
        if let Some(k) = kept {
            return k.metadata().unwrap().len();
        }
        thread::sleep(StdDuration::from_millis(20));
    }
    panic!("no prefix kept in {}: {:?}", out.display(), names(out));
}

/// A relay that passes the first `n` client datagrams and then dies.
fn dying_relay(server: SocketAddr, n: usize) -> Relay {
    let mut passed = 0;
    Relay::rewrite(
        server,
        Box::new(move |d| {
            passed += 1;
            if passed <= n {
                vec![d.to_vec()]
            } else {
                Vec::new()
            }
        }),
        Box::new(|d| vec![d.to_vec()]),
    )
}

fn check_resumed(doc: &serde_json::Value, kept: u64, src: &Path, out: &Path) {
    assert_eq!(doc["end"]["file"]["status"], "verified", "{doc}");
    let from = doc["end"]["file"]["resumed_from"].as_u64().unwrap();
    assert_eq!(from, kept, "{doc}");
    // Only the rest (and the stream header) went over the second time.
    let sent = doc["end"]["bytes_requested"].as_u64().unwrap();
    assert!(
        sent < SIZE as u64 - kept + 200,
        "{sent} bytes for {kept} kept"
    );
    assert_eq!(
        hash_file(&out.join("f.bin")).unwrap(),
        hash_file(src).unwrap()
    );
    assert_eq!(names(out), ["f.bin"], "the kept prefix was not consumed");
}

#[test]
fn a_transfer_cut_by_a_relay_restart_resumes_where_it_stopped() {
    cut_by_a_relay_restart("resume-relay", None);
}

/// The same in authenticated mode: the `Query` and the `Offer` are sealed
/// like everything else, and resuming works as without a key.
#[test]
fn a_sealed_transfer_cut_by_a_relay_restart_resumes_where_it_stopped() {
    cut_by_a_relay_restart("resume-relay-psk", Some(Psk::from_bytes(&[3; 32]).unwrap()));
}

fn cut_by_a_relay_restart(tag: &str, psk: Option<Psk>) {
    let dir = tmpdir(tag);
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", SIZE, 21);
    let (addr, stop, server) = recv_with(&out, psk.clone());
    let first = dying_relay(addr, 800);
    let (r, _) = send_with(first.addr, &src, psk.clone(), CUT_IDLE);
    assert!(r.is_err(), "the cut transfer succeeded");
    first.stop();
    let kept = kept_prefix(&out);
    assert!(kept > 100_000 && kept < SIZE as u64, "{kept}");
    // The restarted relay: a new port toward the receiver, a new connection.
    let second = dying_relay(addr, usize::MAX);
    let (r, doc) = send_with(second.addr, &src, psk, LIVE_IDLE);
    second.stop();
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap().unwrap();
    assert!(r.is_ok(), "{r:?}");
    check_resumed(&doc, kept, &src, &out);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_transfer_cut_by_a_receiver_restart_resumes_where_it_stopped() {
    let dir = tmpdir("resume-recv");
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", SIZE, 22);
    let (addr, stop, server) = recv(&out);
    // 20 Mbit/s: over a second for the file, so that stopping the receiver
    // once a third has arrived always cuts the transfer.
    let mut e = EmulateOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        &addr.to_string(),
        parse_loss("none").unwrap(),
    );
    e.rate_bps = Some(20_000_000);
    e.queue_packets = 10_000;
    let es = emulate::bind(&e).unwrap();
    let to = es.local_addr().unwrap();
    let relay_stop = Arc::new(AtomicBool::new(false));
    let rs = Arc::clone(&relay_stop);
    let relay = thread::spawn(move || run_emulator(&e, es, rs));
    let s2 = src.clone();
    let sender = thread::spawn(move || send_cut(to, &s2));
    let until = Instant::now() + StdDuration::from_secs(5);
    let partial_len = || {
        std::fs::read_dir(&out).ok().and_then(|d| {
            d.flatten()
                .find(|e| e.file_name().to_string_lossy().ends_with(".partial"))
                .and_then(|e| e.metadata().ok().map(|m| m.len()))
        })
    };
    while partial_len().is_none_or(|n| n < 1 << 20) && Instant::now() < until {
        thread::sleep(StdDuration::from_millis(2));
    }
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap().unwrap();
    let (r, doc) = sender.join().unwrap();
    relay_stop.store(true, Ordering::Relaxed);
    relay.join().unwrap().unwrap();
    assert!(r.is_err(), "the cut transfer succeeded: {doc}");
    assert_eq!(doc["end"]["file"]["status"], "incomplete", "{doc}");
    let kept = kept_prefix(&out);
    let (addr, stop, server) = recv(&out);
    let (r, doc) = send(addr, &src);
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap().unwrap();
    assert!(r.is_ok(), "{r:?}");
    check_resumed(&doc, kept, &src, &out);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kept_prefix_that_does_not_match_the_file_is_not_resumed_from() {
    let dir = tmpdir("resume-bad");
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", SIZE, 23);
    let (addr, stop, server) = recv(&out);
    let first = dying_relay(addr, 800);
    let _ = send_cut(first.addr, &src);
    first.stop();
    kept_prefix(&out);
    // Damage the kept prefix: its hash no longer matches the sender's.
    let kept = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(".resume"))
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&kept).unwrap();
    bytes[10] ^= 0xff;
    std::fs::write(&kept, bytes).unwrap();
    let (r, doc) = send(addr, &src);
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap().unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(doc["end"]["file"]["resumed_from"], 0, "{doc}");
    assert_eq!(
        hash_file(&out.join("f.bin")).unwrap(),
        hash_file(&src).unwrap()
    );
    assert_eq!(names(&out), ["f.bin"], "the useless prefix was not removed");
    let _ = std::fs::remove_dir_all(&dir);
}
