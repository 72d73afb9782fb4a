//! Authenticated mode (`--psk-file`, issue 15) on loopback: a stranger
//! without the key cannot replay a captured session into a restarted
//! receiver, forge a `Close` or `Refused`, or alter a byte; a peer in the
//! other mode, or with another key, fails fast with a clear error; kept
//! prefixes past the resume horizon are removed when `recv` starts.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration as StdDuration, Instant};

use common::{make_file, names, quiet, tmpdir, Relay};
use joulenet_proto::Duration;
use joulenet_runtime::app::{hash_file, FileOutcome};
use joulenet_runtime::frame::{self, CloseRepr, Header, Kind, Protocol, Verdict};
use joulenet_runtime::seal::{self, Psk};
use joulenet_runtime::{
    run_client, run_server, server, ClientApp, ClientOptions, ServerMode, ServerOptions,
    ServerReport, Summary,
};

fn sack() -> Protocol {
    Protocol::named("sack")
}

fn key(b: u8) -> Psk {
    Psk::from_bytes(&[b; 32]).unwrap()
}

type ServerThread = thread::JoinHandle<Result<ServerReport, String>>;

/// A long-running `recv` into `out` with `psk`; stopped through the flag.
fn recv(out: &Path, psk: Option<Psk>) -> (SocketAddr, Arc<AtomicBool>, ServerThread) {
    let mut opts = ServerOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        ServerMode::Files(out.to_path_buf()),
    );
    opts.idle_timeout = Duration::from_secs(5);
    opts.psk = psk;
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

fn send(to: SocketAddr, proto: Protocol, file: &Path, psk: Option<Psk>) -> Result<Summary, String> {
    let mut o = ClientOptions::new(&to.to_string(), proto, ClientApp::File(file.to_path_buf()));
    o.idle_timeout = Duration::from_secs(20);
    o.psk = psk;
    run_client(&o, quiet())
}

fn stop(flag: Arc<AtomicBool>, t: ServerThread) -> ServerReport {
    flag.store(true, Ordering::Relaxed);
    t.join().unwrap().unwrap()
}

fn verified(r: &ServerReport) -> usize {
    r.files
        .iter()
        .filter(|f| matches!(f, FileOutcome::Complete { .. }))
        .count()
}

/// A transfer captured on the path, the file then removed, the receiver
/// restarted (a new process key, no memory of the session): the captured
/// datagrams replayed to it, twice, by an active attacker who puts the
/// token of every `Retry` it can read into the `Hello`s it replays, create
/// no connection and no file. In authenticated mode it can read none (the
/// `Retry` is sealed), and could not change a sealed `Hello` if it could.
/// `psk` is a parameter so that the same attack can be tried without a
/// key, where it does recreate the file for protocols without a random
/// initial sequence number.
fn replay_into_a_restarted_receiver(proto: Protocol, psk: Option<Psk>) -> ServerReport {
    let dir = tmpdir(&format!("auth-replay-{proto}-{}", psk.is_some()));
    let out = dir.join("out");
    let src = make_file(&dir, "v1.bin", 300_000, 3);
    let (addr, flag, t) = recv(&out, psk.clone());
    let captured = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
    let c2 = Arc::clone(&captured);
    let path = Relay::start(addr, move |d| c2.lock().unwrap().push(d.to_vec()), |_| true);
    send(path.addr, proto, &src, psk.clone()).expect("the original transfer");
    path.stop();
    assert_eq!(verified(&stop(flag, t)), 1, "{proto}");
    std::fs::remove_file(out.join("v1.bin")).unwrap();

    // The restarted receiver, on the same directory.
    let (addr, flag, t) = recv(&out, psk.clone());
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    attacker
        .set_read_timeout(Some(StdDuration::from_millis(1)))
        .unwrap();
    let session = captured.lock().unwrap().clone();
    assert!(session.len() > 100, "{proto}: captured {}", session.len());
    let mut token: Option<[u8; 16]> = None;
    let mut buf = [0u8; 2048];
    for _ in 0..2 {
        for d in &session {
            let mut d = d.clone();
            if let (Some(t), Ok((h, _))) = (token, frame::parse(&d)) {
                if h.kind == Kind::Hello {
                    d[16..32].copy_from_slice(&t);
                }
            }
            let _ = attacker.send_to(&d, addr);
            while let Ok((n, _)) = attacker.recv_from(&mut buf) {
                if let Ok((h, p)) = frame::parse(&buf[..n]) {
                    if h.kind == Kind::Retry {
                        token = frame::parse_retry(p).ok();
                    }
                }
                if psk.is_some() {
                    assert!(seal::is_sealed(&buf[..n]), "{proto}: a plain answer");
                }
            }
        }
        thread::sleep(StdDuration::from_millis(300));
    }
    let report = stop(flag, t);
    if psk.is_some() {
        assert!(
            report.summaries.is_empty(),
            "{proto}: a connection was made"
        );
        assert!(report.files.is_empty(), "{proto}");
        assert!(!out.join("v1.bin").exists(), "{proto}: the file came back");
        assert!(
            names(&out).iter().all(|n| !n.ends_with(".partial")),
            "{proto}"
        );
        // Its openings were answered (sealed `Retry`s, nothing readable);
        // its data found no connection.
        let c = &report.counters;
        assert!(c.retries_sent > 0, "{proto}: {c:?}");
        assert!(c.unknown_connection > 0, "{proto}: {c:?}");
        assert!(token.is_none(), "{proto}: read a token");
    }
    let _ = std::fs::remove_dir_all(&dir);
    report
}

#[test]
fn a_captured_session_replayed_into_a_restarted_receiver_recreates_nothing() {
    for proto in [
        sack(),
        Protocol::named("e2tcp"),
        Protocol::named("wwp"),
        Protocol::named("rcp"),
    ] {
        replay_into_a_restarted_receiver(proto, Some(key(1)));
    }
}

/// The same attack without a key recreates the file (it did with WWP and
/// E2TCP, whose openings carry no random initial sequence number, when
/// this was written; RCP's did not): what the test above guards against.
#[test]
fn without_a_key_the_same_replay_recreates_the_file() {
    let recreated = [
        Protocol::named("wwp"),
        Protocol::named("e2tcp"),
        Protocol::named("rcp"),
    ]
    .into_iter()
    .filter(|p| verified(&replay_into_a_restarted_receiver(*p, None)) > 0)
    .count();
    assert!(recreated > 0, "no protocol let the plain replay through");
}

/// A stranger on the path injects, toward the sender, a `Close` with a
/// failing verdict and a `Refused` in the middle of the transfer — sealed
/// under its own key, and in plain framing — and toward the receiver an
/// empty `Close`. All are dropped; the transfer completes verified.
/// (Without a key, the forged verdict made `send` fail.)
#[test]
fn forged_close_and_refused_from_a_stranger_are_dropped_and_the_file_verifies() {
    let dir = tmpdir("auth-forge");
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", 2 << 20, 5);
    let (addr, flag, t) = recv(&out, Some(key(1)));
    let stranger = key(9);
    let forge = move |h: Header, kind: Kind, payload: &[u8]| {
        let h = Header { kind, ..h };
        vec![
            seal::seal_answer(&stranger, &h, None, &[0; 16], payload),
            {
                let mut k = seal::ConnSeal::client(&stranger, h.conn_id).unwrap();
                let mut d = Vec::new();
                k.set_token(&[1; 16]);
                k.seal(&h, None, payload, &mut d);
                d
            },
            joulenet_runtime::frame::emit(&h, payload),
        ]
    };
    let injected = Arc::new(AtomicU64::new(0));
    let (inj_down, inj_up) = (Arc::clone(&injected), Arc::clone(&injected));
    let forge_up = forge.clone();
    let mut seen_down = 0u64;
    let mut seen_up = 0u64;
    let path = Relay::rewrite(
        addr,
        Box::new(move |d| {
            seen_up += 1;
            let mut v = vec![d.to_vec()];
            if seen_up % 97 == 50 {
                if let Ok(s) = seal::parse(d) {
                    v.extend(forge_up(s.header, Kind::Close, b""));
                    inj_up.fetch_add(3, Ordering::Relaxed);
                }
            }
            v
        }),
        Box::new(move |d| {
            seen_down += 1;
            let mut v = vec![d.to_vec()];
            if seen_down % 41 == 20 {
                if let Ok(s) = seal::parse(d) {
                    let close = CloseRepr {
                        verdict: Verdict::Mismatch,
                        stream_bytes: 1,
                        sha256: [0; 32],
                        reason: "forged".into(),
                    };
                    v.extend(forge(s.header, Kind::Close, &close.emit()));
                    v.extend(forge(s.header, Kind::Refused, b"forged refusal"));
                    inj_down.fetch_add(6, Ordering::Relaxed);
                }
            }
            v
        }),
    );
    let r = send(path.addr, sack(), &src, Some(key(1)));
    path.stop();
    let report = stop(flag, t);
    assert!(
        injected.load(Ordering::Relaxed) >= 12,
        "too few forgeries injected"
    );
    let s = r.expect("send through the forgeries");
    assert!(s.completed);
    assert_eq!(verified(&report), 1, "{:?}", report.files);
    assert_eq!(hash_file(&out.join("f.bin")).ok(), hash_file(&src).ok());
    // Toward the server: the stranger's sealed `Close`s failed to open, its
    // plain ones were in the other mode.
    let c = &report.counters;
    assert!(c.auth_failed > 0 && c.mode_mismatch == 0, "{c:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One bit flipped in every 53rd datagram each way (in the payload, the
/// packet number or a header byte): each is counted and dropped, never
/// acted on; the transfer repairs the losses and verifies.
#[test]
fn a_flipped_bit_in_a_sealed_datagram_is_counted_and_dropped() {
    let dir = tmpdir("auth-flip");
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", 1 << 20, 6);
    let (addr, flag, t) = recv(&out, Some(key(2)));
    let flipped = Arc::new(AtomicU64::new(0));
    let f2 = Arc::clone(&flipped);
    let mut n = 0usize;
    let flip = move |d: &[u8]| {
        n += 1;
        let mut d = d.to_vec();
        if n.is_multiple_of(53) && d.len() > 30 {
            // Header bytes keep the datagram ours (conn id, kind, version):
            // flip in the packet number or what follows it.
            let i = 16 + (n * 7) % (d.len() - 16);
            d[i] ^= 1 << (n % 8);
            f2.fetch_add(1, Ordering::Relaxed);
        }
        vec![d]
    };
    let path = Relay::rewrite(addr, Box::new(flip), Box::new(|d| vec![d.to_vec()]));
    let r = send(path.addr, Protocol::named("rcp"), &src, Some(key(2)));
    path.stop();
    let report = stop(flag, t);
    let flips = flipped.load(Ordering::Relaxed);
    assert!(flips >= 5, "only {flips} flipped");
    r.expect("send through the flips");
    assert_eq!(verified(&report), 1, "{:?}", report.files);
    assert_eq!(hash_file(&out.join("f.bin")).ok(), hash_file(&src).ok());
    let c = &report.counters;
    assert!(c.auth_failed >= flips, "{flips} flipped, {c:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One end with a key and one without, or two different keys: the sender
/// fails within seconds (not its 20-s idle timeout) with an error that
/// names the cause, and no file is made.
#[test]
fn mismatched_modes_and_keys_fail_fast_with_a_clear_error() {
    let cases: [(&str, Option<Psk>, Option<Psk>, &str); 3] = [
        ("key-at-sender", Some(key(1)), None, "has none"),
        ("key-at-receiver", None, Some(key(1)), "authenticated mode"),
        (
            "two-keys",
            Some(key(1)),
            Some(key(2)),
            "authentication failed",
        ),
    ];
    for (tag, at_sender, at_receiver, says) in cases {
        let dir = tmpdir(&format!("auth-mode-{tag}"));
        let out = dir.join("out");
        let src = make_file(&dir, "f.bin", 100_000, 7);
        let (addr, flag, t) = recv(&out, at_receiver);
        let began = Instant::now();
        let err = send(addr, sack(), &src, at_sender).expect_err(tag);
        let took = began.elapsed();
        let report = stop(flag, t);
        assert!(err.contains(says), "{tag}: {err}");
        assert!(err.contains("--psk-file"), "{tag}: {err}");
        assert!(took < StdDuration::from_secs(8), "{tag}: took {took:?}");
        assert!(
            report.summaries.is_empty() && report.files.is_empty(),
            "{tag}"
        );
        assert!(!out.join("f.bin").exists(), "{tag}");
        let c = &report.counters;
        assert!(c.mode_mismatch + c.auth_failed > 0, "{tag}: {c:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Authenticated mode changes nothing for the transfer itself: every
/// reliable protocol delivers a file verified, and a generated stream
/// (`serve`/`client`) is delivered too.
#[test]
fn every_reliable_protocol_transfers_verified_in_authenticated_mode() {
    let dir = tmpdir("auth-all");
    let out = dir.join("out");
    let src = make_file(&dir, "f.bin", 400_000, 8);
    let (addr, flag, t) = recv(&out, Some(key(4)));
    let mut n = 0;
    // JTP and ATP need --link-rate for their rate to rise (covered by
    // netns_multihop); at their initial 64 kbit/s this would take minutes.
    for p in Protocol::reliable().filter(|p| !p.rate_from_stamps()) {
        if p == Protocol::named("hbh-tcp") {
            // Two-party, hbh-tcp is NewReno end to end: covered by newreno.
            continue;
        }
        let s = send(addr, p, &src, Some(key(4))).unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(s.completed, "{p}");
        n += 1;
    }
    let report = stop(flag, t);
    assert_eq!(verified(&report), n, "{:?}", report.files);
    assert_eq!(report.counters.auth_failed, 0, "{:?}", report.counters);

    let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    opts.one_off = true;
    opts.psk = Some(key(4));
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    let t = thread::spawn(move || run_server(&opts, sock, quiet()));
    let mut o = ClientOptions::new(
        &addr.to_string(),
        Protocol::named("cubic"),
        ClientApp::Generate {
            limit: joulenet_runtime::app::Limit::Bytes(1 << 20),
            rate_bps: None,
        },
    );
    o.psk = Some(key(4));
    let s = run_client(&o, quiet()).expect("a generated stream");
    assert!(s.completed);
    let r = t.join().unwrap().unwrap();
    assert_eq!(r.summaries.len(), 1);
    assert_eq!(r.summaries[0].bytes_delivered, Some(1 << 20));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `recv` starts by removing the kept prefixes of transfers interrupted
/// longer ago than the resume horizon; a younger one stays and is still
/// resumed from.
#[test]
fn kept_prefixes_past_the_resume_horizon_are_removed_on_start() {
    let dir = tmpdir("auth-horizon");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let old = out.join(".old.bin.0123456789abcdef0123456789abcdef.resume");
    let young = out.join(".young.bin.0123456789abcdef0123456789abcdef.resume");
    for p in [&old, &young] {
        std::fs::write(p, b"prefix").unwrap();
    }
    let long_ago = std::time::SystemTime::now() - StdDuration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(long_ago)
        .unwrap();
    let mut opts = ServerOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        ServerMode::Files(out.clone()),
    );
    opts.resume_horizon = StdDuration::from_secs(600);
    let stop_flag = Arc::new(AtomicBool::new(true));
    opts.stop = Some(stop_flag);
    let sock = server::bind(&opts).unwrap();
    let report = run_server(&opts, sock, quiet()).unwrap();
    assert_eq!(report.counters.expired_resumes_removed, 1);
    assert!(!old.exists() && young.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
