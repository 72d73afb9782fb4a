//! Behaviour over 127.0.0.1 (no root needed): files arrive verified with
//! every reliable protocol (the TCP family, WWP, E2TCP, RCP, RCP-STP),
//! directly and through the emulator at 5% loss; strangers and malformed
//! datagrams are counted, not fatal; a full server says so.

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use joulenet_proto::tcp::TcpVariant;
use joulenet_runtime::app::{hash_file, FileOutcome, Limit};
use joulenet_runtime::frame::{self, Header, Kind, Protocol};
use joulenet_runtime::{
    emulate, parse_loss, run_client, run_emulator, run_server, server, ClientApp, ClientOptions,
    EmulateOptions, Format, ServerMode, ServerOptions,
};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jn-rt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn make_file(dir: &Path, name: &str, len: usize) -> PathBuf {
    let mut x = 0x1234_5678u32;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

fn quiet() -> Box<dyn std::io::Write + Send> {
    Box::new(std::io::sink())
}

type ServerThread = thread::JoinHandle<Result<joulenet_runtime::ServerReport, String>>;

/// Starts a one-off counting (`serve`) server; returns its address and join handle.
fn discard_server() -> (SocketAddr, ServerThread) {
    let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    opts.one_off = true;
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    (
        addr,
        thread::spawn(move || run_server(&opts, sock, quiet())),
    )
}

/// Starts a one-off file server; returns its address and join handle.
fn file_server(out: &Path) -> (SocketAddr, ServerThread) {
    let mut opts = ServerOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        ServerMode::Files(out.to_path_buf()),
    );
    opts.one_off = true;
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    (
        addr,
        thread::spawn(move || run_server(&opts, sock, quiet())),
    )
}

fn transfer(protocol: Protocol, loss: Option<&str>, tag: &str) {
    let dir = tmpdir(tag);
    let out = dir.join("out");
    let src = make_file(&dir, "payload.bin", 1 << 20);
    let (server_addr, server) = file_server(&out);
    let stop = Arc::new(AtomicBool::new(false));
    let mut relay = None;
    let target = match loss {
        None => server_addr,
        Some(model) => {
            let mut e = EmulateOptions::new(
                "127.0.0.1:0".parse().unwrap(),
                &server_addr.to_string(),
                parse_loss(model).unwrap(),
            );
            e.seed = 7;
            let s = emulate::bind(&e).unwrap();
            let a = s.local_addr().unwrap();
            let st = Arc::clone(&stop);
            relay = Some(thread::spawn(move || run_emulator(&e, s, st)));
            a
        }
    };
    let opts = ClientOptions::new(&target.to_string(), protocol, ClientApp::File(src.clone()));
    let summary = run_client(&opts, quiet()).expect("client");
    let report = server.join().unwrap().expect("server");
    stop.store(true, Ordering::Relaxed);
    if let Some(r) = relay {
        let counts = r.join().unwrap().unwrap();
        assert!(
            counts.up.lost > 0,
            "{tag}: the emulator lost nothing: {counts:?}"
        );
        assert!(
            summary.retransmitted_packets > 0,
            "{tag}: no retransmissions"
        );
    }
    assert!(summary.completed, "{tag}: {summary:?}");
    // The stream is the file behind a small header (name, size, SHA-256);
    // both ends count exactly the same bytes.
    let sent = summary.bytes_delivered.expect("a reliable sender knows");
    assert!(sent > 1 << 20 && sent < (1 << 20) + 1024, "{tag}: {sent}");
    assert_eq!(report.summaries[0].bytes_delivered, Some(sent), "{tag}");
    match &report.files[..] {
        [FileOutcome::Complete { path, size, .. }] => {
            assert_eq!(*size, 1 << 20);
            assert_eq!(hash_file(path).unwrap(), hash_file(&src).unwrap(), "{tag}");
        }
        other => panic!("{tag}: {other:?}"),
    }
    // Nothing else (no partial file) left in the output directory.
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_tcp_variant_transfers_a_verified_file() {
    for v in TcpVariant::ALL {
        transfer(Protocol::named(v.name()), None, &format!("clean-{v}"));
    }
}

#[test]
fn every_tcp_variant_survives_5_percent_loss_through_the_emulator() {
    for v in TcpVariant::ALL {
        transfer(
            Protocol::named(v.name()),
            Some("bernoulli:5%"),
            &format!("lossy-{v}"),
        );
    }
}

fn paper_protocols() -> [Protocol; 4] {
    [
        Protocol::named("wwp"),
        Protocol::named("e2tcp"),
        Protocol::named("rcp"),
        Protocol::named("rcp-stp"),
    ]
}

#[test]
fn wwp_e2tcp_and_rcp_transfer_a_verified_file() {
    for p in paper_protocols() {
        transfer(p, None, &format!("clean-{p}"));
    }
}

#[test]
fn wwp_e2tcp_and_rcp_survive_5_percent_loss_through_the_emulator() {
    for p in paper_protocols() {
        transfer(p, Some("bernoulli:5%"), &format!("lossy-{p}"));
    }
}

#[test]
fn rcp_eln_is_refused_with_the_reason() {
    let err = "rcp-eln".parse::<Protocol>().unwrap_err();
    assert!(err.contains("link layer"), "{err}");
}

#[test]
fn generated_stream_reports_goodput_and_energy() {
    let (addr, server) = discard_server();
    let mut c = ClientOptions::new(
        &addr.to_string(),
        Protocol::named("cubic"),
        ClientApp::Generate {
            limit: Limit::Bytes(2_000_000),
            rate_bps: None,
        },
    );
    c.format = Format::Json;
    let s = run_client(&c, quiet()).unwrap();
    assert_eq!(s.bytes_delivered, Some(2_000_000));
    assert!(s.goodput_bps.unwrap() > 0.0);
    assert!(s.energy.energy_j > 0.0);
    assert!(s.transport_bytes > 2_000_000);
    let r = server.join().unwrap().unwrap();
    assert_eq!(r.summaries[0].bytes_delivered, Some(2_000_000));
}

#[test]
fn every_reliable_protocol_delivers_exactly_the_bytes_asked_for() {
    // JTP and ATP need --link-rate for their rate to rise (covered by
    // netns_multihop); at their initial 64 kbit/s this would take minutes.
    for p in Protocol::reliable().filter(|p| !p.rate_from_stamps()) {
        let (addr, server) = discard_server();
        let c = ClientOptions::new(
            &addr.to_string(),
            p,
            ClientApp::Generate {
                limit: Limit::Bytes(777_777),
                rate_bps: None,
            },
        );
        let s = run_client(&c, quiet()).unwrap();
        assert_eq!(s.bytes_delivered, Some(777_777), "{p}");
        let r = server.join().unwrap().unwrap();
        assert_eq!(r.summaries[0].bytes_delivered, Some(777_777), "{p}");
        assert!(r.summaries[0].completed, "{p}");
    }
}

#[test]
fn udp_stream_arrives() {
    let (addr, server) = discard_server();
    let c = ClientOptions::new(
        &addr.to_string(),
        Protocol::named("udp"),
        ClientApp::Generate {
            limit: Limit::Bytes(200_000),
            rate_bps: Some(20_000_000),
        },
    );
    let s = run_client(&c, quiet()).unwrap();
    // One datagram per segment (the runtime's, within the path MTU).
    let segment = joulenet_runtime::conn::MAX_SEGMENT as u64;
    assert_eq!(s.data_packets, 200_000u64.div_ceil(segment));
    let r = server.join().unwrap().unwrap();
    // Loopback drops nothing at 20 Mbit/s.
    assert_eq!(r.summaries[0].bytes_delivered, Some(200_000));
}

#[test]
fn strangers_are_counted_and_a_full_server_says_so() {
    let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    opts.max_conns = 0;
    let stop = Arc::new(AtomicBool::new(false));
    opts.stop = Some(Arc::clone(&stop));
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    let server = thread::spawn(move || run_server(&opts, sock, quiet()));
    // Garbage, a truncated header, a Data datagram for an unknown connection.
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    junk.send_to(b"hello world, not joulenet", addr).unwrap();
    junk.send_to(&[0u8; 3], addr).unwrap();
    for (i, protocol) in Protocol::all().enumerate() {
        let stray = frame::emit(
            &Header {
                kind: Kind::Data,
                protocol,
                conn_id: 42 + i as u64,
            },
            &[1, 2, 3],
        );
        junk.send_to(&stray, addr).unwrap();
    }
    // A real client is refused, with the reason.
    let c = ClientOptions::new(
        &addr.to_string(),
        Protocol::named("reno"),
        ClientApp::Generate {
            limit: Limit::Bytes(1000),
            rate_bps: None,
        },
    );
    let err = run_client(&c, quiet()).unwrap_err();
    assert!(err.contains("busy"), "{err}");
    stop.store(true, Ordering::Relaxed);
    let r = server.join().unwrap().unwrap();
    assert_eq!(r.counters.malformed, 2, "{:?}", r.counters);
    assert_eq!(
        r.counters.unknown_connection,
        Protocol::all().count() as u64,
        "{:?}",
        r.counters
    );
    assert!(r.counters.refused_busy >= 1, "{:?}", r.counters);
    assert!(r.summaries.is_empty());
}
