//! Address validation on loopback (issue 15): a stranger who can send
//! datagrams with any source address gets no connection state and at most
//! three times the bytes it sent (RFC 9000 §8.1's limit), so a flood of
//! openings cannot lock a legitimate client out, and one opening cannot
//! draw a stream of answers toward an address that never asked.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration as StdDuration, Instant};

use common::{quiet, Relay};
use joulenet_proto::Duration;
use joulenet_runtime::app::Limit;
use joulenet_runtime::frame::{self, Header, Kind, Protocol};
use joulenet_runtime::{
    run_client, run_server, server, ClientApp, ClientOptions, ServerMode, ServerOptions,
    ServerReport,
};

fn reno() -> Protocol {
    Protocol::named("reno")
}

fn discard_server(
    max_conns: usize,
) -> (
    SocketAddr,
    Arc<AtomicBool>,
    thread::JoinHandle<Result<ServerReport, String>>,
) {
    let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    opts.max_conns = max_conns;
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

fn small_client(to: SocketAddr) -> ClientOptions {
    let mut o = ClientOptions::new(
        &to.to_string(),
        reno(),
        ClientApp::Generate {
            limit: Limit::Bytes(100_000),
            rate_bps: None,
        },
    );
    o.idle_timeout = Duration::from_secs(3);
    o
}

/// Every datagram that arrives at `sock` within `for_`, by size.
fn answers(sock: &UdpSocket, for_: StdDuration) -> Vec<usize> {
    sock.set_read_timeout(Some(StdDuration::from_millis(50)))
        .unwrap();
    let until = Instant::now() + for_;
    let mut buf = [0u8; 2048];
    let mut got = Vec::new();
    while Instant::now() < until {
        if let Ok(n) = sock.recv(&mut buf) {
            got.push(n);
        }
    }
    got
}

#[test]
fn a_flood_of_openings_does_not_lock_out_a_legitimate_client() {
    let (addr, stop, server) = discard_server(64);
    let flood = UdpSocket::bind("127.0.0.1:0").unwrap();
    // Bare openings (what a spoofer can send without ever hearing an
    // answer), and openings with the largest header a client sends.
    for i in 0..300u64 {
        let h = Header {
            kind: Kind::Hello,
            protocol: reno(),
            conn_id: 1000 + i,
        };
        let payload: &[u8] = if i % 2 == 0 { &[] } else { &[0u8; 16] };
        flood.send_to(&frame::emit(&h, payload), addr).unwrap();
    }
    let r = run_client(&small_client(addr), quiet());
    stop.store(true, Ordering::Relaxed);
    let report = server.join().unwrap().unwrap();
    assert!(r.is_ok(), "{r:?} {:?}", report.counters);
    assert_eq!(report.summaries.len(), 1, "state was made for strangers");
    let c = &report.counters;
    // Each 32-byte opening got a 32-byte Retry; the bare ones were malformed.
    assert_eq!(c.malformed, 150, "{c:?}");
    assert!(c.retries_sent >= 150, "{c:?}");
    assert!(
        c.unvalidated_bytes_sent <= 3 * c.unvalidated_bytes_received,
        "{c:?}"
    );
}

#[test]
fn answers_to_an_unvalidated_address_stay_within_three_times_what_it_sent() {
    // A full server (max 0) and one that takes connections: neither may
    // answer a stranger with more than 3x its bytes.
    for max_conns in [0, 64] {
        let (addr, stop, server) = discard_server(max_conns);
        let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
        stranger.connect(addr).unwrap();
        let h = Header {
            kind: Kind::Hello,
            protocol: reno(),
            conn_id: 77,
        };
        // One datagram at a time, so that each is judged on its own.
        let mut worst = (0, 0);
        for (i, payload) in [&[][..], &[0u8; 16][..]].into_iter().enumerate() {
            let d = frame::emit(
                &Header {
                    conn_id: h.conn_id + i as u64,
                    ..h
                },
                payload,
            );
            stranger.send(&d).unwrap();
            let got: usize = answers(&stranger, StdDuration::from_millis(300))
                .iter()
                .sum();
            if got * worst.1.max(1) > worst.0 * d.len() {
                worst = (got, d.len());
            }
        }
        let (got, sent) = worst;
        stop.store(true, Ordering::Relaxed);
        let c = server.join().unwrap().unwrap().counters;
        // The server's own count, which it keeps for every stranger.
        assert!(c.unvalidated_bytes_received > 0, "{c:?}");
        assert!(
            c.unvalidated_bytes_sent <= 3 * c.unvalidated_bytes_received,
            "{c:?}"
        );
        assert_eq!(c.refused_busy, 0, "refused an unvalidated address: {c:?}");
        assert!(
            got <= 3 * sent,
            "max {max_conns}: answered {got} bytes to {sent}"
        );
    }
}

#[test]
fn one_opening_with_a_syn_draws_one_answer_not_a_stream() {
    let (addr, stop, server) = discard_server(64);
    // A real client's first datagram (its SYN), captured and not passed on.
    let first = Arc::new(std::sync::Mutex::new(None::<Vec<u8>>));
    let keep = Arc::clone(&first);
    let relay = Relay::rewrite(
        addr,
        Box::new(move |d| {
            keep.lock().unwrap().get_or_insert_with(|| d.to_vec());
            Vec::new()
        }),
        Box::new(|_| Vec::new()),
    );
    let mut o = small_client(relay.addr);
    o.idle_timeout = Duration::from_millis(200);
    let _ = run_client(&o, quiet());
    relay.stop();
    let syn = first
        .lock()
        .unwrap()
        .clone()
        .expect("the client sent nothing");
    // Replayed by a stranger: at most one answer, however long it waits.
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    stranger.connect(addr).unwrap();
    stranger.send(&syn).unwrap();
    let got = answers(&stranger, StdDuration::from_millis(3500));
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap().unwrap();
    assert!(got.len() <= 1, "answers: {got:?}");
    assert!(
        got.iter().sum::<usize>() <= 3 * syn.len(),
        "answers: {got:?}"
    );
}

/// A UDP burst over before the validation round trip (20 kB at 50 Mbit/s
/// through a relay) still reaches the receiver: the sender waits for the
/// `Retry` and repeats its packets with the token.
#[test]
fn a_udp_burst_shorter_than_the_validation_round_trip_arrives() {
    let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    opts.one_off = true;
    opts.idle_timeout = Duration::from_secs(1);
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    let server = thread::spawn(move || run_server(&opts, sock, quiet()));
    let relay = Relay::rewrite(
        addr,
        Box::new(|d| vec![d.to_vec()]),
        Box::new(|d| vec![d.to_vec()]),
    );
    let mut o = ClientOptions::new(
        &relay.addr.to_string(),
        Protocol::named("udp"),
        ClientApp::Generate {
            limit: Limit::Bytes(20_000),
            rate_bps: Some(50_000_000),
        },
    );
    o.idle_timeout = Duration::from_secs(2);
    run_client(&o, quiet()).unwrap();
    let until = Instant::now() + StdDuration::from_secs(5);
    while !server.is_finished() && Instant::now() < until {
        thread::sleep(StdDuration::from_millis(10));
    }
    relay.stop();
    assert!(server.is_finished(), "the receiver never got the burst");
    let report = server.join().unwrap().unwrap();
    assert_eq!(report.summaries[0].bytes_delivered, Some(20_000));
}
